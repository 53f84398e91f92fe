//! Every session a job has run, so that evidence arriving after its window
//! still counts: an effect belongs to the session whose token salt it
//! carries, stdout to the script it follows. Late evidence is added to its
//! session's observation, and the session is marked for the campaign
//! engine to judge again ([`Ledger::rejudge`]); the ledger itself judges
//! nothing, and keeps of each verdict only fingerprints, so that the
//! engine can tell what is new.

use super::history::History;
use crate::observation::Observation;
use crate::protocol::Id;
use crate::script::{Script, ScriptSpec};
use crate::seam::{Action, Session};
use crate::token::{salt_of, tokens_in};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sessions kept for late evidence. Past it the oldest are forgotten, and
/// an effect of theirs counts as carrying no known token, which is a
/// finding of whichever session it lands in: evidence is never dropped.
const KEPT: usize = 4096;
/// Most bytes of scripts and output kept (sized calls run to 32 MiB
/// each): past it the oldest are forgotten too, but not the latest
/// [`MIN_KEPT`], whose late evidence is the likeliest, unless they hold
/// [`HUGE_BYTES`] or more each ([`KEPT_HUGE`]). Each entry's script and
/// output count; a script run in a shared process is also its process's
/// history, and is freed once no view of that history is held either.
const KEPT_BYTES: usize = 64 << 20;
const MIN_KEPT: usize = 64;
/// Past [`KEPT_BYTES`], sessions in a process of their own that hold
/// [`HUGE_BYTES`] or more (the size family's calls of 8 to 32 MiB, each
/// held as its line and as the argument its call must act on, or as much
/// output) go too, oldest first and settled, even among the latest
/// [`MIN_KEPT`], until the bytes are back within it or only the latest
/// `KEPT_HUGE` such sessions are left. One script in 23 drawn on the
/// own-process lane carries such a call: several close together were all
/// kept, and the most that ever fell together set the run's peak, which
/// rose with its length.
const KEPT_HUGE: usize = 2;
const HUGE_BYTES: usize = 8 << 20;

/// One session run, as far as its evidence goes.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) session: Session,
    pub(crate) spec: ScriptSpec,
    /// Shared with the history of its process and the runs judged from it.
    pub(crate) script: Arc<Script>,
    pub(crate) obs: Observation,
    /// Fingerprints of the violations the engine last found in it: a
    /// verdict on more evidence is new where it has one not among them.
    pub(crate) shown: Vec<u64>,
    /// The scripts the same process ran before this one; empty for a
    /// session in a process of its own.
    pub(crate) history: History,
    /// When it was judged.
    pub(crate) judged: Instant,
    /// How long after that the latest late evidence came.
    pub(crate) late: Option<Duration>,
    /// How long after the latest judged session of its process (this one
    /// or a later script there) late evidence came: how long the server
    /// stayed quiet before it, as far as the job can tell. Evidence that
    /// came while the process ran later scripts came while the server was
    /// busy with them, which a quiet wait does not end on; this is what the
    /// quiet wait grows by.
    pub(crate) idle_late: Option<Duration>,
    /// The persistent process that ran it, if one did.
    pub(crate) process: Option<u64>,
    pub(crate) dirty: bool,
    /// When the answers it still awaits ([`Observation::awaiting`]) are
    /// due: then it is judged again without them.
    pub(crate) due: Option<Instant>,
    /// The deadline of every answer its requests may get, awaited or not
    /// (a malformed frame with a readable id may be answered by it): an
    /// answer to one of its ids by then is its own evidence, not late.
    pub(crate) answer_by: Option<Instant>,
    /// How long after it was judged its latest evidence that was not late
    /// came (an answer by its deadline): the fresh session that confirms
    /// what it then shows waits that long for quiet.
    pub(crate) came_after: Option<Duration>,
    /// The ids answered after its window, as they came.
    pub(crate) answered: Vec<Id>,
}

impl Entry {
    /// A session not judged yet: the engine sets [`Entry::shown`].
    pub(crate) fn new(session: Session, spec: &ScriptSpec, script: impl Into<Arc<Script>>, obs: Observation) -> Entry {
        Entry {
            session,
            spec: spec.clone(),
            script: script.into(),
            obs,
            shown: Vec::new(),
            history: History::default(),
            judged: Instant::now(),
            late: None,
            idle_late: None,
            process: None,
            dirty: false,
            due: None,
            answer_by: None,
            came_after: None,
            answered: Vec::new(),
        }
    }

    /// The bytes it holds: its script and its output (which late output
    /// and answers grow; [`Ledger::bytes`] follows).
    fn len_bytes(&self) -> usize {
        self.script.len_bytes() + self.obs.stdout.len() + self.obs.stderr.len()
    }

    /// Adds the effect `action`, which came at `at`: part of its session's
    /// own evidence where it carries the token of a frame whose answer the
    /// session still awaited then, or where it is an answer (`answered`)
    /// that came by its answers' deadline; else late.
    fn add_effect(&mut self, action: Action, at: Instant, last_judged: Option<Instant>, answered: bool) {
        let text = action.arguments_text();
        let awaited = |f: &crate::frame::Frame| {
            let ids = f.owed_ids().into_iter().chain(f.id.clone());
            ids.into_iter().any(|id| self.obs.awaiting.contains(&id))
                && f.tokens.iter().any(|t| text.contains(t.as_str()))
        };
        let awaited = self.due.is_some_and(|due| at <= due) && self.script.frames.iter().any(awaited);
        let on_time = awaited || (answered && self.answer_by.is_some_and(|by| at <= by));
        self.obs.effects.push(action);
        match on_time {
            true => self.add_on_time(at),
            false => self.add_late(at, last_judged),
        }
    }

    /// Adds evidence that came at `at`, after this session was judged and
    /// by its deadline: its own, not late.
    fn add_on_time(&mut self, at: Instant) {
        self.came_after = Some(self.came_after.unwrap_or_default().max(at.saturating_duration_since(self.judged)));
        self.dirty = true;
    }

    /// Adds evidence that came at `at`, after this session was judged and
    /// the latest of its process at `last_judged`.
    fn add_late(&mut self, at: Instant, last_judged: Option<Instant>) {
        self.late = Some(self.late.unwrap_or_default().max(at.saturating_duration_since(self.judged)));
        let idle = at.saturating_duration_since(last_judged.unwrap_or(self.judged).max(self.judged));
        self.idle_late = Some(self.idle_late.unwrap_or_default().max(idle));
        self.dirty = true;
    }
}

/// When the latest of `entries` that ran in the same persistent process as
/// the one at `at` was judged; `None` for a session in a process of its
/// own.
fn last_judged(entries: &VecDeque<Entry>, at: usize) -> Option<Instant> {
    let process = entries.get(at)?.process?;
    entries.iter().filter(|e| e.process == Some(process)).map(|e| e.judged).max()
}

/// Which job's ledger each salt belongs to, among the jobs of one
/// campaign that watch the same files: each sees every record written
/// there, and only the job that ran the session judges it. A salt leaves
/// when it leaves its ledger's horizon (`SERVED`), so the table stays as
/// small as the ledgers however long the run.
#[derive(Clone, Debug, Default)]
pub struct Siblings(Arc<Mutex<HashMap<u32, usize>>>);

impl Siblings {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many salts it holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.map().len()
    }
}

/// Salts of sessions served kept, per ledger: an effect that carries an
/// older one counts as carrying no known token (a finding of whichever
/// session it lands in), as one of a forgotten entry does. More than the
/// entries kept: shrinking candidates, confirmations and processes
/// started ahead are served and recorded by no entry.
const SERVED: usize = 4 * KEPT;

/// A job's judged sessions.
#[derive(Debug)]
pub(crate) struct Ledger {
    /// Its key in `siblings`.
    id: usize,
    siblings: Mutex<Siblings>,
    entries: Mutex<VecDeque<Entry>>,
    /// The bytes `entries` hold ([`Entry::len_bytes`]), kept as their
    /// output grows, under the lock of `entries`.
    bytes: AtomicUsize,
    /// The lines written to the target's processes, markers and
    /// handshakes included: each write that went through whole.
    lines: AtomicU64,
    /// The salts of the latest sessions a process of the target served,
    /// judged here or not (a run outside a job, a minimization's
    /// candidate), and the late effects of those not judged here.
    others: Mutex<Others>,
}

/// Sessions served, and the late effects of those run apart from a job.
#[derive(Debug, Default)]
struct Others {
    /// Oldest first, at most [`SERVED`].
    order: VecDeque<u32>,
    salts: HashSet<u32>,
    strays: Vec<(u32, Action)>,
    /// Answers by id that came after their session had left the ledger.
    answers_past_horizon: usize,
}

impl Default for Ledger {
    fn default() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        Ledger {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            siblings: Mutex::default(),
            entries: Mutex::default(),
            bytes: AtomicUsize::new(0),
            lines: AtomicU64::new(0),
            others: Mutex::default(),
        }
    }
}

impl Ledger {
    fn entries(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn others(&self) -> std::sync::MutexGuard<'_, Others> {
        self.others.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn siblings(&self) -> Siblings {
        self.siblings.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Shares `siblings` with the other jobs of a campaign, bringing the
    /// salts noted so far.
    pub(crate) fn among(&self, siblings: Siblings) {
        let old = std::mem::replace(&mut *self.siblings.lock().unwrap_or_else(|e| e.into_inner()), siblings.clone());
        let mine: Vec<(u32, usize)> =
            old.map().iter().filter(|(_, id)| **id == self.id).map(|(s, i)| (*s, *i)).collect();
        siblings.map().extend(mine);
    }

    /// Notes that a process serves the session with salt `salt`. The
    /// oldest salt past [`SERVED`] leaves, and a late effect of it not
    /// taken yet goes to the latest session, where it is judged.
    pub(crate) fn serves(&self, salt: u32) {
        let siblings = self.siblings();
        let mut others = self.others();
        if !others.salts.insert(salt) {
            return;
        }
        others.order.push_back(salt);
        siblings.map().insert(salt, self.id);
        let mut gone = Vec::new();
        while others.order.len() > SERVED {
            let Some(old) = others.order.pop_front() else { break };
            others.salts.remove(&old);
            let mut map = siblings.map();
            if map.get(&old) == Some(&self.id) {
                map.remove(&old);
            }
            let (left, kept) = std::mem::take(&mut others.strays).into_iter().partition(|(s, _)| *s == old);
            others.strays = kept;
            gone.extend(left.into_iter().map(|(_, a): (u32, Action)| a));
        }
        drop(others);
        for action in gone {
            self.late_effect(None, action, Instant::now());
        }
    }

    /// Whether `action` is a record in a watched file or directory whose
    /// tokens are all another job's: that job watches the same place and
    /// judges it, so here it is no one's.
    fn sibling_judges(&self, action: &Action, salts: &[u32]) -> bool {
        let siblings = self.siblings();
        let map = siblings.map();
        action.tool == "probe:file" && salts.iter().all(|s| map.get(s).is_some_and(|id| *id != self.id))
    }

    /// Keeps a judged session for late evidence.
    pub(crate) fn record(&self, entry: Entry) {
        let mut entries = self.entries();
        let mut bytes = self.bytes.load(Ordering::Relaxed) + entry.len_bytes();
        entries.push_back(entry);
        // The oldest go first, but not one whose answers may still come:
        // its verdict is still to come, and an answer that found its
        // session gone would be judged in none (while any other can go).
        // One with late evidence not judged yet goes after the rest.
        let now = Instant::now();
        let settled = |e: &Entry| e.due.is_none() && e.answer_by.is_none_or(|by| by <= now) && !e.dirty;
        while entries.len() > KEPT || (bytes > KEPT_BYTES && entries.len() > MIN_KEPT) {
            let at = entries.iter().position(settled).or_else(|| entries.iter().position(|e| e.due.is_none()));
            let at = at.unwrap_or(0);
            let Some(old) = entries.remove(at) else { break };
            bytes = bytes.saturating_sub(old.len_bytes());
        }
        // Then the oldest settled session of a process of its own that
        // holds a huge call (or as much output), past the latest
        // [`KEPT_HUGE`] of them: not one whose answers may still come, nor
        // one with late evidence not judged yet.
        while bytes > KEPT_BYTES {
            let huge = |e: &Entry| e.process.is_none() && e.len_bytes() >= HUGE_BYTES;
            let huge: Vec<usize> = (0..entries.len()).filter(|&i| huge(&entries[i])).collect();
            let older = &huge[..huge.len().saturating_sub(KEPT_HUGE)];
            let Some(&at) = older.iter().find(|&&i| settled(&entries[i])) else { break };
            let Some(old) = entries.remove(at) else { break };
            bytes = bytes.saturating_sub(old.len_bytes());
        }
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// Where an effect that arrived at `at`, while the session with salt
    /// `current` ran, belongs. `Some` hands it back as the current
    /// session's: it carries that session's token, no token, or only
    /// tokens of no session kept (which its checks then report). `None`:
    /// it carries only an earlier session's tokens and was added to that
    /// session, to be judged again.
    pub(crate) fn route(&self, action: Action, at: Instant, current: &[u32]) -> Option<Action> {
        self.route_as(action, at, current, false)
    }

    /// [`Ledger::route`], for an answer (`answered`) or a probe's effect.
    fn route_as(&self, action: Action, at: Instant, current: &[u32], answered: bool) -> Option<Action> {
        let salts: Vec<u32> = tokens_in(&action.arguments_text()).filter_map(salt_of).collect();
        if salts.is_empty() || current.iter().any(|c| salts.contains(c)) {
            return Some(action);
        }
        if self.sibling_judges(&action, &salts) {
            return None;
        }
        let mut entries = self.entries();
        if let Some(i) = entries.iter().rposition(|e| salts.contains(&e.session.salt)) {
            let last = last_judged(&entries, i);
            entries[i].add_effect(action, at, last, answered);
            return None;
        }
        let mut others = self.others();
        match salts.iter().find(|s| others.salts.contains(s)) {
            // Another session's, run apart from a job: kept as its own.
            Some(&salt) => {
                others.strays.push((salt, action));
                None
            }
            None => Some(action),
        }
    }

    /// [`Ledger::route`] for a success result that stands for its call's
    /// action (`--effect answer`), read while the session with salt
    /// `current` ran. One that answers an earlier session's call stands for
    /// an effect that session may already hold (one a probe saw): then it
    /// is that effect, not a second one.
    pub(crate) fn route_answered(&self, action: Action, at: Instant, current: &[u32]) -> Option<Action> {
        let tokens: Vec<String> = tokens_in(&action.arguments_text()).map(str::to_owned).collect();
        let salts: Vec<u32> = tokens.iter().filter_map(|t| salt_of(t)).collect();
        if !current.iter().any(|c| salts.contains(c)) {
            let entries = self.entries();
            let owner = entries.iter().rev().find(|e| salts.contains(&e.session.salt));
            let held = |a: &Action| tokens.iter().any(|t| a.arguments_text().contains(t.as_str()));
            if owner.is_some_and(|e| e.obs.effects.iter().any(held)) {
                return None;
            }
        }
        self.route_as(action, at, current, true)
    }

    /// Takes the late effects of a session run apart from a job, whose
    /// tokens have the salts `salts`.
    pub(crate) fn take_strays(&self, salts: &[u32]) -> Vec<Action> {
        let mut others = self.others();
        // Asked at every turn of a session's waits: nothing to sort, as a rule.
        if others.strays.is_empty() {
            return Vec::new();
        }
        let (own, rest) = std::mem::take(&mut others.strays).into_iter().partition(|(s, _)| salts.contains(s));
        others.strays = rest;
        own.into_iter().map(|(_, a)| a).collect()
    }

    /// Adds an effect that came while no session ran: to the session whose
    /// tokens it carries, else to the latest, where it is judged.
    pub(crate) fn arrived_between(&self, action: Action, at: Instant) {
        if let Some(unclaimed) = self.route(action, at, &[]) {
            self.late_effect(None, unclaimed, at);
        }
    }

    /// Adds an effect of the session with salt `salt` that came after its
    /// window (late, unless it is of a call whose answer the session still
    /// awaited); one of no session kept (or no salt) goes to the latest.
    pub(crate) fn late_effect(&self, salt: Option<u32>, action: Action, at: Instant) {
        let mut entries = self.entries();
        let at_salt = entries.iter().rposition(|e| Some(e.session.salt) == salt);
        let Some(i) = at_salt.or(entries.len().checked_sub(1)) else { return };
        let last = last_judged(&entries, i);
        entries[i].add_effect(action, at, last, false);
    }

    /// Adds output that came after the script with salt `salt` was judged
    /// and before the next one began: by position, it is that script's;
    /// of a session no longer kept, the latest's, where it is judged.
    pub(crate) fn late_output(&self, salt: u32, stdout: &[u8], stderr: &[u8], at: Instant) {
        let mut entries = self.entries();
        let at_salt = entries.iter().rposition(|e| e.session.salt == salt);
        let Some(i) = at_salt.or(entries.len().checked_sub(1)) else { return };
        let last = last_judged(&entries, i);
        let entry = &mut entries[i];
        entry.obs.stderr.extend_from_slice(stderr);
        if !stdout.is_empty() {
            entry.obs.stdout.extend_from_slice(stdout);
            entry.add_late(at, last);
        }
        self.bytes.fetch_add(stdout.len() + stderr.len(), Ordering::Relaxed);
    }

    /// Counts the lines of `bytes` (each LF), written whole to a process
    /// of the target.
    pub(crate) fn wrote(&self, bytes: &[u8]) {
        self.lines.fetch_add(memchr::memchr_iter(b'\n', bytes).count() as u64, Ordering::Relaxed);
    }

    /// The lines written to the target's processes so far.
    pub(crate) fn lines_written(&self) -> u64 {
        self.lines.load(Ordering::Relaxed)
    }

    /// How many answers by id came after their session had left the
    /// ledger: judged nowhere, and told at the run's end.
    pub(crate) fn answers_past_horizon(&self) -> usize {
        self.others().answers_past_horizon
    }

    /// Adds to the session with salt `salt` a line of output that answers
    /// its request `id`, which came at `at`: an answer that came after its
    /// window (in a later script's, say), matched by id. By its deadline it
    /// is no late evidence, and a call it answers may still act for `grace`
    /// after it, as in a window; past the deadline, it is late evidence. An
    /// answer the session did not await (to a malformed frame whose id was
    /// readable, say) is its own evidence too by the deadline of its
    /// answers: judged again, not late. One whose session is no longer
    /// kept (past its deadline, and past the horizon) is counted
    /// ([`Ledger::answers_past_horizon`]), not given to a later session.
    pub(crate) fn answer(&self, salt: u32, line: &[u8], id: &Id, at: Instant, grace: Duration) {
        let mut entries = self.entries();
        let owner = entries.iter().rposition(|e| e.session.salt == salt);
        // An answer whose session has left (past its deadline, and past
        // the horizon) answers a request no later session sent: it is
        // counted, not handed to one that would take it for a stray.
        let Some(i) = owner else {
            self.others().answers_past_horizon += 1;
            return;
        };
        let last = last_judged(&entries, i);
        let entry = &mut entries[i];
        entry.obs.stdout.extend_from_slice(line);
        self.bytes.fetch_add(line.len(), Ordering::Relaxed);
        let awaited = entry.obs.awaiting.contains(id);
        if awaited && !entry.answered.contains(id) {
            entry.answered.push(id.clone());
        }
        match entry.due.filter(|due| awaited && at <= *due) {
            Some(due) => {
                entry.due = Some(due.max(at + grace));
                entry.add_on_time(at);
            }
            None if entry.answer_by.is_some_and(|by| at <= by) => entry.add_on_time(at),
            None => entry.add_late(at, last),
        }
    }

    /// The latest deadline of the answers still awaited by the sessions
    /// with a salt in `salts`; `None` when none awaits any.
    pub(crate) fn latest_due(&self, salts: &[u32]) -> Option<Instant> {
        let entries = self.entries();
        entries.iter().filter(|e| salts.contains(&e.session.salt)).filter_map(|e| e.due).max()
    }

    /// Whether every session with a salt in `salts` has had each answer it
    /// awaited (those its window did not hold, answered by id since), or
    /// had them judged missing at their deadline.
    /// The answers to `but` are left out.
    pub(crate) fn answered(&self, salts: &[u32], but: &[Id]) -> bool {
        let entries = self.entries();
        let answered = |e: &Entry| e.obs.awaiting.iter().all(|id| e.answered.contains(id) || but.contains(id));
        entries.iter().filter(|e| salts.contains(&e.session.salt) && e.due.is_some()).all(answered)
    }

    /// How long after its window the latest evidence that was not late came
    /// to the sessions with a salt in `salts`, if any came.
    pub(crate) fn came_after(&self, salts: &[u32]) -> Option<Duration> {
        let entries = self.entries();
        entries.iter().filter(|e| salts.contains(&e.session.salt)).filter_map(|e| e.came_after).max()
    }

    /// The kept session of `script`, with a salt in `salts`, with all its
    /// evidence so far, judged by `judge` (see [`Ledger::rejudge`]) in the
    /// same step: what it shows now is what the engine has judged.
    pub(crate) fn now<T>(
        &self,
        salts: &[u32],
        script: &Script,
        judge: impl Fn(&Entry) -> (Vec<u64>, T),
    ) -> Option<(Entry, T)> {
        let mut entries = self.entries();
        let entry = entries.iter_mut().rev().find(|e| salts.contains(&e.session.salt) && *e.script == *script)?;
        let (shown, made) = judge(entry);
        entry.shown = shown;
        entry.dirty = false;
        Some((entry.clone(), made))
    }

    /// Ends the wait for the answers still awaited by the sessions whose
    /// deadline has passed, and by those with a salt in `ended` (their
    /// process has ended: nothing more can come). Each is judged again.
    pub(crate) fn expire(&self, ended: &[u32]) {
        let now = Instant::now();
        for entry in self.entries().iter_mut() {
            if entry.due.is_some_and(|due| due <= now) || (entry.due.is_some() && ended.contains(&entry.session.salt)) {
                entry.due = None;
                entry.obs.awaiting.clear();
                entry.dirty = true;
            }
        }
    }

    /// Hands every session that gained evidence since it was last judged
    /// to `judge`, which returns the fingerprints of the violations it now
    /// finds and what it makes of them, if anything; those it made
    /// something of are returned, each as it stood when judged. Sessions
    /// whose awaited answers came due count as having gained evidence:
    /// their absence.
    pub(crate) fn rejudge<T>(&self, judge: impl Fn(&Entry) -> (Vec<u64>, Option<T>)) -> Vec<(Entry, T)> {
        self.expire(&[]);
        let mut judged = Vec::new();
        for entry in self.entries().iter_mut().filter(|e| e.dirty) {
            entry.dirty = false;
            let (shown, made) = judge(entry);
            if let Some(made) = made {
                judged.push((entry.clone(), made));
            }
            entry.shown = shown;
        }
        judged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::Step;
    use crate::catalogue::Catalogue;
    use crate::protocol::{Policy, Revision};
    use crate::token::token;

    fn entry(salt: u32) -> Entry {
        let spec = ScriptSpec::whole(Revision::LATEST, vec![Step::Control(0)]);
        let script = spec.render(&Catalogue::reference(), salt);
        let session = Session { policy: Policy::KeepOpen, revision: Revision::LATEST, salt };
        Entry::new(session, &spec, script, Observation::none())
    }

    fn effect(salt: u32) -> Action {
        let arguments = serde_json::json!({"path": format!("/{}", token(salt, 1))});
        Action { tool: "probe:http".to_owned(), arguments: arguments.as_object().cloned().unwrap_or_default() }
    }

    #[test]
    fn salts_leave_with_the_horizon_and_their_strays_are_judged_not_dropped() {
        let ledger = Ledger::default();
        let siblings = Siblings::default();
        ledger.among(siblings.clone());
        // A session run apart from the job, whose late effect waits to be taken.
        ledger.serves(1);
        assert!(ledger.route(effect(1), Instant::now(), &[]).is_none(), "kept as the apart session's");
        ledger.serves(2);
        ledger.record(entry(2));
        for salt in 3..3 + SERVED as u32 {
            ledger.serves(salt);
        }
        assert_eq!(ledger.others().order.len(), SERVED, "the served salts stay bounded");
        assert_eq!(siblings.len(), SERVED, "and so does the campaign's owner table");
        assert!(ledger.others().strays.is_empty(), "the stray left with its salt");
        let latest = ledger.entries();
        let latest = latest.back().expect("an entry");
        assert_eq!(latest.obs.effects, vec![effect(1)], "into the latest session, to be judged");
        assert!(latest.dirty, "which is judged again");
    }

    #[test]
    fn a_record_of_another_job_is_left_to_it_and_one_of_no_job_is_judged() {
        let (mine, theirs) = (Ledger::default(), Ledger::default());
        let siblings = Siblings::default();
        mine.among(siblings.clone());
        theirs.among(siblings.clone());
        theirs.serves(7);
        let record = |salt| Action { tool: "probe:file".to_owned(), ..effect(salt) };
        assert!(mine.route(record(7), Instant::now(), &[]).is_none(), "the other job judges its own");
        assert!(mine.route(record(8), Instant::now(), &[]).is_some(), "no job's is the current session's");
        let alone = Ledger::default();
        assert!(alone.route(record(7), Instant::now(), &[]).is_some(), "a ledger of another campaign knows none");
    }

    #[test]
    fn evidence_by_its_sessions_deadline_is_its_own_and_after_it_is_late() {
        let ledger = Ledger::default();
        let now = Instant::now();
        let mut awaiting = entry(1);
        let call = awaiting.script.frames.iter().find(|f| !f.owed_ids().is_empty() && !f.tokens.is_empty());
        let call = call.cloned().expect("a call");
        awaiting.obs.awaiting = call.owed_ids();
        awaiting.due = Some(now + Duration::from_secs(60));
        awaiting.process = Some(7);
        ledger.record(awaiting);
        ledger.record(Entry { process: Some(7), ..entry(2) });
        let arguments = serde_json::json!({"url": format!("http://127.0.0.1/{}", call.tokens[0])});
        let acted =
            Action { tool: "probe:http".to_owned(), arguments: arguments.as_object().cloned().unwrap_or_default() };
        assert!(ledger.route(acted.clone(), now, &[2]).is_none(), "routed to its session");
        let first = ledger.entries().front().cloned().expect("kept");
        assert!(first.dirty && first.late.is_none(), "its awaited call's effect by its deadline: its own, not late");
        assert_eq!(ledger.latest_due(&[1, 2]), first.due);
        let unasked = serde_json::json!({"path": format!("/{}", token(1, 99))});
        let unasked =
            Action { tool: "probe:http".to_owned(), arguments: unasked.as_object().cloned().unwrap_or_default() };
        assert!(!call.tokens.contains(&token(1, 99)));
        assert!(ledger.route(unasked, now, &[2]).is_none());
        let first = ledger.entries().front().cloned().expect("kept");
        assert!(first.late.is_some(), "an effect of no awaited call is late, deadline or not");
        let later = now + Duration::from_millis(300);
        ledger.entries().front_mut().expect("kept").due = None;
        assert!(ledger.route(acted, later, &[2]).is_none());
        let first = ledger.entries().front().cloned().expect("kept");
        assert!(first.idle_late < first.late, "counted for the quiet only from its process's latest session");
        let answer = Action { tool: "probe:answer".to_owned(), ..effect(1) };
        assert!(call.tokens.contains(&token(1, 1)), "the answer carries the call's token");
        assert!(ledger.route_answered(answer, later, &[2]).is_none(), "an answer for an effect held is that effect");
        assert_eq!(ledger.entries().front().expect("kept").obs.effects.len(), 3, "not a fourth");
    }

    #[test]
    fn an_answer_not_awaited_by_its_deadline_is_its_sessions_own_and_after_it_is_late() {
        // A malformed frame whose id was readable may be answered, after
        // the marker, by the deadline of its session's answers.
        let ledger = Ledger::default();
        let now = Instant::now();
        let line = br#"{"jsonrpc":"2.0","id":6,"result":{}}"#;
        let id = Id::Int(6);
        let by = now + Duration::from_secs(5);
        ledger.record(Entry { answer_by: Some(by), process: Some(7), ..entry(1) });
        ledger.answer(1, line, &id, now + Duration::from_millis(1300), Duration::ZERO);
        let first = ledger.entries().front().cloned().expect("kept");
        assert!(first.dirty && first.late.is_none() && first.idle_late.is_none(), "its own, not late: {first:?}");
        assert!(first.came_after.is_some_and(|d| d >= Duration::from_millis(1200)), "a confirmation covers it");
        ledger.answer(1, line, &id, by + Duration::from_millis(1), Duration::ZERO);
        assert!(ledger.entries().front().expect("kept").late.is_some(), "past the deadline it is late");

        // One it awaits is answered once its answer has come.
        let mut awaiting = entry(2);
        awaiting.obs.awaiting = vec![id.clone()];
        awaiting.due = Some(by);
        ledger.record(awaiting);
        assert!(!ledger.answered(&[2], &[]), "still awaited");
        ledger.answer(2, line, &id, now, Duration::ZERO);
        assert!(ledger.answered(&[2], &[]), "answered");
    }

    #[test]
    fn an_answer_whose_session_has_left_goes_to_no_later_session() {
        let ledger = Ledger::default();
        for salt in 1..=KEPT as u32 + 1 {
            ledger.record(entry(salt));
        }
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n";
        ledger.answer(1, line, &Id::Int(7), Instant::now(), Duration::ZERO);
        let entries = ledger.entries();
        assert!(entries.iter().all(|e| e.session.salt != 1), "it left");
        assert!(entries.iter().all(|e| e.obs.stdout.is_empty()), "no later session took its answer");
        drop(entries);
        assert_eq!(ledger.answers_past_horizon(), 1, "counted");
    }

    #[test]
    fn past_the_byte_bound_only_the_latest_sessions_with_huge_calls_are_kept() {
        let ledger = Ledger::default();
        // Sessions each with a call of 16 MiB, among small ones, all within
        // the latest MIN_KEPT; the first may still be answered.
        let huge = |salt| {
            let mut e = entry(salt);
            let script = Arc::make_mut(&mut e.script);
            script.frames.last_mut().expect("a call").bytes = vec![b' '; 16 << 20];
            e
        };
        let kept = |ledger: &Ledger| -> Vec<u32> {
            let entries = ledger.entries();
            entries.iter().filter(|e| e.len_bytes() >= HUGE_BYTES).map(|e| e.session.salt).collect()
        };
        // Within 64 MiB, all stay.
        let within = Ledger::default();
        (8..=10).for_each(|salt| within.record(huge(salt)));
        assert_eq!(kept(&within), [8, 9, 10], "48 MiB");
        // Past it, not one still owed answers, nor one with late evidence
        // not judged yet, nor a shared process's session (its process may
        // still write for it: huge calls run in processes of their own).
        let by = Instant::now() + Duration::from_secs(60);
        ledger.record(Entry { answer_by: Some(by), ..huge(1) });
        ledger.record(Entry { process: Some(0), ..huge(50) });
        ledger.record(Entry { dirty: true, ..huge(2) });
        for salt in 3..=7 {
            ledger.record(huge(salt));
            ledger.record(entry(100 + salt));
        }
        // Late output and answers count, as the bytes they add.
        ledger.late_output(7, b"", &[b'.'; 1 << 20], Instant::now());
        ledger.answer(6, &[b' '; 1 << 20], &Id::Int(9), Instant::now(), Duration::ZERO);
        ledger.record(entry(200));
        assert_eq!(kept(&ledger), [1, 50, 2, 6, 7], "those that must stay, and the latest two");
        let entries = ledger.entries();
        assert_eq!(entries.iter().filter(|e| e.len_bytes() < HUGE_BYTES).count(), 6, "every small one stays");
        assert_eq!(ledger.bytes.load(Ordering::Relaxed), entries.iter().map(Entry::len_bytes).sum::<usize>());
    }

    #[test]
    fn a_session_whose_answers_may_still_come_is_kept_past_the_horizon() {
        let ledger = Ledger::default();
        let by = Instant::now() + Duration::from_secs(60);
        ledger.record(Entry { answer_by: Some(by), ..entry(1) });
        for salt in 2..=KEPT as u32 + 1 {
            ledger.record(entry(salt));
        }
        let entries = ledger.entries();
        assert_eq!(entries.len(), KEPT);
        assert_eq!(entries.front().map(|e| e.session.salt), Some(1), "an answer to it finds it");
        assert!(entries.iter().all(|e| e.session.salt != 2), "the oldest settled one went");
    }
}

//! Every session a job has judged, so that evidence arriving after its
//! verdict still counts: an effect belongs to the session whose token salt
//! it carries, stdout to the script it follows. Late evidence is added to
//! its session's observation, and the session is judged again; a violation
//! that shows only then is a late finding, never set aside.

use super::history::History;
use crate::check::{Violation, check};
use crate::finding::{Distinct, distinct};
use crate::observation::Observation;
use crate::script::{Script, ScriptSpec};
use crate::seam::{Action, Session};
use crate::token::{salt_of, tokens_in};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Sessions kept for late evidence. Past it the oldest are forgotten, and
/// an effect of theirs counts as carrying no known token, which is a
/// finding of whichever session it lands in: evidence is never dropped.
const KEPT: usize = 4096;
/// Most bytes of scripts kept (sized calls run to 32 MiB each): past it
/// the oldest are forgotten too, but never the latest [`MIN_KEPT`], whose
/// late evidence is the likeliest.
const KEPT_BYTES: usize = 64 << 20;
const MIN_KEPT: usize = 64;

/// One judged session.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) session: Session,
    pub(crate) spec: ScriptSpec,
    pub(crate) script: Script,
    pub(crate) obs: Observation,
    pub(crate) violations: Vec<Violation>,
    /// The scripts the same process ran before this one; empty for a
    /// session in a process of its own.
    pub(crate) history: History,
    /// When it was judged.
    pub(crate) judged: Instant,
    /// How long after that the latest late evidence came.
    pub(crate) late: Option<Duration>,
    pub(crate) dirty: bool,
}

impl Entry {
    pub(crate) fn new(session: Session, spec: &ScriptSpec, script: Script, obs: Observation) -> Entry {
        let violations = check(&script, &obs, &session);
        Entry {
            session,
            spec: spec.clone(),
            script,
            obs,
            violations,
            history: History::default(),
            judged: Instant::now(),
            late: None,
            dirty: false,
        }
    }

    /// The bytes it holds when recorded: its script and its output.
    fn len_bytes(&self) -> usize {
        self.script.len_bytes() + self.obs.stdout.len() + self.obs.stderr.len()
    }

    fn add_late(&mut self, at: Instant) {
        self.late = Some(self.late.unwrap_or_default().max(at.saturating_duration_since(self.judged)));
        self.dirty = true;
    }
}

/// Which job's ledger each salt of this run belongs to: jobs that watch
/// the same files each see every record written there, and only the job
/// that ran the session judges it.
static OWNERS: Mutex<Option<HashMap<u32, usize>>> = Mutex::new(None);

fn owners() -> std::sync::MutexGuard<'static, Option<HashMap<u32, usize>>> {
    OWNERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A job's judged sessions.
#[derive(Debug)]
pub(crate) struct Ledger {
    /// Its place in [`OWNERS`].
    id: usize,
    entries: Mutex<VecDeque<Entry>>,
    /// The bytes of the scripts of `entries`.
    bytes: AtomicUsize,
    /// The salts of every session a process of the target served, judged
    /// here or not (a run outside a job, a minimization's candidate), and
    /// the late effects of those not judged here, kept with their salt.
    others: Mutex<Others>,
}

/// Sessions served apart from a job, and their late effects.
type Others = (HashSet<u32>, Vec<(u32, Action)>);

impl Default for Ledger {
    fn default() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ledger {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            entries: Mutex::default(),
            bytes: AtomicUsize::new(0),
            others: Mutex::default(),
        }
    }
}

/// Ledgers alive: the salts of a finished job stay in [`OWNERS`] while
/// another job runs (its records, which it saw itself, may still be read
/// by the others), and go with the last.
static LIVE: AtomicUsize = AtomicUsize::new(0);

impl Drop for Ledger {
    fn drop(&mut self) {
        let mut owners = owners();
        if LIVE.fetch_sub(1, Ordering::Relaxed) == 1
            && let Some(map) = owners.as_mut()
        {
            map.clear();
        }
    }
}

impl Ledger {
    fn entries(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that a process serves the session with salt `salt`.
    pub(crate) fn serves(&self, salt: u32) {
        self.others.lock().unwrap_or_else(|e| e.into_inner()).0.insert(salt);
        owners().get_or_insert_default().insert(salt, self.id);
    }

    /// Whether `action` is a record in a watched file or directory whose
    /// tokens are all another job's: that job watches the same place and
    /// judges it, so here it is no one's.
    fn siblings(&self, action: &Action, salts: &[u32]) -> bool {
        let Some(map) = owners().as_ref().map(|m| salts.iter().map(|s| m.get(s).copied()).collect::<Vec<_>>()) else {
            return false;
        };
        action.tool == "probe:file" && map.iter().all(|o| o.is_some_and(|id| id != self.id))
    }

    /// Keeps a judged session for late evidence.
    pub(crate) fn record(&self, entry: Entry) {
        let mut entries = self.entries();
        let mut bytes = self.bytes.load(Ordering::Relaxed) + entry.len_bytes();
        entries.push_back(entry);
        while entries.len() > KEPT || (bytes > KEPT_BYTES && entries.len() > MIN_KEPT) {
            let Some(old) = entries.pop_front() else { break };
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
        let salts: Vec<u32> = tokens_in(&action.arguments_text()).filter_map(salt_of).collect();
        if salts.is_empty() || current.iter().any(|c| salts.contains(c)) {
            return Some(action);
        }
        if self.siblings(&action, &salts) {
            return None;
        }
        let mut entries = self.entries();
        if let Some(entry) = entries.iter_mut().rev().find(|e| salts.contains(&e.session.salt)) {
            entry.obs.effects.push(action);
            entry.add_late(at);
            return None;
        }
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        match salts.iter().find(|s| others.0.contains(s)) {
            // Another session's, run apart from a job: kept as its own.
            Some(&salt) => {
                others.1.push((salt, action));
                None
            }
            None => Some(action),
        }
    }

    /// Takes the late effects of a session run apart from a job, whose
    /// tokens have the salts `salts`.
    pub(crate) fn take_strays(&self, salts: &[u32]) -> Vec<Action> {
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        let (own, rest) = std::mem::take(&mut others.1).into_iter().partition(|(s, _)| salts.contains(s));
        others.1 = rest;
        own.into_iter().map(|(_, a)| a).collect()
    }

    /// Adds an effect that came while no session ran: to the session whose
    /// tokens it carries, else to the latest, where it is judged.
    pub(crate) fn arrived_between(&self, action: Action, at: Instant) {
        if let Some(unclaimed) = self.route(action, at, &[]) {
            self.late_effect(None, unclaimed, at);
        }
    }

    /// Adds an effect of the session with salt `salt` that came after it
    /// was judged; one of no session kept (or no salt) goes to the latest.
    pub(crate) fn late_effect(&self, salt: Option<u32>, action: Action, at: Instant) {
        let mut entries = self.entries();
        let at_salt = entries.iter().rposition(|e| Some(e.session.salt) == salt);
        let Some(entry) = at_salt.or(entries.len().checked_sub(1)).and_then(|i| entries.get_mut(i)) else { return };
        entry.obs.effects.push(action);
        entry.add_late(at);
    }

    /// Adds output that came after the script with salt `salt` was judged
    /// and before the next one began: by position, it is that script's.
    pub(crate) fn late_output(&self, salt: u32, stdout: &[u8], stderr: &[u8], at: Instant) {
        let mut entries = self.entries();
        let Some(entry) = entries.iter_mut().rev().find(|e| e.session.salt == salt) else { return };
        entry.obs.stderr.extend_from_slice(stderr);
        if !stdout.is_empty() {
            entry.obs.stdout.extend_from_slice(stdout);
            entry.add_late(at);
        }
    }

    /// Judges again every session that gained late evidence, and returns
    /// those it now finds in violation of something new, with every
    /// violation it has now and the finding key of the first new one.
    pub(crate) fn rejudge(&self) -> Vec<(Entry, Distinct)> {
        let mut grown = Vec::new();
        for entry in self.entries().iter_mut().filter(|e| e.dirty) {
            entry.dirty = false;
            let now = check(&entry.script, &entry.obs, &entry.session);
            let new = now.iter().find(|v| !entry.violations.contains(v));
            let new = new.map(|v| distinct(v, &entry.script, &entry.obs));
            entry.violations = now;
            if let Some(new) = new {
                grown.push((entry.clone(), new));
            }
        }
        grown
    }
}

//! A job: one thread's share of a campaign against a server process.
//!
//! Under `close`, and for every script that must begin its process (a call
//! before `initialize`, a frame cut at EOF), a session runs in a process
//! of its own. Under `keep-open` the rest run in one [`Persistent`]
//! process per revision, which goes on while it answers its markers. A
//! search session there that may show a new finding and still awaits
//! answers has its process tended until they come or are due. A session
//! in violation is handed to the hunt as the shared process showed it, and
//! the process's history kept by salt: the hunt confirms in a fresh
//! session what it reports, and reports a finding no fresh session repeats
//! as state-dependent, with every script the process ran before it. One
//! whose process did not answer its marker (or ended while tended) is run
//! again in a fresh process: where a finding does not repeat there, it is
//! state-dependent. Shrinking candidates run in the persistent process too,
//! unless what they shrink shows only as a session ends. A server of which
//! only one instance may run (no process started ahead) has its persistent
//! processes ended before a fresh session starts.
//!
//! After every session the ledger's late evidence is judged: a session
//! that now breaks a check the run reports is a finding marked late, with
//! the delay. It is run again in a fresh process with waits grown to cover
//! the delay, and is reported as that fresh session where it repeats, else
//! as it was seen (with its process's history, if it had one).

use super::confirmer::{Confirmed, Confirmer, Task, Teller, confirm, finding};
use super::scope::Scope;
use super::verdict::{self, record};
use super::{Finding, Known, Lane, SessionRun};
use crate::check::{CheckId, Kind};
use crate::finding::{Distinct, distinct, on_time};
use crate::process::{ChildTarget, Cover, Entry, History, Ledger, Persistent, Started};
use crate::protocol::{Id, Policy, Revision};
use crate::script::ScriptSpec;
use crate::seam::{Fault, Session};
use std::time::{Duration, Instant};

/// One job's sessions against a server process.
pub struct Job<'a> {
    target: &'a ChildTarget,
    policy: Policy,
    share: bool,
    live: Vec<Persistent>,
    /// Revisions the server negotiates to another: their scripts run in
    /// processes of their own, handshake and all.
    unshared: Vec<Revision>,
    next_id: i64,
    sessions: u32,
    seed: u64,
    found: Vec<Finding>,
    /// The findings the run has made: a search session in the persistent
    /// process that shows only these is not tended for its answers.
    known: Option<&'a Known>,
    /// What the run reports: late evidence outside it is no finding to
    /// confirm.
    scope: Scope,
    /// The keys of the late findings this job has made.
    made: Vec<Distinct>,
    /// Where late findings are confirmed beside the search, when the
    /// server may run twice at once.
    confirmer: Option<Confirmer>,
    /// The persistent processes of the round in flight that ended on their
    /// own (a crash), by serial.
    died: Vec<u64>,
    /// Late findings that rest on time alone and were not confirmed, to
    /// tell; and every key so told, which is not judged a third time.
    unconfirmed: Vec<Distinct>,
    unconfirmed_once: Vec<Distinct>,
    /// The latest search session run in a shared process that broke a
    /// check, by salt, with the salt its tokens carried there and what the
    /// process ran before it. The hunt asks for it as soon as the session
    /// is handed back, before it runs another search session here: one is
    /// enough, so however long the run, this keeps at most one process's
    /// history alive (up to 16 MiB of scripts; it kept 64).
    caught: Option<(u32, u32, History)>,
    /// How long after its window evidence has come, by its deadline, to a
    /// session of this job that it showed a new violation: every fresh
    /// session's quiet wait covers it while the server runs (the server was
    /// seen to act that late, and may cancel what it has not done when
    /// stdin closes).
    cover: Duration,
    /// The persistent processes ending on threads of their own.
    ending: Vec<std::thread::JoinHandle<()>>,
    /// The persistent processes starting on standby, by revision: each
    /// takes over when its revision's process ends.
    standby: Vec<(Revision, std::thread::JoinHandle<Result<Started, Fault>>)>,
    /// The revisions whose processes the search has ended on (worn, or
    /// not shown to read on): each has one on standby from then on.
    replaced: Vec<Revision>,
    /// Where its search sessions in processes of their own run, when not
    /// in `target` (one whose processes yield to a search beside it).
    searcher: Option<ChildTarget>,
    /// When the job began: a finding it makes apart from the hunt was
    /// first seen this long after.
    started: Instant,
}

impl<'a> Job<'a> {
    /// A job for `target` under `policy`, drawing with `seed`. With
    /// `share` and `keep-open`, scripts that can run in a persistent
    /// process do.
    pub fn new(target: &'a ChildTarget, policy: Policy, share: bool, seed: u64) -> Job<'a> {
        let share = share && policy == Policy::KeepOpen;
        Job {
            target,
            policy,
            share,
            live: Vec::new(),
            unshared: Vec::new(),
            next_id: 1,
            sessions: 0,
            seed,
            found: Vec::new(),
            known: None,
            scope: Scope::default(),
            made: Vec::new(),
            confirmer: target.ahead().then(|| Confirmer::start(target, Teller { policy, seed })),
            died: Vec::new(),
            unconfirmed: Vec::new(),
            unconfirmed_once: Vec::new(),
            caught: Default::default(),
            cover: Duration::ZERO,
            ending: Vec::new(),
            standby: Vec::new(),
            replaced: Vec::new(),
            searcher: None,
            started: Instant::now(),
        }
    }

    /// This job, told which findings the run has made: a search session
    /// in the persistent process whose every violation shows one of them
    /// counts as it showed, and the process goes on, where one that may
    /// show a new finding is run again in a process of its own.
    pub(crate) fn knowing(mut self, known: &'a Known) -> Job<'a> {
        self.known = Some(known);
        self
    }

    /// This job, judging late evidence within `scope` (every check at
    /// every level where not told).
    pub(crate) fn judging(mut self, scope: Scope) -> Job<'a> {
        self.scope = scope;
        self
    }

    /// This job, running its search sessions in processes of their own on
    /// `searcher` (a target of the same server, its ledger shared), and
    /// what it confirms on its own target.
    pub(crate) fn searching_on(mut self, searcher: ChildTarget) -> Job<'a> {
        self.searcher = Some(searcher);
        self
    }

    /// How long after its window evidence has come to a session of this
    /// job that it showed a new violation: every fresh session's quiet
    /// wait covers it while the server runs.
    pub(crate) fn cover(&self) -> Duration {
        self.cover
    }

    /// Covers evidence that came `late` after a window in every fresh
    /// session from now on: the job that shrinks and confirms a search's
    /// findings waits as long as the search's job learned to.
    pub(crate) fn covering(&mut self, late: Duration) {
        self.cover = self.cover.max(late);
    }

    /// Takes the findings that came apart from a hunt's sessions so far:
    /// late ones and state-dependent ones, in the order they came.
    pub fn take_found(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.found)
    }

    /// Runs one session of a hunt in `lane`, with tokens of `salt`. A
    /// search session runs in the persistent process when it can (the
    /// hunt confirms fresh what it reports; `Job::history_of`); a
    /// shrinking candidate runs there too (unless what it shrinks shows only
    /// as a session ends), judged by what it showed, the process kept while
    /// it answers its marker (the hunt confirms what it shrinks to); a
    /// confirming session runs in a process of its own with doubled waits (four times as long for a finding that rests on time alone).
    /// Then judges any late evidence.
    pub fn session(&mut self, spec: &ScriptSpec, salt: u32, lane: Lane) -> Result<SessionRun, Fault> {
        self.sessions += 1;
        // A finding that shows only as a session ends (a hang on EOF, bytes
        // after the last LF, an early exit) cannot show in the persistent
        // process: its candidates run fresh.
        let at_an_end = matches!(&lane, Lane::Shrink(d) if Kind::shows_at_an_end(&d.kind));
        let own = spec.needs_own_process_with(&self.target.catalogue);
        let shared = match self.share && !lane.confirms() && !at_an_end && !own {
            // A search session goes on once the server has read past it; a
            // shrinking step must see what it shows whole.
            true => self.shared(spec, salt, &lane, lane == Lane::Search)?,
            false => None,
        };
        let run = match shared {
            Some(run) => run,
            // A confirming run waits twice as long, and one of a verdict
            // that rests on time alone four times: it must hold with longer
            // waits before it is reported.
            None if lane == Lane::Confirm => self.fresh_patiently(spec, salt, 2, self.cover)?,
            None if lane == Lane::ConfirmTimed => self.fresh_patiently(spec, salt, super::PATIENCE, self.cover)?,
            None if lane == Lane::Search => match self.searcher.clone() {
                Some(searcher) => self.fresh_on(&searcher, spec, salt, 1, self.cover)?,
                None => self.fresh(spec, salt)?,
            },
            None => self.fresh(spec, salt)?,
        };
        self.judge_late()?;
        Ok(run)
    }

    /// Runs `spec` in a process of its own.
    pub fn fresh(&mut self, spec: &ScriptSpec, salt: u32) -> Result<SessionRun, Fault> {
        self.fresh_patiently(spec, salt, 1, self.cover)
    }

    /// [`Job::fresh`] with every wait `patience` times as long, and the
    /// quiet wait, while the server runs, covering evidence that came
    /// `cover` after a window.
    fn fresh_patiently(
        &mut self,
        spec: &ScriptSpec,
        salt: u32,
        patience: u32,
        cover: Duration,
    ) -> Result<SessionRun, Fault> {
        self.fresh_on(self.target, spec, salt, patience, cover)
    }

    /// [`Job::fresh_patiently`] on `target`, a target of the same server
    /// whose ledger is the job's.
    fn fresh_on(
        &mut self,
        target: &ChildTarget,
        spec: &ScriptSpec,
        salt: u32,
        patience: u32,
        cover: Duration,
    ) -> Result<SessionRun, Fault> {
        // A server of which one instance may run at a time (none is started
        // ahead) runs none beside the shared one.
        if !target.ahead() {
            self.end_processes();
        }
        let script = spec.render(&target.catalogue, salt);
        let session = Session { policy: self.policy, revision: spec.revision, salt };
        let cover = Cover { running: cover, exited: Duration::ZERO };
        let obs = target.run_patiently(&session, &script, patience, cover)?;
        Ok(record(target.ledger(), Entry::new(session, spec, script, obs)))
    }

    /// Runs `spec` in the persistent process of its revision; `None` when
    /// it cannot (it has no handshake to leave out, or no process would
    /// start and answer the request that opens its session).
    fn shared(&mut self, spec: &ScriptSpec, salt: u32, lane: &Lane, defer: bool) -> Result<Option<SessionRun>, Fault> {
        let full = spec.render_from(&self.target.catalogue, salt ^ QUICK, self.next_id);
        // Ids on the precision boundary (near 2^53) are handed out downwards
        // from it apart from the rest: they do not move where the next begin.
        let highest = full.frames.iter().filter_map(|f| match f.id {
            Some(Id::Int(n)) if n.unsigned_abs() < 1 << 52 => Some(n),
            _ => None,
        });
        let highest = highest.max();
        let Some(mut body) = full.into_after_handshake() else { return Ok(None) };
        self.next_id = highest.unwrap_or(self.next_id).max(self.next_id) + 1_000;
        body.eof = false;
        // One copy, however many hold it: the process's history, the
        // ledger's entry and the run judged from it.
        let body = std::sync::Arc::new(body);
        // A process is ended once worn, as AFL's persistent loop
        // restarts its target: its history stays a size a replay can run.
        // A search's worn process serves on (to twice its bound at most)
        // until the one on standby for its revision has started, rather
        // than hold up the search for a start.
        let wait = |p: &Persistent| p.worn_out() || *lane != Lane::Search;
        if let Some(worn) = self.live.iter().position(|p| p.revision == spec.revision && p.worn())
            && (wait(&self.live[worn]) || !self.starting(spec.revision))
        {
            self.end_for(lane, worn);
        }
        let at = match self.live.iter().position(|p| p.revision == spec.revision) {
            Some(at) => at,
            None if self.unshared.contains(&spec.revision) => return Ok(None),
            None => match self.start(spec.revision)? {
                Started::Ready(p) => {
                    self.live.push(*p);
                    self.live.len() - 1
                }
                Started::Silent => return Ok(None),
                Started::OtherRevision => {
                    self.unshared.push(spec.revision);
                    return Ok(None);
                }
            },
        };
        let ledger = self.target.ledger();
        // A shrinking step of a correlation finding waits for the answers
        // that may come with a null id: its verdict may rest on them.
        let null_answers = matches!(lane, Lane::Shrink(d) if d.check == CheckId::Correlation);
        let ran = self.live[at].run(&body, salt ^ QUICK, ledger, (defer, null_answers))?;
        // Its successor starts on standby before it wears out.
        if *lane == Lane::Search && self.target.ahead() && self.live[at].wearing() {
            self.stand_by(spec.revision);
        }
        // Kept for a round of shrinking in flight only (cleared as it begins).
        if ran.obs.exit.ended() && matches!(lane, Lane::Shrink(_)) {
            self.died.push(self.live[at].serial);
        }
        let session = Session { policy: Policy::KeepOpen, revision: spec.revision, salt: salt ^ QUICK };
        let mut entry = Entry::new(session, spec, body, ran.obs);
        entry.history = ran.history;
        entry.due = ran.due;
        entry.answer_by = Some(ran.answer_by);
        let serial = self.live[at].serial;
        entry.process = Some(serial);
        let mut run = record(ledger, entry.clone());
        // The findings `run` shows that the run has not made: those it
        // reports, or those of every check. A session that shows any is
        // tended for its answers, as one of the run's findings may show in
        // it only at their deadline (a batch never executed).
        let scope = self.scope;
        let new_in = |run: &SessionRun, known: Option<&Known>, reported: bool| {
            let keys: Vec<Distinct> = match reported {
                true => scope.judged(run),
                false => run.2.iter().map(|v| distinct(v, &run.0, &run.1)).collect(),
            };
            let claimed = |k: &Distinct, known: &Known| known.claimed(k, k.rests_on_time(&run.2, &run.0, &run.1));
            keys.into_iter().filter(|k| known.is_none_or(|known| !claimed(k, known))).collect::<Vec<Distinct>>()
        };
        let mut healthy = ran.healthy;
        // A search session that may show a new finding and still awaits
        // answers is judged once they are in: the process is tended until
        // they have come or are due, and the session taken as the ledger
        // judges it then (a call answered may still act: its effect is
        // awaited until the session's deadline, where it is on time). A
        // process that ended meanwhile showed its end, not the answers: the
        // window's verdict stands, and the session is run again fresh.
        // Answers that may come with a null id are not waited for here (an
        // SDK never sends them): they are judged when they come or are due,
        // as late evidence is.
        let quick = salt ^ QUICK;
        let by_id = run.1.awaiting.iter().any(|id| !ran.anonymous.contains(id));
        if healthy && *lane == Lane::Search && !new_in(&run, self.known, false).is_empty() && by_id {
            self.tend_until(&[quick], &|ledger| ledger.answered(&[quick], &ran.anonymous));
            self.judge_late_but(&[quick])?;
            healthy = self.live.iter().any(|p| p.serial == serial) && !self.died.contains(&serial);
            if let Some((whole, _)) = verdict::now(ledger, &[quick], &run.0).filter(|_| healthy) {
                run = whole;
            }
            // The hunt's confirmation waits as long as answers came late.
            self.cover = self.cover.max(ledger.came_after(&[quick]).unwrap_or_default());
        }
        // Where an inline confirmation ended the processes, this one is gone.
        let at = self.live.iter().position(|p| p.serial == serial);
        let healthy = healthy && at.is_some();
        let clean = run.2.is_empty();
        let new = new_in(&run, self.known, true);
        // A search session in violation is handed to the hunt as it is: the
        // hunt confirms in a fresh session whatever it reports, and reports
        // one no fresh session repeats with the scripts this process ran
        // before it.
        if healthy && *lane == Lane::Search && !clean {
            self.caught = Some((salt, quick, entry.history.clone()));
        }
        if healthy && (clean || matches!(lane, Lane::Shrink(_)) || *lane == Lane::Search) {
            return Ok(Some(run));
        }
        // A process that answered its marker goes on beside the fresh one,
        // where the server may run twice at once: what it still does with
        // this script's tokens is this script's late evidence, by salt, and
        // the fresh session meets tokens of its own. Otherwise it ends (it
        // may also carry an earlier script's state): first, or, under a
        // search where the server may run twice at once, on a thread of
        // its own beside the fresh session.
        if let Some(at) = at.filter(|_| !(healthy && self.target.ahead())) {
            self.end_for(lane, at);
        }
        // A window whose marker went unanswered showed only part of what
        // the script does (the server may have stalled on it): clean, it is
        // still run again fresh.
        if clean && !run.1.marker_unanswered {
            return Ok(Some(run));
        }
        if matches!(lane, Lane::Shrink(_)) {
            return Ok(Some(self.fresh(spec, salt)?));
        }
        // A search session whose process did not answer its marker is run
        // again fresh. Each finding that may be new is judged by itself: one
        // a fresh session does not repeat is state-dependent, kept with its
        // history.
        let fresh = self.fresh(spec, salt)?;
        let repeated: Vec<Distinct> = fresh.2.iter().map(|v| distinct(v, &fresh.0, &fresh.1)).collect();
        // A window whose marker went unanswered while its process ran on
        // was not shown to have read the script whole: what it lacks (an
        // answer or an effect that did not come, a verdict resting on time)
        // is no state-dependent finding, as the fresh session shows what
        // happens; what it showed (an effect, an answer, a line) still is.
        let partial = run.1.marker_unanswered && !run.1.exit.ended();
        let lacked = |k: &Distinct| {
            let mut of_k = run.2.iter().filter(|v| distinct(v, &run.0, &run.1) == *k);
            partial && of_k.all(|v| v.kind.absent() || on_time(v, &run.0, &run.1))
        };
        if let Some(key) = new.into_iter().filter(|k| !lacked(k)).find(|k| !repeated.contains(k)) {
            self.found.push(finding(entry, run, &key, false, self.teller(), self.seen()));
        }
        Ok(Some(fresh))
    }

    /// The scripts the shared process ran before the search session of
    /// `salt`, when that session ran in one and broke a check, and the salt
    /// its tokens carried there: a finding it showed that no fresh session
    /// repeats is state-dependent, reported with them.
    pub(crate) fn history_of(&self, salt: u32) -> Option<(Vec<crate::script::Script>, u32)> {
        self.caught.as_ref().filter(|(s, ..)| *s == salt).map(|(_, quick, h)| (h.scripts(), *quick))
    }

    /// What `spec` writes, with tokens of one fixed salt, where that is no
    /// more than [`FLIGHT_BYTES`]: two scripts that write the same are the
    /// same experiment.
    pub(crate) fn written(&self, spec: &ScriptSpec) -> Option<Vec<u8>> {
        let script = spec.render(&self.target.catalogue, 0);
        (script.len_bytes() <= FLIGHT_BYTES).then(|| script.stdin())
    }

    /// Whether shrinking candidates of `d`, cut from `spec`, can run in
    /// flight ([`Job::flight`]): in the persistent process, where `d` can
    /// show there (a candidate that must begin or end a process runs in
    /// one of its own), and where a round of them stays a size a server
    /// reads at once (a round of huge scripts would spend its time being
    /// read).
    pub(crate) fn flies(&self, d: &Distinct, spec: &ScriptSpec) -> bool {
        let shares = self.share && !self.unshared.contains(&spec.revision);
        shares && !Kind::shows_at_an_end(&d.kind) && self.written(spec).is_some()
    }

    /// Runs a round of shrinking candidates of `d` together: one after
    /// another in the persistent process, each window ending once its
    /// marker is answered, and each judged once the answers it awaits
    /// have come or are due, as a search session is. A candidate that
    /// cannot share the process runs in one of its own. None starts after
    /// `until`. A candidate whose process ended on its own while it still
    /// awaited an answer (a later one crashed it, say) had no deadline of
    /// its own: it counts as showing nothing. One whose process the job
    /// ended (worn out) had its answers awaited to their deadline first.
    pub(crate) fn flight(
        &mut self,
        round: &[(ScriptSpec, u32)],
        d: &Distinct,
        until: Option<Instant>,
    ) -> Result<Vec<SessionRun>, Fault> {
        let lane = Lane::Shrink(d.clone());
        let mut runs = Vec::with_capacity(round.len());
        self.died.clear();
        for (spec, salt) in round {
            if until.is_some_and(|u| Instant::now() >= u) {
                break;
            }
            self.sessions += 1;
            let shared = match self.share && !spec.needs_own_process_with(&self.target.catalogue) {
                true => self.shared(spec, *salt, &lane, true)?,
                false => None,
            };
            let run = match shared {
                Some(run) => run,
                None => self.fresh(spec, *salt)?,
            };
            runs.push(run);
        }
        let quick: Vec<u32> = round.iter().map(|(_, salt)| salt ^ QUICK).collect();
        self.await_due(&quick);
        self.judge_late()?;
        let ledger = self.target.ledger();
        let judged = runs.into_iter().map(|run| {
            let awaited = !run.1.awaiting.is_empty();
            match verdict::now(ledger, &quick, &run.0) {
                Some((_, Some(p))) if awaited && self.died.contains(&p) => (run.0, run.1, Vec::new()),
                Some((now, _)) => now,
                None => run,
            }
        });
        Ok(judged.collect())
    }

    /// Tends the persistent processes (their answers routed, their
    /// effects taken) until no session with a salt in `salts` awaits an
    /// answer: each has come, or is due. Bounded by the latest deadline,
    /// and the grace an answer that came by it gives its call to act.
    fn await_due(&mut self, salts: &[u32]) {
        self.tend_until(salts, &|ledger| ledger.latest_due(salts).is_none());
    }

    /// Tends the persistent processes until `done` holds of the ledger,
    /// within the bound [`Job::await_due`] has.
    fn tend_until(&mut self, salts: &[u32], done: &dyn Fn(&Ledger) -> bool) {
        let ledger = self.target.ledger();
        let Some(latest) = ledger.latest_due(salts) else { return };
        let bound = latest + self.target.waits().answer * 2;
        loop {
            for p in &mut self.live {
                if p.tend(ledger) && !self.died.contains(&p.serial) {
                    self.died.push(p.serial);
                }
            }
            ledger.expire(&[]);
            if done(ledger) || Instant::now() >= bound {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Judges the sessions that gained late evidence, or whose awaited
    /// answers came due; each that breaks a check it did not before, with a
    /// finding within the job's scope that neither the run nor this job has
    /// made, is confirmed in a fresh session (with waits four times as long where it
    /// rests on time alone) and kept: on the confirming thread where the
    /// server may run twice at once, else here. Only evidence that came late
    /// grows the quiet wait, whatever check it breaks: an answer that never
    /// came is no evidence of a slow server.
    fn judge_late(&mut self) -> Result<(), Fault> {
        self.judge_late_but(&[])
    }

    /// [`Job::judge_late`], but for the sessions with a salt in `own`,
    /// whose evidence the caller judges as a whole.
    fn judge_late_but(&mut self, own: &[u32]) -> Result<(), Fault> {
        for p in &mut self.live {
            p.drain(self.target.ledger());
        }
        for (entry, violations, first, reported) in verdict::rejudge(self.target.ledger(), self.scope) {
            let rests = |k: &Distinct| k.rests_on_time(&violations, &entry.script, &entry.obs);
            // Made, or claimed by another job: but where that claim rests
            // on time alone and may not be confirmed, evidence of it is
            // still judged (and kept once that claim is let go).
            let made =
                |k: &Distinct| self.known.is_some_and(|known| known.claimed(k, rests(k))) || self.made.contains(k);
            if made(&first) && reported.as_ref().is_none_or(made) {
                continue;
            }
            // Evidence of a server acting late grows the waits whatever it
            // breaks; only what the run reports is confirmed.
            self.cover = self.cover.max(entry.came_after.unwrap_or_default());
            // Answers that came due are no evidence of a slow server; any
            // other new violation is.
            let timed = rests(&first) && reported.as_ref().is_none_or(rests);
            if let Some(idle) = entry.idle_late.filter(|idle| !timed && !idle.is_zero()) {
                let late = entry.late.unwrap_or(idle).as_millis();
                let why = format!(
                    "{first} came {late} ms after its session was judged, {} ms after its process's latest",
                    idle.as_millis()
                );
                self.target.grow_quiet(idle, &why);
            }
            // What the caller judges as a whole is its to hand on.
            let Some(key) = reported.filter(|k| !made(k) && !own.contains(&entry.session.salt)) else {
                continue;
            };
            let on_time = rests(&key);
            self.made.push(key.clone());
            let task =
                Task { entry, violations, key, patience: if on_time { super::PATIENCE } else { 1 }, seen: self.seen() };
            match &self.confirmer {
                Some(c) => c.push(task),
                // One instance of the server at a time (none started ahead).
                None => {
                    self.end_processes();
                    let confirmed = confirm(self.target, self.teller(), task)?;
                    self.keep(confirmed);
                }
            }
        }
        self.collect(false)
    }

    /// Takes what the confirming thread has done: all it was given, once
    /// `finished` (and then confirms here what comes after). Every finding
    /// is kept before the first harness error is returned.
    fn collect(&mut self, finished: bool) -> Result<(), Fault> {
        let done = match &mut self.confirmer {
            None => return Ok(()),
            Some(c) if finished => c.finish(),
            Some(c) => c.ready(),
        };
        if finished {
            self.confirmer = None;
        }
        let mut fault = None;
        for f in done {
            match f {
                Ok(f) => self.keep(f),
                Err(e) => fault = fault.or(Some(e)),
            }
        }
        fault.map_or(Ok(()), Err)
    }

    /// Keeps what a late finding's confirmation came to. One that rests on
    /// time alone and was not repeated is no finding: it is told, and may
    /// be seen again.
    fn keep(&mut self, confirmed: Confirmed) {
        match confirmed {
            Ok(f) => self.found.push(f),
            // Told once, and seen again once: a second time it stays made.
            Err(key) if !self.unconfirmed_once.contains(&key) => {
                self.made.retain(|k| *k != key);
                self.unconfirmed_once.push(key.clone());
                self.unconfirmed.push(key);
            }
            Err(_) => {}
        }
    }

    /// Takes the keys of the late findings that rest on time alone and that
    /// no fresh session with waits four times as long repeated, in the order they came.
    pub fn take_unconfirmed(&mut self) -> Vec<Distinct> {
        std::mem::take(&mut self.unconfirmed)
    }

    fn teller(&self) -> Teller {
        Teller { policy: self.policy, seed: self.seed }
    }

    /// How many sessions the job has run, and for how long: when what it
    /// judges now was seen.
    fn seen(&self) -> (u32, Duration) {
        (self.sessions, self.started.elapsed())
    }

    /// Ends every process the job keeps, takes the effects still arriving,
    /// and judges the late evidence: the job's last findings.
    pub fn finish(&mut self) -> Result<Vec<Finding>, Fault> {
        self.end_processes();
        // The confirming thread's sessions end before the probes are
        // settled here (they take their own effects); what comes after is
        // confirmed here.
        self.collect(true)?;
        let ledger = self.target.ledger();
        let waits = self.target.waits();
        for action in self.target.probes().settle(waits.quiet, waits.answer) {
            ledger.arrived_between(action, Instant::now());
        }
        self.judge_late()?;
        Ok(self.take_found())
    }
}

/// The largest script whose shrinking candidates run in flight.
const FLIGHT_BYTES: usize = 256 << 10;

/// Flipped in the salt of a script's run in the persistent process, so
/// that a fresh run of the same session meets tokens the server has not
/// seen (one that remembers a call ignores it the second time).
const QUICK: u32 = 0x8000_0000;

impl Job<'_> {
    /// Ends the persistent processes, and waits for those ending apart to
    /// have ended; what they do meanwhile is late evidence of their latest
    /// scripts.
    fn end_processes(&mut self) {
        for p in self.live.drain(..) {
            p.end(self.target.ledger());
        }
        for ending in self.ending.drain(..) {
            joined(ending);
        }
        for (_, starting) in self.standby.drain(..) {
            if let Ok(Started::Ready(p)) = joined(starting) {
                p.end(self.target.ledger());
            }
        }
    }

    /// A persistent process of `revision`: the one on standby for it, if
    /// any, else one started now. Once the search has ended one of that
    /// revision's, the next is started on standby while this one serves,
    /// where the server may run twice at once.
    fn start(&mut self, revision: Revision) -> Result<Started, Fault> {
        let standby = self.standby.iter().position(|(r, _)| *r == revision);
        let started = match standby.map(|at| joined(self.standby.swap_remove(at).1)).transpose()? {
            // One that ended while it waited is ended here (what it wrote
            // is no script's), and another is started now.
            Some(Started::Ready(mut p)) => match p.exited() {
                true => {
                    p.end(self.target.ledger());
                    Persistent::start(self.target, revision)?
                }
                false => Started::Ready(p),
            },
            Some(started) => started,
            None => Persistent::start(self.target, revision)?,
        };
        if self.target.ahead() && self.replaced.contains(&revision) && matches!(started, Started::Ready(_)) {
            self.stand_by(revision);
        }
        Ok(started)
    }

    /// Starts, on standby, a persistent process for each of `revisions`
    /// that has none, all at once: a search that shares processes then
    /// waits for the slowest start once, not for each start in turn as it
    /// first draws each revision. Only where the server may run several
    /// times at once ([`ChildTarget::started_ahead`]).
    pub fn warm(&mut self, revisions: &[Revision]) {
        if !(self.share && self.target.ahead()) {
            return;
        }
        for &revision in revisions {
            if !self.live.iter().any(|p| p.revision == revision) {
                self.stand_by(revision);
            }
        }
    }

    /// Whether the process on standby for `revision` is still starting;
    /// where there is none (and the server may run twice at once), one
    /// begins to start now, and it is.
    fn starting(&mut self, revision: Revision) -> bool {
        if !self.target.ahead() {
            return false;
        }
        match self.standby.iter().find(|(r, _)| *r == revision) {
            Some((_, starting)) => !starting.is_finished(),
            None => {
                self.stand_by(revision);
                true
            }
        }
    }

    /// Starts a process for `revision` on standby, unless one is.
    fn stand_by(&mut self, revision: Revision) {
        if self.standby.iter().any(|(r, _)| *r == revision) {
            return;
        }
        let target = self.target.clone();
        self.standby.push((revision, std::thread::spawn(move || Persistent::start(&target, revision))));
    }

    /// Ends the persistent process at `at`.
    fn end_live(&mut self, at: usize) {
        self.live.swap_remove(at).end(self.target.ledger());
    }

    /// Ends the persistent process at `at` after a session in `lane`: on a
    /// thread of its own after a search session, which is judged when its
    /// evidence is in, not before the next one runs; in place otherwise
    /// (a shrinking step must see what it shows whole).
    fn end_for(&mut self, lane: &Lane, at: usize) {
        match lane {
            Lane::Search => self.end_apart(at),
            _ => self.end_live(at),
        }
    }

    /// Ends the persistent process at `at` on a thread of its own, where
    /// the server may run twice at once, while the search goes on: the
    /// answers it still owes are awaited there to their deadline, and what
    /// it does meanwhile goes to the ledger as late evidence, judged after
    /// a later session or when the job finishes, which waits for it.
    fn end_apart(&mut self, at: usize) {
        if !self.target.ahead() {
            return self.end_live(at);
        }
        let (done, going): (Vec<_>, Vec<_>) = self.ending.drain(..).partition(|e| e.is_finished());
        self.ending = going;
        done.into_iter().for_each(joined);
        let (p, target) = (self.live.swap_remove(at), self.target.clone());
        if !self.replaced.contains(&p.revision) {
            self.replaced.push(p.revision);
        }
        self.ending.push(std::thread::spawn(move || p.end(target.ledger())));
    }
}

/// Waits for a thread starting or ending a process, and takes what it
/// came to; a panic there goes on here.
fn joined<T>(thread: std::thread::JoinHandle<T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

impl Drop for Job<'_> {
    fn drop(&mut self) {
        self.end_processes();
    }
}

#[cfg(test)]
mod tests;

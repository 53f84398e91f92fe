//! One child process serving keep-open sessions one after another, so a
//! slow-starting server is started once, not once per session.
//!
//! The process is initialized once per revision. Each script then runs
//! without its handshake, with request ids no earlier script used, and ends
//! with a `ping` marker: everything on stdout before the marker's answer is
//! the script's, effects are the script's by their tokens' salt. A script
//! whose last frame is cut short cannot be followed by a marker: the marker
//! goes before that frame, and the script is its process's last, run to EOF
//! and exit as a fresh session would be. When starts are slow and a spare
//! process is at hand, it runs whole in the spare, so the shared one goes
//! on; else it ends the shared one, and a replacement starts meanwhile. A
//! script that must start before the handshake runs whole in a process of
//! its own, with the same markers; when starts are slow, that process is
//! not sent EOF but kept on standby, for the next script of its revision
//! cut at EOF to end, so the two take one start. A process that dies, or a
//! marker left unanswered, falls back to a plain fresh session.
//! Callers confirm any violation in a fresh process before reporting it:
//! sharing speeds the search up, it never decides a finding. The process
//! that showed the violation ends first (it may carry state from earlier
//! scripts, or still act on this one's tokens) and is replaced meanwhile.
//!
//! [`Sharing`] counts the sessions that cost a process start, which
//! `portcullis fuzz` weighs against how long one takes to suggest
//! `--mix lean`, and says why sharing was given up, if it was.
//!
//! The marker's answer means every synchronous effect has happened. Until
//! the server has shown that it acts synchronously (in enough scripts, every
//! valid call's effect came before the marker's answer and none after it), a
//! short quiet after the answer catches stragglers, and another after a
//! process's exit catches effects still in delivery; a server that ever
//! straggles keeps both for good. An effect that arrives after its
//! script (one whose tokens belong to another session) turns sharing off for
//! the rest of the job, unless it is an earlier script's valid call acting
//! once, late (see [`super::late_calls`]), or the hunted check reads no
//! effects: neither can hide a finding.

mod sharing;
mod starts;

pub use sharing::{Off, Sharing};
use starts::{Started, Starting};

use super::affinity;
use super::owed::{BRIEF_HEADROOM, HEADROOM, Possible};
use super::reply::{Answer, Waits, await_reply};
use super::{ChildGateway, ChildTarget};
use crate::attack::Step;
use crate::campaign::{HuntConfig, session};
use crate::check::{CheckId, Violation, check};
use crate::frame::{Expect, Frame};
use crate::protocol::{Id, Policy, Revision};
use crate::run::Observation;
use crate::script::{Mix, Script, ScriptSpec};
use crate::seam::{Awaited, Exit, Fault, Gateway, Recorder, Session};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// At least one keep-open session in this many runs whole in a process of
/// its own, EOF and all, so what only a fresh process shows (starting up,
/// exiting when stdin closes, no earlier script's state) is still exercised
/// while the rest share; under [`Mix::Lean`], as many times rarer as that
/// mix makes scripts that need a process of their own. Those scripts run
/// whole (a call before `initialize` always, a cut at EOF in the spare) and
/// count: a session runs alone only when they have fallen short.
const ALONE_EVERY: u32 = 32;

/// A process start at least this slow is not hidden behind the few scripts
/// that run before the next of the same revision: a script cut at EOF then
/// runs in the spare rather than ending the shared process, whose
/// replacement would be waited for. A quicker start is better left to a
/// replacement in the background, off the job's path.
const SLOW_START: Duration = Duration::from_millis(50);

/// Scripts in which every valid call's effect came before the marker's
/// answer, with none after, that show a server acts synchronously.
const PROVEN_SYNCHRONOUS: u32 = 16;

struct Live {
    revision: Revision,
    child: ChildGateway,
}

/// Where a script runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Process {
    /// In the shared process, without its handshake.
    Shared,
    /// Whole, in a process of its own that ends with it.
    Fresh,
}

/// A shared keep-open process for one job.
pub struct SharedChild<'a> {
    target: &'a ChildTarget,
    /// One process per revision it has been asked for.
    live: Vec<Live>,
    marks: u64,
    next_id: i64,
    /// Scripts so far that showed the server acting synchronously.
    synchronous: u32,
    /// An effect came after a marker's answer: the server may act late.
    straggles: bool,
    /// Sessions so far that ran whole in a process of its own, EOF and all.
    whole: u32,
    /// The one check the campaign hunts for, if it hunts for one.
    focus: Option<CheckId>,
    /// Processes starting in the background, at most one per revision.
    starting: Vec<Starting>,
    /// The latest an owed answer has come after its script's marker, once
    /// a script had every owed answer.
    answers_after: Option<Duration>,
    /// The same, over scripts with tool calls: how long a call may take.
    calls_after: Option<Duration>,
    /// A process spawned ahead for the next script that runs in a process
    /// of its own, so that its start overlaps the scripts run meanwhile.
    spare: Option<ChildGateway>,
    /// Processes a script that called before the handshake began, kept
    /// without EOF, at most one per revision, for the next script of their
    /// revision cut at EOF to end: when starts are slow, one start serves
    /// the two scripts that each need a process of their own.
    standby: Vec<Live>,
    /// The campaign's mix: how often sessions run alone is as many times
    /// rarer than [`ALONE_EVERY`] as it makes what needs a process of its
    /// own, and how often a spare may expect to be used.
    mix: Mix,
    /// The sessions the job will ask for, when known: no process is
    /// started that the sessions left cannot be expected to use.
    cases: Option<u32>,
    sharing: Sharing,
    /// Revisions still to start in the background, one at a time, before
    /// they are first drawn.
    ahead: Vec<Revision>,
    /// Whether the machine has a core to spare beside the campaign's jobs.
    core_to_spare: bool,
}

impl<'a> SharedChild<'a> {
    /// A shared process for `target`'s sessions, started on first use.
    pub fn new(target: &'a ChildTarget) -> Self {
        SharedChild {
            target,
            live: Vec::new(),
            marks: 0,
            next_id: 1,
            synchronous: 0,
            straggles: false,
            whole: 0,
            focus: None,
            starting: Vec::new(),
            answers_after: None,
            calls_after: None,
            spare: None,
            standby: Vec::new(),
            mix: Mix::Full,
            cases: None,
            sharing: Sharing::default(),
            ahead: Vec::new(),
            core_to_spare: false,
        }
    }

    /// A shared process for one of `jobs` jobs of a campaign run with
    /// `cfg`, as `portcullis fuzz` runs it: confirming only the hunted
    /// check, running sessions alone as rarely as the mix asks, and
    /// starting the job's revisions ahead when a core is spare.
    pub fn for_campaign(target: &'a ChildTarget, cfg: &HuntConfig, jobs: usize) -> Self {
        SharedChild::new(target).focused(cfg.focus).mixed(cfg.mix).ahead(&cfg.revisions, jobs).cases(cfg.cases)
    }

    /// Runs sessions alone as rarely as `mix` draws scripts that need a
    /// process of their own.
    pub fn mixed(mut self, mix: Mix) -> Self {
        self.mix = mix;
        self
    }

    /// The job will ask for `cases` sessions: a spare is spawned only while
    /// the sessions left can be expected to use it, and a retired process
    /// is replaced only while sessions are left. Sessions past `cases`
    /// (shrinking a finding) are not counted on.
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = Some(cases);
        self
    }

    /// The sessions the job will ask for after the current one, when known
    /// and not yet past.
    fn sessions_left(&self) -> Option<u32> {
        self.cases?.checked_sub(self.sharing.sessions)
    }

    /// Whether a spare may expect to be used: the sessions left would draw
    /// at least half a script that needs a process of its own, at the rate
    /// seen so far (what cost a start), taken with one more drawn at the
    /// mix's rate, so that the first sessions count on the mix.
    fn spare_pays(&self) -> bool {
        self.sessions_left().is_none_or(|left| {
            let seen = f64::from(self.sharing.costly + 1);
            let rate = seen / f64::from(self.sharing.sessions + self.mix.own_process_every());
            f64::from(left) * rate >= 0.5
        })
    }

    /// Whether processes take long to start ([`SLOW_START`]).
    fn slow_starts(&self) -> bool {
        self.sharing.quickest.is_some_and(|q| q >= SLOW_START)
    }

    /// Starts processes for the job's `revisions` ahead of need, in the
    /// background and one at a time, when the machine has a core to spare
    /// beside the `jobs` running: a slow starter's first sessions then do
    /// not wait for one start after another as each revision is first
    /// drawn, nor for a spare when the first script that needs a process
    /// of its own comes. Overlapping more starts than that would slow each
    /// of them, and a start that misses the timeout gives sharing up.
    pub fn ahead(mut self, revisions: &[Revision], jobs: usize) -> Self {
        if jobs < affinity::job_cores() {
            self.ahead = revisions.to_vec();
            self.core_to_spare = true;
        }
        self
    }

    /// Whether a script cut at EOF should run in the spare: starts are
    /// slow, and a spare is there and running.
    fn cut_in_spare(&mut self) -> bool {
        self.slow_starts() && self.spare.as_mut().is_some_and(|c| c.poll().is_none())
    }

    /// The process on standby at `revision`, if one is and it still runs.
    fn take_standby(&mut self, revision: Revision) -> Option<Live> {
        let at = self.standby.iter().position(|l| l.revision == revision)?;
        let mut live = self.standby.swap_remove(at);
        (!live.child.exit().ended()).then_some(live)
    }

    /// What sharing has cost in process starts so far, and whether it held.
    pub fn sharing(&self) -> Sharing {
        self.sharing
    }

    fn disabled(&self) -> bool {
        self.sharing.off.is_some()
    }

    /// Gives sharing up for the rest of the job.
    fn turn_off(&mut self, why: Off) {
        self.sharing.off.get_or_insert((why, self.sharing.sessions));
        self.standby.clear();
    }

    fn started(&mut self, started: Option<Started>) -> Option<ChildGateway> {
        let (child, took) = started?;
        self.sharing.quickest = self.sharing.quickest.into_iter().chain([took]).min();
        Some(child)
    }

    /// Confirms in a fresh process only violations of `check`, when the
    /// campaign hunts for that one check alone.
    pub fn focused(mut self, check: Option<CheckId>) -> Self {
        self.focus = check;
        self
    }

    /// Writes the next `ping` marker and reads stdout until its answer and
    /// the `awaited` ones (see [`marker`]), learning how late a server
    /// answers after the marker: the stdout before it all and when the
    /// marker's answer came, or `None`. A valid tool call's answer is waited
    /// for as long as the server's calls have shown they may take
    /// ([`HEADROOM`] times the slowest, the timeout until one was answered):
    /// a call still in flight would act during a later script, which gives
    /// sharing up.
    ///
    /// The `misread` ids, which come only if the server misread a
    /// must-reject frame as a call, are waited for briefly, until they come
    /// or until as many errors with a null id as the script's frames owe
    /// (`anonymous`) have.
    fn until_marker(
        &mut self,
        child: &mut ChildGateway,
        awaited: Awaited,
        process: Process,
    ) -> Result<Option<(Vec<u8>, Instant)>, Fault> {
        self.marks += 1;
        let limits = self.target.limits;
        // A healthy server answers a ping at once; one that does not within
        // the exit grace is wedged, unless it is still starting (an
        // interpreter, say), which gets the full timeout. Answers owed after
        // the marker are waited for the exit grace until the server has
        // shown how late they come.
        let grace = limits.exit_grace.min(limits.timeout);
        let bound = if process == Process::Fresh { limits.timeout } else { grace };
        let owed_wait = self.answers_after.map_or(grace, |d| (d * 4).max(limits.quiet).min(grace));
        let shown = self.calls_after.map_or(limits.timeout, |d| (d * HEADROOM).min(limits.timeout));
        let call_wait = owed_wait.max(shown);
        // A call misread from a must-reject frame takes as long as a valid
        // one, but a correct server never answers it: a brief wait, twice as
        // late as calls have answered after a marker (until they have, as
        // fresh sessions wait). One cut too short only lets the call act
        // late, which gives sharing up, and the sessions after it run fresh.
        let misread_wait = self.calls_after.map_or_else(
            || self.target.misread_wait(),
            |d| (d * BRIEF_HEADROOM).max(limits.quiet / 5).min(limits.timeout),
        );
        let calls = !awaited.calls.is_empty();
        let wait = |ids: Vec<Id>, wait: Duration| ids.into_iter().map(move |id| (id, wait));
        let waits = Waits {
            owed: wait(awaited.requests, owed_wait).chain(wait(awaited.calls, call_wait)).collect(),
            misread: Possible::new(
                awaited.misread.into_iter().map(|id| (id, misread_wait)).collect(),
                awaited.anonymous,
            ),
        };
        let Some(answer) = marker(child, &format!("portcullis-mark-{}", self.marks), waits, bound)? else {
            return Ok(None);
        };
        if let Some(after) = answer.owed_after {
            self.answers_after = Some(self.answers_after.unwrap_or_default().max(after));
            if calls {
                self.calls_after = Some(self.calls_after.unwrap_or_default().max(after));
            }
        }
        Ok(Some((answer.stdout, answer.at)))
    }

    /// One keep-open session as `portcullis fuzz` runs it: in the shared
    /// process, unless it is one of those that run alone or it cannot share,
    /// which run whole in a process of their own, still with a marker
    /// before EOF rather than a wait for quiet. A session that shows a
    /// violation (of the focused check, if any) runs again as a plain fresh
    /// session ([`session`]), whose verdict stands.
    pub fn session(&mut self, spec: &ScriptSpec, salt: u32) -> Result<(Script, Observation, Vec<Violation>), Fault> {
        self.sharing.sessions += 1;
        self.start_ahead(spec.revision, false);
        let alone = self.whole < self.sharing.sessions / (ALONE_EVERY * self.mix.rarity());
        // The quick run's tokens are not the confirmation's: a server that
        // remembers a call (and ignores it the second time) still meets the
        // confirmation's as new. Flipping the top bit makes it the salt of a
        // session number past 2^31, which no hunt reaches.
        let quick_salt = salt ^ 0x8000_0000;
        let shared = match alone {
            true => None,
            false => self.run_in(spec, quick_salt, Process::Shared)?,
        };
        let quick = match shared {
            Some(run) => Some(run),
            None => {
                self.sharing.costly += 1;
                let whole = self.run_in(spec, quick_salt, Process::Fresh)?;
                // One kept on standby has not seen EOF.
                self.whole += u32::from(whole.as_ref().is_some_and(|(_, obs, _)| obs.eof_sent));
                whole
            }
        };
        let Some(quick) = quick else { return session(self.target, Policy::KeepOpen, spec, salt) };
        if !quick.2.iter().any(|v| self.focus.is_none_or(|c| c == v.check)) {
            return Ok(quick);
        }
        // The shared process ends first, so that nothing it still does (an
        // action it started after answering, say) lands in the fresh
        // session. Its replacement starts meanwhile, if sessions are left.
        self.standby.retain(|l| l.revision != spec.revision);
        if self.live.iter().any(|l| l.revision == spec.revision) {
            self.live.retain(|l| l.revision != spec.revision);
            self.replace(spec.revision);
        }
        let fresh = session(self.target, Policy::KeepOpen, spec, salt)?;
        if fresh.2.is_empty() {
            // What sharing saw did not come back: the process may have
            // carried an earlier script's state, or an answer came later
            // than waited for.
            self.answers_after = self.answers_after.map(|d| (d * 2).max(self.target.limits.quiet));
        }
        Ok(fresh)
    }

    /// Runs `spec` in the shared process under keep-open. `None` when it
    /// must run in a fresh process instead.
    pub fn run(
        &mut self,
        spec: &ScriptSpec,
        salt: u32,
    ) -> Result<Option<(Script, Observation, Vec<Violation>)>, Fault> {
        self.run_in(spec, salt, Process::Shared)
    }

    /// Runs `spec` under keep-open with markers: without its handshake in
    /// the shared process, or whole in a process of its own that ends with
    /// it. `None` when it cannot run that way.
    fn run_in(
        &mut self,
        spec: &ScriptSpec,
        salt: u32,
        process: Process,
    ) -> Result<Option<(Script, Observation, Vec<Violation>)>, Fault> {
        if self.disabled() {
            return Ok(None);
        }
        let full = spec.render_from(&self.target.catalogue, salt, self.next_id);
        let highest = full.frames.iter().filter_map(|f| match f.id {
            Some(Id::Int(n)) => Some(n),
            _ => None,
        });
        self.next_id = highest.max().unwrap_or(self.next_id).max(self.next_id) + 1_000;
        let mut script = match process {
            Process::Shared => match full.after_handshake() {
                Some(body) => body,
                None => return Ok(None),
            },
            Process::Fresh => full,
        };
        // A frame cut short at EOF ends its process: a process on standby,
        // else the spare when starts are slow, so the shared one goes on
        // (see [`SLOW_START`]).
        let cut_in_shared = process == Process::Shared && script.ends_cut();
        let standby = if cut_in_shared { self.take_standby(spec.revision) } else { None };
        if cut_in_shared && standby.is_none() && self.cut_in_spare() {
            return Ok(None);
        }
        // A script that must begin its process, when starts are slow, leaves
        // it on standby rather than end it with EOF (one run alone, or after
        // a failed shared run, sees EOF as a fresh session does).
        let keep = process == Process::Fresh
            && spec.steps.iter().any(Step::before_handshake)
            && !script.ends_cut()
            && self.slow_starts()
            && !self.standby.iter().any(|l| l.revision == spec.revision);
        let from_standby = standby.is_some();
        let mut live = match (process, standby) {
            (_, Some(live)) => live,
            (Process::Shared, None) => match self.ensure(spec.revision)? {
                Some(live) => live,
                None => return Ok(None),
            },
            (Process::Fresh, None) => {
                let another = self.spare_pays();
                Live { revision: spec.revision, child: self.target.start_from(&mut self.spare, another)? }
            }
        };
        let recorder = Recorder::new();
        live.child.rebind(recorder.clone(), salt);
        if process == Process::Shared {
            live.child.take_stdout(); // late lines of an earlier script are not this one's
            live.child.take_stderr();
        }
        let late_before = self.target.late_effects.load(Ordering::Relaxed);
        let late_calls_before = self.target.late_calls.acted();
        // A frame cut short at EOF cannot be followed by a marker: the marker
        // goes before it, then EOF ends the process, as it ends a fresh one.
        // Its replacement starts now, while the script runs, if sessions are
        // left.
        let stdin = script.stdin();
        let cut = script.ends_cut();
        if cut_in_shared && !from_standby {
            self.sharing.costly += 1;
            self.replace(spec.revision);
        }
        let whole = &script.frames[..script.frames.len() - usize::from(cut)];
        let cut_at = whole.iter().map(|f| f.bytes.len()).sum::<usize>();
        // Each write in two at the cut: its part before the marker, and after.
        let spans = script.write_spans();
        let part = |lo: usize, hi: usize| {
            spans.iter().map(move |s| s.start.clamp(lo, hi)..s.end.clamp(lo, hi)).filter(|p| !p.is_empty())
        };
        for span in part(0, cut_at) {
            live.child.write_stdin(&stdin[span])?;
        }
        // Answers the hunted check cannot read are not waited for.
        let reads = |f: &Frame| self.focus.is_none_or(|c| c.reads_answer(f, Policy::KeepOpen));
        let mut awaited = Awaited::after_reading(whole, reads);
        // A server shown to act before it answers, and to answer in order
        // (nothing owed has come after a marker's answer), has acted on a
        // misread frame by the marker's answer. One that answers
        // concurrently may answer the marker first, whatever it showed of
        // its valid calls: the answer a misread frame would get is waited
        // for, as a misread call acting during a later script would give
        // sharing up, and its answer would land in that script's stdout.
        // A hunt that reads neither effects nor the answers of the frames
        // that could be misread (`liveness`) cannot be misled by either:
        // there, it is not waited for.
        let effects_read = self.focus.is_none_or(CheckId::reads_effects);
        let misread_read = effects_read || whole.iter().any(|f| reads(f) && !f.ids_if_misread().is_empty());
        if !misread_read || self.proven_synchronous() && self.answers_after == Some(Duration::ZERO) {
            awaited.misread.clear();
        }
        let Some((mut stdout, answered)) = self.until_marker(&mut live.child, awaited, process)? else {
            return Ok(None);
        };
        let mut exit_before_eof = live.child.exit();
        let last = cut || (process == Process::Fresh && !keep);
        // A script with nothing after its marker (no cut frame, no EOF) has
        // shown, once the marker is answered, all a wait would show.
        if cut || (last && script.eof) {
            for span in part(cut_at, stdin.len()) {
                live.child.write_stdin(&stdin[span])?;
            }
            exit_before_eof = live.child.exit();
            if script.eof {
                live.child.close_stdin()?;
            }
            // A server shown to act before it answers has acted before it
            // exits: once it and its processes are gone, nothing is on its way.
            if self.proven_synchronous() {
                live.child.after_exit = Duration::ZERO;
            }
            live.child.settle(script.eof)?;
            stdout.extend(live.child.take_stdout());
        } else {
            script.eof = false; // the process goes on: no EOF was sent
            live.child.collect_effects(Duration::ZERO);
            if !self.proven_synchronous() {
                self.catch_stragglers(&mut live.child, &script, &recorder, answered);
            }
        }
        // An effect that still comes late could be pinned on the wrong
        // script, so the first one turns sharing off for good, unless the
        // hunted check reads no effects.
        if effects_read && self.target.late_effects.load(Ordering::Relaxed) > late_before {
            self.turn_off(Off::LateEffect);
            return Ok(None);
        }
        // An earlier script's valid call acted during this one: calls may
        // take longer than was waited for, and the server acts late.
        if self.target.late_calls.acted() > late_calls_before {
            self.straggles = true;
            let limits = self.target.limits;
            self.calls_after = Some(self.calls_after.map_or(limits.quiet, |d| (d * 2).min(limits.timeout)));
        }
        let exit = live.child.exit();
        let obs = Observation {
            stdout,
            stderr: live.child.take_stderr(),
            effects: recorder.actions(),
            ended_at: exit_before_eof.ended().then_some(stdin.len()),
            exit_before_eof,
            exit: exit.clone(),
            eof_sent: last && script.eof,
            cut: live.child.cut(),
        };
        live.child.forget_taken();
        let session = Session { policy: Policy::KeepOpen, revision: spec.revision, salt };
        let violations = check(&script, &obs, &session);
        if exit == Exit::Running && !last {
            self.target.late_calls.note(&script, &obs.effects);
            match keep {
                true => self.standby.push(live),
                false => self.live.push(live),
            }
        }
        Ok(Some((script, obs, violations)))
    }

    /// Whether the server has shown that it acts before it answers, and has
    /// never acted after.
    fn proven_synchronous(&self) -> bool {
        !self.straggles && self.synchronous >= PROVEN_SYNCHRONOUS
    }

    /// Waits a short quiet for effects after the marker's answer (`answered`),
    /// and learns from what came whether the server acts synchronously. The
    /// quiet counts from the answer, or from the latest effect if one came
    /// after it: the brief wait for misread answers, also counted from the
    /// marker's answer, may have kept it already.
    fn catch_stragglers(&mut self, child: &mut ChildGateway, script: &Script, recorder: &Recorder, answered: Instant) {
        let by_marker = recorder.actions().len();
        child.collect_effects_after(answered, self.target.limits.quiet / 5);
        let valid_calls: usize = script
            .frames
            .iter()
            .map(|f| match &f.expect {
                Expect::Act(calls) => calls.len(),
                _ => 0,
            })
            .sum();
        if recorder.actions().len() > by_marker {
            self.straggles = true;
        } else if valid_calls > 0 && by_marker >= valid_calls {
            self.synchronous += 1;
        }
    }
}

impl Drop for SharedChild<'_> {
    /// Closes every process's stdin before any is ended, so that their
    /// exits overlap rather than each taking its grace in turn; waits for
    /// processes still starting, and so ends them.
    fn drop(&mut self) {
        let processes = self.live.iter_mut().chain(&mut self.standby).map(|l| &mut l.child);
        for child in processes.chain(&mut self.spare) {
            let _ = child.close_stdin();
        }
        for s in self.starting.drain(..) {
            let _ = s.thread.join();
        }
    }
}

/// Writes a `ping` marker with id `mark` and reads stdout until its answer
/// (at most `bound`), then until the `owed` ids are answered too, each for
/// at most its own wait, as a server answering concurrently may answer them
/// after it. `None` if the marker's answer never came or the child ended.
fn marker(child: &mut ChildGateway, mark: &str, waits: Waits, bound: Duration) -> Result<Option<Answer>, Fault> {
    child.write_stdin(format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{mark}\",\"method\":\"ping\"}}\n").as_bytes())?;
    Ok(await_reply(child, &Value::from(mark), waits, bound))
}

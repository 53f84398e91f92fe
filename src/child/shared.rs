//! One child process serving keep-open sessions one after another, so a
//! slow-starting server is started once, not once per session.
//!
//! The process is initialized once per revision. Each script then runs
//! without its handshake, with request ids no earlier script used, and ends
//! with a `ping` marker: everything on stdout before the marker's answer is
//! the script's, effects are the script's by their tokens' salt. A script
//! whose last frame is cut short cannot be followed by a marker: it is the
//! process's last, run to EOF and exit as a fresh session would be. A script
//! that must start before the handshake, a process that dies, or a marker
//! left unanswered falls back to a fresh process.
//! Callers confirm any violation in a fresh process before reporting it:
//! sharing speeds the search up, it never decides a finding; a process whose
//! violation does not come back fresh is retired, as it may carry state from
//! earlier scripts.
//!
//! The marker's answer means every synchronous effect has happened. Until
//! the server has shown that it acts synchronously (in enough scripts, every
//! valid call's effect came before the marker's answer and none after it), a
//! short quiet after the answer catches stragglers; a server that ever
//! straggles keeps that quiet for good. An effect that arrives after its
//! script (one whose tokens belong to another session) turns sharing off for
//! the rest of the job.

use super::reply::await_reply;
use super::{ChildGateway, ChildTarget};
use crate::attack::lifecycle::{INITIALIZED, initialize_text};
use crate::campaign::{run_script, session};
use crate::catalogue::Catalogue;
use crate::check::{CheckId, Violation, check};
use crate::frame::Expect;
use crate::protocol::{Id, Policy, Revision};
use crate::run::Observation;
use crate::script::{Script, ScriptSpec};
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One keep-open session in this many runs alone in a fresh process, EOF
/// and all, so what only a fresh process shows (starting up, exiting when
/// stdin closes) is still exercised while the rest share.
const ALONE_EVERY: u32 = 32;

/// Scripts in which every valid call's effect came before the marker's
/// answer, with none after, that show a server acts synchronously.
const PROVEN_SYNCHRONOUS: u32 = 16;

struct Live {
    revision: Revision,
    child: ChildGateway,
}

/// A shared keep-open process for one job.
pub struct SharedChild<'a> {
    target: &'a ChildTarget,
    /// One process per revision it has been asked for.
    live: Vec<Live>,
    marks: u64,
    next_id: i64,
    /// Sessions asked for through [`SharedChild::session`].
    sessions: u32,
    /// Sharing is off: the server did not answer a `ping` marker.
    disabled: bool,
    /// Scripts so far that showed the server acting synchronously.
    synchronous: u32,
    /// An effect came after a marker's answer: the server may act late.
    straggles: bool,
    /// The one check the campaign hunts for, if it hunts for one.
    focus: Option<CheckId>,
}

impl<'a> SharedChild<'a> {
    /// A shared process for `target`'s sessions, started on first use.
    pub fn new(target: &'a ChildTarget) -> Self {
        SharedChild {
            target,
            live: Vec::new(),
            marks: 0,
            next_id: 1,
            sessions: 0,
            disabled: false,
            synchronous: 0,
            straggles: false,
            focus: None,
        }
    }

    /// Confirms in a fresh process only violations of `check`, when the
    /// campaign hunts for that one check alone.
    pub fn focused(self, check: Option<CheckId>) -> Self {
        SharedChild { focus: check, ..self }
    }

    /// Writes a `ping` marker and reads stdout until its answer and those
    /// to the `owed` ids, which a server answering concurrently may send
    /// after it (at most `bound` in all). Returns all that stdout but the
    /// marker's answer, or `None` if it never came or the child ended.
    fn until_marker(
        &mut self,
        child: &mut ChildGateway,
        owed: Vec<Id>,
        bound: Duration,
    ) -> Result<Option<Vec<u8>>, Fault> {
        self.marks += 1;
        let mark = format!("portcullis-mark-{}", self.marks);
        child.write_stdin(format!(r#"{{"jsonrpc":"2.0","id":"{mark}","method":"ping"}}"#).as_bytes())?;
        child.write_stdin(b"\n")?;
        Ok(await_reply(child, &Value::from(mark), owed, bound).map(|(stdout, _)| stdout))
    }

    /// A live process initialized at `revision`, started if need be.
    fn ensure(&mut self, revision: Revision) -> Result<Option<Live>, Fault> {
        if let Some(at) = self.live.iter().position(|l| l.revision == revision) {
            let mut live = self.live.swap_remove(at);
            if !live.child.exit().ended() {
                return Ok(Some(live));
            }
        }
        let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
        let mut child = self.target.start(&session, Recorder::new())?;
        let init = "portcullis-init";
        let hello = format!(
            "{}\n{}\n",
            initialize_text(0, revision).replace(r#""id":0"#, &format!(r#""id":"{init}""#)),
            INITIALIZED
        );
        child.write_stdin(hello.as_bytes())?;
        // Starting may be slow (an interpreter, say): the full timeout.
        if self.until_marker(&mut child, vec![Id::Str(init.into())], self.target.limits.timeout)?.is_none() {
            self.disabled = true;
            return Ok(None);
        }
        Ok(Some(Live { revision, child }))
    }

    /// One keep-open session as `portcullis fuzz` runs it: in the shared
    /// process, unless it is one of those that run alone or it cannot share.
    /// A shared session that shows a violation (of the focused check, if
    /// any) runs again in a fresh process, whose verdict stands.
    pub fn session(&mut self, spec: &ScriptSpec, salt: u32) -> Result<(Script, Observation, Vec<Violation>), Fault> {
        self.sessions += 1;
        if self.sessions.is_multiple_of(ALONE_EVERY) {
            return session(self.target, Policy::KeepOpen, spec, salt);
        }
        let Some(shared) = self.run(spec, salt)? else {
            return session(self.target, Policy::KeepOpen, spec, salt);
        };
        if !shared.2.iter().any(|v| self.focus.is_none_or(|c| c == v.check)) {
            return Ok(shared);
        }
        let fresh = session(self.target, Policy::KeepOpen, spec, salt)?;
        if fresh.2.is_empty() {
            self.live.retain(|l| l.revision != spec.revision);
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
        if self.disabled {
            return Ok(None);
        }
        let full = spec.render_from(&self.target.catalogue, salt, self.next_id);
        let Some(script) = full.after_handshake() else { return Ok(None) };
        let highest = full.frames.iter().filter_map(|f| match f.id {
            Some(Id::Int(n)) => Some(n),
            _ => None,
        });
        self.next_id = highest.max().unwrap_or(self.next_id).max(self.next_id) + 1_000;
        let Some(mut live) = self.ensure(spec.revision)? else { return Ok(None) };
        let recorder = Recorder::new();
        live.child.rebind(recorder.clone(), salt);
        live.child.take_stdout(); // late lines of an earlier script are not this one's
        live.child.take_stderr();
        let late_before = self.target.late_effects.load(Ordering::Relaxed);
        if script.ends_cut() {
            return self.last_script(live, &script, salt, late_before);
        }
        let stdin = script.stdin();
        for span in script.write_spans() {
            live.child.write_stdin(&stdin[span])?;
        }
        // A healthy server answers a ping at once; one that does not within
        // the exit grace is wedged, and the script runs in a fresh process.
        let limits = self.target.limits;
        let owed = script.frames.iter().flat_map(|f| f.owed_ids()).collect();
        let Some(stdout) = self.until_marker(&mut live.child, owed, limits.exit_grace.min(limits.timeout))? else {
            return Ok(None);
        };
        live.child.collect_effects(Instant::now(), Duration::ZERO);
        if self.straggles || self.synchronous < PROVEN_SYNCHRONOUS {
            self.catch_stragglers(&mut live.child, &script, &recorder);
        }
        // An effect that still comes late could be pinned on the wrong
        // script, so the first one turns sharing off for good.
        if self.target.late_effects.load(Ordering::Relaxed) > late_before {
            self.disabled = true;
            return Ok(None);
        }
        let exit = live.child.exit();
        let obs = Observation {
            stdout,
            stderr: live.child.take_stderr(),
            effects: recorder.actions(),
            exit_before_eof: exit.clone(),
            ended_at: exit.ended().then_some(stdin.len()),
            exit: exit.clone(),
            eof_sent: false,
            cut: live.child.cut(),
        };
        live.child.forget_taken();
        let session = Session { policy: Policy::KeepOpen, revision: spec.revision, salt };
        let violations = check(&script, &obs, &session);
        if exit == Exit::Running {
            self.live.push(live);
        }
        Ok(Some((script, obs, violations)))
    }

    /// Waits a short quiet for effects after the marker's answer, and learns
    /// from what came whether the server acts synchronously.
    fn catch_stragglers(&mut self, child: &mut ChildGateway, script: &Script, recorder: &Recorder) {
        let by_marker = recorder.actions().len();
        child.collect_effects(Instant::now(), self.target.limits.quiet / 5);
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

    /// Runs `script`, whose last frame is cut short, as `live`'s last: to
    /// EOF and exit, as a fresh session ends. The process is retired after.
    fn last_script(
        &mut self,
        live: Live,
        script: &Script,
        salt: u32,
        late_before: usize,
    ) -> Result<Option<(Script, Observation, Vec<Violation>)>, Fault> {
        let adopted = Adopted { catalogue: &self.target.catalogue, child: RefCell::new(Some(live.child)) };
        let (obs, violations) = run_script(&adopted, Policy::KeepOpen, script, salt)?;
        if self.target.late_effects.load(Ordering::Relaxed) > late_before {
            self.disabled = true;
            return Ok(None);
        }
        Ok(Some((script.clone(), obs, violations)))
    }
}

/// A target whose one session is a process already running: a shared
/// process handed to the fresh-session driver for its last script.
struct Adopted<'a> {
    catalogue: &'a Catalogue,
    child: RefCell<Option<ChildGateway>>,
}

impl Target for Adopted<'_> {
    type Gateway = ChildGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, session: &Session, recorder: Recorder) -> Result<ChildGateway, Fault> {
        let mut child = self.child.take().ok_or_else(|| Fault::Spawn("the shared process was handed over".into()))?;
        child.rebind(recorder, session.salt);
        Ok(child)
    }
}

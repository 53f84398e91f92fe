//! One child process serving keep-open sessions one after another, so a
//! slow-starting server is started once, not once per session.
//!
//! The process is initialized once per revision. Each script then runs
//! without its handshake, with request ids no earlier script used, and ends
//! with a `ping` marker: everything on stdout before the marker's answer is
//! the script's, effects are the script's by their tokens' salt. A script
//! that cannot run that way (lifecycle abuse, a frame cut at EOF), a process
//! that dies, or a marker left unanswered falls back to a fresh process.
//! Callers confirm any violation in a fresh process before reporting it:
//! sharing speeds the search up, it never decides a finding. An effect that
//! arrives after its script (one whose tokens belong to another session)
//! turns sharing off for the rest of the job.

use super::reply::await_reply;
use super::{ChildGateway, ChildTarget};
use crate::attack::lifecycle::{INITIALIZED, initialize_text};
use crate::campaign::session;
use crate::check::{Violation, check};
use crate::protocol::{Id, Policy, Revision};
use crate::run::Observation;
use crate::script::{Script, ScriptSpec};
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One keep-open session in this many runs alone in a fresh process, EOF
/// and all, so what only a fresh process shows (starting up, exiting when
/// stdin closes) is still exercised while the rest share.
const ALONE_EVERY: u32 = 32;

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
}

impl<'a> SharedChild<'a> {
    /// A shared process for `target`'s sessions, started on first use.
    pub fn new(target: &'a ChildTarget) -> Self {
        SharedChild { target, live: Vec::new(), marks: 0, next_id: 1, sessions: 0, disabled: false }
    }

    /// Writes a `ping` marker and reads stdout until its answer: the bytes
    /// before it, or `None` if it never came (bounded) or the child ended.
    fn until_marker(&mut self, child: &mut ChildGateway, bound: Duration) -> Result<Option<Vec<u8>>, Fault> {
        self.marks += 1;
        let mark = format!("portcullis-mark-{}", self.marks);
        child.write_stdin(format!(r#"{{"jsonrpc":"2.0","id":"{mark}","method":"ping"}}"#).as_bytes())?;
        child.write_stdin(b"\n")?;
        Ok(await_reply(child, &Value::from(mark), bound).map(|(before, _)| before))
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
        let hello = format!(
            "{}\n{}\n",
            initialize_text(0, revision).replace(r#""id":0"#, r#""id":"portcullis-init""#),
            INITIALIZED
        );
        child.write_stdin(hello.as_bytes())?;
        // Starting may be slow (an interpreter, say): the full timeout.
        if self.until_marker(&mut child, self.target.limits.timeout)?.is_none() {
            self.disabled = true;
            return Ok(None);
        }
        Ok(Some(Live { revision, child }))
    }

    /// One keep-open session as `portcullis fuzz` runs it: in the shared
    /// process, unless it is one of those that run alone or it cannot share.
    /// A shared session that shows a violation runs again in a fresh
    /// process, whose verdict stands.
    pub fn session(&mut self, spec: &ScriptSpec, salt: u32) -> Result<(Script, Observation, Vec<Violation>), Fault> {
        self.sessions += 1;
        if !self.sessions.is_multiple_of(ALONE_EVERY)
            && let Some(clean) = self.run(spec, salt)?.filter(|(_, _, v)| v.is_empty())
        {
            return Ok(clean);
        }
        session(self.target, Policy::KeepOpen, spec, salt)
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
        let stdin = script.stdin();
        for span in script.write_spans() {
            live.child.write_stdin(&stdin[span])?;
        }
        let late_before = self.target.late_effects.load(Ordering::Relaxed);
        // A healthy server answers a ping at once; one that does not within
        // the exit grace is wedged, and the script runs in a fresh process.
        let limits = self.target.limits;
        let Some(stdout) = self.until_marker(&mut live.child, limits.exit_grace.min(limits.timeout))? else {
            return Ok(None);
        };
        // The marker's answer means every synchronous effect has happened;
        // a short quiet catches stragglers. An effect that still comes late
        // (an asynchronous server) could be pinned on the wrong script, so
        // the first one turns sharing off for good.
        live.child.collect_effects(self.target.limits.quiet / 5);
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
}

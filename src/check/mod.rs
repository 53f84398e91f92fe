//! Checks: named invariants with stable ids, run over one session's script
//! and observation. A violation names its check, the frame and the byte span.
//!
//! | id | holds when |
//! |---|---|
//! | `stdout-clean` | every stdout line is UTF-8, one JSON value, a server-to-client shape the revision permits; no bytes after the last LF |
//! | `no-effect-on-reject` | no effect for a must-reject frame, for a frame the gateway answered with an error, nor without a known token |
//! | `exactly-once` | each valid call executes once with exactly its arguments, none outside the tool's schema |
//! | `policy` | under `close`, nothing acts or is answered after the first malformed or invalid frame and the gateway ends; under `keep-open`, the session goes on and no call inherits a rejected frame's arguments |
//! | `correlation` | one response per request id, none to ids never sent, errors for rejected requests with JSON-RPC's codes |
//! | `liveness` | no crash, no early exit, exit once stdin closes |

mod correlation;
mod effects;
mod facts;
mod kind;
mod lifetime;
mod stdout;

pub(crate) use facts::Facts;
pub use kind::Kind;
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use stdout::line_problem;

/// The policy a gateway showed in one session run under [`Policy::Auto`],
/// and the frame it showed it on: see [`facts::seen_policy`].
pub(crate) fn seen_policy(script: &Script, obs: &Observation, session: &Session) -> Option<(Policy, usize)> {
    let script = crate::fill::written(script, &obs.filled);
    facts::seen_policy(&Facts::new(&script, obs, session))
}

use crate::frame::Rule;
use crate::observation::Observation;
use crate::protocol::{Level, Policy};
use crate::script::Script;
use crate::seam::Session;
use std::fmt;
use std::ops::Range;

/// A check's stable identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CheckId {
    /// The gateway crashed, hung past a bound or did not exit on EOF.
    Liveness,
    /// An effect for a rejected frame, or with no known token.
    NoEffectOnReject,
    /// Something happened that the session policy forbids.
    Policy,
    /// A valid call did not execute exactly once with exactly its arguments.
    ExactlyOnce,
    /// Responses do not match requests one to one, or carry wrong codes.
    Correlation,
    /// stdout carries something other than complete protocol messages.
    StdoutClean,
}

impl CheckId {
    /// Every check, in the order a session's first violation is chosen.
    pub const ALL: [CheckId; 6] = [
        CheckId::Liveness,
        CheckId::NoEffectOnReject,
        CheckId::Policy,
        CheckId::ExactlyOnce,
        CheckId::Correlation,
        CheckId::StdoutClean,
    ];

    /// The stable id.
    pub fn id(self) -> &'static str {
        match self {
            CheckId::Liveness => "liveness",
            CheckId::NoEffectOnReject => "no-effect-on-reject",
            CheckId::Policy => "policy",
            CheckId::ExactlyOnce => "exactly-once",
            CheckId::Correlation => "correlation",
            CheckId::StdoutClean => "stdout-clean",
        }
    }

    /// The documented failure text, the first line of every violation.
    pub fn failure(self) -> &'static str {
        match self {
            CheckId::Liveness => "the gateway crashed, ended early, stalled, or did not exit when stdin closed",
            CheckId::NoEffectOnReject => "a rejected frame, or one with no known token, reached the executor",
            CheckId::Policy => "the session policy was broken after a rejected frame",
            CheckId::ExactlyOnce => "a valid call did not reach the executor exactly once with exactly its arguments",
            CheckId::Correlation => "responses do not answer requests one to one with the right codes",
            CheckId::StdoutClean => "stdout carried bytes that are not a complete protocol message",
        }
    }

    /// Looks a check up by its id.
    pub fn from_id(id: &str) -> Option<CheckId> {
        CheckId::ALL.into_iter().find(|c| c.id() == id)
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Which byte stream a span points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stream {
    /// What the client wrote.
    Stdin,
    /// What the gateway wrote.
    Stdout,
}

/// A byte span in one stream.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The stream.
    pub stream: Stream,
    /// The byte range.
    pub range: Range<usize>,
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    /// The check that fails.
    pub check: CheckId,
    /// The index of the frame it concerns, if one.
    pub frame: Option<usize>,
    /// Where the offending bytes are.
    pub span: Option<Span>,
    /// What exactly went wrong; its text is rendered from it.
    pub kind: Kind,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.check, self.check.failure(), self.kind)?;
        if let Some(i) = self.frame {
            write!(f, " (frame #{i})")?;
        }
        if let Some(s) = &self.span {
            let stream = if s.stream == Stream::Stdin { "stdin" } else { "stdout" };
            write!(f, " at {stream} bytes {}..{}", s.range.start, s.range.end)?;
        }
        Ok(())
    }
}

/// Runs every check over one session. Violations come ordered by check (in
/// [`CheckId::ALL`] order), then by position.
pub fn check(script: &Script, obs: &Observation, session: &Session) -> Vec<Violation> {
    let script = crate::fill::written(script, &obs.filled);
    let facts = Facts::new(&script, obs, session);
    let mut out = Vec::new();
    stdout::check(&facts, &mut out);
    effects::check(&facts, &mut out);
    correlation::check(&facts, &mut out);
    lifetime::check(&facts, &mut out);
    // Within a check, what happened (an effect, a wrong answer) before what
    // did not come: a session is reported under its worst violation.
    out.sort_by_key(|v| (v.check, v.kind.rank(), v.frame, v.span.as_ref().map(|s| s.range.start)));
    out
}

impl Violation {
    /// The rule of the must-reject frame the violation concerns, if it
    /// concerns one.
    pub fn rule(&self, script: &Script) -> Option<Rule> {
        script.frames.get(self.frame?)?.expect.rule()
    }

    /// How strict a reading the violation rests on: `hardening` when it is
    /// about how a frame only a hardening rule rejects was handled (its
    /// effect, its reply or the session after it), `spec` otherwise.
    /// An `isError` result for a frame whose rule lets a tool refuse it
    /// that way, in a revision before 2025-11-25, is at most `hardening`:
    /// those revisions give -32602 as an example, not as a MUST.
    pub fn level(&self, script: &Script) -> Level {
        let about_rejection = matches!(self.check, CheckId::NoEffectOnReject | CheckId::Correlation | CheckId::Policy);
        match self.rule(script) {
            Some(rule) if matches!(self.kind, Kind::ToolErrorResult { .. }) && rule.tool_error_ok() => {
                rule.level().max(Level::Hardening)
            }
            Some(rule) if about_rejection => rule.level(),
            _ => Level::Spec,
        }
    }

    fn at_frame(check: CheckId, facts: &Facts, frame: usize, kind: Kind) -> Self {
        let span = Some(Span { stream: Stream::Stdin, range: facts.spans[frame].clone() });
        Violation { check, frame: Some(frame), span, kind }
    }

    fn at_stdout(check: CheckId, range: Range<usize>, frame: Option<usize>, kind: Kind) -> Self {
        Violation { check, frame, span: Some(Span { stream: Stream::Stdout, range }), kind }
    }
}

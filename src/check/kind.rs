//! What exactly a violation is, as data. Its text is rendered from it, and
//! whatever tells violations apart (the finding key, what a crash
//! explains, whether a session ended) reads the kind, never the text.

use crate::frame::Rule;
use std::fmt;

/// What exactly went wrong. Each variant has a stable snake_case name
/// ([`Kind::name`]), part of a finding's key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// `stdout-clean`: a stdout line that is no message the server may send.
    NotProtocol {
        /// What is wrong with it.
        problem: String,
    },
    /// `stdout-clean`: bytes after the last LF once the session ended.
    AfterLastLf {
        /// How many.
        bytes: usize,
    },
    /// `no-effect-on-reject`: an effect that carries no token the suite sent.
    Untokened {
        /// The effect, described.
        effect: String,
    },
    /// `no-effect-on-reject`: an effect of a must-reject frame.
    EffectOfRejected {
        /// The effect, described.
        effect: String,
        /// The frame's rule.
        rule: Option<Rule>,
    },
    /// `no-effect-on-reject`: an effect of a frame the gateway answered with
    /// an error.
    EffectOfRefused {
        /// The effect, described.
        effect: String,
    },
    /// `policy`: a later call's effect that carries a rejected frame's state.
    StateCarried {
        /// The effect, described.
        effect: String,
        /// The rejected frame.
        rejected: usize,
    },
    /// `policy`: an effect after the frame that should have closed the session.
    EffectAfterClose {
        /// The effect, described.
        effect: String,
        /// The frame that should have closed it.
        closing: usize,
    },
    /// `policy`: an answer after the frame that should have closed the session.
    AnsweredAfterClose {
        /// The answered id, as JSON.
        id: String,
        /// The frame that should have closed it.
        closing: usize,
    },
    /// `policy`: still running after a frame that should have closed the session.
    RunningAfterClose {
        /// How it ended once stdin closed, if it did.
        then: Option<String>,
    },
    /// `policy`: the session ended under keep-open.
    EndedUnderKeepOpen {
        /// The stdin byte it ended after.
        at: usize,
    },
    /// `exactly-once`: one effect that carries the tokens of several valid frames.
    MixedArguments {
        /// The effect, described.
        effect: String,
        /// The frames.
        frames: Vec<usize>,
    },
    /// `exactly-once`: an effect of another tool or with other arguments
    /// than its call's.
    WrongCall {
        /// The effect, described.
        effect: String,
        /// How it differs.
        why: String,
    },
    /// `exactly-once`: a frame not judged at this level ran more than once.
    UnjudgedRepeated {
        /// Its rule.
        rule: Rule,
        /// How often it ran.
        times: usize,
        /// The token.
        token: String,
    },
    /// `exactly-once`: a valid call that never reached the executor.
    NeverExecuted {
        /// Its id.
        id: String,
        /// Whether the gateway answered it with an error.
        refused: bool,
    },
    /// `exactly-once`: a valid call that reached the executor more than once.
    ExecutedTimes {
        /// Its id.
        id: String,
        /// How often.
        times: usize,
    },
    /// `correlation`: an error with a null id and a code other than -32700
    /// or -32600.
    NullIdCode {
        /// The code.
        code: Option<i64>,
    },
    /// `correlation`: a response to an id no request carried.
    UnknownId {
        /// The id, as JSON.
        id: String,
    },
    /// `correlation`: a valid request answered with an error.
    ValidRefused {
        /// The id, as JSON.
        id: String,
        /// The error code.
        code: Option<i64>,
    },
    /// `correlation`: a rejected frame answered with another error code.
    WrongCode {
        /// The code.
        code: Option<i64>,
        /// The frame's rule.
        rule: Rule,
        /// The codes it may have.
        expected: &'static [i64],
    },
    /// `correlation`: a rejected frame answered with a success result.
    RejectedSucceeded {
        /// The frame's rule.
        rule: Rule,
    },
    /// `correlation`: a rejected frame answered with an `isError` result (a
    /// refusal) in a revision that asks for a JSON-RPC error instead.
    ToolErrorResult {
        /// The frame's rule.
        rule: Rule,
    },
    /// `correlation`: more than one response to one id.
    RepeatedAnswer {
        /// The id.
        id: String,
        /// How many.
        times: usize,
    },
    /// `correlation`: no response to a request id.
    Unanswered {
        /// The id.
        id: String,
    },
    /// `correlation`: fewer errors with a null id than frames that needed one.
    NoNullIdError {
        /// Frames that needed one.
        needed: usize,
        /// Errors that came.
        came: usize,
    },
    /// `liveness`: the gateway crashed.
    Crashed {
        /// What it said.
        said: String,
    },
    /// `liveness`: the gateway ended before stdin closed with no frame that
    /// warranted it.
    EndedEarly {
        /// How it ended.
        exit: String,
    },
    /// `liveness`: still running after stdin closed.
    RunningAfterEof,
    /// `liveness`: under keep-open, the gateway stopped answering while it
    /// ran on: nothing answered or acted for this frame or any after it,
    /// and the request written after the script went unanswered.
    Stalled {
        /// That request's method (`ping`, or `server/discover`).
        marker: &'static str,
    },
}

impl Kind {
    /// The stable name.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::NotProtocol { .. } => "not_protocol",
            Kind::AfterLastLf { .. } => "after_last_lf",
            Kind::Untokened { .. } => "untokened",
            Kind::EffectOfRejected { .. } => "effect_of_rejected",
            Kind::EffectOfRefused { .. } => "effect_of_refused",
            Kind::StateCarried { .. } => "state_carried",
            Kind::EffectAfterClose { .. } => "effect_after_close",
            Kind::AnsweredAfterClose { .. } => "answered_after_close",
            Kind::RunningAfterClose { .. } => "running_after_close",
            Kind::EndedUnderKeepOpen { .. } => "ended_under_keep_open",
            Kind::MixedArguments { .. } => "mixed_arguments",
            Kind::WrongCall { .. } => "wrong_call",
            Kind::UnjudgedRepeated { .. } => "unjudged_repeated",
            Kind::NeverExecuted { .. } => "never_executed",
            Kind::ExecutedTimes { .. } => "executed_times",
            Kind::NullIdCode { .. } => "null_id_code",
            Kind::UnknownId { .. } => "unknown_id",
            Kind::ValidRefused { .. } => "valid_refused",
            Kind::WrongCode { .. } => "wrong_code",
            Kind::RejectedSucceeded { .. } => "rejected_succeeded",
            Kind::ToolErrorResult { .. } => "tool_error_result",
            Kind::RepeatedAnswer { .. } => "repeated_answer",
            Kind::Unanswered { .. } => "unanswered",
            Kind::NoNullIdError { .. } => "no_null_id_error",
            Kind::Crashed { .. } => "crashed",
            Kind::EndedEarly { .. } => "ended_early",
            Kind::RunningAfterEof => "running_after_eof",
            Kind::Stalled { .. } => "stalled",
        }
    }

    /// Whether a kind of this name shows only as a session ends (stdin
    /// closed, or the server gone): never in a process kept running.
    pub fn shows_at_an_end(name: &str) -> bool {
        // A stall leaves a persistent process no use: candidates of one
        // run each in a process of their own.
        const AT_AN_END: [&str; 7] = [
            "stalled",
            "running_after_eof",
            "after_last_lf",
            "ended_early",
            "crashed",
            "running_after_close",
            "ended_under_keep_open",
        ];
        AT_AN_END.contains(&name)
    }

    /// Whether it is about how the session ended: a crash, an early end,
    /// a hang on EOF, or a session ended under keep-open.
    pub fn ends(&self) -> bool {
        matches!(
            self,
            Kind::Crashed { .. } | Kind::EndedEarly { .. } | Kind::RunningAfterEof | Kind::EndedUnderKeepOpen { .. }
        )
    }

    /// Whether it is something that did not come (an answer, an effect, the
    /// end of a line), which a crash before it explains.
    pub fn absent(&self) -> bool {
        matches!(
            self,
            Kind::Unanswered { .. }
                | Kind::NeverExecuted { .. }
                | Kind::NoNullIdError { .. }
                | Kind::AfterLastLf { .. }
        )
    }

    /// Whether a session that still runs shows it only once a deadline has
    /// passed (an answer or an effect that did not come by it): each
    /// shrinking step of it waits the deadline out.
    pub fn shows_at_a_deadline(&self) -> bool {
        matches!(self, Kind::Unanswered { .. } | Kind::NeverExecuted { .. })
    }

    /// Whether it rests on time alone: an exit that did not come within
    /// the exit grace, or an answer or effect that did not come by its
    /// deadline while the server still ran (`exited` says whether it ended
    /// on its own, after which nothing more can come). Such a verdict is
    /// confirmed with longer waits before it is reported. A missing error
    /// for a line with no id rests on evidence: the marker after it was
    /// answered, or the server ended. One that may carry a null id, owed to
    /// a request whose id is readable, is awaited by that id until its
    /// deadline: the script decides ([`Distinct::rests_on_time`](crate::finding::Distinct::rests_on_time)).
    pub fn rests_on_time(&self, exited: bool) -> bool {
        match self {
            Kind::RunningAfterEof | Kind::RunningAfterClose { .. } | Kind::Stalled { .. } => true,
            Kind::Unanswered { .. } | Kind::NeverExecuted { .. } => !exited,
            _ => false,
        }
    }

    /// How bad it is, most first, for choosing the violation a session is
    /// reported under within one check: what happened (an effect, an
    /// answer) before what did not come.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Kind::Crashed { .. } => 0,
            k if k.absent() => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = |r: &Option<Rule>| r.map_or("rejected", Rule::id);
        match self {
            Kind::NotProtocol { problem } => f.write_str(problem),
            Kind::AfterLastLf { bytes } => write!(f, "{bytes} bytes after the last LF"),
            Kind::Untokened { effect } => write!(f, "{effect} carries no token the suite sent"),
            Kind::EffectOfRejected { effect, rule: r } => write!(f, "{effect} for a must-reject frame ({})", rule(r)),
            Kind::EffectOfRefused { effect } => write!(f, "{effect} for a frame the gateway answered with an error"),
            Kind::StateCarried { effect, rejected } => {
                write!(f, "{effect} carries state of rejected frame #{rejected} into a later call")
            }
            Kind::EffectAfterClose { effect, closing } => {
                write!(f, "{effect} after frame #{closing} should have closed the session")
            }
            Kind::AnsweredAfterClose { id, closing } => {
                write!(f, "answered request id {id} after frame #{closing} should have closed the session")
            }
            Kind::RunningAfterClose { then } => {
                write!(f, "still running after a malformed or invalid frame under the close policy")?;
                match then {
                    Some(exit) => write!(f, "; it {exit} only once stdin closed"),
                    None => Ok(()),
                }
            }
            Kind::EndedUnderKeepOpen { at } => {
                write!(f, "ended the session (after stdin byte {at}) under the keep-open policy")
            }
            Kind::MixedArguments { effect, frames } => write!(f, "{effect} mixes the arguments of frames {frames:?}"),
            Kind::WrongCall { effect, why } => write!(f, "{effect}: {why}"),
            Kind::UnjudgedRepeated { rule, times, token } => {
                write!(f, "a frame not judged at this level ({}) ran {times} times (token {token})", rule.id())
            }
            Kind::NeverExecuted { id, refused } => {
                write!(f, "valid call id {id} never reached the executor")?;
                match refused {
                    true => write!(f, " (the gateway answered it with an error)"),
                    false => Ok(()),
                }
            }
            Kind::ExecutedTimes { id, times } => write!(f, "valid call id {id} reached the executor {times} times"),
            Kind::NullIdCode { code } => {
                write!(f, "an error with a null id has code {}; only -32700 and -32600 may lack an id", Code(*code))
            }
            Kind::UnknownId { id } => write!(f, "a response to id {id}, which no request carried"),
            Kind::ValidRefused { id, code } => {
                write!(f, "the valid request id {id} was answered with error {}", Code(*code))
            }
            Kind::WrongCode { code, rule, expected } => {
                write!(
                    f,
                    "error code {} for a frame that breaks {}; expected one of {expected:?}",
                    Code(*code),
                    rule.id()
                )
            }
            Kind::RejectedSucceeded { rule } => {
                write!(f, "a frame that breaks {} was answered with a success result", rule.id())
            }
            Kind::ToolErrorResult { rule } => write!(
                f,
                "a frame that breaks {} was refused with an `isError` result where this revision asks for a \
                 JSON-RPC error",
                rule.id()
            ),
            Kind::RepeatedAnswer { id, times } => write!(f, "{times} responses to id {id}"),
            Kind::Unanswered { id } => write!(f, "no response to request id {id}"),
            Kind::NoNullIdError { needed, came } => write!(
                f,
                "{} needed an error response that could not carry an id; {came} came",
                crate::counted::counted(*needed, "rejected frame")
            ),
            Kind::Crashed { said } => write!(f, "crashed: {said}"),
            Kind::EndedEarly { exit } => {
                write!(f, "ended with {exit} before stdin closed, with no frame that warranted it")
            }
            Kind::RunningAfterEof => f.write_str("still running after stdin closed"),
            Kind::Stalled { marker } => write!(
                f,
                "stopped answering while it ran on: nothing answered or acted for this frame or any after it, \
                 and a `{marker}` written after the script got no answer"
            ),
        }
    }
}

/// An error's code as a message tells it: the number, or that it had none
/// a reader could take.
struct Code(Option<i64>);

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(code) => write!(f, "{code}"),
            None => f.write_str("(none)"),
        }
    }
}

//! The gateway seam: the one trait every gateway under test implements — the
//! in-process reference gateway and its mutants, a user's Rust gateway, and a
//! child process — plus the executor recorder handed to it.
//!
//! # Contract
//!
//! A [`Target`] starts one [`Gateway`] per session and hands it a
//! [`Recorder`]. The driver then:
//!
//! 1. calls [`Gateway::write_stdin_owned`] (by default
//!    [`Gateway::write_stdin`]) with each write of the script, in order.
//!    A write may hold part of a line, or several lines: the gateway must do
//!    its own framing, exactly as it would on a pipe;
//! 2. calls [`Gateway::close_stdin`] when the script ends with EOF;
//! 3. collects [`Gateway::take_stdout`] (and `take_stderr`) after every call,
//!    concatenating what they return;
//! 4. reads [`Gateway::exit`] after every call, and calls
//!    [`Gateway::settle`] after the last write and after EOF, so a gateway
//!    that runs apart (a child process) can catch up before it is judged.
//!    `settle` names the answers a client waits for; a gateway that runs
//!    apart (a child process, a loop on a thread) uses them, a synchronous one
//!    ignores them.
//!
//! The gateway must route every external action through
//! [`Recorder::record`] instead of performing it, as one typed [`Action`]
//! (tool name and exactly the arguments the executor would use). An
//! in-process gateway should call it where its real executor would run, after
//! every validation and authorization step. A child process cannot be handed
//! a recorder; its driver plays the recorder with out-of-band effect probes.
//!
//! After `close_stdin` a well-behaved gateway finishes and reports
//! [`Exit::Exited`]; one that closes its session after a malformed frame
//! reports it as soon as it does. Writes after exit must be accepted and
//! ignored, as a pipe whose reader is gone would be.
//!
//! A [`Fault`] is the harness failing (spawn, I/O, a harness timeout), never a
//! finding about the gateway: checks only ever see sessions that ran.
//!
//! # Example
//!
//! A naive line-based gateway of about thirty lines, adapted to the seam. It
//! trusts the first JSON value on each line and skips what does not parse, so
//! the suite catches it at once:
//!
//! ```
//! use portcullis::{Action, Catalogue, Exit, Fault, Gateway, Recorder, Session, Target};
//! use portcullis::campaign::{HuntConfig, hunt};
//! use serde_json::{Value, json};
//!
//! struct Naive { buf: Vec<u8>, out: Vec<u8>, rec: Recorder, done: bool }
//!
//! impl Naive {
//!     fn line(&mut self, line: &[u8]) {
//!         let Ok(msg) = serde_json::from_slice::<Value>(line) else { return };
//!         let (Some(id), Some(method)) = (msg.get("id"), msg["method"].as_str()) else { return };
//!         let result = match method {
//!             "initialize" => json!({"protocolVersion": msg["params"]["protocolVersion"],
//!                                    "capabilities": {"tools": {}},
//!                                    "serverInfo": {"name": "naive", "version": "0"}}),
//!             "tools/call" => {
//!                 let p = &msg["params"];
//!                 let arguments = p["arguments"].as_object().cloned().unwrap_or_default();
//!                 let tool = p["name"].as_str().unwrap_or_default().to_owned();
//!                 self.rec.record(Action { tool, arguments });
//!                 json!({"content": [{"type": "text", "text": "done"}]})
//!             }
//!             _ => json!({}),
//!         };
//!         let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
//!         self.out.extend(format!("{reply}\n").into_bytes());
//!     }
//! }
//!
//! impl Gateway for Naive {
//!     fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
//!         self.buf.extend_from_slice(bytes);
//!         while let Some(n) = self.buf.iter().position(|b| *b == b'\n') {
//!             let line: Vec<u8> = self.buf.drain(..=n).collect();
//!             self.line(&line[..n]);
//!         }
//!         Ok(())
//!     }
//!     fn close_stdin(&mut self) -> Result<(), Fault> { self.done = true; Ok(()) }
//!     fn take_stdout(&mut self) -> Vec<u8> { std::mem::take(&mut self.out) }
//!     fn exit(&mut self) -> Exit { if self.done { Exit::Exited(0) } else { Exit::Running } }
//! }
//!
//! struct NaiveTarget;
//! impl Target for NaiveTarget {
//!     type Gateway = Naive;
//!     fn catalogue(&self) -> Catalogue { Catalogue::reference() }
//!     fn start(&self, _: &Session, rec: Recorder) -> Result<Naive, Fault> {
//!         Ok(Naive { buf: vec![], out: vec![], rec, done: false })
//!     }
//! }
//!
//! let finding = hunt(&NaiveTarget, &HuntConfig::default()).unwrap();
//! assert!(finding.is_some(), "a gateway that trusts any JSON is caught");
//! ```

use crate::catalogue::Catalogue;
use crate::protocol::{Id, Policy, Revision};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::{Arc, Mutex};

/// One external action as the executor receives it: typed, after every
/// check. For a child process, what an effect probe observed.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// The tool that acted.
    pub tool: String,
    /// Exactly the arguments the executor used.
    pub arguments: Map<String, Value>,
}

impl Action {
    /// The prefix of the `tool` of an effect an out-of-band probe observed.
    pub const OBSERVED: &'static str = "probe:";

    /// An effect a probe observed (an HTTP request, a file), not a typed
    /// call: `probe` names the probe, `arguments` what it saw.
    pub fn observed(probe: &str, arguments: Map<String, Value>) -> Self {
        Action { tool: format!("{}{probe}", Action::OBSERVED), arguments }
    }

    /// Whether a probe observed it, so only its tokens and count are known,
    /// not the tool and arguments that caused it.
    pub fn is_observed(&self) -> bool {
        self.tool.starts_with(Action::OBSERVED)
    }

    /// Its arguments as JSON text, where the tokens it carries are read.
    pub fn arguments_text(&self) -> String {
        Value::Object(self.arguments.clone()).to_string()
    }
}

/// The executor handed to a gateway under test: it logs each action and
/// performs nothing. Clones share one log.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    log: Arc<Mutex<Vec<Action>>>,
}

impl Recorder {
    /// A recorder with an empty log.
    pub fn new() -> Self {
        Recorder::default()
    }

    /// Logs one action in place of performing it.
    pub fn record(&self, action: Action) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(action);
    }

    /// Every action logged so far, in order.
    pub fn actions(&self) -> Vec<Action> {
        self.actions_since(0)
    }

    /// The actions logged after the first `seen`, in order: what an
    /// executor has yet to perform, without a copy of what it has.
    pub fn actions_since(&self, seen: usize) -> Vec<Action> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.get(seen..).map_or_else(Vec::new, <[Action]>::to_vec)
    }

    /// How many actions have been logged.
    pub fn len(&self) -> usize {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no action has been logged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether the gateway is still running, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// Still running.
    Running,
    /// Ended with this status code.
    Exited(i32),
    /// Crashed: panicked in-process, or died by a signal.
    Crashed(String),
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Running => write!(f, "is still running"),
            Exit::Exited(code) => write!(f, "exited with status {code}"),
            Exit::Crashed(how) => write!(f, "crashed ({how})"),
        }
    }
}

impl Exit {
    /// Whether the gateway has ended, whichever way.
    pub fn ended(&self) -> bool {
        !matches!(self, Exit::Running)
    }
}

/// The error beneath a [`Fault`], shared so a fault stays cheap to clone.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// A harness fault: the suite could not run the session. Never a finding.
/// Its `Display` says what failed; [`Error::source`](std::error::Error::source)
/// gives the error beneath, when there was one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Fault {
    /// The gateway could not be started.
    #[non_exhaustive]
    Spawn {
        /// What was being started.
        what: String,
        /// Why it failed.
        source: Option<Cause>,
    },
    /// Reading from or writing to the gateway failed in the harness.
    #[non_exhaustive]
    Io {
        /// What was being read or written.
        what: String,
        /// Why it failed.
        source: Option<Cause>,
    },
    /// A harness wait ran out (not the gateway hanging: that is a finding).
    #[non_exhaustive]
    Timeout {
        /// What was awaited.
        what: String,
    },
    /// The target is set up wrongly (no runnable tool, say).
    #[non_exhaustive]
    Config {
        /// What is wrong.
        what: String,
    },
}

impl Fault {
    /// The gateway (or a part it needs) could not be started, because of
    /// `source`.
    pub fn spawn(what: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Fault {
        Fault::Spawn { what: what.into(), source: Some(Arc::from(source.into())) }
    }

    /// Harness I/O on `what` failed, because of `source`.
    pub fn io(what: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Fault {
        Fault::Io { what: what.into(), source: Some(Arc::from(source.into())) }
    }

    /// The target is set up wrongly.
    pub fn config(what: impl Into<String>) -> Fault {
        Fault::Config { what: what.into() }
    }

    /// A harness wait for `what` ran out.
    pub fn timeout(what: impl Into<String>) -> Fault {
        Fault::Timeout { what: what.into() }
    }
}

/// An error and every error beneath it, on one line.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn told(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut below = e.source();
    while let Some(cause) = below {
        text.push_str(&format!(": {cause}"));
        below = cause.source();
    }
    text
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Spawn { what, .. } => write!(f, "could not start {what}"),
            Fault::Io { what, .. } => write!(f, "harness I/O failed: {what}"),
            Fault::Timeout { what } => write!(f, "harness timed out: {what}"),
            Fault::Config { what } => write!(f, "target misconfigured: {what}"),
        }
    }
}

impl std::error::Error for Fault {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Fault::Spawn { source, .. } | Fault::Io { source, .. } => {
                source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
            }
            _ => None,
        }
    }
}

/// What a session is run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// The policy the gateway is held to.
    pub policy: Policy,
    /// The revision the script asks for.
    pub revision: Revision,
    /// The salt of the session's canary tokens (`pc` and 8 hex digits start
    /// each), which tells its late effects from another session's.
    pub salt: u32,
}

/// A gateway under test, seen from its stdio. See the module docs for the
/// contract.
pub trait Gateway {
    /// Delivers one stdin write: part of a line, a line, or several.
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault>;
    /// [`Gateway::write_stdin`] with bytes the caller no longer needs, as
    /// the driver writes them; by default it is `write_stdin`. A gateway
    /// that queues what it is given (a writer thread) may keep them as they
    /// are rather than copy them; it must do exactly what `write_stdin`
    /// does with the same bytes.
    fn write_stdin_owned(&mut self, bytes: Vec<u8>) -> Result<(), Fault> {
        self.write_stdin(&bytes)
    }
    /// The client closes stdin.
    fn close_stdin(&mut self) -> Result<(), Fault>;
    /// The stdout bytes written since the last call.
    fn take_stdout(&mut self) -> Vec<u8>;
    /// The stderr bytes written since the last call; none by default.
    fn take_stderr(&mut self) -> Vec<u8> {
        Vec::new()
    }
    /// Whether the gateway is still running.
    fn exit(&mut self) -> Exit;
    /// Waits, bounded, until the gateway has caught up with what it was
    /// sent, as a client waits before it goes on or closes stdin: the
    /// answers `settle.owed` names have come and output and effects have
    /// settled, or, when `settle.expect_exit` says it should have ended,
    /// until it has. In-process gateways are synchronous and keep the
    /// default, which returns at once.
    fn settle(&mut self, settle: &Settle) -> Result<(), Fault> {
        let _ = settle;
        Ok(())
    }
    /// Whether every marker request the gateway's settles wrote (a child
    /// process is sent one after the script where [`Settle::marked`]) was
    /// answered, showing that it read past the script; `true` where none
    /// was written. In-process gateways read each write as it is made,
    /// write no marker and keep the default.
    fn read_past(&self) -> bool {
        true
    }
}

/// What a client waits for before it goes on ([`Gateway::settle`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Settle {
    /// The ids of the requests written so far that a correct gateway
    /// answers whatever its policy.
    pub owed: Vec<Id>,
    /// Whether the gateway should have ended by now: stdin is closed, or
    /// under `close` a frame that ends the session was written.
    pub expect_exit: bool,
    /// An answer for each: its id, when it has one, or an error with a
    /// null id (JSON-RPC's answer to a request it could not read or found
    /// invalid), whichever comes.
    pub owed_or_null: Vec<Option<Id>>,
    /// Whether a gateway whose waits cost real time (a child process) may
    /// leave [`Settle::owed_or_null`] to what it shows later (under
    /// `keep-open`, where the session goes on and later output still
    /// counts): an in-process gateway awaits them.
    pub or_null_later: bool,
    /// Whether it is the wait after the script's last frame in a session
    /// that may go on past it (under `keep-open` or `auto`): a gateway
    /// that reads apart from the client (a child process) writes a marker
    /// request first, whose answer shows it read past the script
    /// ([`Gateway::read_past`]).
    pub marked: bool,
}

impl Settle {
    /// A wait for `owed` answers, or for the exit when `expect_exit`.
    pub fn new(owed: Vec<Id>, expect_exit: bool) -> Settle {
        Settle { owed, expect_exit, owed_or_null: Vec::new(), or_null_later: false, marked: false }
    }

    /// Also waits for [`Settle::owed_or_null`].
    pub fn or_null(mut self, owed_or_null: Vec<Option<Id>>) -> Settle {
        self.owed_or_null = owed_or_null;
        self
    }

    /// Lets a gateway whose waits cost real time leave
    /// [`Settle::owed_or_null`] to what it shows later.
    pub fn or_null_later(mut self, later: bool) -> Settle {
        self.or_null_later = later;
        self
    }

    /// Makes it [`Settle::marked`].
    pub fn marked(mut self, marked: bool) -> Settle {
        self.marked = marked;
        self
    }
}

/// Something that starts gateways: one per session.
pub trait Target {
    /// The gateway it starts.
    type Gateway: Gateway;
    /// The tools the gateway offers, which the generators call.
    fn catalogue(&self) -> Catalogue;
    /// Starts one session's gateway, with the recorder as its executor.
    fn start(&self, session: &Session, recorder: Recorder) -> Result<Self::Gateway, Fault>;
    /// A copy of a running session that records into `recorder`, if this
    /// target can make one (an in-process gateway that is plain data can):
    /// a fuzz target then runs the handshake once and starts every input
    /// from a copy. By default, none.
    fn fork(&self, running: &Self::Gateway, recorder: Recorder) -> Option<Self::Gateway> {
        let _ = (running, recorder);
        None
    }
}

/// A borrowed target starts the same gateways.
impl<T: Target + ?Sized> Target for &T {
    type Gateway = T::Gateway;

    fn catalogue(&self) -> Catalogue {
        (**self).catalogue()
    }

    fn start(&self, session: &Session, recorder: Recorder) -> Result<Self::Gateway, Fault> {
        (**self).start(session, recorder)
    }

    fn fork(&self, running: &Self::Gateway, recorder: Recorder) -> Option<Self::Gateway> {
        (**self).fork(running, recorder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_hands_the_actions_after_those_seen() {
        let recorder = Recorder::new();
        assert!(recorder.is_empty());
        for tool in ["a", "b", "c"] {
            recorder.record(Action { tool: tool.into(), arguments: Map::new() });
        }
        let tools = |since| recorder.actions_since(since).into_iter().map(|a| a.tool).collect::<Vec<_>>();
        assert_eq!((recorder.len(), tools(1), tools(3), tools(7)), (3, vec!["b".into(), "c".into()], vec![], vec![]));
        assert_eq!(recorder.actions().len(), 3);
    }
}

//! The strict reference gateway: framing, UTF-8, JSON, JSON-RPC, MCP method,
//! tools/call schema, lifecycle and authorization are all checked, in that
//! order, before its executor, which takes only an authorized typed call.
//!
//! It speaks 2024-11-05, 2025-03-26 (batches accepted), 2025-06-18 and
//! 2025-11-25, and the stateless 2026-07-28 with its confirmation step for
//! `purge_cache`, under either session policy. Each built-in [`Mutant`] is this
//! gateway with one deviation switched on.

/// A [`reply::Text`] checked when compiled.
macro_rules! text {
    ($s:literal) => {{
        const TEXT: $crate::reference::reply::Text = $crate::reference::reply::Text::new($s);
        TEXT
    }};
}

mod confirm;
mod dispatch;
mod intake;
mod json;
mod mutant;
mod reply;
mod rpc;
mod stateless;
mod tools;

pub use mutant::Mutant;

use crate::catalogue::Catalogue;
use crate::protocol::{Policy, Revision};
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Longest line the reference accepts, in bytes (LF excluded).
pub const MAX_LINE: usize = 1 << 20;
/// Room for stdout a session starts with: a few replies without regrowing.
const OUT_CAPACITY: usize = 1024;
/// Deepest nesting the reference accepts.
pub const MAX_DEPTH: usize = 64;

/// Starts reference gateways, optionally with one planted bug.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The planted bug, if any.
    pub mutant: Option<Mutant>,
    /// The tools it offers, shared by every session.
    pub catalogue: Arc<Catalogue>,
}

impl Reference {
    /// The strict reference.
    pub fn strict() -> Self {
        Reference { mutant: None, catalogue: Arc::new(Catalogue::reference()) }
    }

    /// The reference with one planted bug.
    pub fn mutant(m: Mutant) -> Self {
        Reference { mutant: Some(m), catalogue: Arc::new(Catalogue::reference()) }
    }
}

impl Target for Reference {
    type Gateway = ReferenceGateway;

    fn catalogue(&self) -> Catalogue {
        Catalogue::clone(&self.catalogue)
    }

    fn start(&self, session: &Session, recorder: Recorder) -> Result<ReferenceGateway, Fault> {
        Ok(ReferenceGateway::new(self.catalogue.clone(), session.policy, self.mutant, recorder))
    }

    fn fork(&self, running: &ReferenceGateway, recorder: Recorder) -> Option<ReferenceGateway> {
        Some(ReferenceGateway { recorder, out: Vec::with_capacity(OUT_CAPACITY), ..running.clone() })
    }
}

/// Where the session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Waiting for `initialize`.
    Uninitialized,
    /// Initialized at this revision.
    Ready(Revision),
    /// Opened by a request with the envelope of a revision without a
    /// handshake (2026-07-28): each request names its revision.
    Stateless,
}

/// One session of the reference gateway.
#[derive(Clone, Debug)]
pub struct ReferenceGateway {
    catalogue: Arc<Catalogue>,
    policy: Policy,
    mutant: Option<Mutant>,
    recorder: Recorder,
    stage: Stage,
    /// Bytes of the line being read.
    buf: Vec<u8>,
    /// Skipping the rest of an over-long line (keep-open).
    discarding: bool,
    /// A line that ended mid-value, kept to join with the next (a mutant).
    pending: Option<Vec<u8>>,
    /// Arguments of the last schema-rejected call (a mutant).
    leftover: Option<Map<String, Value>>,
    /// The confirmations asked for and not yet given (stateless sessions).
    handed: confirm::Handed,
    /// Whether an earlier request declared the `elicitation` capability,
    /// which only a mutant takes for this request's.
    elicited: bool,
    out: Vec<u8>,
    exit: Exit,
}

impl ReferenceGateway {
    /// A new session.
    pub fn new(catalogue: Arc<Catalogue>, policy: Policy, mutant: Option<Mutant>, recorder: Recorder) -> Self {
        let mut g = ReferenceGateway {
            catalogue,
            policy,
            mutant,
            recorder,
            stage: Stage::Uninitialized,
            buf: Vec::new(),
            discarding: false,
            pending: None,
            leftover: None,
            handed: confirm::Handed::default(),
            elicited: false,
            out: Vec::with_capacity(OUT_CAPACITY),
            exit: Exit::Running,
        };
        if g.is(Mutant::StartupBanner) {
            g.out.extend_from_slice(b"reference-gateway 0.1 starting\n");
        }
        g
    }

    fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    fn running(&self) -> bool {
        self.exit == Exit::Running
    }

    /// Writes one message as a line.
    fn send(&mut self, reply: &reply::Reply) {
        reply.write_line(&mut self.out);
    }

    /// Ends the session after a frame that must close it, if the policy says so.
    fn close_if_policy(&mut self) {
        if self.policy == Policy::Close && !self.is(Mutant::IgnoreClosePolicy) {
            self.exit = Exit::Exited(1);
        }
    }
}

impl Gateway for ReferenceGateway {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        if self.is(Mutant::ChunkedRead) {
            self.read_chunks(bytes);
            return Ok(());
        }
        let mut rest = bytes;
        while self.running() && !rest.is_empty() {
            let Some(n) = memchr::memchr(b'\n', rest) else {
                self.take_bytes(rest);
                break;
            };
            let head = &rest[..n];
            rest = &rest[n + 1..];
            if self.buf.is_empty() && !self.discarding && head.len() <= MAX_LINE {
                self.line(head); // the whole line came in this write: read it where it lies
                continue;
            }
            self.take_bytes(head);
            let line = std::mem::take(&mut self.buf);
            if !std::mem::take(&mut self.discarding) {
                self.line(&line);
            }
        }
        Ok(())
    }

    fn close_stdin(&mut self) -> Result<(), Fault> {
        if !self.running() {
            return Ok(());
        }
        let partial = std::mem::take(&mut self.buf);
        if !partial.is_empty() && !std::mem::take(&mut self.discarding) {
            self.at_eof(partial);
        }
        if self.running() && !self.is(Mutant::NoExitOnEof) {
            self.exit = Exit::Exited(0);
        }
        Ok(())
    }

    fn take_stdout(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    fn exit(&mut self) -> Exit {
        self.exit.clone()
    }
}

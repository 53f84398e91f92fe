//! The strict reference gateway: framing, UTF-8, JSON, JSON-RPC, MCP method,
//! tools/call schema, lifecycle and authorization are all checked, in that
//! order, before its executor, which takes only an authorized typed call.
//!
//! It speaks 2024-11-05, 2025-03-26 (batches accepted), 2025-06-18 and
//! 2025-11-25, under either session policy. Each built-in [`Mutant`] is this
//! gateway with one deviation switched on.

mod dispatch;
mod intake;
mod json;
mod mutant;
mod rpc;
mod tools;

pub use mutant::Mutant;

use crate::catalogue::Catalogue;
use crate::protocol::{Policy, Revision};
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::{Map, Value};

/// Longest line the reference accepts, in bytes (LF excluded).
pub const MAX_LINE: usize = 1 << 20;
/// Deepest nesting the reference accepts.
pub const MAX_DEPTH: usize = 64;

/// Starts reference gateways, optionally with one planted bug.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The planted bug, if any.
    pub mutant: Option<Mutant>,
    /// The tools it offers.
    pub catalogue: Catalogue,
}

impl Reference {
    /// The strict reference.
    pub fn strict() -> Self {
        Reference { mutant: None, catalogue: Catalogue::reference() }
    }

    /// The reference with one planted bug.
    pub fn mutant(m: Mutant) -> Self {
        Reference { mutant: Some(m), catalogue: Catalogue::reference() }
    }
}

impl Target for Reference {
    type Gateway = ReferenceGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, session: &Session, recorder: Recorder) -> Result<ReferenceGateway, Fault> {
        Ok(ReferenceGateway::new(self.catalogue.clone(), session.policy, self.mutant, recorder))
    }
}

/// Where the session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Waiting for `initialize`.
    Uninitialized,
    /// Initialized at this revision.
    Ready(Revision),
}

/// One session of the reference gateway.
#[derive(Debug)]
pub struct ReferenceGateway {
    catalogue: Catalogue,
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
    out: Vec<u8>,
    exit: Exit,
}

impl ReferenceGateway {
    /// A new session.
    pub fn new(catalogue: Catalogue, policy: Policy, mutant: Option<Mutant>, recorder: Recorder) -> Self {
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
            out: Vec::new(),
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
    fn send(&mut self, v: &Value) {
        serde_json::to_writer(&mut self.out, v).expect("writing to a Vec cannot fail");
        self.out.push(b'\n');
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
        let mut rest = bytes;
        while self.running() && !rest.is_empty() {
            match rest.iter().position(|b| *b == b'\n') {
                Some(n) => {
                    self.take_bytes(&rest[..n]);
                    rest = &rest[n + 1..];
                    let line = std::mem::take(&mut self.buf);
                    if std::mem::take(&mut self.discarding) {
                        continue;
                    }
                    self.line(line);
                }
                None => {
                    self.take_bytes(rest);
                    rest = &[];
                }
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

//! The line-handler shape: the gateway's core takes one line and returns
//! what to write to stdout, acting through the recorder.

use crate::catalogue::Catalogue;
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};

/// What a line handler returns: bytes for stdout, and whether the session
/// goes on. A handler that never ends the session returns `Vec<u8>`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Flow {
    /// Write these bytes and read on.
    Continue(Vec<u8>),
    /// Write these bytes and end the session, as a server that exits.
    End(Vec<u8>),
}

impl From<Vec<u8>> for Flow {
    fn from(bytes: Vec<u8>) -> Flow {
        Flow::Continue(bytes)
    }
}

impl From<String> for Flow {
    fn from(text: String) -> Flow {
        Flow::Continue(text.into_bytes())
    }
}

/// A target whose gateways are line handlers: `start` makes one per
/// session, given the session's recorder. The adapter frames stdin as
/// `BufRead::read_until(b'\n')` would: each call gets one line with its LF,
/// and at EOF the unterminated rest, if any.
pub struct LineTarget<F> {
    catalogue: Catalogue,
    start: F,
}

impl<F, H, R> LineTarget<F>
where
    F: Fn(Recorder) -> H,
    H: FnMut(&[u8]) -> R,
    R: Into<Flow>,
{
    /// A target offering `catalogue`, whose sessions `start` makes.
    pub fn new(catalogue: Catalogue, start: F) -> Self {
        LineTarget { catalogue, start }
    }
}

/// One session of a [`LineTarget`].
pub struct LineGateway<H> {
    handler: H,
    pending: Vec<u8>,
    stdout: Vec<u8>,
    exit: Exit,
}

impl<H, R> LineGateway<H>
where
    H: FnMut(&[u8]) -> R,
    R: Into<Flow>,
{
    fn handle(&mut self, line: &[u8]) {
        match (self.handler)(line).into() {
            Flow::Continue(out) => self.stdout.extend(out),
            Flow::End(out) => {
                self.stdout.extend(out);
                self.exit = Exit::Exited(0);
            }
        }
    }
}

impl<H, R> Gateway for LineGateway<H>
where
    H: FnMut(&[u8]) -> R,
    R: Into<Flow>,
{
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        self.pending.extend_from_slice(bytes);
        // Lines are cut from the front once, after the loop: a write of
        // many lines is not moved down a line at a time.
        let mut at = 0;
        while self.exit == Exit::Running {
            let Some(lf) = memchr::memchr(b'\n', &self.pending[at..]) else { break };
            let line = self.pending[at..=at + lf].to_vec();
            at += lf + 1;
            self.handle(&line);
        }
        self.pending.drain(..at);
        Ok(())
    }

    fn close_stdin(&mut self) -> Result<(), Fault> {
        if self.exit == Exit::Running {
            let rest = std::mem::take(&mut self.pending);
            if !rest.is_empty() {
                self.handle(&rest);
            }
            self.exit = Exit::Exited(0);
        }
        Ok(())
    }

    fn take_stdout(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.stdout)
    }

    fn exit(&mut self) -> Exit {
        self.exit.clone()
    }
}

impl<F, H, R> Target for LineTarget<F>
where
    F: Fn(Recorder) -> H,
    H: FnMut(&[u8]) -> R,
    R: Into<Flow>,
{
    type Gateway = LineGateway<H>;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, _: &Session, recorder: Recorder) -> Result<LineGateway<H>, Fault> {
        let handler = (self.start)(recorder);
        Ok(LineGateway { handler, pending: Vec::new(), stdout: Vec::new(), exit: Exit::Running })
    }
}

//! The `run(reader, writer)` shape, blocking: the gateway's loop reads
//! stdin and writes stdout until EOF, on a thread of its own.

use super::pipe::{BOUND, LoopGateway, Stdin, Stdout};
use crate::catalogue::Catalogue;
use crate::seam::{Fault, Recorder, Session, Target};
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// A target whose gateway is a blocking loop over a reader and a writer,
/// started on a thread per session with that session's recorder. The
/// loop's result is its exit: `Ok` is status 0, an error status 1, a
/// panic a crash.
pub struct StreamTarget<F> {
    catalogue: Catalogue,
    serve: Arc<F>,
    bound: Duration,
}

impl<F> StreamTarget<F>
where
    F: Fn(Recorder, Stdin, Stdout) -> io::Result<()> + Send + Sync + 'static,
{
    /// A target offering `catalogue`, whose sessions run `serve`.
    pub fn new(catalogue: Catalogue, serve: F) -> Self {
        StreamTarget { catalogue, serve: Arc::new(serve), bound: BOUND }
    }

    /// How long the loop gets to catch up with what it was sent, or to end
    /// once stdin is closed (1 s by default; a gateway that owes an answer it never writes costs that much a session, shrinking included).
    pub fn bound(mut self, bound: Duration) -> Self {
        self.bound = bound;
        self
    }
}

impl<F> Target for StreamTarget<F>
where
    F: Fn(Recorder, Stdin, Stdout) -> io::Result<()> + Send + Sync + 'static,
{
    type Gateway = LoopGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, _: &Session, recorder: Recorder) -> Result<LoopGateway, Fault> {
        let serve = self.serve.clone();
        LoopGateway::start(move |stdin, stdout| serve(recorder, stdin, stdout), self.bound)
    }
}

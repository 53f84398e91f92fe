//! The `run(reader, writer)` shape, async on tokio: the gateway's future
//! reads stdin and writes stdout until EOF, on a current-thread runtime
//! of its own.

use super::pipe::{BOUND, LoopGateway, Stdin, Stdout};
use crate::catalogue::Catalogue;
use crate::seam::{Fault, Recorder, Session, Target};
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// A target whose gateway is an async loop over an
/// [`AsyncRead`](tokio::io::AsyncRead) and an
/// [`AsyncWrite`](tokio::io::AsyncWrite), run per session on a
/// current-thread tokio runtime with that session's recorder (so a loop
/// that calls `block_in_place` panics, which is reported as a crash). The
/// loop's result is its exit: `Ok` is status 0, an error status 1, a panic
/// a crash.
pub struct AsyncTarget<F> {
    catalogue: Catalogue,
    serve: Arc<F>,
    bound: Duration,
}

impl<F, Fut> AsyncTarget<F>
where
    F: Fn(Recorder, Stdin, Stdout) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<()>> + 'static,
{
    /// A target offering `catalogue`, whose sessions run `serve`.
    pub fn new(catalogue: Catalogue, serve: F) -> Self {
        AsyncTarget { catalogue, serve: Arc::new(serve), bound: BOUND }
    }

    /// How long the loop gets to catch up with what it was sent, or to end
    /// once stdin is closed (1 s by default; a gateway that owes an answer it never writes costs that much a session, shrinking included).
    pub fn bound(mut self, bound: Duration) -> Self {
        self.bound = bound;
        self
    }
}

impl<F, Fut> Target for AsyncTarget<F>
where
    F: Fn(Recorder, Stdin, Stdout) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<()>> + 'static,
{
    type Gateway = LoopGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, _: &Session, recorder: Recorder) -> Result<LoopGateway, Fault> {
        let serve = self.serve.clone();
        // Built here, so a runtime that cannot start is a harness fault,
        // never the gateway's exit.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Fault::spawn("the gateway's tokio runtime", e))?;
        LoopGateway::start(move |stdin, stdout| runtime.block_on(serve(recorder, stdin, stdout)), self.bound)
    }
}

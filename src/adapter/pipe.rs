//! A gateway whose loop runs on a thread of its own, reading its stdin from
//! a pipe in memory and writing its stdout to a buffer: the seam under the
//! `run(reader, writer)` adapters, blocking and async.

use crate::json_line::{self, Awaited};
use crate::run::panic_text;
use crate::seam::{Exit, Fault, Gateway, Settle};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

/// How long a loop gets by default to catch up with what it was sent, or
/// to end once its stdin is closed.
pub(crate) const BOUND: Duration = Duration::from_secs(1);

/// How long a loop's stdout stays still, once it waits for input with
/// every owed answer written, before the driver goes on: output its other
/// threads or tasks still write (an error without an id, say) comes first.
pub(crate) const QUIET: Duration = Duration::from_millis(10);

/// How much longer a session waits for each MiB it sent, in-process or
/// from a child: a server takes time to read and parse a huge call.
pub(crate) const PER_MIB: Duration = Duration::from_secs(1);

/// The most stdout bytes kept per session; a loop that writes more is
/// flooding, which the first bytes already show.
const KEPT: usize = 16 << 20;

#[derive(Default)]
pub(crate) struct Pipe {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
pub(crate) struct State {
    stdin: VecDeque<u8>,
    closed: bool,
    /// The loop is waiting for input with none to read.
    waiting: bool,
    /// The async loop's read to wake when input comes.
    waker: Option<Waker>,
    stdout: Vec<u8>,
    /// How much of `stdout` the driver has taken.
    taken: usize,
    /// When stdout last grew.
    wrote: Option<Instant>,
    stderr: Vec<u8>,
    exit: Option<Exit>,
    /// The driver has let the session go: writes fail as on a pipe whose
    /// reader is gone.
    gone: bool,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the state and wakes whoever waits on it.
    fn update(&self, change: impl FnOnce(&mut State)) {
        let waker = {
            let mut s = self.lock();
            change(&mut s);
            s.waker.take()
        };
        self.changed.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl State {
    /// Moves what stdin holds into `buf`: `Some(n)` when the read can
    /// return (input, EOF, or an empty `buf`), `None` when it must wait.
    fn read_into(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.stdin.is_empty() && !self.closed && !self.gone && !buf.is_empty() {
            self.waiting = true;
            return None;
        }
        self.waiting = false;
        let n = buf.len().min(self.stdin.len());
        for (to, b) in buf.iter_mut().zip(self.stdin.drain(..n)) {
            *to = b;
        }
        Some(n)
    }
}

/// The loop's stdin: a read waits until the client writes or closes it,
/// and returns 0 bytes once it is closed and drained.
pub struct Stdin(pub(crate) Arc<Pipe>);

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.0.lock();
        loop {
            if let Some(n) = s.read_into(buf) {
                return Ok(n);
            }
            self.0.changed.notify_all();
            s = self.0.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The loop's stdout: everything written is kept, in order.
pub struct Stdout(pub(crate) Arc<Pipe>);

impl State {
    /// Keeps what the loop wrote, or fails as a pipe whose reader is gone.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.gone {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        let room = KEPT.saturating_sub(self.stdout.len());
        self.stdout.extend_from_slice(&buf[..buf.len().min(room)]);
        self.wrote = Some(Instant::now());
        Ok(buf.len())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut written = Ok(0);
        self.0.update(|s| written = s.write(buf));
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "tokio")]
mod io_async {
    use super::{Stdin, Stdout};
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    impl AsyncRead for Stdin {
        fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            let mut s = self.0.lock();
            let room = buf.initialize_unfilled();
            match s.read_into(room) {
                Some(n) => {
                    buf.advance(n);
                    Poll::Ready(Ok(()))
                }
                None => {
                    s.waker = Some(cx.waker().clone());
                    drop(s);
                    self.0.changed.notify_all();
                    Poll::Pending
                }
            }
        }
    }

    impl AsyncWrite for Stdout {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            let mut written = Ok(0);
            self.0.update(|s| written = s.write(buf));
            Poll::Ready(written)
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
}

/// A gateway whose loop runs on a thread of its own. Its exit is how the
/// loop ended: `Ok` is status 0, an error status 1 (the error goes to its
/// stderr), a panic a crash.
pub struct LoopGateway {
    pipe: Arc<Pipe>,
    bound: Duration,
    /// Bytes written to its stdin: the bound grows by a second a MiB.
    written: usize,
    /// A wait for the exit ran out: the loop did not end on EOF, and the
    /// session's end need not wait for it again.
    stuck: bool,
}

impl LoopGateway {
    /// Starts `serve` on a thread with the pipe's ends.
    pub(crate) fn start<F>(serve: F, bound: Duration) -> Result<LoopGateway, Fault>
    where
        F: FnOnce(Stdin, Stdout) -> io::Result<()> + Send + 'static,
    {
        let pipe = Arc::new(Pipe::default());
        let (stdin, stdout, done) = (Stdin(pipe.clone()), Stdout(pipe.clone()), pipe.clone());
        std::thread::Builder::new()
            .name("portcullis-gateway".into())
            .spawn(move || {
                let exit = match catch_unwind(AssertUnwindSafe(|| serve(stdin, stdout))) {
                    Ok(Ok(())) => Exit::Exited(0),
                    Ok(Err(e)) => {
                        done.update(|s| s.stderr.extend(format!("the loop returned an error: {e}\n").into_bytes()));
                        Exit::Exited(1)
                    }
                    Err(p) => Exit::Crashed(panic_text(p)),
                };
                done.update(|s| s.exit = Some(exit));
            })
            .map_err(|e| Fault::spawn("the gateway's thread", e))?;
        Ok(LoopGateway { pipe, bound, written: 0, stuck: false })
    }

    /// Waits, bounded, until the loop has ended or `until` says how long
    /// is left to wait is nothing; whether it ended.
    fn wait(&self, mut until: impl FnMut(&mut State) -> Option<Duration>) -> bool {
        let deadline = Instant::now() + self.bound + PER_MIB * (self.written >> 20) as u32;
        let mut s = self.pipe.lock();
        loop {
            if s.exit.is_some() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let more = until(&mut s);
            if left.is_zero() || more == Some(Duration::ZERO) {
                return false;
            }
            let nap = more.map_or(left, |m| m.min(left));
            s = self.pipe.changed.wait_timeout(s, nap).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

impl Gateway for LoopGateway {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        self.written += bytes.len();
        self.pipe.update(|s| {
            if !s.closed && s.exit.is_none() {
                s.stdin.extend(bytes);
            }
        });
        Ok(())
    }

    fn close_stdin(&mut self) -> Result<(), Fault> {
        self.pipe.update(|s| s.closed = true);
        Ok(())
    }

    fn take_stdout(&mut self) -> Vec<u8> {
        let mut s = self.pipe.lock();
        let new = s.stdout[s.taken..].to_vec();
        s.taken = s.stdout.len();
        new
    }

    fn take_stderr(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pipe.lock().stderr)
    }

    fn exit(&mut self) -> Exit {
        self.pipe.lock().exit.clone().unwrap_or(Exit::Running)
    }

    /// Waits until the loop has read everything and waits for more, with
    /// every owed answer written and stdout still for the quiet wait; or,
    /// when it should have ended (stdin closed, or a frame that ends the
    /// session), until it has.
    fn settle(&mut self, settle: &Settle) -> Result<(), Fault> {
        // Each settle reads all of stdout once for its owed answers (one may
        // have come before), then only what is new.
        let (mut owed, mut scanned) = (Awaited::of(settle), 0);
        let ended = self.wait(|s| {
            if settle.expect_exit || s.closed {
                return None;
            }
            let whole = json_line::whole(&s.stdout[scanned..]);
            owed.strike(&s.stdout[scanned..scanned + whole]);
            scanned += whole;
            if !(owed.is_empty() && s.waiting && s.stdin.is_empty()) {
                return None;
            }
            let still = s.wrote.map_or(QUIET, |w| w.elapsed());
            Some(QUIET.saturating_sub(still))
        });
        self.stuck = !ended && (settle.expect_exit || self.pipe.lock().closed);
        Ok(())
    }
}

impl Drop for LoopGateway {
    /// Closes stdin and gives the loop its bound to end, unless a wait for
    /// its exit already ran out; then lets it go: its reads see EOF and its
    /// writes fail, as on a pipe whose reader is gone, which ends most
    /// loops (a thread cannot be ended from outside).
    fn drop(&mut self) {
        let _ = self.close_stdin();
        if !self.stuck {
            self.wait(|_| None);
        }
        self.pipe.update(|s| s.gone = true);
    }
}

//! Bounded capture of a child's stdout or stderr: a thread drains the pipe
//! for as long as it is open, so a flooding child never blocks on a full
//! pipe, and keeps at most `cap` bytes (more once allowed), counting what
//! it cut.

use std::io::Read;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

#[derive(Debug)]
struct State {
    kept: Vec<u8>,
    /// Bytes forgotten from the front of `kept` (read and no longer needed).
    base: usize,
    cut: u64,
    /// The most bytes kept.
    cap: usize,
    last: Instant,
    closed: bool,
}

/// One captured stream.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Capture {
    /// Starts draining `pipe` on its own thread.
    pub(crate) fn start(mut pipe: impl Read + Send + 'static, cap: usize) -> (Capture, JoinHandle<()>) {
        let fresh = State { kept: Vec::new(), base: 0, cut: 0, cap, last: Instant::now(), closed: false };
        let state = Arc::new((Mutex::new(fresh), Condvar::new()));
        let s = state.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let n = match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut st = s.0.lock().unwrap_or_else(|e| e.into_inner());
                let room = st.cap.saturating_sub(st.kept.len()).min(n);
                st.kept.extend_from_slice(&buf[..room]);
                st.cut += (n - room) as u64;
                st.last = Instant::now();
                s.1.notify_all();
            }
            s.0.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
            s.1.notify_all();
        });
        (Capture { state }, thread)
    }

    fn with<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.state.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Keeps `more` bytes past its bound: a server that answers a huge
    /// request by echoing it must not have the answers after it cut.
    pub(crate) fn allow(&self, more: usize) {
        self.state.0.lock().unwrap_or_else(|e| e.into_inner()).cap += more;
    }

    /// The kept bytes from offset `from` on.
    pub(crate) fn since(&self, from: usize) -> Vec<u8> {
        self.with(|s| s.kept.get(from.saturating_sub(s.base)..).unwrap_or_default().to_vec())
    }

    /// How many bytes are kept.
    pub(crate) fn len(&self) -> usize {
        self.with(|s| s.base + s.kept.len())
    }

    /// How many bytes were cut for want of room.
    pub(crate) fn cut(&self) -> u64 {
        self.with(|s| s.cut)
    }

    /// When the last bytes arrived (or the capture started).
    pub(crate) fn last(&self) -> Instant {
        self.with(|s| s.last)
    }

    /// Waits until more than `len` bytes have arrived in all, the pipe
    /// closes, or `until` passes.
    pub(crate) fn wait_past(&self, len: usize, until: Instant) {
        self.wait(until, |st| st.base + st.kept.len() > len || st.closed);
    }

    /// Waits until the pipe closes or `until` passes.
    pub(crate) fn wait_closed(&self, until: Instant) {
        self.wait(until, |st| st.closed);
    }

    /// Waits, woken as bytes arrive or the pipe closes, until `done` holds
    /// or `until` passes.
    fn wait(&self, until: Instant, done: impl Fn(&State) -> bool) {
        let (lock, changed) = &*self.state;
        let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !done(&st) {
            let Some(left) = until.checked_duration_since(Instant::now()) else { return };
            st = changed.wait_timeout(st, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Whether the pipe has closed.
    pub(crate) fn closed(&self) -> bool {
        self.with(|s| s.closed)
    }
}

/// What a server's stderr said last, for a message: its last 400
/// characters, or that it wrote nothing.
pub(crate) fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let tail: Vec<char> = text.trim_end().chars().rev().take(400).collect();
    match tail.is_empty() {
        true => "it wrote nothing on stderr".to_owned(),
        false => format!("its stderr ends: {:?}", tail.into_iter().rev().collect::<String>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn what_was_allowed_is_kept_and_the_rest_is_cut() {
        let (reader, mut writer) = std::io::pipe().expect("a pipe");
        let (capture, thread) = Capture::start(reader, 10);
        capture.allow(20);
        writer.write_all(&[b'x'; 45]).expect("written");
        drop(writer);
        thread.join().expect("drained");
        capture.wait_closed(Instant::now() + Duration::from_secs(5));
        assert_eq!((capture.len(), capture.cut()), (30, 15));
    }
}

//! Bounded capture of a child's stdout or stderr: a thread drains the pipe
//! for as long as it is open, so a flooding child never blocks on a full
//! pipe, and keeps at most `cap` bytes, counting what it cut.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

#[derive(Debug)]
struct State {
    kept: Vec<u8>,
    cut: u64,
    last: Instant,
    closed: bool,
}

/// One captured stream.
#[derive(Debug, Clone)]
pub struct Capture {
    state: Arc<Mutex<State>>,
}

impl Capture {
    /// Starts draining `pipe` on its own thread.
    pub fn start(mut pipe: impl Read + Send + 'static, cap: usize) -> (Capture, JoinHandle<()>) {
        let state = Arc::new(Mutex::new(State { kept: Vec::new(), cut: 0, last: Instant::now(), closed: false }));
        let s = state.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let n = match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut st = s.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(st.kept.len()).min(n);
                st.kept.extend_from_slice(&buf[..room]);
                st.cut += (n - room) as u64;
                st.last = Instant::now();
            }
            s.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        });
        (Capture { state }, thread)
    }

    fn with<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The kept bytes from offset `from` on.
    pub fn since(&self, from: usize) -> Vec<u8> {
        self.with(|s| s.kept.get(from..).unwrap_or_default().to_vec())
    }

    /// How many bytes are kept.
    pub fn len(&self) -> usize {
        self.with(|s| s.kept.len())
    }

    /// Whether nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes were cut for want of room.
    pub fn cut(&self) -> u64 {
        self.with(|s| s.cut)
    }

    /// When the last bytes arrived (or the capture started).
    pub fn last(&self) -> Instant {
        self.with(|s| s.last)
    }

    /// Whether the pipe has closed.
    pub fn closed(&self) -> bool {
        self.with(|s| s.closed)
    }
}

//! The raw TCP sink, for actions that are not HTTP (an SSH helper, say):
//! records the first bytes of every connection to 127.0.0.1.

use super::{KEEP, Log, text};
use crate::seam::{Action, Fault};
use serde_json::{Map, Value};
use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(super) struct TcpSink {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TcpSink {
    pub(super) fn start(log: Log) -> Result<TcpSink, Fault> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| Fault::spawn("the TCP sink", e))?;
        let port = listener.local_addr().map_err(|e| Fault::spawn("the TCP sink", e))?.port();
        listener.set_nonblocking(true).map_err(|e| Fault::spawn("the TCP sink", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut conn, _)) => {
                        let log = log.clone();
                        std::thread::spawn(move || {
                            let _ = conn.set_nonblocking(false);
                            let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
                            let mut data = Vec::new();
                            let _ = (&mut conn).take(KEEP as u64).read_to_end(&mut data);
                            let mut seen = Map::new();
                            seen.insert("data".into(), Value::from(text(&data)));
                            log.lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((Instant::now(), Action::observed("tcp", seen)));
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Ok(TcpSink { port, stop, thread: Some(thread) })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TcpSink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

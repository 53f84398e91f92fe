//! The HTTP sink: a tiny_http server on 127.0.0.1 that records every request
//! (method, path, headers, body) and answers 200; requests for a path the
//! user set aside (a fetch server's `/robots.txt`, say) are answered alike
//! but only counted.

use super::{KEEP, Log, text};
use crate::seam::{Action, Fault};
use serde_json::{Map, Value};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(super) struct HttpSink {
    server: Arc<tiny_http::Server>,
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    ignored: Arc<AtomicUsize>,
}

impl HttpSink {
    /// Starts the sink; requests for a path `ignore` matches (see
    /// [`ignores`]) are answered but not recorded.
    pub(super) fn start(log: Log, ignore: Vec<String>) -> Result<HttpSink, Fault> {
        let server = tiny_http::Server::http("127.0.0.1:0").map_err(|e| Fault::spawn("the HTTP sink", e))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| Fault::spawn("the HTTP sink", "it has no port"))?;
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let ignored = Arc::new(AtomicUsize::new(0));
        let (s, st, count) = (server.clone(), stop.clone(), ignored.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match s.recv_timeout(Duration::from_millis(50)) {
                    Ok(Some(req)) if ignores(&ignore, req.url()) => {
                        count.fetch_add(1, Ordering::Relaxed);
                        let _ = req.respond(tiny_http::Response::from_string("ok"));
                    }
                    Ok(Some(req)) => record(req, &log),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
        });
        Ok(HttpSink { server, port, stop, thread: Some(thread), ignored })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Requests answered but not recorded, as their path was set aside.
    pub(super) fn ignored(&self) -> usize {
        self.ignored.load(Ordering::Relaxed)
    }
}

/// Whether a request for `url` is set aside by one of `patterns`: a path
/// equal to the request's (its query left out), or a prefix of it when it
/// ends in `*`.
pub(super) fn ignores(patterns: &[String], url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => path == p,
    })
}

fn record(mut req: tiny_http::Request, log: &Log) {
    let mut body = Vec::new();
    let _ = req.as_reader().take(KEEP as u64).read_to_end(&mut body);
    let headers: Map<String, Value> =
        req.headers().iter().map(|h| (h.field.to_string(), Value::from(h.value.to_string()))).collect();
    let mut seen = Map::new();
    seen.insert("method".into(), Value::from(req.method().to_string()));
    seen.insert("path".into(), Value::from(req.url()));
    seen.insert("headers".into(), Value::Object(headers));
    seen.insert("body".into(), Value::from(text(&body)));
    log.lock().unwrap_or_else(|e| e.into_inner()).push((Instant::now(), Action::observed("http", seen)));
    let _ = req.respond(tiny_http::Response::from_string("ok"));
}

impl Drop for HttpSink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

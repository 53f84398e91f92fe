//! Effect probes: out-of-band observers that play the executor recorder for
//! a child process. An HTTP sink and a raw TCP sink on 127.0.0.1 (ephemeral
//! ports), and watchers of a directory or a file. Every effect they see
//! becomes an observed [`Action`]; the checks attribute it to frames by the
//! canary tokens it carries.

mod http;
mod tcp;
mod watch;

use crate::seam::{Action, Fault};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most bytes of a request body, a connection or a file a probe keeps.
pub(crate) const KEEP: usize = 64 << 10;

/// Which probes to run besides the HTTP sink. Start from the default and
/// set what differs (`ProbeConfig::default().tcp(true)`).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ProbeConfig {
    /// Run the raw TCP sink too.
    pub tcp: bool,
    /// Directories to watch for files whose name or content holds a token.
    pub watch_dirs: Vec<PathBuf>,
    /// Files to watch for a token appearing in their content.
    pub watch_files: Vec<PathBuf>,
    /// Paths of HTTP sink requests answered but not recorded as effects:
    /// exact, or a prefix ending in `*` (the query is not matched).
    pub http_ignore: Vec<String>,
}

setters! {
    ProbeConfig;
    /// Sets [`ProbeConfig::tcp`].
    tcp: bool,
    /// Sets [`ProbeConfig::watch_dirs`].
    watch_dirs: Vec<PathBuf>,
    /// Sets [`ProbeConfig::watch_files`].
    watch_files: Vec<PathBuf>,
    /// Sets [`ProbeConfig::http_ignore`].
    http_ignore: Vec<String>,
}

/// Effects seen so far, with when they were seen.
type Log = Arc<Mutex<Vec<(Instant, Action)>>>;

/// The running probes of one job.
pub struct Probes {
    http: http::HttpSink,
    tcp: Option<tcp::TcpSink>,
    watches: Mutex<Vec<watch::Watch>>,
    log: Log,
}

impl Probes {
    /// Starts the sinks and takes the watchers' baselines.
    pub fn start(cfg: &ProbeConfig) -> Result<Probes, Fault> {
        let log: Log = Arc::default();
        let http = http::HttpSink::start(log.clone(), cfg.http_ignore.clone())?;
        let tcp = if cfg.tcp { Some(tcp::TcpSink::start(log.clone())?) } else { None };
        let mut watches = Vec::new();
        for d in &cfg.watch_dirs {
            watches.push(watch::Watch::dir(d.clone())?);
        }
        for f in &cfg.watch_files {
            watches.push(watch::Watch::file(f.clone())?);
        }
        Ok(Probes { http, tcp, watches: Mutex::new(watches), log })
    }

    /// The HTTP sink's base URL, `http://127.0.0.1:PORT`.
    pub fn http_base(&self) -> String {
        format!("http://127.0.0.1:{}", self.http.port())
    }

    /// The TCP sink's address, `127.0.0.1:PORT`, when it runs.
    pub fn tcp_addr(&self) -> Option<String> {
        self.tcp.as_ref().map(|t| format!("127.0.0.1:{}", t.port()))
    }

    /// How many HTTP sink requests were answered but not recorded, as
    /// [`ProbeConfig::http_ignore`] set their path aside.
    pub fn ignored(&self) -> usize {
        self.http.ignored()
    }

    /// When the last effect not yet taken arrived.
    pub fn last_effect(&self) -> Option<Instant> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).last().map(|(t, _)| *t)
    }

    /// Every effect since the last call, with when it arrived: the sinks'
    /// as they came, then what the watchers find now.
    pub fn take(&self) -> Vec<(Instant, Action)> {
        self.take_with(false)
    }

    /// [`Probes::take`], a watched file's unfinished last line included
    /// (`drain`): the last look, after which no poll may come.
    fn take_with(&self, drain: bool) -> Vec<(Instant, Action)> {
        let mut effects = std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()));
        let now = Instant::now();
        for w in self.watches.lock().unwrap_or_else(|e| e.into_inner()).iter_mut() {
            effects.extend(w.poll(drain).into_iter().map(|a| (now, a)));
        }
        effects
    }

    /// Waits until no new effect has arrived for `quiet` — counted from the
    /// call too, so an effect still on its way is waited for even when none
    /// came yet (at most `bound`) — then takes every effect since the last
    /// call ([`Probes::take`]), a watched file's unfinished line included.
    pub fn settle(&self, quiet: Duration, bound: Duration) -> Vec<Action> {
        let from = Instant::now();
        let deadline = from + bound;
        loop {
            let since = self.last_effect().map_or(from, |t| t.max(from)).elapsed();
            if since >= quiet || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep((quiet - since).min(Duration::from_millis(5)));
        }
        self.take_with(true).into_iter().map(|(_, a)| a).collect()
    }
}

/// `bytes` as text for an observed action, lossy and bounded.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(KEEP)]).into_owned()
}

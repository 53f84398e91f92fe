//! The progress of a campaign: a bar on a terminal, lines otherwise.

use crate::campaign::Distinct;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress: a bar on a terminal, with what is being shrunk as its
/// message; otherwise a plain line per tenth of the sessions (or of the
/// duration, at most a minute apart while sessions end), and one every
/// five seconds of shrinking.
pub(super) struct Bar {
    /// Sessions to run; `u32::MAX` when only a duration bounds them.
    total: u32,
    duration: Option<Duration>,
    started: Instant,
    bar: Option<indicatif::ProgressBar>,
    last_line: Mutex<Instant>,
    /// What is being shrunk beside the search, shown after the sessions.
    shrinking: Mutex<String>,
}

impl Bar {
    pub(super) fn new(total: u32, duration: Option<Duration>) -> Bar {
        let timed = total == u32::MAX;
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, template) = match duration.filter(|_| timed) {
                Some(d) => (d.as_secs(), "{spinner} {msg:.dim} {wide_bar} {elapsed}/{len}s"),
                None => (u64::from(total), "{spinner} {pos}/{len} sessions {wide_bar} {elapsed} {msg}"),
            };
            let bar = indicatif::ProgressBar::new(len);
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Bar {
            total,
            duration: duration.filter(|_| timed),
            started: Instant::now(),
            bar,
            last_line: Mutex::new(Instant::now()),
            shrinking: Mutex::default(),
        }
    }

    fn shrinking_now(&self) -> String {
        self.shrinking.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(super) fn searched(&self, n: u32) {
        match (&self.bar, self.duration) {
            (Some(bar), Some(_)) => {
                bar.set_position(self.started.elapsed().as_secs());
                let shrinking = self.shrinking_now();
                bar.set_message(if shrinking.is_empty() {
                    format!("{n} sessions")
                } else {
                    format!("{n} sessions, {shrinking}")
                });
            }
            (Some(bar), None) => {
                bar.set_position(u64::from(n));
                bar.set_message(self.shrinking_now());
            }
            (None, Some(d)) => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= (d / 10).clamp(Duration::from_secs(1), Duration::from_secs(60)) {
                    *last = Instant::now();
                    say!("portcullis: {n} sessions, {}/{} s", self.started.elapsed().as_secs(), d.as_secs());
                }
            }
            (None, None) if n.is_multiple_of((self.total / 10).max(1)) || n == self.total => {
                say!("portcullis: {n}/{} sessions", self.total)
            }
            (None, None) => {}
        }
    }

    pub(super) fn shrinking(&self, finding: &Distinct, steps: u32, elapsed: Duration) {
        let what = format!("shrinking {finding}: {steps} steps, {:.1} s", elapsed.as_secs_f64());
        *self.shrinking.lock().unwrap_or_else(|e| e.into_inner()) = what.clone();
        match &self.bar {
            Some(bar) => bar.set_message(what),
            None => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= Duration::from_secs(5) {
                    *last = Instant::now();
                    say!("portcullis: {what}");
                }
            }
        }
    }

    /// Nothing is being shrunk any more.
    pub(super) fn shrunk(&self) {
        self.shrinking.lock().unwrap_or_else(|e| e.into_inner()).clear();
        if let Some(bar) = &self.bar {
            bar.set_message("");
        }
    }

    /// A line of its own, above the bar when there is one.
    pub(super) fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("portcullis: {line}")),
            None => say!("portcullis: {line}"),
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

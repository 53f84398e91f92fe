//! How long a child session waits, set by flags and grown by what the
//! server shows: never shorter than the flags, and no check or learned
//! shortcut skips one.

use crate::adapter::PER_MIB;
use std::sync::Mutex;
use std::time::Duration;

/// The waits of a child session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Waits {
    /// The longest a session waits for an answer it is owed, or for a
    /// valid call to act: the bound of every wait once the server runs.
    pub answer: Duration,
    /// The longest a new process may take to write its first byte: until
    /// it does, a wait for an answer lasts at least this long from the
    /// process's start, and once it has, the answer wait runs from then. A
    /// server slow to start does not make every owed answer wait as long.
    pub start: Duration,
    /// How long output and effects stay quiet before a fresh session goes
    /// on (closes stdin, or is judged).
    pub quiet: Duration,
    /// How long a server may take to exit once it should (stdin closed, or
    /// a frame that closes the session), from when it has read all it was
    /// sent.
    pub exit_grace: Duration,
    /// Bytes of stdout, and of stderr, kept per session.
    pub capture: usize,
}

impl Default for Waits {
    fn default() -> Self {
        Waits {
            answer: Duration::from_secs(5),
            start: Duration::from_secs(5),
            quiet: Duration::from_millis(10),
            exit_grace: Duration::from_secs(1),
            capture: 8 << 20,
        }
    }
}

impl Waits {
    /// These waits with `answer`, `quiet` and `exit_grace` in milliseconds
    /// (each at least 1 ms, `quiet` at least 0), and a start bound as long
    /// as the answer wait.
    pub fn from_ms(answer: u64, quiet: u64, exit_grace: u64) -> Waits {
        Waits {
            answer: Duration::from_millis(answer.max(1)),
            quiet: Duration::from_millis(quiet),
            exit_grace: Duration::from_millis(exit_grace.max(1)),
            ..Waits::default()
        }
        .starting_within(Duration::ZERO)
    }

    /// These waits with a start bound of `start`, never shorter than the
    /// answer wait.
    pub fn starting_within(mut self, start: Duration) -> Waits {
        self.start = start.max(self.answer);
        self
    }
}

impl Waits {
    /// Each wait the longer of these and `other`'s: a replay waits at
    /// least as long as the run that saved the finding.
    pub fn at_least(self, other: Waits) -> Waits {
        Waits {
            answer: self.answer.max(other.answer),
            start: self.start.max(other.start),
            quiet: self.quiet.max(other.quiet),
            exit_grace: self.exit_grace.max(other.exit_grace),
            capture: self.capture.max(other.capture),
        }
    }

    /// These waits for a session that sent `bytes`: the answer wait and
    /// the exit grace grow by [`PER_MIB`] for each whole MiB, as a server
    /// takes time to read and parse a huge call.
    pub(crate) fn for_bytes(mut self, bytes: usize) -> Waits {
        let more = PER_MIB * (bytes >> 20) as u32;
        self.answer += more;
        self.exit_grace += more;
        self
    }

    /// These waits, each `factor` times as long: a verdict that rests on
    /// time alone is confirmed with longer ones.
    pub fn scaled(mut self, factor: u32) -> Waits {
        self.answer *= factor;
        self.start *= factor;
        self.quiet *= factor;
        self.exit_grace *= factor;
        self
    }

    /// These waits, keeping `bytes` of stdout and of stderr per session.
    pub fn with_capture(mut self, bytes: usize) -> Waits {
        self.capture = bytes;
        self
    }
}

/// The waits of a target's sessions as the server has shown it needs:
/// the quiet grows to cover the slowest valid call seen and the latest
/// evidence that came after its session was judged, within the answer
/// bound. Shared by every session of a target.
#[derive(Debug)]
pub(crate) struct Grown {
    flags: Waits,
    quiet: Mutex<Duration>,
    /// What grew the quiet last, when anything did.
    why: Mutex<Option<String>>,
}

impl Grown {
    pub(crate) fn new(flags: Waits) -> Grown {
        Grown { flags, quiet: Mutex::new(flags.quiet), why: Mutex::default() }
    }

    /// The quiet and the evidence that grew it past its flag, if any did.
    pub(crate) fn grown(&self) -> Option<(Duration, String)> {
        let quiet = *self.quiet.lock().unwrap_or_else(|e| e.into_inner());
        let why = self.why.lock().unwrap_or_else(|e| e.into_inner()).clone();
        why.filter(|_| quiet > self.flags.quiet).map(|w| (quiet, w))
    }

    /// The waits now: the flags, with the quiet grown.
    pub(crate) fn now(&self) -> Waits {
        Waits { quiet: *self.quiet.lock().unwrap_or_else(|e| e.into_inner()), ..self.flags }
    }

    /// Grows the quiet to cover `seen` (with half again as headroom), never
    /// past the answer bound, never below what it was.
    pub(crate) fn cover(&self, seen: Duration, why: &str) {
        let want = (seen + seen / 2).min(self.flags.answer);
        let mut quiet = self.quiet.lock().unwrap_or_else(|e| e.into_inner());
        if want > *quiet {
            *quiet = want;
            *self.why.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quiet_grows_within_the_answer_bound_and_never_shrinks() {
        let grown = Grown::new(Waits::from_ms(1000, 10, 500));
        assert_eq!(grown.now().quiet, Duration::from_millis(10));
        grown.cover(Duration::from_millis(4), "early");
        assert_eq!(grown.grown(), None, "nothing grew");
        assert_eq!(grown.now().quiet, Duration::from_millis(10), "never below the flag");
        grown.cover(Duration::from_millis(300), "late");
        assert_eq!(grown.grown(), Some((Duration::from_millis(450), "late".to_owned())), "what grew it");
        assert_eq!(grown.now().quiet, Duration::from_millis(450));
        grown.cover(Duration::from_millis(100), "less late");
        assert_eq!(grown.grown().map(|g| g.1), Some("late".to_owned()), "what did not grow it is not named");
        assert_eq!(grown.now().quiet, Duration::from_millis(450), "never shrinks");
        grown.cover(Duration::from_secs(60), "later");
        assert_eq!(grown.now().quiet, Duration::from_millis(1000), "within the answer bound");
        assert_eq!(grown.now().exit_grace, Duration::from_millis(500));
    }

    #[test]
    fn a_replay_waits_at_least_as_long_as_the_saved_run() {
        let saved = Waits::from_ms(8000, 450, 200);
        let both = Waits::from_ms(5000, 10, 1000).at_least(saved);
        assert_eq!(both, Waits::from_ms(8000, 450, 1000));
    }
}

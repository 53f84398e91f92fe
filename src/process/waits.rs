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
/// bound; the answer wait grows to four times the slowest marker answer
/// this run measured, and the start bound to twice the slowest start, each
/// within [`MEASURED_MAX`] times its flag. Shared by every session of a
/// target.
#[derive(Debug)]
pub(crate) struct Grown {
    flags: Waits,
    quiet: Mutex<Growth>,
    answer: Mutex<Growth>,
    start: Mutex<Growth>,
}

/// How many times its flag a measured wait may grow to.
pub(crate) const MEASURED_MAX: u32 = 8;

/// One wait as grown, and what grew it last, if anything did.
#[derive(Debug, Clone)]
struct Growth {
    now: Duration,
    why: Option<String>,
}

impl Growth {
    fn new(flag: Duration) -> Mutex<Growth> {
        Mutex::new(Growth { now: flag, why: None })
    }

    /// Grows to `want`, for `why`, if that is longer; whether it grew.
    fn to(cell: &Mutex<Growth>, want: Duration, why: impl FnOnce() -> String) -> bool {
        let mut g = cell.lock().unwrap_or_else(|e| e.into_inner());
        let grew = want > g.now;
        if grew {
            *g = Growth { now: want, why: Some(why()) };
        }
        grew
    }

    fn get(cell: &Mutex<Growth>) -> Growth {
        cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Grown {
    pub(crate) fn new(flags: Waits) -> Grown {
        Grown {
            flags,
            quiet: Growth::new(flags.quiet),
            answer: Growth::new(flags.answer),
            start: Growth::new(flags.start),
        }
    }

    /// The quiet and the evidence that grew it past its flag, if any did.
    pub(crate) fn grown(&self) -> Option<(Duration, String)> {
        let g = Growth::get(&self.quiet);
        g.why.filter(|_| g.now > self.flags.quiet).map(|w| (g.now, w))
    }

    /// The answer wait and the measurement that grew it past its flag, if
    /// any did.
    pub(crate) fn answer_grown(&self) -> Option<(Duration, String)> {
        let g = Growth::get(&self.answer);
        g.why.filter(|_| g.now > self.flags.answer).map(|w| (g.now, w))
    }

    /// The waits now: the flags, with the quiet, the answer wait and the
    /// start bound grown.
    pub(crate) fn now(&self) -> Waits {
        Waits {
            quiet: Growth::get(&self.quiet).now,
            answer: Growth::get(&self.answer).now,
            start: Growth::get(&self.start).now,
            ..self.flags
        }
    }

    /// Grows the quiet to cover `seen` (with half again as headroom), never
    /// past the answer bound, never below what it was.
    pub(crate) fn cover(&self, seen: Duration, why: &str) {
        let want = covering(seen).min(self.flags.answer);
        Growth::to(&self.quiet, want, || why.to_owned());
    }

    /// Notes that an answer the server owed at once (a marker's) took
    /// `took`: the answer wait grows to four times that, within
    /// [`MEASURED_MAX`] times its flag. A loaded machine slows every
    /// answer, and a verdict that rests on a missing one must not follow.
    pub(crate) fn answered_in(&self, took: Duration) {
        let want = (took * 4).min(self.flags.answer * MEASURED_MAX);
        Growth::to(&self.answer, want, || format!("a marker took {} ms to be answered", took.as_millis()));
    }

    /// Notes that a new process took `took` to write its first byte: the
    /// start bound grows to twice that, within [`MEASURED_MAX`] times its
    /// flag.
    pub(crate) fn started_in(&self, took: Duration) {
        let want = (took * 2).min(self.flags.start * MEASURED_MAX);
        Growth::to(&self.start, want, || format!("a process took {} ms to start", took.as_millis()));
    }
}

/// How late evidence came that a fresh session's quiet waits cover: a
/// server seen to act `running` after a window may still act when its
/// stdin closes, so the session's quiet waits cover that while the server
/// runs; evidence that came `exited` after its session was judged may have
/// come once the server had exited (of a job it left running), so the
/// quiet wait after the exit covers that.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cover {
    pub(crate) running: Duration,
    pub(crate) exited: Duration,
}

/// The quiet that covers evidence seen `seen` after a window: that, with
/// half again as headroom.
pub(crate) fn covering(seen: Duration) -> Duration {
    seen + seen / 2
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
    fn the_answer_wait_and_start_bound_grow_with_what_was_measured() {
        let grown = Grown::new(Waits::from_ms(1000, 10, 500));
        grown.answered_in(Duration::from_millis(100));
        assert_eq!(grown.answer_grown(), None, "four times 100 ms is within the flag");
        grown.answered_in(Duration::from_millis(400));
        assert_eq!(grown.now().answer, Duration::from_millis(1600));
        assert!(grown.answer_grown().is_some_and(|(_, why)| why.contains("400 ms")));
        grown.answered_in(Duration::from_millis(200));
        assert_eq!(grown.now().answer, Duration::from_millis(1600), "never shrinks");
        grown.answered_in(Duration::from_secs(60));
        assert_eq!(grown.now().answer, Duration::from_millis(8000), "within eight times its flag");
        grown.started_in(Duration::from_millis(900));
        assert_eq!(grown.now().start, Duration::from_millis(1800));
    }

    #[test]
    fn a_replay_waits_at_least_as_long_as_the_saved_run() {
        let saved = Waits::from_ms(8000, 450, 200);
        let both = Waits::from_ms(5000, 10, 1000).at_least(saved);
        assert_eq!(both, Waits::from_ms(8000, 450, 1000));
    }
}

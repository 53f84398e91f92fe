//! What sharing a process cost a job in starts, and why it was given up,
//! for `portcullis fuzz` to report.

use std::time::Duration;

/// Why sharing a process was given up for the rest of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Off {
    /// A process did not answer a `ping` marker after its handshake within
    /// the timeout: it does not answer `ping`, or starts too slowly.
    NoMarker,
    /// An effect came after its script had ended, so one could be pinned on
    /// the wrong session.
    LateEffect,
}

impl Off {
    /// What happened, for a human.
    pub fn describe(self) -> &'static str {
        match self {
            Off::NoMarker => {
                "a process did not answer a `ping` within --timeout-ms of starting \
                 (it does not answer `ping`, or starts too slowly)"
            }
            Off::LateEffect => {
                "an effect came after its session had ended, so one could be pinned on the wrong session"
            }
        }
    }
}

/// What sharing a process has cost in starts so far, and whether it held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sharing {
    /// Sessions asked for through [`super::SharedChild::session`].
    pub sessions: u32,
    /// Of those, the ones that cost a process start: they ran in a process
    /// of their own, or ended the shared one with a frame cut at EOF.
    pub costly: u32,
    /// The quickest a process started and answered its first marker.
    pub quickest: Option<Duration>,
    /// Why sharing was given up, and at which session.
    pub off: Option<(Off, u32)>,
}

impl Sharing {
    /// Adds another job's sharing to this one's.
    pub fn add(&mut self, other: Sharing) {
        self.sessions += other.sessions;
        self.costly += other.costly;
        self.quickest = self.quickest.into_iter().chain(other.quickest).min();
        self.off = self.off.or(other.off);
    }
}

//! Processes spawned ahead of fresh sessions, so that a server's start
//! overlaps the session before instead of adding to it.
//!
//! A fresh session (every session under close, and every one with
//! `--no-share`) costs a whole process: its start, the script, its exit.
//! Against a server that takes a second to start, the start is nearly all
//! of it, and the job's core waits through it. A target started ahead keeps
//! a process spawned and starting (or a few); a session takes the oldest,
//! and another is spawned in its place. One is enough for a campaign:
//! against a server slow to start, one start beside each session keeps two
//! cores busy, and each process more is a start wasted when the campaign
//! ends. (`portcullis minimize` keeps four, for servers whose start waits
//! more than it computes.)
//!
//! The session sees what it would see from a process spawned for it: the
//! captures hold everything the process wrote since its spawn (a banner
//! included), and a process that exited while it waited is taken all the
//! same, so the session shows the early exit rather than hide it.

use super::{ChildGateway, ChildTarget, affinity};
use crate::seam::{Fault, Recorder, Session};

impl ChildTarget {
    /// Keeps `n` processes spawned ahead of the next fresh session (none
    /// by default). They start on whichever core is free and join the
    /// session's core when taken.
    pub fn started_ahead(mut self, n: usize) -> ChildTarget {
        self.ahead = n;
        self
    }

    /// A process for a fresh session: the oldest spawned ahead, bound to
    /// the session, or one spawned now; then the processes ahead are
    /// topped up.
    pub(super) fn fresh_process(&self, session: &Session, recorder: Recorder) -> Result<ChildGateway, Fault> {
        let taken = self.spares.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        let child = match taken {
            Some(mut child) => {
                affinity::join_chain(child.id());
                child.rebind(recorder, session.salt);
                // A clone of the target with other bounds shares the spares.
                child.limits = self.limits;
                child.after_exit = self.limits.after_exit();
                child
            }
            None => ChildGateway::spawn(self, session.salt, recorder, false)?,
        };
        self.top_up();
        Ok(child)
    }

    /// Spawns processes ahead until [`ChildTarget::started_ahead`]'s count
    /// is reached. A spawn that fails is left to the next session, which
    /// spawns its own and reports the failure.
    fn top_up(&self) {
        let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        while spares.len() < self.ahead {
            match ChildGateway::spawn(self, 0, Recorder::new(), true) {
                Ok(child) => spares.push_back(child),
                Err(_) => break,
            }
        }
    }
}

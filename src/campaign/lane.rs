//! The lanes a hunt runs its sessions in. Drawing and reporting need a
//! session's verdict to hold for a fresh one; a shrinking candidate only
//! needs to tell whether it still shows the finding, so a runner may run it
//! where that is quickest (a persistent process, judged by its marker) as
//! long as the hunt confirms what it shrank to in a fresh session.

use crate::check::Violation;
use crate::finding::Distinct;
use crate::observation::Observation;
use crate::script::Script;
use std::sync::Arc;

/// One session's rendered script (shared with the ledger that keeps it),
/// what it showed and its violations.
pub(crate) type SessionRun = (Arc<Script>, Observation, Vec<Violation>);

/// Which lane a session of a hunt runs in; a runner may treat them alike
/// (an in-process target runs every session fresh).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lane {
    /// Drawing new sessions: what a runner reports of a new finding must
    /// hold for a fresh session (a shared process's verdict may stand for
    /// findings already made), unless the runner gives the hunt the scripts
    /// its shared process ran before the session: the hunt then confirms
    /// the finding in a fresh session ([`Lane::Confirm`]) before it reports
    /// it, and reports one no fresh session repeats with those scripts.
    Search,
    /// A cut-down candidate of this finding: a runner may report what a
    /// shared process showed, unconfirmed, where a shared process can show
    /// it at all.
    Shrink(Distinct),
    /// The session a finding is reported with: run as a fresh session
    /// (a process of its own), with waits at least as long as the
    /// search's (a child process waits twice as long, so that a verdict
    /// resting on time alone holds on a loaded machine).
    Confirm,
    /// The session a finding that rests on time alone (no answer, effect
    /// or exit within a wait) is reported with: as [`Lane::Confirm`], with
    /// waits twice as long again (a child process waits four times as long
    /// as the search), so that a server slowed by a loaded machine passes
    /// where a hung one does not.
    ConfirmTimed,
}

impl Lane {
    /// Whether a session of it is one a finding is reported with, run
    /// fresh with longer waits.
    pub fn confirms(&self) -> bool {
        matches!(self, Lane::Confirm | Lane::ConfirmTimed)
    }
}

/// A run whose runner handed back its script (an in-process session, a
/// user's runner given to `hunt_by`), as a [`SessionRun`].
pub(crate) fn into_session_run((script, obs, violations): (Script, Observation, Vec<Violation>)) -> SessionRun {
    (Arc::new(script), obs, violations)
}

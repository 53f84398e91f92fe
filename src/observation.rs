//! What one session showed from outside the gateway: the evidence every
//! check reads.

use crate::fill::Filled;
use crate::protocol::Id;
use crate::seam::{Action, Exit};

/// Everything one session showed from outside the gateway.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// Every stdout byte, in order.
    pub stdout: Vec<u8>,
    /// Every stderr byte, in order (kept apart from stdout).
    pub stderr: Vec<u8>,
    /// Every action that reached the executor, in order.
    pub effects: Vec<Action>,
    /// How the gateway stood after the last write, before EOF.
    pub exit_before_eof: Exit,
    /// How the gateway stood at the end.
    pub exit: Exit,
    /// The stdin offset of the end of the first write after which the
    /// gateway had ended, if it ended before the script did.
    pub ended_at: Option<usize>,
    /// Whether stdin was closed.
    pub eof_sent: bool,
    /// Bytes of stdout and of stderr written but not kept (a child's
    /// captures are bounded).
    pub cut: (u64, u64),
    /// Requests whose answers were still within their deadline when the
    /// session was judged (a script in a shared process goes on once its
    /// marker is answered): none of them is missing yet, nor has a valid
    /// one among them failed to act. Judged again once the deadline has
    /// passed, with this empty.
    pub awaiting: Vec<Id>,
    /// What was written for each frame that waited on an earlier answer
    /// (a multi round-trip retry): the frames are judged as written.
    pub filled: Vec<Filled>,
    /// Whether a marker request written after the script went unanswered
    /// (a child process under keep-open is sent one): the gateway was not
    /// shown to have read past the script. Where it still runs, it stalled
    /// (a `liveness` finding of kind `stalled`).
    pub marker_unanswered: bool,
}

impl Observation {
    /// Nothing seen yet: no output, no effect, the gateway running, stdin
    /// open. A session's observation starts here.
    pub(crate) fn none() -> Observation {
        Observation {
            stdout: Vec::new(),
            stderr: Vec::new(),
            effects: Vec::new(),
            exit_before_eof: Exit::Running,
            exit: Exit::Running,
            ended_at: None,
            eof_sent: false,
            cut: (0, 0),
            awaiting: Vec::new(),
            filled: Vec::new(),
            marker_unanswered: false,
        }
    }
}

//! What the search hands a lane of its own: a finding it caught, to be
//! shrunk and confirmed there while the search draws on.

use super::lane::SessionRun;
use crate::finding::Distinct;
use crate::script::{Part, Script, ScriptSpec};
use std::time::Duration;

/// The session the search caught: its choices, what it showed, its salt,
/// and, where it ran in a shared process, the scripts that process ran
/// before it (its verdict then need not hold for a fresh session).
pub(super) struct Caught {
    pub(super) spec: ScriptSpec,
    pub(super) run: SessionRun,
    pub(super) salt: u32,
    pub(super) history: Option<(Vec<Script>, u32)>,
}

/// A finding the search caught, handed to a shrinking lane: the round's
/// seed and cases, the part of the mix it drew, and which of its cases
/// caught it, so that the lane
/// draws the same case again and shrinks it as proptest would have; the
/// session that caught it; the search sessions run until then and when it
/// was first seen.
pub(crate) struct Handed {
    pub(super) seed: u64,
    pub(super) cases: u32,
    pub(super) case: u32,
    pub(super) part: Part,
    pub(super) key: Distinct,
    pub(super) caught: Caught,
    pub(super) found_at: u32,
    pub(super) first_seen: Option<Duration>,
}

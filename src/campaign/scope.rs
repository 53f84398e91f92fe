//! What a run reports, applied wherever a session is judged for a
//! finding: when it is first recorded, when late evidence judges it again,
//! and when a fresh session tells whether a shared one's finding repeats.

use super::{HuntConfig, SessionRun};
use crate::check::{CheckId, Violation};
use crate::finding::{Distinct, beside_crash, distinct};
use crate::observation::Observation;
use crate::protocol::Level;
use crate::script::Script;

/// What a run reports: the check it hunts (every check where none) and
/// the level it reports down to (spec-level findings always). A session
/// is judged within it when it is first recorded and whenever late
/// evidence judges it again, so nothing outside it is confirmed or shrunk.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) focus: Option<CheckId>,
    pub(crate) level: Level,
}

impl Scope {
    /// Whether `v`, broken by a session of `script`, is reported.
    fn reports(&self, v: &Violation, script: &Script) -> bool {
        self.admits(v.check, v.level(script))
    }

    /// Whether a finding of `check` at `level` is reported.
    pub(crate) fn admits(&self, check: CheckId, level: Level) -> bool {
        self.focus.is_none_or(|c| c == check) && level <= self.level.max(Level::Spec)
    }

    /// The `violations` of a session of `script` that showed `obs` which
    /// this scope reports, in order. A session that crashed shows the
    /// crash, and what the crash does not explain; the answers and effects
    /// that did not come after it are no finding each.
    pub(crate) fn reported<'a>(
        &self,
        violations: &'a [Violation],
        script: &'a Script,
        obs: &Observation,
    ) -> impl Iterator<Item = &'a Violation> {
        beside_crash(violations, obs).filter(move |v| self.reports(v, script))
    }

    /// The findings `run` shows within this scope, in the order checks are
    /// reported.
    pub(crate) fn judged(&self, (script, obs, violations): &SessionRun) -> Vec<Distinct> {
        self.reported(violations, script, obs).map(|v| distinct(v, script, obs)).collect()
    }
}

impl From<&HuntConfig> for Scope {
    fn from(cfg: &HuntConfig) -> Scope {
        Scope { focus: cfg.focus, level: cfg.level }
    }
}

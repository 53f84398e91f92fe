//! What a run reports, applied wherever a session is judged: when it is
//! first recorded, and again when late evidence comes.

use super::{HuntConfig, SessionRun};
use crate::check::{CheckId, Violation};
use crate::finding::{Distinct, beside_crash, distinct};
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
    pub(crate) fn reports(&self, v: &Violation, script: &Script) -> bool {
        self.focus.is_none_or(|c| c == v.check) && v.level(script) <= self.level.max(Level::Spec)
    }

    /// The findings `run` shows, in the order checks are reported, within
    /// this scope. A session that crashed shows the crash, and what the
    /// crash does not explain; the answers and effects that did not come
    /// after it are no finding each.
    pub(crate) fn judged(&self, (script, obs, violations): &SessionRun) -> Vec<Distinct> {
        let reported = beside_crash(violations, obs).filter(|v| self.reports(v, script));
        reported.map(|v| distinct(v, script, obs)).collect()
    }
}

impl From<&HuntConfig> for Scope {
    fn from(cfg: &HuntConfig) -> Scope {
        Scope { focus: cfg.focus, level: cfg.level }
    }
}

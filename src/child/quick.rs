//! Shorter waits for the sessions that cut a finding down, where the
//! finding's check allows them.

use super::ChildTarget;
use crate::check::CheckId;

impl ChildTarget {
    /// This target with the waits a session cutting down a finding of
    /// `check` needs. For `no-effect-on-reject`: an exit is waited for three
    /// quiets (30 ms by default) once the server has read what it was sent,
    /// rather than the whole exit grace, and half a quiet counts as calm.
    /// That check's violations are effects, each judged by the frames its
    /// tokens name, so a shorter wait can miss one but never make one up: a
    /// candidate that fails with it fails with the full waits too. A gateway
    /// that acts on a rejected frame and then neither closes nor exits would
    /// otherwise cost every failing candidate the whole grace. Other checks
    /// read what a shorter wait would cut short (a missing answer, a late
    /// exit), so they keep this target's waits. Processes spawned ahead are
    /// shared with this target.
    pub fn for_candidates(&self, check: CheckId) -> ChildTarget {
        let mut quick = self.clone();
        if check == CheckId::NoEffectOnReject {
            quick.limits.exit_grace = quick.limits.exit_grace.min(quick.limits.quiet * 3);
            quick.limits.quiet /= 2;
        }
        quick
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::{Command, Limits};
    use crate::probe::{ProbeConfig, Probes};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn only_no_effect_on_reject_waits_less() {
        let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes start"));
        let command = Command { program: "true".into(), args: vec![], env: vec![] };
        let target = ChildTarget::new(command, Limits::default(), vec![], probes);
        for check in CheckId::ALL {
            let l = target.for_candidates(check).limits;
            match check {
                CheckId::NoEffectOnReject => {
                    assert_eq!((l.exit_grace, l.quiet), (Duration::from_millis(30), Duration::from_millis(5)))
                }
                _ => assert_eq!((l.exit_grace, l.quiet), (target.limits.exit_grace, target.limits.quiet), "{check}"),
            }
            assert_eq!((l.timeout, l.stall), (target.limits.timeout, target.limits.stall), "{check}");
        }
    }
}

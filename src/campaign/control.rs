//! The positive control: the first session of a run, one valid call, and
//! the finding it shows, judged as the hunt judges one.

use super::{Finding, SessionRun};
use crate::check::CheckId;
use crate::finding::{Distinct, on_time};
use crate::protocol::Policy;
use crate::script::ScriptSpec;
use crate::seam::Fault;

/// The finding a positive control's session shows, if any: output that
/// is no protocol message first (a client cannot read a banner or a flood
/// as answers), whatever else it showed; else its first violation shown
/// on evidence, not by time alone; else its first. `run` is `spec`
/// rendered with tokens of `salt`, in a run with `seed` under `policy`.
fn control_finding(spec: ScriptSpec, run: SessionRun, salt: u32, (seed, policy): (u64, Policy)) -> Option<Finding> {
    let (script, obs, violations) = &run;
    let dirty = violations.iter().find(|v| v.check == CheckId::StdoutClean);
    let shown = violations.iter().find(|v| !on_time(v, script, obs));
    let key = crate::finding::distinct(dirty.or(shown).or(violations.first())?, script, obs);
    let shown = Finding::shown(&key, spec, run, salt, (seed, policy));
    Some(Finding { cases_until_caught: 1, ..shown })
}

/// The positive control's finding ([`control_finding`]), judged as the
/// hunt judges a finding: one that rests on time alone (no answer, effect
/// or exit within a wait; the session then showed nothing on evidence)
/// stands only where `again` (the control run once more as the hunt
/// confirms such a finding, [`Lane::ConfirmTimed`](super::Lane::ConfirmTimed), with tokens of its
/// own, and their salt) shows it too, or shows another on evidence: the
/// patient session's finding. `Err` with the key of one it did not
/// repeat: a slow server or a loaded machine, within the waits.
pub(crate) fn confirmed_control(
    spec: ScriptSpec,
    run: SessionRun,
    salt: u32,
    (seed, policy): (u64, Policy),
    again: impl FnOnce() -> Result<(SessionRun, u32), Fault>,
) -> Result<Result<Option<Finding>, Distinct>, Fault> {
    let first = control_finding(spec.clone(), run, salt, (seed, policy));
    let Some(found) = first else { return Ok(Ok(None)) };
    let key = found.distinct();
    if !key.rests_on_time(&found.violations, &found.script, &found.observation) {
        return Ok(Ok(Some(found)));
    }
    let (run, salt) = again()?;
    let patient = control_finding(spec, run, salt, (seed, policy));
    let stands = |f: &Finding| {
        let shown = f.distinct();
        shown == key || !shown.rests_on_time(&f.violations, &f.script, &f.observation)
    };
    Ok(patient.filter(stands).map(Some).ok_or(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalogue;
    use crate::attack::Step;
    use crate::check::{Kind, Violation};
    use crate::observation::Observation;
    use crate::protocol::Revision;

    fn spec() -> ScriptSpec {
        ScriptSpec::whole(Revision::LATEST, vec![Step::Control(0)])
    }

    /// The control's session showing `kinds`, each of its check, on the call.
    fn run(kinds: &[(CheckId, Kind)]) -> SessionRun {
        let script = spec().render(&Catalogue::reference(), 1);
        let call = script.frames.len() - 1;
        let v = |(check, kind): &(CheckId, Kind)| Violation {
            check: *check,
            frame: Some(call),
            span: None,
            kind: kind.clone(),
        };
        (script.into(), Observation::none(), kinds.iter().map(v).collect())
    }

    fn late() -> (CheckId, Kind) {
        (CheckId::Liveness, Kind::RunningAfterEof)
    }

    fn twice() -> (CheckId, Kind) {
        (CheckId::ExactlyOnce, Kind::ExecutedTimes { id: "2".into(), times: 2 })
    }

    fn unanswered() -> (CheckId, Kind) {
        (CheckId::Correlation, Kind::Unanswered { id: "2".into() })
    }

    fn judged(first: &[(CheckId, Kind)], patient: Option<&[(CheckId, Kind)]>) -> Result<Option<String>, String> {
        let again = || Ok((run(patient.expect("the control is not run again")), 2));
        let judged = confirmed_control(spec(), run(first), 1, (0, Policy::KeepOpen), again).expect("no fault");
        judged.map(|f| f.map(|f| f.distinct().to_string())).map_err(|k| k.to_string())
    }

    #[test]
    fn a_session_that_shows_a_finding_on_evidence_is_keyed_on_it_and_not_run_again() {
        // Liveness sorts first, yet the call acting twice is the finding,
        // whatever the exit showed.
        let key = judged(&[late(), twice()], None);
        assert_eq!(key, Ok(Some("exactly-once/executed_times (valid_call)".to_owned())));
        assert_eq!(judged(&[], None), Ok(None));
    }

    #[test]
    fn a_finding_shown_by_time_alone_stands_only_where_the_patient_session_shows_it_or_evidence() {
        let liveness = "liveness/running_after_eof".to_owned();
        assert_eq!(judged(&[late()], Some(&[])), Err(liveness.clone()), "not repeated");
        assert_eq!(judged(&[late()], Some(&[late()])), Ok(Some(liveness.clone())), "repeated");
        // Another finding by time alone is not the one it confirms.
        assert_eq!(judged(&[late()], Some(&[unanswered()])), Err(liveness), "another by time");
        let acted = Ok(Some("exactly-once/executed_times (valid_call)".to_owned()));
        assert_eq!(judged(&[late()], Some(&[twice()])), acted, "evidence");
    }
}

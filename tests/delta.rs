//! Minimization through the seam, on in-process gateways: every mutant the
//! effect check catches is cut down to a script no larger that still fails
//! the same check, with candidates tried on the target itself or on another
//! one that may miss what the target shows.

use portcullis::campaign::{Finding, HuntConfig, hunt, run_script};
use portcullis::delta::{minimize, minimize_on};
use portcullis::reference::{Mutant, Reference};
use portcullis::{CheckId, Fault};
use std::time::Duration;

/// A default hunt for the check mutant `m` breaks, under its policy and
/// revisions.
fn hunt_for(m: Mutant) -> HuntConfig {
    HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected())).max_findings(1)
}

/// The finding a default hunt makes against mutant `m`.
fn finding(m: Mutant) -> Finding {
    hunt(&Reference::mutant(m), &hunt_for(m)).expect("the harness runs").expect("the mutant is caught")
}

fn no_effect_on_reject_mutants() -> impl Iterator<Item = Mutant> {
    Mutant::ALL.iter().copied().filter(|m| m.expected() == CheckId::NoEffectOnReject)
}

#[test]
fn a_minimized_finding_is_no_larger_and_fails_the_same_check() {
    for m in no_effect_on_reject_mutants() {
        let f = finding(m);
        let target = Reference::mutant(m);
        let budget = Duration::from_secs(5);
        let out = minimize(&target, f.policy, f.script.clone(), &f.distinct(), f.salt, budget).expect("it minimizes");
        let size = |s: &portcullis::Script| (s.frames.len(), s.stdin().len());
        assert!(size(&out.script) <= size(&f.script), "{}: {:?} > {:?}", m.name(), size(&out.script), size(&f.script));
        assert_eq!(out.violations.first().map(|v| v.check), Some(f.check), "{}: the check comes first", m.name());
        let (_, again) = run_script(&target, f.policy, &out.script, f.salt).expect("the harness runs");
        assert!(again.iter().any(|v| v.check == f.check), "{}: the minimized script no longer fails", m.name());
        // Every canary URL kept whole, so a replay can move it to its sink.
        let sink = target.catalogue.canary_base.clone();
        let text = |s: &portcullis::Script| String::from_utf8_lossy(&s.stdin()).into_owned();
        let (before, after) = (text(&f.script), text(&out.script));
        for token in out.script.frames.iter().flat_map(|fr| fr.tokens.iter()) {
            let url = format!("{sink}/{token}");
            assert!(!before.contains(&url) || after.contains(&url), "{}: {url} was cut: {after}", m.name());
        }
    }
}

#[test]
fn candidates_that_never_fail_fall_back_to_the_target() {
    // The strict reference shows no finding at all, so no candidate fails
    // on it: minimizing still works, on the mutant itself.
    for m in no_effect_on_reject_mutants() {
        let f = finding(m);
        let (strict, target) = (Reference::strict(), Reference::mutant(m));
        // Both must reach their fixpoint for the results to be comparable: a
        // budget no busy machine spends on a few in-process sessions.
        let budget = Duration::from_secs(120);
        let out = minimize_on(&strict, &target, f.policy, f.script.clone(), &f.distinct(), f.salt, budget)
            .expect("it falls back");
        let alone = minimize(&target, f.policy, f.script.clone(), &f.distinct(), f.salt, budget).expect("it minimizes");
        assert!(!out.out_of_time && !alone.out_of_time, "{}: a fixpoint within {budget:?}", m.name());
        // Each run has tokens of its own; the same cut, once they match.
        let (mut a, mut b) = (out.script.clone(), alone.script);
        assert_ne!(out.salt, alone.salt, "{}: each minimization runs with fresh tokens", m.name());
        a.resalt(out.salt, f.salt);
        b.resalt(alone.salt, f.salt);
        assert_eq!(a.stdin(), b.stdin(), "{}: the same result either way", m.name());
        assert!(out.violations.iter().any(|v| v.check == f.check), "{}", m.name());
    }
}

#[test]
fn a_script_that_does_not_fail_is_refused() {
    let f = finding(Mutant::NullId);
    let r = minimize(&Reference::strict(), f.policy, f.script.clone(), &f.distinct(), f.salt, Duration::from_secs(5));
    assert!(matches!(r, Err(Fault::Config { .. })), "{:?}", r.map(|m| m.script.stdin()));
}

#[test]
fn a_budget_spent_before_any_cut_leaves_the_script_whole_rather_than_refused() {
    let f = finding(Mutant::NullId);
    let target = Reference::mutant(Mutant::NullId);
    let out = minimize(&target, f.policy, f.script.clone(), &f.distinct(), f.salt, Duration::ZERO).expect("no refusal");
    assert!(out.out_of_time);
    assert_eq!(out.script.frames.len(), f.script.frames.len(), "nothing was cut");
    assert!(out.violations.iter().any(|v| v.check == f.check));
}

#[test]
fn a_hunt_tells_its_runner_which_lane_each_session_runs_in() {
    use portcullis::campaign::{Lane, hunt_by, session, strategy};
    use std::cell::RefCell;
    let m = Mutant::NullId;
    let cfg = hunt_for(m);
    let target = Reference::mutant(m);
    let stages = RefCell::new(Vec::new());
    let run = |spec: &portcullis::ScriptSpec, salt: u32, lane: Lane| {
        stages.borrow_mut().push(lane);
        session(&target, cfg.policy, spec, salt)
    };
    let f =
        hunt_by(&cfg, strategy(&cfg), &|_| true, &run).expect("the harness runs").into_iter().next().expect("caught");
    let stages = stages.into_inner();
    let searched = f.cases_until_caught as usize;
    assert!(stages[..searched].iter().all(|l| *l == Lane::Search), "{stages:?}");
    assert!(stages.len() > searched + 1, "it shrank");
    assert!(stages[searched..stages.len() - 1].iter().all(|s| *s == Lane::Shrink(f.distinct())), "{stages:?}");
    assert_eq!(stages.last(), Some(&Lane::Confirm), "the reported run is a fresh one");
}

/// A runner whose shrinking lane shows the finding and whose fresh runs do
/// not after the first `fresh_failing` confirmations (a shared process
/// whose state helped, or a flaky server): the salts of the sessions that
/// showed it, in order, and the finding.
fn hunt_with_confirmations_failing(fresh_failing: usize) -> (Vec<(portcullis::campaign::Lane, u32)>, Finding) {
    use portcullis::campaign::{Lane, hunt_by, session, strategy};
    use std::cell::{Cell, RefCell};
    let m = Mutant::NullId;
    let cfg = hunt_for(m);
    let target = Reference::mutant(m);
    let (confirmations, failing) = (Cell::new(0), RefCell::new(Vec::new()));
    let run = |spec: &portcullis::ScriptSpec, salt: u32, lane: Lane| {
        let mut out = session(&target, cfg.policy, spec, salt)?;
        if lane == Lane::Confirm {
            confirmations.set(confirmations.get() + 1);
            if confirmations.get() <= fresh_failing {
                out.2.clear();
            }
        }
        if out.2.iter().any(|v| v.check == m.expected()) {
            failing.borrow_mut().push((lane, salt));
        }
        Ok(out)
    };
    let f =
        hunt_by(&cfg, strategy(&cfg), &|_| true, &run).expect("the harness runs").into_iter().next().expect("caught");
    assert!(f.violations.iter().any(|v| v.check == f.check), "{:?}", f.violations);
    assert!(f.script.stdin().windows(10).any(|w| w == format!("pc{:08x}", f.salt).as_bytes()));
    (failing.into_inner(), f)
}

#[test]
fn a_shrunk_script_a_fresh_session_does_not_repeat_gives_way_to_a_larger_one() {
    use portcullis::campaign::Lane;
    let (failing, f) = hunt_with_confirmations_failing(1);
    assert_eq!(failing.last(), Some(&(Lane::Confirm, f.salt)), "a fresh session shows what is reported");
    let (_, smallest) = hunt_with_confirmations_failing(0);
    assert!(f.script.stdin().len() >= smallest.script.stdin().len(), "a candidate no smaller than the minimal one");
}

#[test]
fn a_finding_no_fresh_session_repeats_is_reported_as_the_search_caught_it() {
    use portcullis::campaign::Lane;
    let (failing, f) = hunt_with_confirmations_failing(usize::MAX);
    assert_eq!(failing.first(), Some(&(Lane::Search, f.salt)), "the session the search caught is reported");
}

/// A finding that rests on time alone (a gateway still running after its
/// stdin closed, seen only at the end of the exit grace) is reported with
/// a session that waits longer than other confirmations
/// ([`Lane::ConfirmTimed`]); where no such session repeats it (a server
/// slowed by a loaded machine catches up), it is not reported.
#[test]
fn a_finding_resting_on_time_holds_with_longer_waits_still_or_is_none() {
    use portcullis::campaign::{Lane, hunt_by, session, strategy};
    use std::cell::RefCell;
    let m = Mutant::NoExitOnEof;
    let cfg = hunt_for(m);
    let target = Reference::mutant(m);
    for catches_up in [false, true] {
        let lanes = RefCell::new(Vec::new());
        let run = |spec: &portcullis::ScriptSpec, salt: u32, lane: Lane| {
            let mut out = session(&target, cfg.policy, spec, salt)?;
            if catches_up && lane == Lane::ConfirmTimed {
                out.2.clear();
            }
            lanes.borrow_mut().push(lane);
            Ok(out)
        };
        let found = hunt_by(&cfg, strategy(&cfg), &|_| true, &run).expect("the harness runs");
        let lanes = lanes.into_inner();
        assert!(lanes.contains(&Lane::ConfirmTimed) && !lanes.contains(&Lane::Confirm), "{lanes:?}");
        match catches_up {
            false => assert_eq!(lanes.last(), Some(&Lane::ConfirmTimed), "reported with the patient session"),
            true => assert!(found.iter().all(|f| f.check != m.expected()), "{found:#?}"),
        }
    }
}

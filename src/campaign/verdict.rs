//! The engine's verdicts on a child runner's sessions. The runner keeps
//! each session's evidence in its ledger, late evidence included, and
//! judges nothing: here a session is judged when it is recorded, and again
//! whenever its evidence grows, and what it shows only then is told apart
//! from what it showed before.

use super::SessionRun;
use super::scope::Scope;
use crate::check::{Violation, check};
use crate::finding::{Distinct, distinct, on_time};
use crate::observation::Observation;
use crate::process::{ChildTarget, Entry, Ledger};
use crate::script::Script;
use crate::seam::{Fault, Session};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// The violations `entry` shows on all its evidence so far.
pub(crate) fn violations(entry: &Entry) -> Vec<Violation> {
    check(&entry.script, &entry.obs, &entry.session)
}

/// The session `entry` is, as a run: its script, observation and verdict.
pub(crate) fn run_of(entry: &Entry, violations: Vec<Violation>) -> SessionRun {
    (entry.script.clone(), entry.obs.clone(), violations)
}

/// Fingerprints of `violations`, which the ledger keeps so that a later
/// verdict can be told apart from this one. Stable within a process: the
/// hasher has no random keys.
fn fingerprints(violations: &[Violation]) -> Vec<u64> {
    violations.iter().map(fingerprint).collect()
}

fn fingerprint(v: &Violation) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(v)
}

/// Judges `entry`, keeps it in `ledger` with its verdict's fingerprints
/// (late evidence then makes it judged again), and returns it as a run.
pub(crate) fn record(ledger: &Ledger, mut entry: Entry) -> SessionRun {
    let violations = violations(&entry);
    entry.shown = fingerprints(&violations);
    let run = run_of(&entry, violations);
    ledger.record(entry);
    run
}

/// The kept session of `script` with a salt in `salts`, judged on all its
/// evidence so far, and the persistent process that ran it.
pub(crate) fn now(ledger: &Ledger, salts: &[u32], script: &Script) -> Option<(SessionRun, Option<u64>)> {
    let (entry, violations) = ledger.now(salts, script, |entry| {
        let now = violations(entry);
        (fingerprints(&now), now)
    })?;
    Some((run_of(&entry, violations), entry.process))
}

/// Judges again every session whose evidence grew since it was last
/// judged, and returns those that now break something they did not: each
/// with its violations now, the finding key of the first new one (the
/// first shown on evidence, if any is), and that of the first new one
/// `scope` reports, if any, chosen so. What a session has
/// shown is kept whatever the scope (a violation outside it is never
/// reported later): a ledger serves one run, which has one scope.
pub(crate) fn rejudge(ledger: &Ledger, scope: Scope) -> Vec<(Entry, Vec<Violation>, Distinct, Option<Distinct>)> {
    let judged = ledger.rejudge(|entry| {
        let now = violations(entry);
        let shown = fingerprints(&now);
        let is_new = |v: &Violation| !entry.shown.contains(&fingerprint(v));
        let key = |v: &Violation| distinct(v, &entry.script, &entry.obs);
        // What happened before what rests on time: one no patient session
        // repeats must not take the evidence with it.
        let timed = |v: &&Violation| on_time(v, &entry.script, &entry.obs);
        let first = now.iter().filter(|v| is_new(v)).min_by_key(timed).map(key);
        let reported = scope.reported(&now, &entry.script, &entry.obs).filter(|v| is_new(v)).min_by_key(timed).map(key);
        (shown, first.map(|first| (now.clone(), first, reported)))
    });
    judged.into_iter().map(|(entry, (now, first, reported))| (entry, now, first, reported)).collect()
}

/// A saved session run again (a replay) in a process of its own, to its
/// end and past it, with every wait `patience` times as long: effects that
/// carry its tokens and come once the probes are quiet still count. Judged
/// as the hunt judges; also how many effects came late.
pub(crate) fn whole(
    target: &ChildTarget,
    session: &Session,
    script: &Script,
    patience: u32,
) -> Result<(Observation, Vec<Violation>, usize), Fault> {
    let mut obs = target.run_patiently(session, script, patience, Default::default())?;
    let late = target.late_effects(&script.salts());
    let came_late = late.len();
    obs.effects.extend(late);
    let violations = check(script, &obs, session);
    Ok((obs, violations, came_late))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::Step;
    use crate::catalogue::Catalogue;
    use crate::check::CheckId;
    use crate::frame::Expect;
    use crate::protocol::{Policy, Revision};
    use crate::script::ScriptSpec;
    use crate::seam::{Action, Session};
    use std::time::Instant;

    #[test]
    fn late_evidence_outside_the_runs_scope_grows_the_waits_but_is_no_finding_to_confirm() {
        // A valid call that acted once in its window acts again late: a
        // new exactly-once violation, which a run hunting another check
        // neither confirms nor shrinks, though it is new evidence still.
        let spec = ScriptSpec::whole(Revision::LATEST, vec![Step::Control(0)]);
        let script = spec.render(&Catalogue::reference(), 1);
        let acting = |e: &Expect| match e {
            Expect::Act(calls) => calls.first().cloned(),
            _ => None,
        };
        let call = script.frames.iter().find_map(|f| acting(&f.expect)).expect("a call");
        let acted = Action { tool: call.tool.clone(), arguments: call.arguments.clone() };
        let session = Session { policy: Policy::KeepOpen, revision: Revision::LATEST, salt: 1 };
        let judged = |scope: Scope| {
            let ledger = Ledger::default();
            let mut obs = Observation::none();
            obs.effects.push(acted.clone());
            record(&ledger, Entry::new(session, &spec, script.clone(), obs));
            ledger.late_effect(Some(1), acted.clone(), Instant::now());
            let judged = rejudge(&ledger, scope).into_iter();
            judged.map(|(_, _, first, reported)| (first.check, reported.map(|k| k.check))).collect::<Vec<_>>()
        };
        let twice = (CheckId::ExactlyOnce, Some(CheckId::ExactlyOnce));
        assert_eq!(judged(Scope::default()), [twice]);
        // Still told as new evidence, which grows the waits, but nothing
        // to report.
        let elsewhere = Scope { focus: Some(CheckId::NoEffectOnReject), ..Scope::default() };
        assert_eq!(judged(elsewhere), [(CheckId::ExactlyOnce, None)]);
    }
}

//! A hunt for one check waits only for the answers that check can read
//! ([`CheckId::reads_answer`]); a shared process relies on it to stop
//! waiting for answers a server never sends. So dropping every other answer
//! from a session's stdout, as if it came too late, must leave that check's
//! verdict as it was: for the reference and every mutant, under both
//! policies, and with every valid call's answer turned into an error.

use portcullis::campaign::{HuntConfig, seeded_runner, session, strategy};
use portcullis::check::check;
use portcullis::reference::{Mutant, Reference};
use portcullis::{CheckId, Expect, Id, Observation, Policy, Script, Session, Violation};
use proptest::strategy::ValueTree;
use proptest::test_runner::Config;
use serde_json::{Value, json};

/// Sessions drawn per target and policy.
const DRAWS: u32 = 48;

/// `stdout` without the answers `check` cannot read.
fn unread_dropped(stdout: &[u8], script: &Script, check: CheckId, policy: Policy) -> Vec<u8> {
    let read = |answer: &Value| {
        let Some(id) = answer.get("id").and_then(Id::from_value) else { return true };
        let owner = script.frames.iter().find(|f| f.owed_ids().contains(&id) || f.id.as_ref() == Some(&id));
        answer.get("method").is_some() || owner.is_none_or(|f| check.reads_answer(f, policy))
    };
    let mut out = Vec::new();
    for line in stdout.split_inclusive(|b| *b == b'\n') {
        let kept = match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(items)) if !items.is_empty() => {
                let left: Vec<Value> = items.into_iter().filter(read).collect();
                (!left.is_empty()).then(|| format!("{}\n", Value::Array(left)).into_bytes())
            }
            Ok(v) => read(&v).then(|| line.to_vec()),
            Err(_) => Some(line.to_vec()),
        };
        out.extend(kept.unwrap_or_default());
    }
    out
}

/// `stdout` with every answer to a valid call turned into an error, as a
/// gateway that acts and then fails would answer (no reference mutant does).
fn calls_failed(stdout: &[u8], script: &Script) -> Vec<u8> {
    let calls: Vec<Id> =
        script.frames.iter().filter(|f| matches!(f.expect, Expect::Act(_))).flat_map(|f| f.owed_ids()).collect();
    let mut out = Vec::new();
    for line in stdout.split_inclusive(|b| *b == b'\n') {
        let success = serde_json::from_slice::<Value>(line).ok().filter(|v| v.get("result").is_some());
        let call = success
            .as_ref()
            .and_then(|v| v.get("id"))
            .filter(|id| Id::from_value(id).is_some_and(|i| calls.contains(&i)));
        match call {
            Some(id) => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "failed"}});
                out.extend(format!("{error}\n").into_bytes());
            }
            None => out.extend(line),
        }
    }
    out
}

fn of(check: CheckId, violations: &[Violation]) -> Vec<(Option<usize>, String)> {
    violations.iter().filter(|v| v.check == check).map(|v| (v.frame, v.detail.clone())).collect()
}

/// Runs `DRAWS` sessions against `target` and compares each check's verdict
/// with and without the answers it cannot read; returns how many answers
/// were dropped, so the caller can see the comparison was not vacuous.
fn verdicts_hold(target: &Reference, policy: Policy, revisions: Vec<portcullis::Revision>) -> usize {
    let cfg = HuntConfig { policy, revisions, ..HuntConfig::default() };
    let scripts = strategy(&cfg);
    let mut runner = seeded_runner(Config::default(), 11);
    let mut dropped = 0;
    for salt in 0..DRAWS {
        let spec = proptest::strategy::Strategy::new_tree(&scripts, &mut runner).expect("draws").current();
        let (script, obs, violations) = session(target, policy, &spec, salt).expect("the reference runs");
        let at = Session { policy, revision: spec.revision, salt };
        let failed = Observation { stdout: calls_failed(&obs.stdout, &script), ..obs.clone() };
        let failed_violations = check(&script, &failed, &at);
        for (obs, violations) in [(&obs, &violations), (&failed, &failed_violations)] {
            for c in CheckId::ALL {
                let stdout = unread_dropped(&obs.stdout, &script, c, policy);
                dropped += usize::from(stdout.len() < obs.stdout.len());
                let late = Observation { stdout, ..obs.clone() };
                let name = target.mutant.map_or("the reference", |m| m.name());
                assert_eq!(
                    of(c, violations),
                    of(c, &check(&script, &late, &at)),
                    "{name} under {policy:?}: dropping answers `{c}` does not read changed its verdict\n{script:?}"
                );
            }
        }
    }
    dropped
}

#[test]
fn dropping_answers_a_check_cannot_read_leaves_its_verdict() {
    let mut dropped = 0;
    for policy in [Policy::Close, Policy::KeepOpen] {
        dropped += verdicts_hold(&Reference::strict(), policy, portcullis::Revision::ALL.to_vec());
    }
    for &m in Mutant::ALL {
        dropped += verdicts_hold(&Reference::mutant(m), m.policy(), m.revisions());
    }
    assert!(dropped > 100, "only {dropped} sessions had an answer to drop");
}

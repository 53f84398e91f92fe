//! A session waits for the answers it is owed before it closes stdin or
//! goes on, as a client does. Against a server that, as the Python SDK's
//! does, handles calls concurrently and cancels those still in flight when
//! stdin closes (`tests/servers/cancels_on_eof.py`, whose tool takes 300
//! ms), a valid call acts exactly once: in a fresh session under either
//! policy, in a shared keep-open process (where the next script starts
//! clean), and in `portcullis fuzz`'s positive control and campaign. An
//! answer dropped for a rejected frame costs nothing. A must-reject frame
//! the server misreads as a call (it acts on duplicate keys, as Python's
//! `json` reads them: `method` or `id` twice; a response that also carries
//! a `method`; an id past 64 bits, or `true`) is waited for as well,
//! briefly, so its effect is seen rather than cancelled at EOF or left to
//! act during the next script; not by a hunt that reads neither effects nor
//! such answers (`liveness`).

mod common;

use common::{python_server, python_server_launched};
use portcullis::attack::Step;
use portcullis::attack::ambiguity::{self, Ambiguity};
use portcullis::attack::jsonrpc::{JsonRpc, Kind};
use portcullis::campaign::session;
use portcullis::child::{ChildTarget, Limits, SharedChild};
use portcullis::report;
use portcullis::{CheckId, Policy, Revision, ScriptSpec};
use std::process::Command;

const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/cancels_on_eof.py");

/// The server, whose tool takes `delay` seconds, under `limits`.
fn cancelling_after(delay: &str, limits: Limits) -> ChildTarget {
    python_server("cancels_on_eof.py", &[delay], limits)
}

fn cancelling() -> ChildTarget {
    cancelling_after("0.3", Limits::default())
}

/// The handshake, then `calls` valid calls of `fetch`, then EOF.
fn valid(calls: usize) -> ScriptSpec {
    ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0); calls])
}

#[test]
fn a_fresh_session_waits_for_its_calls_before_eof() {
    let target = cancelling();
    for (salt, policy) in [(1, Policy::Close), (2, Policy::KeepOpen)] {
        let (script, obs, violations) = session(&target, policy, &valid(2), salt).unwrap();
        assert!(violations.is_empty(), "{policy:?}: {}", report::session(&script, &obs, &violations));
        assert_eq!(obs.effects.len(), 2, "{policy:?}: each call acted once");
    }
}

#[test]
fn a_shared_process_waits_for_its_calls_and_the_next_script_starts_clean() {
    let target = cancelling();
    let mut shared = SharedChild::new(&target);
    // A script that owes nothing shows the server answers everything by
    // the marker, which would teach a shared process to wait for answers
    // no longer than a quiet: a tool call's is waited for all the same.
    shared.run(&valid(0), 1).unwrap().expect("an empty script shares");
    for salt in 2..=4 {
        let (script, obs, violations) = shared.run(&valid(1), salt).unwrap().expect("valid calls share");
        assert!(violations.is_empty(), "script {salt}: {}", report::session(&script, &obs, &violations));
        assert_eq!(obs.effects.len(), 1, "script {salt}: its call acted once, and no earlier one's effect came");
    }
    assert_eq!(shared.sharing().off, None, "no effect came late");
}

#[test]
fn an_answer_dropped_for_a_rejected_frame_does_not_end_a_shared_process() {
    // `concurrent.py` drops the answer to a call whose params are an array
    // (its handler throws); the valid call beside it is answered, so
    // nothing is in flight and the process goes on.
    let target = python_server("concurrent.py", &[], Limits::default());
    let mut shared = SharedChild::new(&target);
    let dropped = Step::JsonRpc(JsonRpc { kind: Kind::ParamsArray, tool: 0 });
    let spec = ScriptSpec { steps: vec![Step::Control(0), dropped], ..valid(0) };
    for salt in 1..=3 {
        let (_, obs, _) = shared.run(&spec, salt).unwrap().expect("the script shares");
        assert_eq!(obs.effects.len(), 1, "script {salt}: the valid call acted once");
    }
    assert_eq!((shared.sharing().costly, shared.sharing().off), (0, None), "one process served them all");
}

#[test]
fn the_positive_control_and_a_campaign_see_every_call_act() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"])
        .args(["--revision", "2025-06-18", "--check", "exactly-once", "--cases", "6"])
        .args(["--", "python3", SERVER])
        .current_dir(dir.path())
        .output()
        .expect("portcullis runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("no finding in 6 sessions"), "{stdout}");
}

#[test]
fn a_rejected_frame_misread_as_a_call_is_seen_acting_before_eof_and_before_the_next_script() {
    // The script is `method` written twice, "tools/call" last, or `id`
    // twice (a number, then the same digits as a string): the server runs
    // it as a call that acts after 0.3 s. Without a wait for its answer, EOF
    // cancels it in a fresh session, and in a shared process it acts during
    // the next script and gives sharing up.
    // Or it is a response with a `method` and `params` too, which the
    // server runs as the call they make; or a call whose id is no JSON-RPC
    // id (past 64 bits, which Python reads whole, or `true`).
    let dup = |kind| (Step::Ambiguity(Ambiguity { kind, tool: 0, depth: 0 }), "duplicate_key");
    let hybrid = (Step::JsonRpc(JsonRpc { kind: Kind::HybridResponse, tool: 0 }), "client_response");
    let huge = Step::Ambiguity(Ambiguity { kind: ambiguity::Kind::BeyondU64Id, tool: 0, depth: 0 });
    let bool_id = Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 });
    let steps =
        [dup(ambiguity::Kind::DupMethod), dup(ambiguity::Kind::DupId), hybrid, (huge, "bad_id"), (bool_id, "bad_id")];
    for (step, rule) in steps {
        let kind = step.clone();
        let target = cancelling();
        let spec = ScriptSpec { steps: vec![step], ..valid(0) };
        let misread = |violations: &[portcullis::Violation]| {
            violations.iter().any(|v| v.check == CheckId::NoEffectOnReject && v.detail.contains(rule))
        };
        let (script, obs, violations) = session(&target, Policy::KeepOpen, &spec, 1).unwrap();
        assert!(misread(&violations), "{kind:?} fresh: {}", report::session(&script, &obs, &violations));
        // Once a valid call has shown how long calls take, that is the measure.
        let (script, obs, violations) = session(&target, Policy::KeepOpen, &valid(1), 8).unwrap();
        assert!(violations.is_empty(), "{}", report::session(&script, &obs, &violations));
        let (script, obs, violations) = session(&target, Policy::KeepOpen, &spec, 9).unwrap();
        let report = report::session(&script, &obs, &violations);
        assert!(misread(&violations), "{kind:?} fresh, calls known: {report}");
        let mut shared = SharedChild::new(&target);
        for salt in 2..=3 {
            let (script, obs, violations) = shared.run(&spec, salt).unwrap().expect("the script shares");
            let report = report::session(&script, &obs, &violations);
            assert!(misread(&violations), "{kind:?} shared {salt}: {report}");
        }
        assert_eq!(shared.sharing().off, None, "{kind:?}: the misread call acted within its own script");
    }
}

#[test]
fn a_hunt_that_reads_neither_effects_nor_those_answers_does_not_wait_for_a_misread_call() {
    // `liveness` reads neither what a call does nor what a must-reject frame
    // gets for an answer: the misread call's 0.3 s is not waited for, and
    // its effect, coming during the next script, gives nothing up.
    let target = cancelling();
    let dup = Step::Ambiguity(Ambiguity { kind: ambiguity::Kind::DupMethod, tool: 0, depth: 0 });
    let spec = ScriptSpec { steps: vec![dup], ..valid(0) };
    let mut waiting = SharedChild::new(&target).focused(Some(CheckId::ExactlyOnce));
    let (_, obs, _) = waiting.run(&spec, 1).unwrap().expect("the script shares");
    assert_eq!(obs.effects.len(), 1, "a hunt that reads effects waits for the misread call");
    let mut liveness = SharedChild::new(&target).focused(Some(CheckId::Liveness));
    let (_, obs, violations) = liveness.run(&spec, 2).unwrap().expect("the script shares");
    assert!(obs.effects.is_empty(), "not waited for: {:?}", obs.effects);
    assert!(violations.iter().all(|v| v.check != CheckId::Liveness), "{violations:?}");
    // The misread call's answer may land in this script's stdout, which a
    // liveness hunt does not read.
    let (script, obs, violations) = liveness.run(&valid(1), 3).unwrap().expect("the next script shares");
    let live = violations.iter().all(|v| v.check != CheckId::Liveness);
    assert!(live, "{}", report::session(&script, &obs, &violations));
    assert_eq!(liveness.sharing().off, None, "a late effect gives up nothing a liveness hunt reads");
}

#[test]
fn a_shared_process_waits_for_a_call_past_its_learned_wait_while_the_server_is_busy() {
    // Calls answer at once, so a shared process learns to wait for one only
    // a few milliseconds; then the fourth spends 0.4 s on the CPU, as a call
    // slowed by processes starting beside it would. While the server stays
    // busy, its answer is waited for, and the call acts within its script:
    // also when a launcher that waits, idle, for the server started it.
    let args = ["0", "4:0.4:spin"];
    let launched = python_server_launched("cancels_on_eof.py", &args, Limits::default());
    for target in [python_server("cancels_on_eof.py", &args, Limits::default()), launched] {
        let mut shared = SharedChild::new(&target);
        for salt in 1..=4 {
            let (script, obs, violations) = shared.run(&valid(1), salt).unwrap().expect("valid calls share");
            let text = report::session(&script, &obs, &violations);
            assert!(violations.is_empty(), "{:?} script {salt}: {text}", target.command.program);
            assert_eq!(obs.effects.len(), 1, "{:?} script {salt}: its call acted within it", target.command.program);
        }
        assert_eq!(shared.sharing().off, None);
    }
}

#[test]
fn every_request_on_a_misreadable_line_is_a_possible_answer() {
    // Python's and Node's line readers split a lone CR; a reader of
    // concatenated values reads each; a server that takes batches where
    // the revision forbids them runs each element.
    use portcullis::attack::concat::{self, Concat, Sep};
    use portcullis::attack::terminator::{self, Terminator};
    let cr = Step::Terminator(Terminator { kind: terminator::Kind::CrSeparated, tool: 0 });
    let two = Step::Concat(Concat { kind: concat::Kind::TwoCalls, sep: Sep::Nothing, tool: 0 });
    let batch = Step::JsonRpc(JsonRpc { kind: Kind::Batch, tool: 0 });
    // Batches are forbidden from 2025-06-18 on.
    for step in [cr, two, batch] {
        let spec = ScriptSpec::whole(Revision::R2025_06_18, vec![step.clone()]);
        let script = spec.render(&portcullis::Catalogue::reference(), 1);
        let frame = script.frames.last().unwrap();
        let ids: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&frame.bytes)
            .into_iter::<serde_json::Value>()
            .map_while(Result::ok)
            .flat_map(|v| match v {
                serde_json::Value::Array(items) => items,
                one => vec![one],
            })
            .filter_map(|r| r.get("id").cloned())
            .collect();
        assert!(ids.len() >= 2, "{step:?}: {}", String::from_utf8_lossy(&frame.bytes));
        assert!(frame.expect.rule().is_some(), "{step:?} is must-reject");
        assert_eq!(frame.ids_if_misread(), ids, "{step:?}");
    }
}

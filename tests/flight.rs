//! Answers that come after their script's marker, as the SDKs' concurrent
//! handlers send them, are their own script's evidence (under
//! `--effect answer` too) and no reason for any wait to grow; and a
//! finding that shows only at a deadline is shrunk in flight, each round's
//! candidates run together, to its smallest script.

use crate::cli::{portcullis, python3, text};
use portcullis::attack::Step;
use portcullis::campaign::Job;
use portcullis::campaign::Lane;
use portcullis::catalogue::{ArgKind, ArgSpec, ToolSpec};
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::process::{ChildTarget, Command, Waits};
use portcullis::{Policy, Revision, ScriptSpec, report};
use std::sync::Arc;

fn clock(args: &[&str]) -> (String, ChildTarget) {
    let server = format!("{}/tests/servers/clock.py", env!("CARGO_MANIFEST_DIR"));
    let args = [server.clone()].into_iter().chain(args.iter().map(|a| a.to_string()));
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let tool = ToolSpec::new("get_time", vec![ArgSpec::required("timezone", ArgKind::Text)]);
    let target = ChildTarget::new(Command::new(python3().to_owned(), args), Waits::default(), vec![tool], probes);
    (server, target.effects_from_answers(true))
}

#[test]
fn answers_after_the_marker_under_effect_answer_are_their_own_scripts_actions() {
    // Each call is answered 300 ms after it is read, after the marker: in
    // the next script's window, or between scripts. Each answer is its
    // own call's action, once, and none grows a wait.
    let (_, target) = clock(&["--late"]);
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    for salt in 1..=6 {
        let steps = vec![Step::Control(0); 1 + salt as usize % 2];
        let spec = ScriptSpec::whole(Revision::R2025_06_18, steps);
        let (script, obs, v) = job.session(&spec, salt, Lane::Search).expect("the harness runs");
        assert!(v.is_empty(), "session {salt}: {}", report::session(&script, &obs, &v));
    }
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    assert!(found.is_empty(), "no finding: {found:#?}");
    assert_eq!(target.waits().quiet, Waits::default().quiet, "the quiet wait did not grow");
}

#[test]
fn a_batch_never_executed_is_shrunk_in_flight_to_the_batch_alone() {
    // The clock skips a batch without a word: its calls never act, which a
    // session shows only once their deadline has passed. Shrinking it one
    // candidate at a time would wait that out on every step; in flight,
    // a round waits it once, and the script is cut to the batch alone.
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = clock(&[]);
    let args = [
        "fuzz",
        "--tool",
        "get_time",
        "--args",
        r#"{"timezone":"{token}"}"#,
        "--effect",
        "answer",
        "--check",
        "exactly-once",
        "--revision",
        "2025-03-26",
        "--max-findings",
        "1",
        "--cases",
        "512",
        "--timeout-ms",
        "1000",
        "--mix",
        "lean",
        "--report",
        "report.json",
        "--",
        python3(),
        &server,
    ];
    let run = portcullis(&args, dir.path());
    let out = text(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(finding["distinct"], "exactly-once/never_executed (batch)", "{out}");
    let artifact = finding["artifact"].as_str().expect("saved");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(artifact)).unwrap()).unwrap();
    let steps = saved["spec"]["steps"].as_array().expect("its steps");
    assert_eq!(steps.len(), 1, "cut to the batch alone: {steps:?}\n{out}");
}

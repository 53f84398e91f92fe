//! A server that stopped reading (its reader died on one line while the
//! process runs on, as an asyncio server's reader task can) never read the
//! frames after that line. In a session of its own under keep-open, an
//! error owed to one of them whose id could not be read is judged missing
//! only once a marker written after the script is answered: here none is,
//! so no such error is blamed on a frame the server never read. A server
//! that reads past the frame and sends no such error is still caught. In
//! the persistent process, where the same marker goes unanswered, the
//! script is run again in a process of its own, which shows what the
//! server did.

use crate::common::python_server;
use portcullis::attack::Step;
use portcullis::attack::ambiguity::{Ambiguity, Kind as Ambiguous};
use portcullis::attack::jsonrpc::{JsonRpc, Kind};
use portcullis::campaign::{Job, Lane, run_script};
use portcullis::process::Waits;
use portcullis::{Catalogue, CheckId, Policy, Revision, ScriptSpec, Violation};

/// 10,001 deep: past Python's recursion limit.
fn deep() -> Step {
    Step::Ambiguity(Ambiguity { kind: Ambiguous::DeepNesting, tool: 0, depth: 5 })
}

/// A frame with `"id": true`: owed an error that may carry a null id.
fn id_true() -> Step {
    Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 })
}

/// The handshake and `steps`, run fresh under keep-open; and the index of
/// the first frame of `steps`.
fn run(steps: Vec<Step>) -> (portcullis::Observation, Vec<Violation>, usize) {
    run_under(Policy::KeepOpen, steps)
}

/// [`run`] under `policy`.
fn run_under(policy: Policy, steps: Vec<Step>) -> (portcullis::Observation, Vec<Violation>, usize) {
    run_with(&[], policy, steps)
}

/// [`run_under`], the server started with `args`.
fn run_with(args: &[&str], policy: Policy, steps: Vec<Step>) -> (portcullis::Observation, Vec<Violation>, usize) {
    let target = python_server("stalls_on_depth.py", args, Waits::from_ms(2_000, 10, 1_000));
    let script = ScriptSpec::whole(Revision::R2025_06_18, steps).render(&Catalogue::reference(), 7);
    let first = script.frames.iter().position(|f| f.family != "handshake").expect("a frame past the handshake");
    let (obs, v) = run_script(&target, policy, &script, 7).expect("the harness runs");
    (obs, v, first)
}

/// Whether `v` blames a stall on frame `at`, and nothing of correlation or
/// exactly-once on a frame after it.
fn stalled_at(v: &[Violation], at: usize) -> bool {
    let later = |v: &&Violation| v.frame.is_some_and(|f| f > at);
    let blamed_later = v.iter().filter(later).any(|v| matches!(v.check, CheckId::Correlation | CheckId::ExactlyOnce));
    v.iter().any(|v| v.kind.name() == "stalled" && v.frame == Some(at)) && !blamed_later
}

fn no_null_id_error(v: &[Violation]) -> bool {
    v.iter().any(|v| v.check == CheckId::Correlation && v.kind.name() == "no_null_id_error")
}

#[test]
fn a_server_that_read_past_a_frame_and_sent_no_null_id_error_is_caught() {
    let (obs, v, _) = run(vec![id_true()]);
    assert!(!obs.marker_unanswered, "it answered the marker");
    assert!(no_null_id_error(&v), "{v:#?}");
    assert!(!String::from_utf8_lossy(&obs.stdout).contains("portcullis-settle"), "the marker's answer is left out");
}

#[test]
fn an_error_owed_to_a_frame_a_stalled_server_never_read_is_not_missing() {
    let (obs, v, deep_at) = run(vec![deep(), id_true()]);
    assert!(obs.marker_unanswered, "the reader died before the marker");
    assert!(!no_null_id_error(&v), "blamed on a frame it never read: {v:#?}");
    // What it did is shown, on the frame it died on.
    assert!(stalled_at(&v, deep_at), "{v:#?}");
}

#[test]
fn under_auto_a_stall_is_shown_as_under_keep_open() {
    let (obs, v, deep_at) = run_under(Policy::Auto, vec![deep(), id_true(), Step::Control(0)]);
    assert!(obs.marker_unanswered, "a session that may go on is sent the marker");
    assert!(stalled_at(&v, deep_at), "{v:#?}");
}

#[test]
fn requests_and_calls_a_stalled_server_never_read_are_not_blamed() {
    let (_, v, deep_at) = run(vec![deep(), Step::Control(0), Step::Control(0)]);
    assert!(stalled_at(&v, deep_at), "not unanswered, not never executed: {v:#?}");
}

#[test]
fn a_script_that_stalls_the_persistent_process_is_run_again_fresh() {
    let target = python_server("stalls_on_depth.py", &[], Waits::from_ms(2_000, 10, 1_000));
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let steps = vec![deep(), id_true()];
    let spec = ScriptSpec::whole(Revision::R2025_06_18, steps);
    let (script, obs, v) = job.session(&spec, 1, Lane::Search).expect("the harness runs");
    assert!(obs.eof_sent, "run again in a process of its own, to its end");
    assert!(!no_null_id_error(&v), "blamed on a frame it never read: {v:#?}");
    let deep_at = script.frames.iter().position(|f| f.family != "handshake").expect("the deep frame");
    assert!(stalled_at(&v, deep_at), "{v:#?}");
    // What the stalled window lacked is no state-dependent finding.
    let apart = job.take_found();
    assert!(apart.iter().all(|f| f.check == CheckId::Liveness), "{apart:#?}");
}

#[test]
fn a_server_that_never_answers_ping_but_reads_on_is_judged_as_before() {
    // It leaves the marker unanswered, yet exits once stdin closes: it read
    // everything. What it owed is judged; no stall is.
    let (obs, v, _) = run_with(&["--ignore-ping"], Policy::KeepOpen, vec![Step::Control(0), id_true()]);
    assert!(obs.marker_unanswered && obs.exit.ended(), "{obs:?}");
    assert!(no_null_id_error(&v), "{v:#?}");
    assert!(!v.iter().any(|v| v.kind.name() == "stalled"), "{v:#?}");
}

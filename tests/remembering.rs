//! `portcullis fuzz`, `replay` and `minimize` against a server that
//! remembers what it did, across calls and across runs, and takes its
//! arguments nested (`tests/servers/remembers.py`: `remember` GETs the
//! `url` of each of its `items` whose `name` it has not seen before, as a
//! store with unique names creates each name once). Every run, and every
//! session of one, calls it with tokens of its own, so a second run's
//! control still acts and a finding still shows, replays and minimizes after
//! the hunt's calls.

use crate::cli;

use cli::{portcullis, python3, saved, text};
use std::path::Path;
use std::process::Output;

const ARGS: &str = r#"{"items":[{"name":"{token}","url":"{canary}"}]}"#;

/// `portcullis SUBCOMMAND [FIRST...] [flags] -- python3 remembers.py STATE`.
fn against_server(subcommand: &[&str], extra: &[&str], dir: &Path) -> Output {
    let server = format!("{}/tests/servers/remembers.py", env!("CARGO_MANIFEST_DIR"));
    let state = dir.join("state").display().to_string();
    let mut args = subcommand.to_vec();
    args.extend(["--timeout-ms", "3000", "--exit-grace-ms", "300"]);
    args.extend(extra);
    args.extend(["--", python3(), &server, &state]);
    portcullis(&args, dir)
}

#[test]
fn a_second_run_with_the_same_seed_meets_the_server_with_new_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let fuzz =
        ["fuzz", "--tool", "remember", "--args", ARGS, "--policy", "keep-open", "--cases", "2", "--shrink-ms", "500"];
    let lines = || std::fs::read_to_string(dir.path().join("state")).unwrap_or_default().lines().count();
    for run in 1..=2 {
        let before = lines();
        let o = against_server(&fuzz, &[], dir.path());
        // The naive server may well show a finding; what matters is that
        // the control acted (else exit 2, "positive control failed").
        assert!(matches!(o.status.code(), Some(0 | 1)), "run {run}: {}", text(&o));
        assert!(lines() > before, "run {run} named items the server had not seen: {}", text(&o));
    }
}

#[test]
fn a_finding_on_a_remembering_server_reports_replays_and_minimizes() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json").display().to_string();
    let fuzz = ["fuzz", "--tool", "remember", "--args", ARGS, "--policy", "keep-open"];
    let flags = ["--check", "no-effect-on-reject", "--report", &report, "--shrink-ms", "3000", "--max-findings", "1"];
    let o = against_server(&fuzz, &flags, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // The reported run is the finding's own: its violations show the check,
    // though the server already remembers the names of the hunt's sessions.
    let json = std::fs::read_to_string(&report).unwrap();
    assert!(json.contains("[no-effect-on-reject]"), "{json}");
    let artifact = saved(&o);
    let r = against_server(&["replay", &artifact], &[], dir.path());
    assert_eq!(r.status.code(), Some(1), "the replay meets the server as new: {}", text(&r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("FAILED"), "{}", text(&r));
    let m = against_server(&["minimize", &artifact, "--budget-ms", "8000"], &[], dir.path());
    assert_eq!(m.status.code(), Some(0), "every candidate meets the server as new: {}", text(&m));
    let r = against_server(&["replay", &saved(&m)], &[], dir.path());
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
}

#[test]
fn without_a_tool_the_one_that_acts_is_picked_and_called_as_its_schema_nests() {
    // `recall` is listed first and takes a URL too, but is marked
    // read-only; `remember` takes a list of objects. Nothing but the server
    // is named.
    let dir = tempfile::tempdir().unwrap();
    let fuzz = ["fuzz", "--policy", "keep-open", "--cases", "2", "--shrink-ms", "500"];
    let o = against_server(&fuzz, &[], dir.path());
    assert!(matches!(o.status.code(), Some(0 | 1)), "the control acted: {}", text(&o));
    let picked = r#"calling tool `remember` with --args '{"items":[{"name":"{token}","url":"{canary}"}]}'"#;
    assert!(String::from_utf8_lossy(&o.stderr).contains(picked), "{}", text(&o));
}

//! `portcullis check-stdout`, the release gate, run as users run it: the
//! reference gateway comes out clean; a server whose banner shows only
//! under a verbose variable, or whose early failure prints to stdout, is
//! caught in that variant alone, with its bytes, launch and stderr.

use crate::cli::{BIN, portcullis, python3, text};
use std::path::Path;

fn server(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers").join(name).display().to_string()
}

#[test]
fn the_reference_gateway_is_clean_in_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("gate.json");
    let o =
        portcullis(&["check-stdout", "--report", report.to_str().unwrap(), "--", BIN, "reference-gateway"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Each variant in both eras: the reference names 2026-07-28 when asked.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(": 6 variants, in 2025-11-25 and 2026-07-28 (named by server/discover)"), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("clean: every stdout line in 12 runs"), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let variants = json["variants"].as_array().unwrap();
    let names: Vec<&str> = variants.iter().map(|v| v["variant"].as_str().unwrap()).collect();
    let six = ["released", "verbose", "debug", "deprecation", "empty-cwd", "stdin-closed"];
    assert_eq!(names, [six, six].concat());
    assert!(variants.iter().all(|v| v["clean"] == true), "{json:#}");
    let (old, new) = (&variants[0], &variants[6]);
    assert_eq!(old["revision"], "2025-11-25", "{json:#}");
    assert_eq!(old["answered"], serde_json::json!(["initialize", "tools/list", "ping"]), "{json:#}");
    assert_eq!(new["revision"], "2026-07-28", "{json:#}");
    let opened = serde_json::json!(["server/discover", "tools/list", "server/discover"]);
    assert_eq!(new["answered"], opened, "{json:#}");
}

#[test]
fn a_result_without_its_type_fails_the_gate_in_2026_07_28_alone() {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(&["check-stdout", "--", BIN, "reference-gateway", "--mutant", "untyped-result"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("dirty: 5 of 12 runs"), "every variant that answers, in 2026-07-28: {}", text(&o));
    assert!(out.contains("a result without `resultType`"), "{}", text(&o));
    // Each failure names its variant's revision: all five are 2026-07-28's.
    assert_eq!(out.matches("──── portcullis check-stdout").count(), 5, "{}", text(&o));
    assert_eq!(out.matches("), in 2026-07-28\n").count(), 5, "the handshake era is clean: {}", text(&o));
}

#[test]
fn a_banner_under_a_verbose_variable_and_an_early_failure_are_caught_in_their_variants() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("gate.xml");
    let banner = server("verbose_banner.py");
    let args = ["check-stdout", "--fail-flag", "--config=/nonexistent", "--junit", junit.to_str().unwrap()];
    let o = portcullis(&[&args[..], &["--", python3(), &banner]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("variant: verbose"), "{}", text(&o));
    assert!(out.contains(r"non-protocol stdout on line 1: b'loading optional extension\n'"), "{}", text(&o));
    assert!(out.contains("launch: VERBOSE=1 "), "the launch names the variable: {}", text(&o));
    assert!(out.contains("variant: early-failure"), "{}", text(&o));
    assert!(out.contains(r"b'error: no configuration at /nonexistent\n'"), "{}", text(&o));
    assert!(out.contains("outcome: initialize unanswered; exited with status 1"), "{}", text(&o));
    // Python's verbose import log, which the variant turned on, is stderr.
    assert!(out.contains("stderr (") && out.contains("  | "), "stderr is attached apart: {}", text(&o));
    for clean in ["released", "debug", "deprecation", "empty-cwd", "stdin-closed"] {
        assert!(!out.contains(&format!("variant: {clean} ")), "{clean} is clean: {}", text(&o));
    }
    assert!(out.contains("dirty: 2 of 7 runs"), "{}", text(&o));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"testcase name="stdout-clean [verbose, 2025-11-25]""#), "{xml}");
    assert!(xml.contains("failures=\"2\""), "{xml}");
    assert!(xml.contains("# installing zipimport hook"), "Python's verbose stderr in system-err: {xml}");
}

#[test]
fn a_debug_line_printed_on_each_call_is_caught_once_the_gate_makes_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = server("debug_on_call.py");
    let opening = portcullis(&["check-stdout", "--", python3(), &server], dir.path());
    assert_eq!(opening.status.code(), Some(0), "the opening alone is clean: {}", text(&opening));
    let called = ["check-stdout", "--tool", "echo", "--args", r#"{"text":"{token}"}"#, "--", python3(), &server];
    let o = portcullis(&called, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(r"b'debug: tools/call echo\n'"), "{}", text(&o));
    assert!(out.contains("answered initialize, tools/list, tools/call, ping"), "{}", text(&o));
    // A profile names the same call.
    let profile = dir.path().join("p.toml");
    let text_of = format!("command = [\"{}\", \"{server}\"]\ntool = \"echo\"\nargs = {{ text = \"hi\" }}\n", python3());
    std::fs::write(&profile, text_of).unwrap();
    let o = portcullis(&["check-stdout", "--profile", profile.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bad = portcullis(&["check-stdout", "--args", "{}", "--", python3(), &server], dir.path());
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--args needs --tool"), "{}", text(&bad));
}

#[test]
fn bad_input_to_the_gate_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(&["check-stdout", "--", "/nonexistent/server"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().any(|l| l.starts_with("portcullis: error: could not start /nonexistent/server")),
        "{}",
        text(&o)
    );
    let o = portcullis(&["check-stdout"], dir.path());
    assert_eq!(o.status.code(), Some(2), "no command: {}", text(&o));
    // A server that never answers: nothing past its startup was gated.
    let o =
        portcullis(&["check-stdout", "--timeout-ms", "300", "--exit-grace-ms", "100", "--", "sleep", "30"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("left initialize unanswered within 300 ms"), "{}", text(&o));
}

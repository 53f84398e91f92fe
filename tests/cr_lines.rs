//! A server that reads stdin as the Python SDK's stdio transport does
//! (universal newlines: a lone CR ends a line) runs a call hidden between
//! two raw CRs inside a `ping`'s string, and two calls joined by a CR: both
//! are found, each under its own rule, by one default-length campaign. The
//! same server answering every call late, after the marker, shows no
//! finding that is not its own, and a replay of a finding saved against
//! the quick server still fails against the slow one.

use crate::cli::{portcullis, python3, text};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

fn server() -> String {
    format!("{}/tests/servers/reads_cr_lines.py", env!("CARGO_MANIFEST_DIR"))
}

/// A keep-open campaign of `cases` sessions, focused on `check` at spec
/// level, against the server run with `server_args`: its output and the
/// findings of its JSON report (their artifacts under `dir`).
fn campaign(dir: &Path, check: &str, cases: &str, server_args: &[&str]) -> (Output, Vec<Value>) {
    let (report, server) = (dir.join("report.json"), server());
    let mut args = vec!["fuzz", "--tool", "fetch", "--check", check, "--level", "spec"];
    args.extend(["--policy", "keep-open", "--cases", cases, "--shrink-ms", "2000", "--timeout-ms", "2000"]);
    args.extend(["--report", report.to_str().unwrap(), "--", python3(), &server]);
    args.extend(server_args);
    let o = portcullis(&args, dir);
    let json: Value = serde_json::from_slice(&std::fs::read(&report).unwrap_or_default()).unwrap_or_default();
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    (o, findings)
}

#[test]
fn a_call_hidden_between_two_crs_and_calls_joined_by_a_cr_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let (o, findings) = campaign(dir.path(), "no-effect-on-reject", "160", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let keys: Vec<&str> = findings.iter().filter_map(|f| f["distinct"].as_str()).collect();
    // The hidden call is a raw control character in a string, a line that
    // is no JSON; the joined calls, a line ending other than LF. Each
    // cause lists the rule among those that showed it.
    for (cause, rule) in [("(unparseable_line)", "raw_control"), ("(line_ending)", "foreign_terminator")] {
        let f = findings.iter().find(|f| f["distinct"].as_str().is_some_and(|k| k.ends_with(cause)));
        let f = f.unwrap_or_else(|| panic!("{cause} among {keys:?}\n{}", text(&o)));
        let rules = f["rules"].as_array().unwrap();
        assert!(rules.iter().any(|r| r == rule), "{cause} seen with {rule}: {f}");
    }
    // Replayed against the same server answering each call 300 ms after
    // it read it (as a fresh process of a real server may, where the
    // campaign's warm one was quick), the joined calls act after the
    // session went quiet: the replay awaits the answers their ids are owed
    // before it says FIXED, and sees them act.
    let joined = findings.iter().find(|f| f["distinct"].as_str().is_some_and(|k| k.ends_with("(line_ending)")));
    let artifact = joined.unwrap()["artifact"].as_str().unwrap();
    let replay = portcullis(&["replay", artifact, "--", python3(), &server(), "--late-ms", "300"], dir.path());
    assert_eq!(replay.status.code(), Some(1), "still FAILED: {}", text(&replay));
    // Its cuts cannot show it at these waits, and minimize says why
    // rather than calling it fixed.
    let minimize = portcullis(&["minimize", artifact, "--", python3(), &server(), "--late-ms", "300"], dir.path());
    let said = String::from_utf8_lossy(&minimize.stderr);
    assert!(said.contains("a session with doubled waits shows it"), "{}", text(&minimize));
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn a_server_that_answers_each_call_late_and_by_id_shows_no_false_finding() {
    // The same server, each call answered 300 ms after it was read, on a
    // thread of its own: most answers come after the marker, in a later
    // script's window or between scripts, including the refusals of
    // requests that may be answered with their id or a null one. Every
    // finding must be the server's own (a fresh session repeats it), and
    // none an answer judged as one to a request its session never sent.
    let dir = tempfile::tempdir().unwrap();
    let (o, findings) = campaign(dir.path(), "correlation", "80", &["--late-ms", "300"]);
    assert_eq!(o.status.code(), Some(1), "it refuses nothing in a batch: {}", text(&o));
    for f in &findings {
        let key = f["distinct"].as_str().unwrap_or_default();
        assert!(f["confirmed"] == true && f["state_dependent"] == false, "{key} was not repeated: {f}");
        assert!(!key.contains("unknown_id"), "an answer was taken for another session's: {f}");
    }
    let batch = findings.iter().any(|f| f["distinct"].as_str().is_some_and(|k| k.contains("no_null_id_error")));
    assert!(batch, "the batches it skips are found: {}", text(&o));
}

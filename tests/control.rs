//! What `portcullis fuzz`'s positive control tells a user whose server is
//! right but unusual:
//!
//! - one that makes a request by design beside each call
//!   (`tests/servers/reads_robots.py` GETs /robots.txt before the URL it
//!   fetches, as fetch servers do). That request carries no token, so the
//!   control reports it as a finding and says how to leave it out; with
//!   `--sink-ignore` the campaign goes on, counts what it left out (the
//!   control's too, when jobs are pinned, each with sinks of its own), and
//!   its Reproduce line keeps the flag;
//! - one that acts some time after it answers
//!   (`tests/servers/acts_after_answer.py`), ended after stdin closed before
//!   it acted: the control fails and says to raise `--exit-grace-ms`, which
//!   then lets it pass;
//! - one whose stdout is dirty from the start (a banner) and never answers:
//!   that is a `stdout-clean` finding, not a harness error about --tool;
//! - one that takes longer to exit than `--exit-grace-ms`
//!   (`tests/servers/slow_exit.py`): judged on time alone, the control's
//!   `liveness` finding stands only where a session with every wait four
//!   times as long repeats it, as the hunt's do.

use crate::cli;

use cli::{portcullis, python3, text};
use std::path::Path;
use std::process::Output;

fn server(name: &str) -> String {
    format!("{}/tests/servers/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn against_server(extra: &[&str], dir: &Path) -> Output {
    let server = server("reads_robots.py");
    let mut args = vec!["fuzz", "--policy", "keep-open", "--revision", "2025-06-18", "--cases", "12"];
    args.extend(["--check", "exactly-once", "--timeout-ms", "1000", "--exit-grace-ms", "300"]);
    args.extend(["--report", "report.json"]);
    args.extend(extra);
    args.extend(["--", python3(), &server]);
    portcullis(&args, dir)
}

#[test]
fn a_request_without_a_token_fails_the_control_with_a_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let o = against_server(&[], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("carries no token the suite sent"), "{}", text(&o));
    assert!(stdout.contains("\"path\":\"/robots.txt\""), "{}", text(&o));
    assert!(stdout.contains("1 finding (no-effect-on-reject) in 1 session"), "the control's: {}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("`--sink-ignore /robots.txt` leaves them out"), "{}", text(&o));
}

#[test]
fn set_aside_requests_are_answered_counted_and_kept_in_the_reproduce_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = against_server(&["--sink-ignore", "/robots.txt"], dir.path());
    assert!(matches!(o.status.code(), Some(0 | 1)), "the control passed: {}", text(&o));
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert!(report["sessions"].as_u64().unwrap() > 1, "the campaign ran: {report}");
    // Each session writes a line at least: a handshake, a call or a marker.
    assert!(report["lines_written"].as_u64().unwrap() >= report["sessions"].as_u64().unwrap(), "{report}");
    // The control's call and at least one valid call per session.
    assert!(report["ignored_requests"].as_u64().unwrap() > 1, "{report}");
    assert!(!report.to_string().contains("carries no token"), "{report}");
    if o.status.code() == Some(1) {
        assert!(String::from_utf8_lossy(&o.stdout).contains("--sink-ignore /robots.txt --"), "{}", text(&o));
    }
}

#[test]
fn set_aside_requests_of_every_job_and_the_control_are_counted() {
    // Every job has a sink of its own; the control's, on the first sink,
    // counts all the same: the same seed draws the same calls, so two runs
    // of two jobs count alike, and more than the control's one alone.
    let dir = tempfile::tempdir().unwrap();
    let ignored = |jobs: &str| {
        let o = against_server(&["--sink-ignore", "/robots.txt", "--jobs", jobs], dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&report).unwrap()["ignored_requests"].as_u64().unwrap()
    };
    let (first, second) = (ignored("2"), ignored("2"));
    assert!(first > 1, "the server reads robots.txt beside each call: {first}");
    assert_eq!(first, second);
}

#[test]
fn a_server_ended_before_it_acted_is_told_to_raise_the_exit_grace() {
    let dir = tempfile::tempdir().unwrap();
    let server = server("acts_after_answer.py");
    // It acts 0.8 s after it answers, and finishes what it queued at EOF.
    let run = |grace: &str| {
        let args = ["fuzz", "--policy", "keep-open", "--revision", "2025-06-18", "--cases", "1", "--shrink-ms", "1"];
        let flags = ["--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--exit-grace-ms", grace];
        let command = ["--", python3(), &server, "0.8"];
        portcullis(&[&args[..], &flags, &command].concat(), dir.path())
    };
    let o = run("300");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("positive control failed"), "{}", text(&o));
    assert!(stderr.contains("still running 300 ms after its stdin closed"), "{}", text(&o));
    assert!(stderr.contains("raise --exit-grace-ms"), "{}", text(&o));
    let o = run("3000");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("positive control failed"), "{}", text(&o));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
}

#[test]
fn a_banner_before_any_answer_is_a_stdout_clean_finding() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--timeout-ms", "500", "--"];
    let server = ["sh", "-c", "echo 'Server starting on stdio...'; cat > /dev/null"];
    let o = portcullis(&[&args[..], &server[..]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(1), "a finding, not a harness error: {}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("1 finding (stdout-clean) in 1 session"), "{}", text(&o));
    assert!(stdout.contains("Check stdout-clean:"), "{}", text(&o));
}

#[test]
fn a_control_that_shows_liveness_by_time_alone_is_run_again_with_longer_waits() {
    let dir = tempfile::tempdir().unwrap();
    let server = server("slow_exit.py");
    let slow_exit = |delay: &str| {
        let mut args = vec!["fuzz", "--policy", "keep-open", "--revision", "2025-06-18", "--cases", "4"];
        args.extend(["--check", "liveness", "--timeout-ms", "1000", "--exit-grace-ms", "500", "--tool", "fetch"]);
        args.extend(["--shrink-ms", "1000"]);
        args.extend(["--", python3(), &server, delay]);
        portcullis(&args, dir.path())
    };
    // 0.6 s to exit: past the 500 ms grace, well within four times it.
    let o = slow_exit("0.6");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("the control showed liveness/running_after_eof by time alone"), "{}", text(&o));
    // 5 s: past four times it too, a finding.
    let o = slow_exit("5");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 finding (liveness) in 1 session"), "{}", text(&o));
}

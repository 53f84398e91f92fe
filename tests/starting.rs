//! A server slow to start: its first byte is awaited within `--start-ms`,
//! and every later answer within `--timeout-ms` of it, so a short answer
//! wait judges a slow starter correctly instead of as silent.

use crate::cli::{portcullis, python3, text};

fn fuzz(sleep: &str, flags: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/slow_start.py", env!("CARGO_MANIFEST_DIR"));
    let mut args = vec!["fuzz", "--tool", "fetch", "--check", "exactly-once", "--level", "spec"];
    args.extend(["--policy", "keep-open", "--no-ahead"]);
    args.extend(flags);
    args.extend(["--", python3(), &server, sleep]);
    portcullis(&args, dir.path())
}

#[test]
fn a_slow_start_is_awaited_within_the_start_bound_not_the_answer_wait() {
    let o = fuzz("1", &["--timeout-ms", "400", "--start-ms", "6000", "--cases", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no finding in 3 sessions"), "{}", text(&o));
}

#[test]
fn a_server_that_writes_nothing_within_the_start_bound_is_named_so() {
    let o = fuzz("30", &["--timeout-ms", "300", "--start-ms", "800", "--cases", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("wrote nothing within 800 ms of its start (--start-ms)"), "{}", text(&o));
    assert!(err.contains("raise --start-ms"), "{}", text(&o));
}

#[test]
fn a_positive_control_on_a_silent_starter_says_to_raise_the_start_bound() {
    let args = r#"{"url":"{canary}"}"#;
    let o = fuzz("30", &["--args", args, "--timeout-ms", "300", "--start-ms", "600", "--cases", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("positive control failed") && err.contains("wrote nothing on stdout"), "{}", text(&o));
    assert!(err.contains("raise --start-ms"), "{}", text(&o));
}

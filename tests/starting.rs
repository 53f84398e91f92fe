//! A server slow to start: its first byte is awaited within `--start-ms`,
//! and every later answer within `--timeout-ms` of it, so a short answer
//! wait judges a slow starter correctly instead of as silent. A job
//! warmed for its revisions starts their processes at once, and its
//! sessions run in them.

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

#[test]
fn a_warmed_job_starts_each_revisions_process_before_its_first_session_and_runs_it_there() {
    use crate::common::python_server_logging_starts;
    use portcullis::attack::Step;
    use portcullis::campaign::{Job, Lane};
    use portcullis::process::Waits;
    use portcullis::{Policy, Revision, ScriptSpec};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts");
    // Three Python starts at once on a busy machine: a start bound they
    // all meet, so that none comes back silent.
    let waits = Waits::from_ms(2_000, 10, 1_000).starting_within(std::time::Duration::from_secs(30));
    let target = python_server_logging_starts("stalls_on_depth.py", &log, waits).started_ahead(true);
    let starts = || std::fs::read_to_string(&log).map_or(0, |s| s.lines().count());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let (first, second) = (Revision::R2025_06_18, Revision::R2025_11_25);
    job.warm(&[first, second]);
    let session = |job: &mut Job, revision, salt| {
        let spec = ScriptSpec::whole(revision, vec![Step::Control(0)]);
        let (_, obs, v) = job.session(&spec, salt, Lane::Search).expect("the harness runs");
        assert!(v.is_empty() && !obs.eof_sent, "a valid call in the shared process: {v:#?}");
    };
    session(&mut job, first, 1);
    // A process for each revision, and the one the target keeps started
    // ahead; unwarmed, the first session would have started two. Each
    // shell writes its line as it starts: a bounded wait for the third.
    for _ in 0..600 {
        if starts() >= 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(starts(), 3, "two warmed and one started ahead");
    session(&mut job, second, 2);
    // Ended and awaited, a process started for the second session would
    // have written its line by now.
    job.finish().expect("the job ends");
    assert_eq!(starts(), 3, "the second revision's session ran in the process warmed for it");
}

//! Servers slow to start, under keep-open. `--mix lean` draws scripts that
//! need a process of their own (a call before `initialize`, a frame cut at
//! EOF) many times more rarely than the full mix, yet still draws them;
//! `portcullis fuzz` says when a campaign against a slow starter would gain
//! from it, says so when a start too slow for the timeout made it give
//! sharing up, and calls the lean mix out where no process is shared.

use portcullis::Mix;
use portcullis::attack::{any_revision, any_step};
use portcullis::script::{LEAN, scripts_mixed};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// How many of `n` scripts drawn under `mix` need a process of their own.
fn own_process(mix: Mix, n: usize) -> usize {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = scripts_mixed(any_revision(), any_step(), mix);
    (0..n).filter(|_| strategy.new_tree(&mut runner).unwrap().current().needs_own_process()).count()
}

#[test]
fn the_lean_mix_draws_own_process_scripts_rarely_but_still_draws_them() {
    let n = 4000;
    let (full, lean) = (own_process(Mix::Full, n), own_process(Mix::Lean, n));
    assert!(full * 10 > n && full * 4 < n, "about one in six under the full mix: {full} of {n}");
    assert!(lean > 0, "the lean mix still draws them");
    let expected = full as f64 / LEAN as f64;
    assert!((lean as f64) < expected * 2.0, "{LEAN} times rarer: {lean} against {full}");
}

/// A keep-open campaign against the reference gateway started behind a
/// 300 ms sleep, as an interpreter starts.
fn slow_campaign(mix: &str, report: &std::path::Path) -> (i32, String) {
    let dir = report.parent().unwrap();
    let slow = format!("sleep 0.3; exec {BIN} reference-gateway --policy keep-open");
    let o = Command::new(BIN)
        .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"])
        .args(["--cases", "48", "--mix", mix, "--report", report.to_str().unwrap()])
        .args(["--", "sh", "-c", &slow])
        .current_dir(dir)
        .output()
        .expect("portcullis runs");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let text = format!("{stderr}\nstdout:\n{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(o.status.code(), Some(0), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    assert_eq!(json["mix"], mix, "the report says which mix");
    (o.status.code().unwrap_or(-1), stderr)
}

#[test]
fn a_slow_starter_under_the_full_mix_gets_a_hint_and_the_lean_mix_none() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let (_, full) = slow_campaign("full", &report);
    let hint = full.lines().find(|l| l.contains("--mix lean")).unwrap_or_else(|| panic!("a hint:\n{full}"));
    assert!(hint.contains("to start") && hint.contains("each cost a start"), "{hint}");
    let (_, lean) = slow_campaign("lean", &report);
    assert!(!lean.contains("--mix lean"), "no hint once lean:\n{lean}");
}

#[test]
fn a_start_past_the_timeout_gives_sharing_up_and_says_so() {
    // The server's third start, the shared process's, sleeps 4 s: past
    // --timeout-ms (2 s, a wide margin for the starts that do not sleep:
    // the tools/list's and the control's). One revision, so no other
    // process starts ahead beside it. The server drops the answers to calls
    // it cannot run, which each session then waits for: a short exit grace
    // keeps those waits short.
    let state = tempfile::tempdir().unwrap();
    let server = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/concurrent.py");
    let o = Command::new(BIN)
        .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"])
        .args(["--cases", "2", "--timeout-ms", "2000", "--exit-grace-ms", "300", "--revision", "2025-06-18"])
        .args(["--artifacts", state.path().to_str().unwrap()])
        .args(["--", "python3", server, state.path().to_str().unwrap(), "3", "4"])
        .current_dir(state.path())
        .output()
        .expect("portcullis runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let line = stderr.lines().find(|l| l.contains("sharing a process was given up")).unwrap_or_else(|| {
        panic!("status {:?}\nstdout:\n{}\nstderr:\n{stderr}", o.status, String::from_utf8_lossy(&o.stdout))
    });
    assert!(line.contains("at session 1 of a job") && line.contains("--timeout-ms"), "{line}");
}

#[test]
fn the_lean_mix_without_sharing_is_called_out() {
    let dir = tempfile::tempdir().unwrap();
    for flags in [&["--policy", "close"][..], &["--policy", "keep-open", "--no-share"]] {
        let o = Command::new(BIN)
            .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--cases", "4", "--mix", "lean"])
            .args(flags)
            .args(["--", BIN, "reference-gateway", "--policy", flags[1]])
            .current_dir(dir.path())
            .output()
            .expect("portcullis runs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("--mix lean saves process starts only when"), "{flags:?}: {stderr}");
    }
}

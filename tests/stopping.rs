//! SIGINT or SIGTERM to `portcullis fuzz`: every process group it started
//! ends (a grandchild that ignores SIGTERM too), its temporary folders go,
//! what it found so far is saved, and it exits 130 or 143.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::Path;
use std::time::{Duration, Instant};

/// Whether a process with this pid is alive (and not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// `portcullis fuzz` of `fetch` with `flags`, for ever, against the shell
/// command `server`, its report and artifacts where given.
fn fuzz(flags: &[&str], report: &Path, artifacts: &Path, server: &str) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--cases", "100000"])
        .args(flags)
        .arg("--report")
        .arg(report)
        .arg("--artifacts")
        .arg(artifacts)
        .args(["--", "sh", "-c", server])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn stopped_by(signal: Signal, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let bin = env!("CARGO_BIN_EXE_portcullis");
    // Each server process notes its HOME and starts a grandchild that
    // ignores SIGTERM and notes its pid.
    let server = format!(
        r#"echo "home $HOME" >> '{seen}'; sh -c 'trap "" TERM; echo "pid $$" >> "$0"; exec sleep 300' '{seen}' &
exec '{bin}' reference-gateway --policy keep-open"#,
        seen = seen.display()
    );
    let report = dir.path().join("report.json");
    let mut child = fuzz(&["--policy", "keep-open", "--no-share"], &report, &dir.path().join("findings"), &server);
    // Until a few sessions of the campaign have started their processes
    // (the first three serve discovery, the tool list and the control).
    let started = Instant::now();
    while std::fs::read_to_string(&seen).unwrap_or_default().matches("pid").count() < 6 {
        assert!(started.elapsed() < Duration::from_secs(60), "no session started");
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    let stopping = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(stopping.elapsed() < Duration::from_secs(30), "portcullis did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(status.code(), Some(code), "{text}");
    assert!(text.contains("no finding in"), "it says what it ran: {text}");
    assert!(report.exists(), "the report is written: {text}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    for line in seen.lines() {
        match line.split_once(' ') {
            Some(("pid", pid)) => assert!(!alive(pid.parse().unwrap()), "grandchild {pid} left running"),
            Some(("home", home)) => assert!(!std::path::Path::new(home).exists(), "{home} left behind"),
            _ => panic!("{line}"),
        }
    }
}

#[test]
fn sigint_ends_every_group_removes_the_folders_and_exits_130() {
    stopped_by(Signal::SIGINT, 130);
}

#[test]
fn sigterm_does_the_same_and_exits_143() {
    stopped_by(Signal::SIGTERM, 143);
}

#[test]
fn a_stop_while_a_finding_is_shrunk_keeps_it_saved_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_portcullis");
    // A planted bug, behind a start slow enough that shrinking takes a while.
    let server = format!("sleep 0.3; exec '{bin}' reference-gateway --mutant authorize-after-build");
    let (report, findings) = (dir.path().join("report.json"), dir.path().join("findings"));
    // Seed 1 draws the bug's frame within a few sessions.
    let flags = ["--forbidden-tool", "rotate_keys", "--policy", "close", "--seed", "1"];
    let child = fuzz(&flags, &report, &findings, &server);
    // Until the finding is saved, as it is once a fresh session shows it.
    let started = Instant::now();
    while std::fs::read_dir(&findings).map_or(0, |d| d.count()) == 0 {
        assert!(started.elapsed() < Duration::from_secs(120), "nothing was found");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("no-effect-on-reject/effect_of_rejected (authorization)"), "{text}");
    let saved: Vec<_> = std::fs::read_dir(&findings).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(saved.len(), 1, "one artifact, the earlier one replaced: {saved:?}");
    let artifact: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved[0]).unwrap()).unwrap();
    assert_eq!(artifact["kind"], "effect_of_rejected", "{artifact}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(1), "{report}");
}

#[test]
fn sessions_still_running_past_the_duration_have_their_servers_ended_and_show_nothing() {
    // Every process's second valid call takes 30 s, within the 60 s answer
    // wait: past --duration the job still waits for it, until its server
    // is ended under it. The call it never answered is no finding.
    // (The 120 s bound only keeps a broken build from hanging the suite.)
    let dir = tempfile::tempdir().unwrap();
    let server = format!("exec python3 '{}/tests/servers/cancels_on_eof.py' 0 2:30", env!("CARGO_MANIFEST_DIR"));
    let report = dir.path().join("report.json");
    // Only the check the ended calls would seem to break (this server has
    // other findings).
    let flags = ["--policy", "keep-open", "--timeout-ms", "60s", "--duration", "5s", "--check", "exactly-once"];
    let mut child = fuzz(&flags, &report, &dir.path().join("findings"), &server);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("portcullis did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("--duration reached: stopped"), "the servers still running were ended: {text}");
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(text.contains("no finding in"), "{text}");
}

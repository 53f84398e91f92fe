//! `portcullis audit`, run as users run it: the reference gateway is clean
//! on both verdicts; a server that logs a credential to stderr fails the
//! runtime verdict alone; one that reads a file outside its folder at
//! startup is named, with the phase, where strace can trace.

use crate::cli::{BIN, portcullis, python3, text};
use std::path::Path;

fn server(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers").join(name).display().to_string()
}

/// Whether the audit traced with strace: it must say which, and trace
/// wherever strace can trace `true`.
fn traced(out: &str) -> bool {
    assert!(
        out.contains("strace: traced") || out.contains("strace: not used: "),
        "the audit says whether strace ran: {out}"
    );
    let can = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert_eq!(out.contains("strace: traced"), can, "strace traces here: {can}; {out}");
    can
}

#[test]
fn the_reference_gateway_is_clean_on_both_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (report, junit) = (dir.path().join("audit.json"), dir.path().join("audit.xml"));
    let args = ["audit", "--frames", "12", "--report", report.to_str().unwrap(), "--junit", junit.to_str().unwrap()];
    let o = portcullis(&[&args[..], &["--", BIN, "reference-gateway"]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("protocol: clean") && out.contains("runtime: clean"), "{}", text(&o));
    assert!(out.contains("12 of 12 rejected frames sent"), "{}", text(&o));
    // A clean verdict says what it covered: the rules of the frames sent,
    // at most two frames each.
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let rules = json["frames"]["rules"].as_array().unwrap();
    assert!(rules.len() >= 6 && out.contains(&format!("rules they break: {} (", rules.len())), "{}", text(&o));
    // The newest revision the reference speaks, as `server/discover` names it.
    assert!(String::from_utf8_lossy(&o.stderr).contains("reference-gateway` in 2026-07-28"), "{}", text(&o));
    assert!(out.contains("answered server/discover, tools/list, server/discover"), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["protocol"]["clean"], true, "{json:#}");
    assert_eq!(json["runtime"]["clean"], true, "{json:#}");
    assert!(json["canaries"]["files"].as_array().unwrap().iter().any(|f| f == "{home}/.aws/credentials"));
    if traced(&out) {
        let ran = json["needs"]["programs"].as_array().unwrap();
        assert!(ran.iter().any(|p| p.as_str().unwrap().ends_with("portcullis")), "{json:#}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"testcase name="runtime: canary-leak""#), "{xml}");
    let suite = r#"<testsuites name="portcullis" tests="6" skipped="0" failures="0""#;
    assert!(xml.contains(suite) || !traced(&out), "{xml}");
}

#[test]
fn a_result_without_its_type_fails_the_protocol_verdict_in_2026_07_28_and_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let mutant = ["--", BIN, "reference-gateway", "--mutant", "untyped-result"];
    let o = portcullis(&[&["audit", "--no-strace", "--frames", "4"][..], &mutant].concat(), dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("protocol: FAILED"), "{}", text(&o));
    let pinned = ["audit", "--no-strace", "--frames", "4", "--revision", "2025-11-25"];
    let o = portcullis(&[&pinned[..], &mutant].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_variable_the_tool_needs_to_act_is_needed_though_the_opening_works_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["audit", "--no-strace", "--frames", "2", "--env", "ALLOWED_HOSTS=127.0.0.1", "--env", "UNUSED=1"];
    let o = portcullis(&[&args[..], &["--", python3(), &server("allow_list.py")]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let needs = "environment: PATH, LANG, HOME, and ALLOWED_HOSTS; no canary variable (judged by the opening and \
                 by the tool's call acting); not needed: UNUSED";
    assert!(String::from_utf8_lossy(&o.stdout).contains(needs), "{}", text(&o));
}

#[test]
fn a_home_set_by_hand_is_warned_of_since_the_canary_files_are_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let set = format!("HOME={}", home.display());
    let o = portcullis(
        &["audit", "--no-strace", "--frames", "2", "--env", &set, "--", BIN, "reference-gateway"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let warned = format!("warning: HOME is set to {} (by --env or the profile)", home.display());
    assert!(String::from_utf8_lossy(&o.stderr).contains(&warned), "{}", text(&o));
    let o = portcullis(&["audit", "--no-strace", "--frames", "2", "--", BIN, "reference-gateway"], dir.path());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning: HOME"), "{}", text(&o));
}

#[test]
fn a_credential_logged_to_stderr_fails_the_runtime_verdict_alone() {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(&["audit", "--frames", "12", "--", python3(), &server("echoes_secret.py")], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("protocol: clean"), "stdout stayed clean: {}", text(&o));
    assert!(out.contains("runtime: FAILED"), "{}", text(&o));
    assert!(out.contains("[canary-leak] GITHUB_TOKEN leaked through stderr"), "{}", text(&o));
    assert!(!out.contains("AWS_ACCESS_KEY_ID left"), "it logs names ending in TOKEN or KEY only: {}", text(&o));
}

#[test]
fn a_file_read_outside_its_folder_at_startup_is_named_with_its_phase() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let peek = elsewhere.path().join("notes.txt");
    std::fs::write(&peek, "private").unwrap();
    let env = format!("PEEK={}", peek.display());
    // As a README launches a server: a file named relative to the folder it
    // runs in, which is the server's folder.
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    let o = portcullis(&["audit", "--frames", "4", "--env", &env, "--", python3(), "reads_outside.py"], &here);
    let out = String::from_utf8_lossy(&o.stdout);
    if !traced(&out) {
        assert_eq!(o.status.code(), Some(0), "nothing else is wrong with it: {}", text(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let named = format!("[outside-area] (startup) {} opened to be read, outside its area", peek.display());
    assert!(out.contains(&named), "{}", text(&o));
    assert!(out.contains("protocol: clean"), "{}", text(&o));
    assert!(out.contains("environment: PATH, LANG, HOME, and PEEK; no canary variable"), "{}", text(&o));
    // Allowed, it is clean.
    let allow = elsewhere.path().display().to_string();
    let args = ["audit", "--frames", "4", "--allow-path", &allow, "--env", &env, "--", python3()];
    let o = portcullis(&[&args[..], &["reads_outside.py"]].concat(), &here);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // From another folder, named by its path, it is caught the same.
    let args = ["audit", "--frames", "4", "--env", &env, "--", python3(), &server("reads_outside.py")];
    let o = portcullis(&args, dir.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains(&named), "{}", text(&o));
}

#[test]
fn a_program_run_for_a_rejected_frame_is_named_and_pings_alone_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(&["audit", "--frames", "6", "--", python3(), &server("runs_on_bad_line.py")], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    if !traced(&out) {
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let ran =
        out.lines().find(|l| l.contains("[rejected-frame-activity] (rejected frames) while rejecting frames it ran"));
    assert!(ran.is_some_and(|l| l.contains("/true (true)")), "{}", text(&o));
    assert!(out.contains("protocol: clean"), "{}", text(&o));
    assert!(!out.contains("(control pings) "), "pings alone run nothing: {}", text(&o));
}

#[test]
fn a_program_is_looked_for_on_the_path_the_server_gets() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("gateway-under-audit")).unwrap();
    let path = format!("PATH={}:/usr/bin:/bin", bin.display());
    let args =
        ["audit", "--no-strace", "--frames", "2", "--env", &path, "--", "gateway-under-audit", "reference-gateway"];
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("strace: not used: not asked for (--no-strace)"),
        "{}",
        text(&o)
    );
    let o = portcullis(&["audit", "--", "gateway-under-audit"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("could not start gateway-under-audit"), "{}", text(&o));
}

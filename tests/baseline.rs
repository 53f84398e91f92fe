//! `--baseline` and `--update-baseline` through the command line, against
//! `portcullis reference-gateway` with planted bugs: a baseline written
//! from one run makes the same run pass with its cause reported as known;
//! a new cause fails the run, and the known one it did not see is reported
//! as possibly fixed; a bad baseline is a one-line error before anything
//! runs, and a file an update cannot read is left as it was. The same for
//! `check-stdout` (whose profile names its command and baseline) and
//! `audit`.

use crate::cli::{BIN, portcullis, text};
use std::path::Path;
use std::process::Output;

/// `fuzz --check no-effect-on-reject` against the reference gateway with
/// `mutant` planted, under keep-open, with `extra` flags, in `dir`.
fn fuzz(dir: &Path, mutant: &str, extra: &[&str]) -> Output {
    let mut args = vec!["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"];
    args.extend(["--check", "no-effect-on-reject", "--cases", "96", "--shrink-ms", "2000"]);
    args.extend(["--timeout-ms", "1000", "--exit-grace-ms", "300"]);
    args.extend(extra);
    args.extend(["--", BIN, "reference-gateway", "--policy", "keep-open", "--mutant", mutant]);
    portcullis(&args, dir)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_baseline_passes_the_run_it_was_written_from_and_fails_on_a_new_cause() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baseline.toml");
    let path = file.to_str().unwrap();
    let key = "no-effect-on-reject/effect_of_rejected (invalid_request)";

    // Written from a run that finds one cause: the run exits 0.
    let wrote = fuzz(dir.path(), "lax-jsonrpc", &["--update-baseline", path]);
    assert_eq!(wrote.status.code(), Some(0), "{}", text(&wrote));
    assert!(String::from_utf8_lossy(&wrote.stderr).contains("wrote 1 known cause to"), "{}", text(&wrote));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains(&format!("finding = \"{key}\"\nreason = \"\"")), "{written}");
    // A reviewer says why.
    std::fs::write(&file, written.replace("reason = \"\"", "reason = \"tracked upstream\"")).unwrap();

    // The same run against it: known, and it passes.
    let report = dir.path().join("report.json");
    let sarif = dir.path().join("findings.sarif");
    let reports = ["--report", report.to_str().unwrap(), "--sarif", sarif.to_str().unwrap()];
    let same = fuzz(dir.path(), "lax-jsonrpc", &[&["--baseline", path][..], &reports].concat());
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    let out = stdout(&same);
    assert!(out.contains(&format!("Known: {key} (tracked upstream), saved in ")), "{out}");
    assert!(out.contains("no new finding in 96 sessions") && out.contains("(1 known cause)"), "{out}");
    assert!(!out.contains("Reproduce with:"), "a known cause is not reported in full: {out}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["findings"][0]["known"], "tracked upstream", "{json}");
    assert_eq!(json["baseline"]["new"], serde_json::json!([]), "{json}");
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["baselineState"], "unchanged", "{log}");
    assert_eq!(result["suppressions"][0]["status"], "accepted", "{log}");

    // A server with another planted bug, of another cause: it fails, and
    // the known cause it did not show may be fixed.
    let other = fuzz(dir.path(), "join-broken-lines", &[&["--baseline", path][..], &reports].concat());
    assert_eq!(other.status.code(), Some(1), "{}", text(&other));
    let out = stdout(&other);
    assert!(out.contains("\n1 finding (no-effect-on-reject) in 96 sessions"), "{out}");
    assert!(out.contains("Baseline ") && out.contains(": 1 new, 0 known, 1 possibly fixed"), "{out}");
    assert!(out.contains(&format!("possibly fixed  {key}: tracked upstream (not seen in this run)")), "{out}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["findings"][0]["known"], serde_json::Value::Null, "{json}");
    assert_eq!(json["baseline"]["possibly_fixed"][0]["finding"], key, "{json}");
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["results"][0]["baselineState"], "new", "{log}");

    // Updated from that run: its cause added with no reason yet, and the
    // one it did not see kept, since a reviewer gave it a reason.
    let updated = fuzz(dir.path(), "join-broken-lines", &["--update-baseline", path]);
    assert_eq!(updated.status.code(), Some(0), "{}", text(&updated));
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.contains(&format!("finding = \"{key}\"\nreason = \"tracked upstream\"")), "{after}");
    let new = "finding = \"no-effect-on-reject/effect_of_rejected (unparseable_line)\"\nreason = \"\"";
    assert!(after.contains(new), "{after}");
}

/// A cause the baseline knows does not use up `--max-findings`: the run
/// goes on drawing for new ones, through every case.
#[test]
fn a_known_cause_does_not_count_toward_max_findings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baseline.toml");
    let key = "no-effect-on-reject/effect_of_rejected (invalid_request)";
    std::fs::write(&file, format!("[[known]]\nfinding = \"{key}\"\nreason = \"tracked upstream\"\n")).unwrap();
    let run = fuzz(dir.path(), "lax-jsonrpc", &["--baseline", file.to_str().unwrap(), "--max-findings", "1"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let out = stdout(&run);
    assert!(out.contains(&format!("Known: {key}")), "{out}");
    assert!(out.contains("no new finding in 96 sessions"), "every case was drawn: {out}");
}

/// A control finding the baseline knows (a banner on stdout) does not use
/// up `--max-findings 1` either: the run draws every case.
#[test]
fn a_known_control_finding_does_not_stop_a_run_of_max_findings_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baseline.toml");
    std::fs::write(&file, "[[known]]\nfinding = \"stdout-clean/not_protocol\"\nreason = \"the banner\"\n").unwrap();
    let mut args = vec!["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "close"];
    args.extend(["--cases", "16", "--max-findings", "1", "--timeout-ms", "1000", "--baseline"]);
    args.extend([file.to_str().unwrap(), "--", BIN, "reference-gateway", "--mutant", "startup-banner"]);
    let run = portcullis(&args, dir.path());
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(stdout(&run).contains("no new finding in 16 sessions"), "every case was drawn: {}", text(&run));
}

#[test]
fn a_baseline_that_cannot_be_read_stops_the_run_before_it_starts_and_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baseline.toml");
    std::fs::write(&file, "[[known]]\nfinding = \"a/b\"\nreason = [\n").unwrap();
    for flag in ["--baseline", "--update-baseline"] {
        let o = fuzz(dir.path(), "lax-jsonrpc", &[flag, file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(&format!("{flag} {}", file.display())), "{err}");
        assert!(!dir.path().join("portcullis-findings").exists(), "nothing ran: {err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "[[known]]\nfinding = \"a/b\"\nreason = [\n");
    let missing = fuzz(dir.path(), "lax-jsonrpc", &["--baseline", "none.toml"]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
}

#[test]
fn check_stdout_fails_only_on_a_dirty_run_its_baseline_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gate.toml");
    let path = file.to_str().unwrap();
    let gate = |mutant: &str, flags: &[&str]| {
        let args = [&["check-stdout"][..], flags, &["--", BIN, "reference-gateway", "--mutant", mutant]].concat();
        portcullis(&args, dir.path())
    };
    // Written from the runs a result without its type makes dirty.
    let wrote = gate("untyped-result", &["--update-baseline", path]);
    assert_eq!(wrote.status.code(), Some(0), "{}", text(&wrote));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.matches("\nfinding = ").count(), 5, "{written}");
    assert!(written.contains("finding = \"check-stdout/released (2026-07-28)\""), "{written}");
    let same = gate("untyped-result", &["--baseline", path]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    let out = stdout(&same);
    assert!(out.contains("no new dirty run: 5 of 12 runs wrote stdout the baseline knows of"), "{out}");
    assert!(out.contains("Known: check-stdout/released (2026-07-28) (known, no reason given)"), "{out}");
    // A banner at startup makes every run dirty: seven are new.
    let banner = gate("startup-banner", &["--baseline", path]);
    assert_eq!(banner.status.code(), Some(1), "{}", text(&banner));
    let out = stdout(&banner);
    assert!(
        out.contains(
            "dirty: 7 of 12 runs wrote stdout that is not a protocol message (5 dirty runs more the baseline knows)"
        ),
        "{out}"
    );
}

#[test]
fn audit_fails_only_on_a_finding_its_baseline_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.toml");
    let path = file.to_str().unwrap();
    let audit = |mutant: &str, flags: &[&str]| {
        let args = [&["audit", "--no-strace", "--frames", "4"][..], flags];
        portcullis(&[&args.concat()[..], &["--", BIN, "reference-gateway", "--mutant", mutant]].concat(), dir.path())
    };
    let wrote = audit("untyped-result", &["--update-baseline", path]);
    assert_eq!(wrote.status.code(), Some(0), "{}", text(&wrote));
    assert!(std::fs::read_to_string(&file).unwrap().contains("finding = \"audit/stdout-clean"), "{}", text(&wrote));
    let same = audit("untyped-result", &["--baseline", path]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    let out = stdout(&same);
    assert!(out.contains("protocol: no new finding (") && out.contains(" known: "), "{out}");
    // A banner is stdout-clean too, but at startup: a cause of its own.
    let banner = audit("startup-banner", &["--baseline", path]);
    assert_eq!(banner.status.code(), Some(1), "{}", text(&banner));
    assert!(stdout(&banner).contains("protocol: FAILED ("), "{}", text(&banner));
}

#[test]
fn a_profile_gives_check_stdout_its_command_and_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("server.toml");
    let written = format!(
        "command = [\"{BIN}\", \"reference-gateway\", \"--mutant\", \"untyped-result\"]\n\
         env = [\"PORTCULLIS_PROFILED=1\"]\nbaseline = \"{{here}}/known.toml\"\n"
    );
    std::fs::write(&profile, written).unwrap();
    let p = profile.to_str().unwrap();
    // No baseline file yet: the profile names one that is not there.
    let o = portcullis(&["check-stdout", "--profile", p], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("known.toml"), "{}", text(&o));
    let known = dir.path().join("known.toml");
    let wrote = portcullis(
        &["check-stdout", "--profile", p, "--baseline", "none", "--update-baseline", known.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(wrote.status.code(), Some(2), "--baseline none is read first: {}", text(&wrote));
    std::fs::write(&known, "").unwrap();
    let wrote = portcullis(&["check-stdout", "--profile", p, "--update-baseline", known.to_str().unwrap()], dir.path());
    assert_eq!(wrote.status.code(), Some(0), "{}", text(&wrote));
    assert!(stdout(&wrote).contains("launch: PORTCULLIS_PROFILED=1 "), "its env: {}", text(&wrote));
    let o = portcullis(&["check-stdout", "--profile", p], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("no new dirty run: 5 of 12 runs"), "{}", text(&o));
}

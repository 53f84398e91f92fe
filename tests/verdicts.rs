//! Verdicts on a strict server written apart from the suite
//! (`tests/servers/strict.py`, standard library only): clean at the spec
//! level under auto, close and keep-open; clean at hardening, where a
//! server that reads the specifications' leniencies (`--lenient`) is not;
//! and a CR right before the LF tolerated whether the server refuses the
//! line or acts on it once, but not when it acts twice. The same verdicts
//! with every core kept busy by processes the test starts and ends. The
//! same server speaks the stateless 2026-07-28 too: clean at the spec level
//! in each era, and each planted bug of that era one finding.

use crate::cli::{portcullis, python3, text};
use std::process::Output;

fn strict() -> String {
    format!("{}/tests/servers/strict.py", env!("CARGO_MANIFEST_DIR"))
}

/// `portcullis fuzz FLAGS -- python3 strict.py --log LOG SERVER` in a
/// folder of its own, calling `record` and watching its log.
fn fuzz(flags: &[&str], server: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log").display().to_string();
    std::fs::write(&log, "").unwrap();
    let strict = strict();
    let mut args = vec!["fuzz", "--tool", "record", "--args", r#"{"note":"{token}"}"#, "--watch-file", &log];
    args.extend(["--jobs", "2", "--shrink-ms", "3000"]);
    args.extend(flags);
    args.extend(["--", python3(), &strict, "--log", &log]);
    args.extend(server);
    portcullis(&args, dir.path())
}

fn clean(o: &Output, cases: &str) {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.code() == Some(0) && out.contains(&format!("no finding in {cases} sessions")), "{}", text(o));
}

fn found(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", text(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn a_strict_server_is_clean_at_spec_under_every_policy() {
    for (policy, server) in [("auto", "keep-open"), ("auto", "close"), ("keep-open", "keep-open"), ("close", "close")] {
        let cases = if server == "close" { "200" } else { "600" };
        let o = fuzz(&["--level", "spec", "--policy", policy, "--cases", cases], &["--policy", server]);
        clean(&o, cases);
        if policy == "auto" {
            let seen = format!("holding it to {server}");
            assert!(String::from_utf8_lossy(&o.stderr).contains(&seen), "{}", text(&o));
        }
    }
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn a_server_that_negotiates_one_revision_is_judged_at_it() {
    // Asked for 2025-03-26 (batches), it answers 2025-11-25 (none): its
    // sessions are judged at what it answered, shared process or not.
    let o = fuzz(&["--level", "spec", "--policy", "keep-open", "--cases", "300"], &["--revision", "2025-11-25"]);
    clean(&o, "300");
}

/// Processes that keep every core busy while they live, each ended by its
/// own id when dropped: a CI machine under load.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn every_core() -> Busy {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let spin =
            || std::process::Command::new(python3()).args(["-c", "while True: pass"]).spawn().expect("python3 runs");
        Busy((0..cores).map(|_| spin()).collect())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn verdicts_hold_with_every_core_kept_busy() {
    let busy = Busy::every_core();
    for server in ["keep-open", "close"] {
        let o = fuzz(&["--level", "spec", "--cases", "200"], &["--policy", server]);
        clean(&o, "200");
        let seen = format!("holding it to {server}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(&seen), "{}", text(&o));
    }
    let out = found(&fuzz(&["--level", "spec", "--cases", "300"], &["--crlf", "twice"]));
    assert!(out.contains("reached the executor 2 times"), "a finding is still found under load:\n{out}");
    drop(busy);
}

/// 1,000 cases on three seeds under each policy (about five minutes on two
/// cores), left out of CI's long group too: `cargo test --
/// --ignored over_three_thousand`.
#[test]
#[ignore = "minutes long; the long group covers the same at fewer cases"]
fn a_strict_server_is_clean_at_spec_over_three_thousand_sessions() {
    for (policy, server) in [("auto", "keep-open"), ("close", "close"), ("keep-open", "keep-open")] {
        for seed in ["1", "2", "3"] {
            let flags = ["--level", "spec", "--policy", policy, "--cases", "1000", "--seed", seed];
            clean(&fuzz(&flags, &["--policy", server]), "1000");
        }
    }
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn hardening_separates_a_lenient_reader_from_a_strict_one() {
    clean(&fuzz(&["--cases", "400"], &[]), "400");
    clean(&fuzz(&["--level", "spec", "--cases", "400"], &["--lenient"]), "400");
    let out = found(&fuzz(&["--cases", "400"], &["--lenient"]));
    assert!(out.contains("level: hardening  rule: "), "the finding names its level and rule:\n{out}");
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn a_cr_before_the_lf_may_be_refused_or_acted_on_once_but_not_twice() {
    let flags = ["--level", "spec", "--cases", "300"];
    clean(&fuzz(&flags, &["--crlf", "reject"]), "300");
    clean(&fuzz(&flags, &["--crlf", "accept"]), "300");
    let out = found(&fuzz(&flags, &["--crlf", "twice"]));
    assert!(out.contains("tolerated: cr_before_lf") && out.contains("reached the executor 2 times"), "{out}");
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn three_planted_bugs_of_different_checks_are_three_findings_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let report_s = report.to_str().unwrap();
    let flags = ["--level", "spec", "--cases", "400", "--report", report_s];
    let bugs = ["--bug", "banner", "--bug", "id-true", "--crlf", "twice"];
    let out = found(&fuzz(&flags, &bugs));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let distinct: Vec<&str> =
        json["findings"].as_array().unwrap().iter().map(|f| f["distinct"].as_str().unwrap()).collect();
    let keys = [
        "stdout-clean/",
        "no-effect-on-reject/effect_of_rejected (invalid_request)",
        // A call either reading of which may act is a valid call to
        // exactly-once; its tolerated rule is the evidence.
        "exactly-once/executed_times (valid_call)",
    ];
    for bug in keys {
        assert!(distinct.iter().any(|d| d.starts_with(bug)), "{bug} is among {distinct:?}:\n{out}");
    }
    let twice = json["findings"].as_array().unwrap().iter().find(|f| f["distinct"] == keys[2]).unwrap();
    let rules: Vec<&str> = twice["rules"].as_array().unwrap().iter().filter_map(|r| r.as_str()).collect();
    assert!(rules.contains(&"cr_before_lf"), "the CRLF call ran twice: {rules:?}");
    let mut unique = distinct.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), distinct.len(), "each distinct finding is listed once: {distinct:?}");
    for f in json["findings"].as_array().unwrap() {
        assert!(f["artifact"].as_str().unwrap().ends_with(".json") && f["sessions"].as_u64().unwrap() >= 1, "{f}");
    }
    assert!(out.contains(&format!("Distinct findings ({}):", distinct.len())), "{out}");
    // --max-findings 1 stops at the first: today's behaviour.
    let one = found(&fuzz(&["--level", "spec", "--cases", "400", "--max-findings", "1"], &bugs));
    assert!(one.contains("Distinct findings (1):") && one.contains("\n1 finding (stdout-clean) in 1 session"), "{one}");
}

/// `fuzz FLAGS` in 2026-07-28, aiming at the confirming tool `purge` too.
fn stateless(flags: &[&str], server: &[&str]) -> Output {
    fuzz(&[&["--revision", "2026-07-28", "--confirm-tool", "purge"], flags].concat(), server)
}

/// Clean in each era at `cases` sessions, at spec level, and in 2026-07-28
/// at hardening too (the round-trip rules are hardening).
fn clean_in_both_eras(cases: &str) {
    clean(&fuzz(&["--level", "spec", "--revision", "2025-11-25", "--cases", cases], &[]), cases);
    clean(&stateless(&["--level", "spec", "--cases", cases], &[]), cases);
    clean(&stateless(&["--cases", cases], &[]), cases);
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn a_strict_server_of_both_eras_is_clean_in_each() {
    clean_in_both_eras("200");
}

/// The same at 1,000 sessions a run (a few minutes on two cores), left out
/// of CI's long group: `cargo test -- --ignored over_a_thousand`.
#[test]
#[ignore = "minutes long; the long group covers the same at fewer cases"]
fn a_strict_server_of_both_eras_is_clean_in_each_over_a_thousand_sessions() {
    clean_in_both_eras("1000");
}

/// The finding of a stateless call served on a broken envelope.
const EFFECT_BAD_ENVELOPE: &str = "no-effect-on-reject/effect_of_rejected (bad_envelope_version)";
/// The finding of a retry that acts on a state no answer handed it.
const EFFECT_UNCONFIRMED: &str = "no-effect-on-reject/effect_of_rejected (unconfirmed_retry)";

/// Each of `bugs` (the planted bug, the finding that shows it, and the
/// rules of the frames it serves, none for a bug of the output) yields
/// one finding in 2026-07-28 within `cases` sessions (more for a bug only
/// one kind of round trip in nine shows), every check hunting: one cause,
/// shown by its rules alone. A served frame that acts and is answered with
/// a success is one finding, its answer folded in as evidence.
fn each_is_one_finding(bugs: &[(&str, &str, &[&str], &str)]) {
    for (bug, key, rules, cases) in bugs {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        let o = stateless(&["--cases", cases, "--report", report.to_str().unwrap()], &["--bug", bug]);
        let out = found(&o);
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let findings = json["findings"].as_array().unwrap();
        let distinct: Vec<&str> = findings.iter().map(|f| f["distinct"].as_str().unwrap()).collect();
        assert_eq!(distinct, [*key], "{bug}: one finding\n{out}");
        // Shown by the bug's rules alone, or, for a bug of the output, by
        // stdout.
        let shown: Vec<&str> = findings[0]["rules"].as_array().unwrap().iter().filter_map(|r| r.as_str()).collect();
        let of_the_bug = rules.is_empty() || (!shown.is_empty() && shown.iter().all(|r| rules.contains(r)));
        assert!(of_the_bug, "{bug}: shown by other rules: {shown:?}\n{out}");
    }
}

// The two halves run side by side in the long group.
#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn each_planted_bug_of_the_stateless_envelope_is_one_finding() {
    each_is_one_finding(&[
        ("no-envelope", EFFECT_BAD_ENVELOPE, &["missing_envelope", "bad_envelope"], "150"),
        ("any-version", EFFECT_BAD_ENVELOPE, &["unsupported_version", "handshake_version"], "150"),
        (
            "inherit-capability",
            "correlation/rejected_succeeded (undeclared_capability)",
            &["missing_capability"],
            "150",
        ),
        ("untyped", "stdout-clean/not_protocol", &[], "60"),
    ]);
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn each_planted_bug_of_the_round_trip_is_one_finding() {
    each_is_one_finding(&[
        // Any state confirms: a forged, an altered, a spent or another
        // target's.
        (
            "trust-state",
            EFFECT_UNCONFIRMED,
            &["forged_state", "altered_state", "replayed_state", "foreign_state"],
            "150",
        ),
        // One session in 200 shows either at seed 0, and draws after a
        // claim differ: 300 leave room (none of 30 other seeds missed).
        ("replay-state", EFFECT_UNCONFIRMED, &["replayed_state"], "300"),
        ("unbound-state", EFFECT_UNCONFIRMED, &["foreign_state"], "300"),
    ]);
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn two_planted_bugs_of_one_cause_and_one_of_another_are_two_findings() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let flags = ["--check", "no-effect-on-reject", "--level", "spec", "--cases", "400"];
    let bugs = ["--bug", "id-true", "--bug", "lax-jsonrpc", "--bug", "lenient-args"];
    let saved = dir.path().join("findings");
    let to = ["--report", report.to_str().unwrap(), "--artifacts", saved.to_str().unwrap()];
    let out = found(&fuzz(&[&flags[..], &to].concat(), &bugs));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let mut distinct: Vec<&str> = findings.iter().map(|f| f["distinct"].as_str().unwrap()).collect();
    distinct.sort_unstable();
    let causes = [
        "no-effect-on-reject/effect_of_rejected (invalid_request)",
        "no-effect-on-reject/effect_of_rejected (tool_call)",
    ];
    assert_eq!(distinct, causes, "one finding per cause:\n{out}");
    // The two bugs of one cause are its evidence, each by its rule.
    let invalid = &findings.iter().find(|f| f["distinct"] == causes[0]).unwrap()["rules"];
    for rule in ["bad_id", "bad_jsonrpc"] {
        assert!(invalid.as_array().unwrap().iter().any(|r| r == rule), "{rule} among {invalid}\n{out}");
    }
    assert!(out.contains("cause: JSON that is no valid request (invalid_request), seen with "), "{out}");
    // Shrunk once, to one witness, and saved with a witness of each other
    // rule: a session whose frame breaks it.
    let at = findings.iter().find(|f| f["distinct"] == causes[0]).unwrap()["artifact"].as_str().unwrap();
    let artifact = portcullis::artifact::Artifact::load(std::path::Path::new(at)).unwrap();
    let own: Vec<&str> = artifact.script.frames.iter().filter_map(|f| f.expect.rule()).map(|r| r.id()).collect();
    let others: Vec<&str> = ["bad_id", "bad_jsonrpc"].into_iter().filter(|r| !own.contains(r)).collect();
    assert!(!others.is_empty(), "shrunk to one rule's frame: {own:?}");
    for rule in others {
        let witness = artifact.witness(rule).unwrap_or_else(|| panic!("a witness of {rule} in {at}"));
        assert!(witness.frames.iter().any(|f| f.expect.rule().is_some_and(|r| r.id() == rule)), "{rule}");
    }
}

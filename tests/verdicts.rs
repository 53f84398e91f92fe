//! Verdicts on a strict server written apart from the suite
//! (`tests/servers/strict.py`, standard library only): clean at the spec
//! level under auto, close and keep-open; clean at hardening, where a
//! server that reads the specifications' leniencies (`--lenient`) is not;
//! and a CR right before the LF tolerated whether the server refuses the
//! line or acts on it once, but not when it acts twice.

use crate::cli::{portcullis, text};
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
    args.extend(["--", "python3", &strict, "--log", &log]);
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

/// The run the issue asks for: 1,000 cases on three seeds under each
/// policy (about five minutes on two cores): `cargo nextest run
/// --run-ignored only verdicts`.
#[test]
#[ignore = "minutes long; the default run covers the same at fewer cases"]
fn a_strict_server_is_clean_at_spec_over_three_thousand_sessions() {
    for (policy, server) in [("auto", "keep-open"), ("close", "close"), ("keep-open", "keep-open")] {
        for seed in ["1", "2", "3"] {
            let flags = ["--level", "spec", "--policy", policy, "--cases", "1000", "--seed", seed];
            clean(&fuzz(&flags, &["--policy", server]), "1000");
        }
    }
}

#[test]
fn hardening_separates_a_lenient_reader_from_a_strict_one() {
    clean(&fuzz(&["--cases", "400"], &[]), "400");
    clean(&fuzz(&["--level", "spec", "--cases", "400"], &["--lenient"]), "400");
    let out = found(&fuzz(&["--cases", "400"], &["--lenient"]));
    assert!(out.contains("level: hardening  rule: "), "the finding names its level and rule:\n{out}");
}

#[test]
fn a_cr_before_the_lf_may_be_refused_or_acted_on_once_but_not_twice() {
    let flags = ["--level", "spec", "--cases", "300"];
    clean(&fuzz(&flags, &["--crlf", "reject"]), "300");
    clean(&fuzz(&flags, &["--crlf", "accept"]), "300");
    let out = found(&fuzz(&flags, &["--crlf", "twice"]));
    assert!(out.contains("tolerated: cr_before_lf") && out.contains("reached the executor 2 times"), "{out}");
}

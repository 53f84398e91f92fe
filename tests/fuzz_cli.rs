//! `portcullis fuzz` against `portcullis reference-gateway` as a real child
//! process: the reference is clean under both policies; every mutant is
//! caught by its expected check, saved as an artifact that replays as
//! FAILED against the mutant and FIXED against the reference; bad input to
//! portcullis itself is a one-line error and exit 2.

use crate::cli;

use cli::{BIN, portcullis, python3, saved, text};
use portcullis::reference::{Mutant, Reference};
use std::path::Path;
use std::process::{Command, Output};

/// Runs a command line split into `words`, as a shell would run it.
fn run_words(words: &[String], dir: &Path) -> Output {
    Command::new(&words[0]).args(&words[1..]).current_dir(dir).output().expect("the command runs")
}

/// `fuzz` flags calling `write_note` (a file named and filled with a
/// token, under `--notes-dir`), watching `notes` for it.
fn write_note_args(notes: &str) -> Vec<&str> {
    let args = r#"{"path":"{token}.txt","text":"hello {token}"}"#;
    vec!["fuzz", "--tool", "write_note", "--args", args, "--watch-dir", notes]
}

/// `fuzz` flags calling `fetch` with a canary, `rotate_keys` forbidden.
fn fuzz_args<'a>(policy: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--forbidden-tool", "rotate_keys"];
    a.extend(["--confirm-tool", "purge_cache"]);
    a.extend(["--policy", policy, "--timeout-ms", "1000", "--exit-grace-ms", "300", "--max-findings", "1"]);
    a.extend(extra);
    a
}

#[test]
fn the_reference_is_clean_under_both_policies() {
    let dir = tempfile::tempdir().unwrap();
    for policy in ["close", "keep-open"] {
        let mut args = fuzz_args(policy, &["--cases", "96", "--jobs", "2"]);
        args.extend(["--", BIN, "reference-gateway", "--policy", policy]);
        let o = portcullis(&args, dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("no finding in 96 sessions"), "{}", text(&o));
        let found = "revisions: 2024-11-05 to 2025-11-25 (initialize) and 2026-07-28 (named by server/discover)";
        assert!(String::from_utf8_lossy(&o.stderr).contains(found), "it speaks both eras: {}", text(&o));
    }
}

#[test]
fn a_server_of_the_handshake_era_alone_is_fuzzed_in_that_era_and_the_run_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let strict = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers/strict.py");
    let mut args = vec!["fuzz", "--tool", "record", "--args", r#"{"note":"{token}"}"#, "--cases", "8"];
    args.extend(["--policy", "keep-open", "--watch-file", log.to_str().unwrap(), "--"]);
    args.extend([python3(), strict, "--log", log.to_str().unwrap(), "--policy", "keep-open", "--handshake-only"]);
    let o = portcullis(&args, dir.path());
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("revisions: 2024-11-05 to 2025-11-25 (initialize); server/discover answered"),
        "{}",
        text(&o)
    );
    assert!(!said.contains("and 2026-07-28"), "{}", text(&o));
}

fn caught(m: Mutant) {
    let dir = tempfile::tempdir().unwrap();
    let policy = m.policy().as_str();
    let check = m.expected().id();
    let report = dir.path().join("report.json");
    let junit = dir.path().join("junit.xml");
    let sarif = dir.path().join("findings.sarif");
    let (report_s, junit_s, sarif_s) = (report.to_str().unwrap(), junit.to_str().unwrap(), sarif.to_str().unwrap());
    // Shrinking is bounded: a step of a finding that rests on a missing
    // answer waits out its deadline, and what is tested here is the catch
    // and its reports (tests/delta.rs tests shrinking).
    let mut extra = vec!["--cases", "256", "--check", check, "--shrink-ms", "5000"];
    // A bug that bites in one revision alone is hunted in it, as the
    // catalogue's own hunt does (`Mutant::revisions`).
    let only = m.revisions();
    let pinned = only.first().map(|r| r.to_string()).filter(|_| only.len() == 1);
    extra.extend(pinned.iter().flat_map(|r| ["--revision", r.as_str()]));
    extra.extend(["--report", report_s, "--junit", junit_s, "--sarif", sarif_s, "--"]);
    let mut args = fuzz_args(policy, &extra);
    args.extend([BIN, "reference-gateway", "--policy", policy, "--mutant", m.name()]);
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{} not caught:\n{}", m.name(), text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&format!("1 finding ({check})")), "{}", text(&o));
    // A server that goes on after a rejected frame under close hears of keep-open.
    let hinted = String::from_utf8_lossy(&o.stderr).contains("--policy keep-open checks instead");
    assert_eq!(hinted, check == "policy" && policy == "close", "{}", text(&o));
    for part in ["First offending", "Reproduce with:\n  ", " replay ", "Minimize with:\n", "stderr ("] {
        assert!(out.contains(part), "missing {part:?}: {}", text(&o));
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["findings"][0]["check"], check);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure") && xml.contains(check), "{xml}");
    // One case per check and level; the other checks were not hunted:
    // skipped, not passed.
    assert_eq!(xml.matches("<testcase ").count(), 12, "{xml}");
    assert_eq!(xml.matches("<skipped").count(), 10, "{xml}");
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 6, "one rule per check");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], check, "{log}");
    let level = if json["findings"][0]["level"] == "hardening" { "warning" } else { "error" };
    assert_eq!(result["level"], level, "{log}");
    let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
    assert!(uri.ends_with(".json"), "located at its artifact: {uri}");
    let artifact = json["findings"][0]["artifact"].as_str().unwrap().to_owned();
    assert!(dir.path().join(&artifact).is_file(), "artifact {artifact} saved");

    // The command the finding prints, run as a shell would: it carries the
    // flags the run had (its waits), and replays FAILED against the mutant
    // and FIXED against the reference (the same line without `--mutant`).
    let reproduce = json["findings"][0]["reproduce"].as_str().unwrap().to_owned();
    assert!(out.contains(&format!("Reproduce with:\n  {reproduce}\n")), "{reproduce}\n{}", text(&o));
    assert!(reproduce.contains(" --timeout-ms 1000 --exit-grace-ms 300 -- "), "{reproduce}");
    let words = shlex::split(&reproduce).expect("a shell line");
    assert!(words[2].starts_with('/'), "the artifact's path is absolute: {reproduce}");
    // Run from another folder: every path in it is absolute.
    let again = run_words(&words, &std::env::temp_dir());
    assert_eq!(again.status.code(), Some(1), "replay against the mutant: {}", text(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("FAILED"), "{}", text(&again));
    assert_eq!(words[words.len() - 2..], ["--mutant", m.name()], "{reproduce}");
    let fixed = run_words(&words[..words.len() - 2], dir.path());
    assert_eq!(fixed.status.code(), Some(0), "replay against the reference: {}", text(&fixed));
    assert!(String::from_utf8_lossy(&fixed.stdout).contains("FIXED"), "{}", text(&fixed));
}

macro_rules! every_mutant {
    ($($name:ident => $m:ident,)*) => {
        $(#[test]
        fn $name() {
            caught(Mutant::$m);
        })*

        #[test]
        fn the_list_above_is_the_whole_catalogue() {
            let listed = [$(Mutant::$m,)*];
            assert_eq!(listed.len(), Mutant::ALL.len());
            assert!(Mutant::ALL.iter().all(|m| listed.contains(m)));
        }
    };
}

every_mutant! {
    startup_banner => StartupBanner,
    late_diagnostic => LateDiagnostic,
    skip_non_json => SkipNonJson,
    execute_concatenated => ExecuteConcatenated,
    bool_id => BoolId,
    any_integer_id => AnyIntegerId,
    fractional_id => FractionalId,
    null_id => NullId,
    lax_jsonrpc => LaxJsonrpc,
    execute_before_schema => ExecuteBeforeSchema,
    authorize_after_build => AuthorizeAfterBuild,
    repair_truncated_at_eof => RepairTruncatedAtEof,
    chunked_read => ChunkedRead,
    join_broken_lines => JoinBrokenLines,
    last_wins_duplicates => LastWinsDuplicates,
    batch_any_revision => BatchAnyRevision,
    call_before_initialize => CallBeforeInitialize,
    carry_rejected_arguments => CarryRejectedArguments,
    replace_invalid_utf8 => ReplaceInvalidUtf8,
    ignore_close_policy => IgnoreClosePolicy,
    no_exit_on_eof => NoExitOnEof,
    retry_fetch => RetryFetch,
    coerce_string_id => CoerceStringId,
    wrong_parse_error_code => WrongParseErrorCode,
    serve_without_envelope => ServeWithoutEnvelope,
    any_version => AnyVersion,
    untyped_result => UntypedResult,
    inherit_capability => InheritCapability,
    trust_request_state => TrustRequestState,
    replay_request_state => ReplayRequestState,
    unbound_request_state => UnboundRequestState,
}

fn one_line_error(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(args, dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    // Progress may come first; the error is one line, the last but for
    // the indented details of a failed positive control.
    let last = said.trim_end().lines().rfind(|l| !l.starts_with("  ")).unwrap_or_default();
    assert!(last.starts_with("portcullis: error: "), "the last line is the error: {said}");
    assert_eq!(said.matches("portcullis: error").count(), 1, "one error: {said}");
    said
}

#[test]
fn a_finding_minimizes_within_its_budget_and_still_replays_failed() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = [BIN, "reference-gateway", "--policy", "keep-open", "--mutant", "execute-concatenated"];
    let mut args = fuzz_args("keep-open", &["--check", "no-effect-on-reject", "--"]);
    args.extend(gateway);
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let first = saved(&o);
    let started = std::time::Instant::now();
    let mut args = vec!["minimize", first.as_str(), "--budget-ms", "5000", "--exit-grace-ms", "300", "--"];
    args.extend(gateway);
    let m = portcullis(&args, dir.path());
    assert_eq!(m.status.code(), Some(0), "{}", text(&m));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "bounded by its budget");
    let out = String::from_utf8_lossy(&m.stdout).into_owned();
    let line = out.lines().find(|l| l.starts_with("minimized ")).expect("a summary");
    let nums: Vec<usize> = line.split(' ').filter_map(|w| w.parse().ok()).collect();
    assert!(nums[2] <= nums[0] && nums[3] <= nums[1], "no larger than before: {line}");
    let smaller = saved(&m);
    assert_ne!(smaller, first, "a new artifact, the old one kept");
    // A budget spent before any cut says so, and what to raise.
    let mut args = vec!["minimize", first.as_str(), "--budget-ms", "1", "--"];
    args.extend(gateway);
    let none = portcullis(&args, dir.path());
    let said = String::from_utf8_lossy(&none.stdout);
    assert!(said.contains("budget ran out before any cut: raise --budget-ms"), "{}", text(&none));
    assert!(dir.path().join(&first).is_file());
    let mut args = vec!["replay", smaller.as_str(), "--"];
    args.extend(gateway);
    let r = portcullis(&args, dir.path());
    assert_eq!(r.status.code(), Some(1), "the minimized finding still fails: {}", text(&r));
}

#[test]
fn a_control_without_effect_stops_with_exit_2_and_says_what_to_fix() {
    // write_note writes nothing without --notes-dir: no effect can be seen.
    let err = one_line_error(&[
        "fuzz",
        "--tool",
        "write_note",
        "--args",
        r#"{"path":"{token}","text":"t"}"#,
        "--",
        BIN,
        "reference-gateway",
    ]);
    assert!(err.contains("positive control failed") && err.contains("--args"), "{err}");
    assert!(err.contains("(the server lists fetch, write_note, rotate_keys)"), "what --tool could name: {err}");
}

#[test]
fn a_confirm_tool_is_one_the_server_lists_in_2026_07_28_and_a_run_that_draws_it() {
    let reference = ["--", BIN, "reference-gateway"];
    let unlisted = one_line_error(&[&["fuzz", "--confirm-tool", "fetch_all"][..], &reference].concat());
    assert!(unlisted.contains("lists no such tool in 2026-07-28") && unlisted.contains("purge_cache"), "{unlisted}");
    let pinned = ["fuzz", "--confirm-tool", "purge_cache", "--revision", "2025-11-25"];
    let pinned = one_line_error(&[&pinned[..], &reference].concat());
    assert!(pinned.contains("only in 2026-07-28"), "{pinned}");
}

#[test]
fn bad_input_is_a_one_line_error() {
    // A wait takes milliseconds, or a unit; a time that is none is refused.
    assert!(one_line_error(&["fuzz", "--start-ms", "5x", "--", "true"]).contains("`5x` is not a time such as"));
    let units = one_line_error(&["fuzz", "--start-ms", "5s", "--timeout-ms", "500ms", "--args", "{", "--", "true"]);
    assert!(units.contains("--args is not JSON"), "5s and 500ms are read: {units}");
    assert!(one_line_error(&["fuzz", "--args", "{", "--", "true"]).contains("--args is not JSON"));
    assert!(one_line_error(&["fuzz", "--args", r#"{"url":"x"}"#, "--", "true"]).contains("{canary}"));
    assert!(
        one_line_error(&["fuzz", "--policy", "sometimes", "--", "true"])
            .contains("[possible values: auto, close, keep-open]")
    );
    assert!(one_line_error(&["fuzz", "--level", "lax", "--", "true"]).contains("[possible values: spec, hardening]"));
    assert!(one_line_error(&["fuzz", "--mix", "most", "--", "true"]).contains("[possible values: full, lean]"));
    assert!(one_line_error(&["fuzz", "--cases", "0", "--", "true"]).contains("'0' for '--cases"));
    // A misspelled flag or subcommand, with clap's suggestion, in one line
    // and nothing else.
    let flag = one_line_error(&["fuzz", "--duraton", "5s", "--", "true"]);
    assert!(flag.contains("similar argument exists: '--duration'") && flag.trim_end().lines().count() == 1, "{flag}");
    let command = one_line_error(&["fuz"]);
    assert!(command.contains("similar subcommand exists: 'fuzz'") && command.trim_end().lines().count() == 1);
    assert!(one_line_error(&["fuzz", "--duration", "0", "--", "true"]).contains("at least one second"));
    assert!(one_line_error(&["fuzz", "--duration", "5x", "--", "true"]).contains("such as 90, 90s, 10m or 8h"));
    let missing = one_line_error(&["fuzz", "--tool", "fetch", "--", "/nonexistent/server"]);
    assert!(missing.contains("/nonexistent/server") && missing.contains("No such file"), "{missing}");
    assert!(one_line_error(&["replay", "/nonexistent/finding.json", "--", "true"]).contains("finding.json"));
    // A server that exits before it answers says so, with its status and
    // the end of its stderr.
    let quits = ["sh", "-c", "echo 'boom: no API_KEY' >&2; exit 3"];
    let listing = one_line_error(&[&["fuzz", "--"], &quits[..]].concat());
    assert!(listing.contains("exited with status 3 before it answered tools/list"), "{listing}");
    assert!(listing.contains("boom: no API_KEY"), "{listing}");
    let control =
        one_line_error(&[&["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--"], &quits[..]].concat());
    assert!(control.contains("exited with status 3 before stdin closed"), "{control}");
    assert!(control.contains("boom: no API_KEY"), "{control}");
}

#[test]
fn a_duration_bounds_the_sessions_drawn_and_cases_still_cap_them() {
    let dir = tempfile::tempdir().unwrap();
    let reference = [BIN, "reference-gateway"];
    let timed = portcullis(&[&fuzz_args("close", &["--duration", "2s", "--"]), &reference[..]].concat(), dir.path());
    let out = String::from_utf8_lossy(&timed.stdout);
    let n: u32 = out.split("no finding in ").nth(1).and_then(|r| r.split(' ').next()?.parse().ok()).unwrap_or(0);
    assert!(timed.status.code() == Some(0) && n > 0, "{}", text(&timed));
    let capped = [&fuzz_args("close", &["--duration", "1h", "--cases", "12", "--"]), &reference[..]].concat();
    let capped = portcullis(&capped, dir.path());
    assert!(String::from_utf8_lossy(&capped.stdout).contains("no finding in 12 sessions"), "{}", text(&capped));
}

/// Whether a process with this pid is alive (and not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[test]
fn fresh_sessions_take_a_process_spawned_ahead_and_none_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    // Each process the run starts appends its id before it serves.
    let started = |flags: &[&str]| -> Vec<i32> {
        let pids = dir.path().join(format!("pids{}", flags.len()));
        let server = format!("echo $$ >> {}; exec {BIN} reference-gateway --policy close", pids.display());
        let mut args = fuzz_args("close", &["--cases", "12"]);
        args.extend(flags);
        args.extend(["--", "sh", "-c", &server]);
        let o = portcullis(&args, dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let ids = std::fs::read_to_string(&pids).unwrap_or_default();
        ids.lines().map(|l| l.trim().parse().expect("a pid")).collect()
    };
    let ahead = started(&[]);
    let alone = started(&["--no-ahead"]);
    // The same sessions, and the one spawned ahead that no session took.
    assert_eq!(ahead.len(), alone.len() + 1, "ahead {ahead:?}, alone {alone:?}");
    assert!(ahead.iter().chain(&alone).all(|p| !alive(*p)), "a process outlived the run");
}

#[test]
fn without_a_tool_the_server_is_asked_and_one_that_can_carry_a_canary_is_picked() {
    let dir = tempfile::tempdir().unwrap();
    let o = portcullis(&["fuzz", "--cases", "16", "--", BIN, "reference-gateway"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r#"calling tool `fetch` with --args '{"url":"{canary}"}'"#), "{}", text(&o));
}

#[test]
fn a_watched_directory_sees_file_effects() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    let notes_s = notes.to_str().unwrap();
    let mut args = write_note_args(notes_s);
    args.extend(["--cases", "24", "--", BIN, "reference-gateway", "--notes-dir", notes_s]);
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_file_effect_finding_reproduces_with_the_watch_that_saw_it() {
    // bool-id acts on a call whose id is a boolean; through write_note, the
    // effect is a file only the watched directory sees, so the printed
    // command must watch it too (and quote its name, which has a space).
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("my notes");
    std::fs::create_dir(&notes).unwrap();
    let notes_s = notes.to_str().unwrap();
    let mut args = write_note_args(notes_s);
    args.extend(["--policy", "keep-open", "--check", "no-effect-on-reject"]);
    args.extend(["--report", "report.json", "--", BIN, "reference-gateway", "--policy", "keep-open"]);
    args.extend(["--mutant", "bool-id", "--notes-dir", notes_s]);
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let reproduce = json["findings"][0]["reproduce"].as_str().unwrap();
    assert!(reproduce.contains(&format!(" --watch-dir '{notes_s}' -- ")), "{reproduce}");
    let words = shlex::split(reproduce).expect("a shell line");
    let again = run_words(&words, dir.path());
    assert_eq!(again.status.code(), Some(1), "{reproduce}: {}", text(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("FAILED"), "{}", text(&again));
}

#[test]
fn a_shrink_cut_short_by_its_bound_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for (bound, cut) in [("1", true), ("30000", false)] {
        let mut args = fuzz_args("keep-open", &["--shrink-ms", bound, "--"]);
        args.extend([BIN, "reference-gateway", "--policy", "keep-open", "--mutant", "bool-id"]);
        let o = portcullis(&args, dir.path());
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let said =
            String::from_utf8_lossy(&o.stderr).contains(&format!("stopped before its end (at --shrink-ms {bound} ms"));
        assert_eq!(said, cut, "--shrink-ms {bound}: {}", text(&o));
        // Nothing points at proptest's own setting, which the user does not set.
        assert!(!String::from_utf8_lossy(&o.stderr).contains("proptest"), "{}", text(&o));
    }
}

#[test]
fn promote_writes_a_regression_test_for_a_crash_and_for_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("regression");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(suite.join("main.rs"), "").unwrap();
    let crashes = dir.path().join("artifacts").join("raw_stdin");
    std::fs::create_dir_all(&crashes).unwrap();
    std::fs::write(crashes.join("crash-0123abcd"), b"{\"id\":\xff}\r\n").unwrap();
    let suite_s = suite.to_str().unwrap();
    let o = portcullis(&["promote", "artifacts/raw_stdin/crash-0123abcd", "--dir", suite_s], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let test = std::fs::read_to_string(suite.join("crash_0123abcd.rs")).unwrap();
    assert!(
        test.contains(r#"b"\"#) && test.contains(r#"{\"id\":\xff}\r\n"#) && test.contains("check_raw_stdin"),
        "{test}"
    );
    assert_eq!(std::fs::read_to_string(suite.join("main.rs")).unwrap(), "mod crash_0123abcd;\n");
    let again = portcullis(&["promote", "artifacts/raw_stdin/crash-0123abcd", "--dir", suite_s], dir.path());
    assert_eq!(again.status.code(), Some(2), "never overwrites: {}", text(&again));

    // A crash of a planted bug is promoted against that bug: the test's call
    // fails on the code that crashed, and holds on the strict reference.
    std::fs::write(crashes.join("crash-banner"), b"x").unwrap();
    let crash = "artifacts/raw_stdin/crash-banner";
    let o = portcullis(&["promote", crash, "--mutant", "startup-banner", "--dir", suite_s], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let test = std::fs::read_to_string(suite.join("crash_banner.rs")).unwrap();
    let call = r#"check_raw_stdin(&Reference::mutant(portcullis::reference::Mutant::from_name("startup-banner").unwrap()), INPUT)"#;
    assert!(test.contains(call), "{test}");
    let planted = Reference::mutant(Mutant::from_name("startup-banner").unwrap());
    let crashes_there = std::panic::catch_unwind(|| portcullis::libfuzzer::check_raw_stdin(&planted, b"x"));
    assert!(crashes_there.is_err(), "the promoted call fails on the planted bug");
    portcullis::libfuzzer::check_raw_stdin(&Reference::strict(), b"x");
    // A template target's crash runs the gateway the template names.
    let targets = dir.path().join("targets");
    std::fs::create_dir(&targets).unwrap();
    std::fs::write(
        targets.join("my_gateway.rs"),
        "#![no_main]\nportcullis::fuzz_gateway!(my_crate::MyTarget::new());\nfn unused() { drop(()); }\n",
    )
    .unwrap();
    std::fs::write(crashes.join("crash-mine"), b"y").unwrap();
    let args = ["promote", "artifacts/raw_stdin/crash-mine", "--target", "my_gateway", "--targets", "targets"];
    let o = portcullis(&[&args[..], &["--dir", suite_s]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let test = std::fs::read_to_string(suite.join("crash_mine.rs")).unwrap();
    assert!(test.contains("check_script(&my_crate::MyTarget::new(), INPUT)"), "{test}");

    let mut args = fuzz_args("close", &["--check", "stdout-clean", "--"]);
    args.extend([BIN, "reference-gateway", "--mutant", "startup-banner"]);
    let o = portcullis(&args, dir.path());
    let o = portcullis(&["promote", &saved(&o), "--name", "banner", "--dir", suite_s], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let test = std::fs::read_to_string(suite.join("banner.rs")).unwrap();
    for part in ["`stdout-clean` under the close policy", "startup-banner", "fn banner()", "run_script("] {
        assert!(test.contains(part), "missing {part:?}: {test}");
    }
}

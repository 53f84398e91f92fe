//! Evidence that comes after a session's window is judged against that
//! session, never set aside: an effect by its tokens' salt, output by its
//! position after the script's marker. And a violation only a persistent
//! process shows is reported as state-dependent, with its history.

use crate::cli::python3;
use crate::common;

use common::python_server;
use portcullis::artifact::Artifact;
use portcullis::attack::Step;
use portcullis::attack::jsonrpc::{JsonRpc, Kind};
use portcullis::campaign::Job;
use portcullis::campaign::Lane;
use portcullis::process::Waits;
use portcullis::{CheckId, Policy, Revision, ScriptSpec, Target};

const REVISION: Revision = Revision::R2025_06_18;

fn call() -> ScriptSpec {
    ScriptSpec::whole(REVISION, vec![Step::Control(0)])
}

#[test]
fn an_effect_after_the_window_of_a_rejected_call_is_a_late_finding() {
    // The server refuses a call with `"id": true` with the right error, and
    // acts on it 300 ms later: after the script's marker was answered.
    let target = python_server("acts_after_error.py", &[], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let bad = ScriptSpec::whole(REVISION, vec![Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 })]);
    let (_, _, first) = job.session(&bad, 1, Lane::Search).expect("the harness runs");
    let (_, _, second) = job.session(&call(), 2, Lane::Search).expect("the harness runs");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    let in_session = [&first, &second].iter().any(|v| v.iter().any(|v| v.check == CheckId::NoEffectOnReject));
    let late: Vec<_> = found.iter().filter(|f| f.check == CheckId::NoEffectOnReject).collect();
    assert!(!in_session, "the effect came after the window: {first:?} {second:?}");
    let f = late.first().unwrap_or_else(|| panic!("the late effect is reported: {found:#?}"));
    let after = f.late.expect("marked late");
    assert!(after.as_millis() > 50, "with its delay: {after:?}");
    assert!(f.confirmed, "a fresh session with the grown waits repeats it");
    assert!(f.first_seen.is_some() && f.cases_until_caught > 0, "when it was seen: {f:?}");
    let own = format!("pc{:08x}t", f.salt);
    assert!(String::from_utf8_lossy(&f.script.stdin()).contains(&own), "its salt is its script's: {own}");
    assert!(target.waits().quiet >= after, "the quiet grew to cover it: {:?}", target.waits());
}

#[test]
fn output_after_the_window_is_the_scripts_and_judged_again() {
    let target = python_server("late_banner.py", &[], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let (_, obs, v) = job.session(&call(), 1, Lane::Search).expect("the harness runs");
    assert!(v.is_empty(), "clean in its window: {v:?} {}", String::from_utf8_lossy(&obs.stdout));
    std::thread::sleep(std::time::Duration::from_millis(300));
    job.session(&ScriptSpec::whole(REVISION, vec![]), 2, Lane::Search).expect("the harness runs");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    let f = found.iter().find(|f| f.check == CheckId::StdoutClean).unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.late.is_some(), "marked late");
    assert!(String::from_utf8_lossy(&f.observation.stdout).contains("debug: call done"));
}

#[test]
fn output_taken_as_the_next_script_begins_is_stamped_when_it_came_not_when_taken() {
    // The debug line comes 0.1 s after the window; the job is busy
    // elsewhere for 2 s before its next script takes it. Its delay is the
    // 0.1 s, and the quiet of every later session does not grow to cover 2 s.
    let target = python_server("late_banner.py", &[], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    job.session(&call(), 1, Lane::Search).expect("the harness runs");
    std::thread::sleep(std::time::Duration::from_secs(2));
    job.session(&ScriptSpec::whole(REVISION, vec![]), 2, Lane::Search).expect("the harness runs");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    let f = found.iter().find(|f| f.check == CheckId::StdoutClean).unwrap_or_else(|| panic!("{found:#?}"));
    let late = f.late.expect("marked late");
    assert!(late < std::time::Duration::from_secs(1), "stamped when it came: {late:?}");
    let quiet = target.waits().quiet;
    assert!(quiet < std::time::Duration::from_secs(1), "grown to cover when it came: {quiet:?}");
}

#[test]
fn a_violation_only_a_worn_process_shows_is_state_dependent_with_its_history() {
    // The server prints a debug line from its sixteenth call on: a campaign
    // catches it in its shared process, no fresh session (of a handful of
    // calls) repeats it, and it is reported with the scripts the process
    // ran before.
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/wears_out.py", env!("CARGO_MANIFEST_DIR"));
    let path = dir.path().to_str().unwrap().to_owned();
    let fuzz = ["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"];
    // Other stdout-clean findings of this simple server (it echoes any id)
    // may come first: the one looked for is among them.
    let rest = ["--cases", "48", "--check", "stdout-clean", "--mix", "lean", "--shrink-ms", "3000"];
    let report = format!("{path}/report.json");
    let args: Vec<&str> =
        fuzz.iter().chain(&rest).copied().chain(["--artifacts", &path, "--report", &report]).collect();
    let found = cli(&[args.as_slice(), &["--", python3(), &server, "15"]].concat(), dir.path());
    assert_eq!(found.0, Some(1), "{}", found.1);
    assert!(found.1.contains("state-dependent: a process shared between sessions showed it after"), "{}", found.1);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let findings = json["findings"].as_array().expect("findings");
    let worn = findings.iter().find(|f| f["confirmed"] == false);
    let f = worn.unwrap_or_else(|| panic!("one a fresh session did not repeat: {json}"));
    let saved = f["artifact"].as_str().unwrap_or_else(|| panic!("saved: {f}")).to_owned();
    let artifact: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let history = artifact["history"].as_array().unwrap_or_else(|| panic!("with its history: {artifact}"));
    assert!(!history.is_empty(), "the scripts the process ran before: {artifact}");

    // Saved, it replays with its history and still fails; minimized, it
    // keeps the scripts it needs and still fails.
    let replay = cli(&["replay", &saved, "--", python3(), &server, "15"], dir.path());
    assert_eq!(replay.0, Some(1), "{}", replay.1);
    assert!(replay.1.contains("scripts its process ran before go first"), "{}", replay.1);
    let minimized = cli(&["minimize", &saved, "--budget-ms", "8000", "--", python3(), &server, "15"], dir.path());
    assert_eq!(minimized.0, Some(0), "{}", minimized.1);
    let smaller = minimized.1.lines().find_map(|l| l.strip_prefix("Saved: ")).expect("saved").to_owned();
    let again = cli(&["replay", &smaller, "--", python3(), &server, "15"], dir.path());
    assert_eq!(again.0, Some(1), "the minimized session still fails: {}", again.1);
}

/// Runs the portcullis binary in `dir`: its exit code, and its stdout and
/// stderr.
fn cli(args: &[&str], dir: &std::path::Path) -> (Option<i32>, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis")).args(args).current_dir(dir).output().unwrap();
    (o.status.code(), format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn a_campaign_reports_the_late_effect_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/acts_after_error.py", env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["fuzz", "--tool", "fetch", "--args", r#"{"url":"{canary}"}"#, "--policy", "keep-open"])
        .args(["--cases", "64", "--seed", "3", "--check", "no-effect-on-reject", "--max-findings", "1", "--artifacts"])
        .arg(dir.path())
        .args(["--", python3(), &server])
        .output()
        .unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("no-effect-on-reject"), "{text}");
    // The artifact keeps the waits the campaign had, grown or not, for a
    // replay to wait at least as long.
    let saved =
        std::fs::read_dir(dir.path()).unwrap().flatten().find(|e| e.path().extension().is_some_and(|x| x == "json"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(saved.expect("an artifact").path()).unwrap()).unwrap();
    let waits = json["waits_ms"].as_array().unwrap_or_else(|| panic!("waits saved: {json}"));
    assert_eq!(waits[0], 5000, "the answer bound");
    assert!(waits[1].as_u64().unwrap() >= 10 && waits[2] == 1000, "the quiet and the exit grace: {waits:?}");
    assert!(json["start_ms"].as_u64().is_some_and(|s| s >= 5000), "and the start bound: {json}");
}

#[test]
fn a_late_effect_after_the_server_exited_is_found_and_replays() {
    // The server hands a refused call's URL to a job that escapes its
    // process group and acts 0.3 s later, after the session has ended.
    let target = python_server("acts_after_error.py", &["--detach"], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, false, 0);
    let bad = ScriptSpec::whole(REVISION, vec![Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 })]);
    let (_, _, first) = job.session(&bad, 7, Lane::Search).expect("the harness runs");
    assert!(first.is_empty(), "clean in its window: {first:?}");
    // Sessions go on while the job acts; its effect is the first session's.
    let mut found = Vec::new();
    for salt in 8..200 {
        job.session(&call(), salt, Lane::Search).expect("the harness runs");
        found.extend(job.take_found());
        if !found.is_empty() {
            break;
        }
    }
    found.extend(job.finish().expect("the job ends"));
    let f = found.iter().find(|f| f.check == CheckId::NoEffectOnReject).unwrap_or_else(|| panic!("{found:#?}"));
    assert!(f.late.is_some(), "marked late");
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/acts_after_error.py", env!("CARGO_MANIFEST_DIR"));
    let catalogue = target.catalogue();
    let command = vec![python3().into(), server.clone(), "--detach".into()];
    let artifact = Artifact::new(f, catalogue.tools, &catalogue.canary_base, command);
    let saved = artifact.save(dir.path()).expect("saved");
    let replay = cli(&["replay", saved.to_str().unwrap(), "--", python3(), &server, "--detach"], dir.path());
    assert_eq!(replay.0, Some(1), "its delay grows the replay's waits: {}", replay.1);
}

#[test]
fn a_success_result_is_the_action_under_effect_answer() {
    use portcullis::catalogue::{ArgKind, ArgSpec, ToolSpec};
    use portcullis::probe::{ProbeConfig, Probes};
    use portcullis::process::{ChildTarget, Command};
    // A clock has no effect a probe can see: a success result is its action.
    let server = format!("{}/tests/servers/clock.py", env!("CARGO_MANIFEST_DIR"));
    let clock = |lax: bool| {
        let args = [server.clone()].into_iter().chain(lax.then(|| "--lax-ids".to_owned()));
        let probes = std::sync::Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
        let tool = ToolSpec::new("get_time", vec![ArgSpec::required("timezone", ArgKind::Text)]);
        ChildTarget::new(Command::new(python3().to_owned(), args), Waits::default(), vec![tool], probes)
            .effects_from_answers(true)
    };
    let bad = ScriptSpec::whole(REVISION, vec![Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 })]);
    for (lax, acts) in [(false, false), (true, true)] {
        let target = clock(lax);
        let mut job = Job::new(&target, Policy::KeepOpen, false, 0);
        let (_, obs, v) = job.session(&call(), 1, Lane::Search).expect("the harness runs");
        assert_eq!(obs.effects.len(), 1, "the valid call's success is its action: {:?}", obs.effects);
        assert!(v.is_empty(), "{v:?}");
        let (_, obs, v) = job.session(&bad, 2, Lane::Search).expect("the harness runs");
        let broke = v.iter().any(|v| v.check == CheckId::NoEffectOnReject);
        assert_eq!(broke, acts, "lax ids {lax}: {v:?} {:?}", obs.effects);
    }
    // Without --effect answer the positive control sees no effect.
    let dir = tempfile::tempdir().unwrap();
    let args = ["fuzz", "--tool", "get_time", "--args", r#"{"timezone":"{token}"}"#, "--", python3(), &server];
    let without = cli(&args, dir.path());
    assert_eq!(without.0, Some(2), "{}", without.1);
    assert!(without.1.contains("caused no observed effect"), "{}", without.1);
}

#[test]
fn a_search_session_goes_on_past_its_marker_and_an_answer_never_due_is_still_found() {
    // The first valid call takes 6 s, past the 1 s answer wait, where the
    // marker after it is answered at once: the session goes on with the
    // answer still awaited, the next session runs meanwhile, and once the
    // deadline has passed the missing answer is a finding, confirmed with
    // waits four times as long: here, and (with a process started ahead, so
    // that the server may run twice at once) on the job's confirming thread.
    for ahead in [false, true] {
        // A start bound of its own: on a loaded machine the interpreter may
        // take longer than the answer wait to start.
        let waits = Waits::from_ms(1000, 10, 500).starting_within(std::time::Duration::from_secs(10));
        // `silent`: a call still in flight at EOF is dropped without a word.
        let target = python_server("cancels_on_eof.py", &["0", "1:6", "silent"], waits).started_ahead(ahead);
        let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
        let (_, obs, first) = job.session(&call(), 1, Lane::Search).expect("the harness runs");
        assert!(first.is_empty() && !obs.awaiting.is_empty(), "its answer is awaited: {first:?} {obs:?}");
        let (_, _, second) = job.session(&call(), 2, Lane::Search).expect("the harness runs");
        assert!(second.is_empty(), "the next session is its own: {second:?}");
        let mut found = job.take_found();
        found.extend(job.finish().expect("the job ends"));
        let missing = found.iter().find(|f| f.check == CheckId::ExactlyOnce || f.check == CheckId::Correlation);
        let f = missing.unwrap_or_else(|| panic!("ahead {ahead}: the missing answer is found: {found:#?}"));
        assert!(f.late.is_none(), "ahead {ahead}: no late evidence: an answer that never came");
        assert!(f.confirmed, "ahead {ahead}: a fresh session with longer waits repeated it");
        let quiet = target.waits().quiet;
        assert!(quiet < std::time::Duration::from_millis(100), "the quiet did not grow: {quiet:?}");
    }
}

#[test]
fn an_answer_that_comes_after_the_marker_is_its_requests_not_the_next_scripts() {
    // Every valid call answers 300 ms after its marker: each answer comes
    // in the next script's window, and is matched to its request by id.
    let target = python_server("cancels_on_eof.py", &["0.3"], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    for salt in 1..=4 {
        let (_, _, v) = job.session(&call(), salt, Lane::Search).expect("the harness runs");
        assert!(v.is_empty(), "no stray answer in session {salt}: {v:?}");
    }
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    assert!(found.is_empty(), "every answer is its own request's: {found:#?}");
}

#[test]
fn an_answer_still_being_written_when_the_next_script_begins_is_its_requests_whole() {
    // The call's 100 KiB answer comes in two parts 0.4 s apart, after the
    // ping that marks its script's end: the next script begins between them.
    let target = python_server("slow_long_answer.py", &[], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let (_, _, first) = job.session(&call(), 1, Lane::Search).expect("the harness runs");
    std::thread::sleep(std::time::Duration::from_millis(150));
    let (_, obs, second) =
        job.session(&ScriptSpec::whole(REVISION, vec![]), 2, Lane::Search).expect("the harness runs");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    let shown = String::from_utf8_lossy(&obs.stdout).chars().take(200).collect::<String>();
    assert!(first.is_empty() && second.is_empty(), "{first:?} {second:?} {shown}");
    assert!(found.is_empty(), "the answer is the call's, whole: {found:#?}");
}

#[test]
fn a_line_cut_at_a_windows_end_is_joined_whole_before_later_answers() {
    // Three calls: the first acts 0.3 s after its answer, which the window
    // waits for; meanwhile the second's 100 KiB answer is half written (its
    // rest 1 s on, in one write with the third's answer). Neither line may
    // be split by the other, nor an answer go missing: no finding, and none
    // held back unconfirmed.
    let target = python_server("slow_long_answer.py", &["1", "mixed"], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let three = ScriptSpec::whole(REVISION, vec![Step::Control(0), Step::Control(0), Step::Control(0)]);
    let (_, obs, v) = job.session(&three, 1, Lane::Search).expect("the harness runs");
    assert!(v.is_empty() && obs.awaiting.len() == 2, "the window ended with two answers awaited: {v:?} {obs:?}");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    assert!(found.is_empty(), "each answer is one whole line, its call's: {found:#?}");
    assert_eq!(job.take_unconfirmed(), [], "no answer was taken for missing");
}

#[test]
fn scripts_of_one_process_never_share_an_id_past_a_precision_boundary() {
    // An id past 2^53 is the attack, and the same attack drawn twice in one
    // process must not send the same id twice: an answer to it could not
    // tell which script it answers. The server answers each call 0.4 s on.
    use portcullis::attack::placed::{Kind as Placed, Place};
    let target = python_server("slow_long_answer.py", &[], Waits::default());
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    let step = Step::Placed(portcullis::attack::placed::Placed {
        kind: Placed::NumberId,
        place: Place::Meta,
        tool: 0,
        pick: 3,
    });
    let spec = ScriptSpec { level: portcullis::Level::Hardening, ..ScriptSpec::whole(REVISION, vec![step]) };
    let alone = spec.render(&portcullis::Catalogue::reference(), 1);
    assert!(String::from_utf8_lossy(&alone.stdin()).contains(r#""id":-9007199254740993,"#), "the boundary itself");
    let mut ids = Vec::new();
    for salt in [1, 2] {
        let (script, ..) = job.session(&spec, salt, Lane::Search).expect("the harness runs");
        let stdin = String::from_utf8_lossy(&script.stdin()).into_owned();
        let at = stdin.find(r#""id":-90071992547"#).expect("an id past the boundary");
        ids.push(stdin[at..].split(',').next().unwrap().to_owned());
    }
    assert_ne!(ids[0], ids[1], "each script's own");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    // The server serves the call it should refuse: its success answer,
    // where it came after the window (a loaded machine), is a late finding
    // that folds into the call's effect, found too. No other answer is
    // amiss: none to no request, none twice, none missing.
    let keys: Vec<_> = found.iter().map(|f| f.distinct()).collect();
    let answers: Vec<_> = keys
        .iter()
        .filter(|d| d.check == CheckId::Correlation && !d.folds_into().is_some_and(|to| keys.contains(&to)))
        .collect();
    assert!(answers.is_empty(), "one answer to each: {answers:#?} of {found:#?}");
}

#[test]
fn a_line_begun_before_a_scripts_window_and_unfinished_at_its_end_is_the_earlier_scripts() {
    // The server begins a debug line after it answers the first script's
    // marker and ends it 1.5 s on, stalling its output meanwhile: the
    // second script's window ends on its 1 s deadline with the line still
    // unfinished. The line is the first script's output, by position.
    let waits = Waits::from_ms(1000, 10, 1000);
    let target = python_server("stalled_noise.py", &["1.5"], waits);
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    for salt in [1, 2] {
        job.session(&call(), salt, Lane::Search).expect("the harness runs");
    }
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    // A shared process runs a session under its salt with the top bit flipped.
    let dirty = found.iter().filter(|f| f.check == CheckId::StdoutClean).map(|f| f.salt & 0x7fff_ffff);
    assert_eq!(dirty.collect::<Vec<_>>(), [1], "the debug line is the first script's: {found:#?}");
}

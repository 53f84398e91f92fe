//! Sessions sharing one keep-open process: against the strict reference as
//! a child process they show no violation (sharing adds no false alarm),
//! and every script that need not start before the handshake shares; a
//! server that answers concurrently shares without false alarms too, and a
//! replacement process slowed past the timeout does not end sharing. A job
//! with a core to spare starts its other revisions ahead, once each, then a
//! spare, and goes on starting them while it waits for one; a script cut at
//! EOF runs in the spare, and sharing goes on. A violation confirmed fresh
//! is confirmed without the shared process, whose late action would
//! otherwise count as the fresh session's. A valid call slower than waited
//! for may act during a later script without ending sharing, and so may any
//! effect when the hunted check reads none. Sessions that must run whole in
//! a process of their own count toward those that run alone, and when
//! starts are slow a call before `initialize` and a cut at EOF share one.
//! A spare is spawned only while the sessions left may use it, and a
//! retired process is replaced only while sessions are left.
//! A job's processes are ended together: each sees EOF before any is
//! killed.

mod common;

use common::python_server;
use portcullis::attack::Step;
use portcullis::attack::jsonrpc::{self, JsonRpc};
use portcullis::attack::lifecycle::{self, Lifecycle};
use portcullis::attack::truncate::{Kind, Truncate};
use portcullis::catalogue::Catalogue;
use portcullis::child::{ChildTarget, Command, Limits, SharedChild};
use portcullis::frame::Rule;
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::report;
use portcullis::script::any_script;
use portcullis::{CheckId, Revision, ScriptSpec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::Arc;

fn reference() -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let args = ["reference-gateway", "--policy", "keep-open"].map(String::from).to_vec();
    // `write_note` acts only with --notes-dir: call `fetch`, forbid `rotate_keys`.
    let mut tools = Catalogue::reference().tools;
    tools.retain(|t| t.name != "write_note");
    let command = Command { program: env!("CARGO_BIN_EXE_portcullis").into(), args, env: vec![] };
    ChildTarget::new(command, Limits::default(), tools, probes)
}

/// `n` scripts of any kind, drawn from an RNG seeded with `seed` bytes.
fn draws(seed: u8, n: u32) -> impl Iterator<Item = (u32, ScriptSpec)> {
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]));
    let strategy = any_script();
    (0..n).map(move |salt| (salt, strategy.new_tree(&mut runner).unwrap().current()))
}

#[test]
fn shared_sessions_of_the_reference_are_clean() {
    let target = reference();
    let mut shared = SharedChild::new(&target);
    for (salt, spec) in draws(3, 60) {
        let early =
            spec.render(&target.catalogue, salt).frames.iter().any(|f| f.expect.rule() == Some(Rule::BeforeInitialize));
        match shared.run(&spec, salt).unwrap() {
            Some((script, obs, v)) => assert!(v.is_empty(), "{}", report::session(&script, &obs, &v)),
            None => assert!(early, "a script that need not start before the handshake did not share: {spec:?}"),
        }
    }
}

#[test]
fn every_way_a_session_runs_holds_against_the_reference() {
    // Shared, cut at EOF as a process's last, alone, and before the
    // handshake in a process of its own: none shows a violation.
    let target = reference();
    let mut shared = SharedChild::new(&target);
    for (salt, spec) in draws(5, 70) {
        let (script, obs, v) = shared.session(&spec, salt).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
    }
}

#[test]
fn sessions_that_must_run_whole_count_toward_those_run_alone() {
    // One session in 32 runs whole in a process of its own. A call before
    // `initialize` at session 5 must: it stands for session 32's, and
    // session 64 runs alone, as no other ran whole since.
    let target = reference();
    let mut shared = SharedChild::new(&target);
    let plain = ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0)]);
    let early = Step::Lifecycle(Lifecycle { kind: lifecycle::Kind::EarlyCall, tool: 0 });
    let early = ScriptSpec::whole(Revision::R2025_06_18, vec![early, Step::Control(0)]);
    for session in 1..=64u32 {
        let spec = if session == 5 { &early } else { &plain };
        let (script, obs, v) = shared.session(spec, session).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        let costly = shared.sharing().costly;
        match session {
            5..=63 => assert_eq!(costly, 1, "session {session}: only the early call ran whole"),
            64 => assert_eq!(costly, 2, "session 64 ran alone"),
            _ => assert_eq!(costly, 0, "session {session}"),
        }
    }
}

/// `tests/servers/concurrent.py` with `args`, calling its `fetch`.
fn concurrent(args: &[&str], limits: Limits) -> ChildTarget {
    python_server("concurrent.py", args, limits)
}

/// How many times the server counted a start in `state`.
fn starts(state: &tempfile::TempDir) -> usize {
    std::fs::read_dir(state.path()).unwrap().count()
}

/// Whether a job has a core to spare: cores as the harness counts them, the
/// ones the job may run on.
fn spare_core() -> bool {
    rustix::thread::sched_getaffinity(None).is_ok_and(|c| c.count() > 1)
}

#[test]
fn a_server_answering_concurrently_shares_without_false_alarms() {
    // Its calls are answered after the marker's `ping`: the marker waits for
    // every answer the script is owed, so none is lost or pinned on the next.
    let target = concurrent(&[], Limits::default());
    let mut shared = SharedChild::new(&target);
    let steps = vec![Step::Control(0), Step::Control(1), Step::Control(2)];
    let spec = ScriptSpec::whole(Revision::R2025_06_18, steps);
    for salt in 0..5 {
        let (script, obs, v) = shared.run(&spec, salt).unwrap().expect("a handshake and valid calls share");
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        assert_eq!(obs.effects.len(), 3, "{}", report::session(&script, &obs, &v));
    }
}

#[test]
fn a_replacement_slowed_past_the_timeout_does_not_end_sharing() {
    // The second start (the replacement a cut script starts in the
    // background) sleeps past the timeout; the third, in the foreground,
    // does not. Sharing goes on.
    let state = tempfile::tempdir().unwrap();
    // Margins wide enough for a loaded machine: a start takes well under
    // the 2 s timeout, the slowed one sleeps twice that.
    let limits = Limits { timeout: std::time::Duration::from_secs(2), ..Limits::default() };
    let target = concurrent(&[state.path().to_str().unwrap(), "2", "4"], limits);
    let mut shared = SharedChild::new(&target);
    let spec = |steps| ScriptSpec::whole(Revision::R2025_06_18, steps);
    let cut = Step::Truncate(Truncate { kind: Kind::AtEof, tool: 0, cut: 7 });
    for (salt, spec) in [spec(vec![Step::Control(0)]), spec(vec![Step::Control(0), cut]), spec(vec![Step::Control(0)])]
        .into_iter()
        .enumerate()
    {
        let (script, obs, v) = shared.run(&spec, salt as u32).unwrap().expect("the script shares");
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
    }
    assert_eq!(starts(&state), 3, "the first process, the slowed replacement, the one started after it");
}

#[test]
fn a_job_with_a_core_to_spare_starts_its_other_revisions_ahead_once_each() {
    let state = tempfile::tempdir().unwrap();
    let target = concurrent(&[state.path().to_str().unwrap(), "0"], Limits::default());
    let mut shared = SharedChild::new(&target).ahead(&Revision::ALL, 1);
    let spec = ScriptSpec { eof: false, ..ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0)]) };
    // Sessions of one revision only (fewer than the 32 after which one runs
    // alone), long enough for one start after another to finish.
    for salt in 0..24 {
        let (script, obs, v) = shared.session(&spec, salt).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(shared);
    let expected = if spare_core() { Revision::ALL.len() + 1 } else { 1 };
    assert_eq!(starts(&state), expected, "one process per revision (the drawn one's, the rest ahead), then a spare");
}

#[test]
fn while_a_job_waits_for_a_start_the_next_revision_starts_ahead() {
    // 2024-11-05 answers `initialize` after 0.5 s, 2025-11-25 after 1.5 s.
    // The first session (2025-06-18) starts 2024-11-05 ahead; the second
    // (2025-11-25) finds that start under way. While the job waits for its
    // own, 2024-11-05's ends, and the last revision starts, then the spare:
    // five processes by the end of the second session. A job that waited
    // without looking would have started three.
    let state = tempfile::tempdir().unwrap();
    let args = [state.path().to_str().unwrap(), "0", "0", "0", "2024-11-05=0.5", "2025-11-25=1.5"];
    let target = concurrent(&args, Limits::default());
    let mut shared = SharedChild::new(&target).ahead(&Revision::ALL, 1);
    let spec = |revision| ScriptSpec { eof: false, ..ScriptSpec::whole(revision, vec![Step::Control(0)]) };
    for (salt, revision) in [Revision::R2025_06_18, Revision::R2025_11_25].into_iter().enumerate() {
        let (script, obs, v) = shared.session(&spec(revision), salt as u32).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
    }
    assert_eq!(starts(&state), if spare_core() { 5 } else { 2 }, "every revision's and the spare");
}

#[test]
fn a_script_cut_at_eof_runs_in_the_spare_and_the_shared_process_goes_on() {
    // Every start takes 0.2 s, slow enough for a spare to pay. The first
    // session starts the shared process (start 1); with a core to spare,
    // the second spawns a spare ahead (start 2). The cut script ends the
    // spare, not the shared process, and start 3, which sleeps past the
    // timeout, is the next spare, never waited for. Had the cut ended the
    // shared process, start 3 would be its replacement: waited for, given up
    // on, and followed by a fourth. On one core there is no spare ahead: the
    // cut ends the shared process, and start 2 replaces it.
    let state = tempfile::tempdir().unwrap();
    let limits = Limits { timeout: std::time::Duration::from_secs(2), ..Limits::default() };
    let target = concurrent(&[state.path().to_str().unwrap(), "3", "4", "0.2"], limits);
    let mut shared = SharedChild::new(&target).ahead(&[Revision::R2025_06_18], 1);
    let spec = |steps| ScriptSpec::whole(Revision::R2025_06_18, steps);
    let control = || spec(vec![Step::Control(0)]);
    let cut = spec(vec![Step::Control(0), Step::Truncate(Truncate { kind: Kind::AtEof, tool: 0, cut: 7 })]);
    for (salt, spec) in [control(), control(), cut, control()].into_iter().enumerate() {
        let (script, obs, v) = shared.session(&spec, salt as u32).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        // Time for a process spawned meanwhile to count its start.
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    assert_eq!(shared.sharing().costly, 1, "{:?}", shared.sharing());
    drop(shared);
    let expected = if spare_core() { 3 } else { 2 };
    assert_eq!(starts(&state), expected, "the shared process and a spare, then the next spare");
}

#[test]
fn a_spare_is_spawned_only_while_the_sessions_left_may_use_it() {
    // Every start takes 0.2 s. A job of 100 sessions with a core to spare
    // spawns a spare at its second: two starts by its third.
    let spec = |steps| ScriptSpec::whole(Revision::R2025_06_18, steps);
    let control = || spec(vec![Step::Control(0)]);
    let run = |shared: &mut SharedChild, scripts: Vec<ScriptSpec>| {
        for (salt, spec) in scripts.into_iter().enumerate() {
            let (script, obs, v) = shared.session(&spec, salt as u32).unwrap();
            assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
            // Time for a process spawned meanwhile to count its start.
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    };
    let state = tempfile::tempdir().unwrap();
    let target = concurrent(&[state.path().to_str().unwrap(), "0", "0", "0.2"], Limits::default());
    let mut shared = SharedChild::new(&target).ahead(&[Revision::R2025_06_18], 1).cases(100);
    run(&mut shared, vec![control(), control(), control()]);
    drop(shared);
    assert_eq!(starts(&state), if spare_core() { 2 } else { 1 }, "the shared process and a spare");
    // A job of 3 sessions cannot expect its last to need a process of its
    // own: no spare. And when its last cuts a frame at EOF, which ends the
    // shared process, nothing replaces it.
    let state = tempfile::tempdir().unwrap();
    let target = concurrent(&[state.path().to_str().unwrap(), "0", "0", "0.2"], Limits::default());
    let mut shared = SharedChild::new(&target).ahead(&[Revision::R2025_06_18], 1).cases(3);
    let cut = spec(vec![Step::Control(0), Step::Truncate(Truncate { kind: Kind::AtEof, tool: 0, cut: 7 })]);
    run(&mut shared, vec![control(), control(), cut]);
    assert_eq!(shared.sharing().costly, 1, "{:?}", shared.sharing());
    drop(shared);
    assert_eq!(starts(&state), 1, "the shared process alone");
}

#[test]
fn when_starts_are_slow_a_call_before_initialize_and_a_cut_at_eof_take_one_start() {
    // The reference behind a 0.2 s start, counting its starts. The early
    // call runs whole in a process of its own (the spare, with a core to
    // spare; one started then, without), kept on standby without EOF, and a
    // spare is spawned for the next; the cut ends the early call's process,
    // not the shared one, and needs no start of its own: three starts (the
    // shared process, the early call's, the spare). Before, the cut took
    // the spare, which was replaced.
    // A session run alone is never kept on standby.
    let state = tempfile::tempdir().unwrap();
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let slow = format!(
        "mktemp -p {} >/dev/null; sleep 0.2; exec {} reference-gateway --policy keep-open",
        state.path().display(),
        env!("CARGO_BIN_EXE_portcullis")
    );
    let command = Command { program: "sh".into(), args: vec!["-c".into(), slow], env: vec![] };
    let mut tools = Catalogue::reference().tools;
    tools.retain(|t| t.name != "write_note");
    let target = ChildTarget::new(command, Limits::default(), tools, probes);
    let mut shared = SharedChild::new(&target).ahead(&[Revision::R2025_06_18], 1);
    let spec = |steps| ScriptSpec::whole(Revision::R2025_06_18, steps);
    let control = || spec(vec![Step::Control(0)]);
    let early = spec(vec![Step::Lifecycle(Lifecycle { kind: lifecycle::Kind::EarlyCall, tool: 0 }), Step::Control(0)]);
    let cut = spec(vec![Step::Control(0), Step::Truncate(Truncate { kind: Kind::AtEof, tool: 0, cut: 7 })]);
    for (salt, spec) in [control(), early, control(), cut, control()].into_iter().enumerate() {
        let (script, obs, v) = shared.session(&spec, salt as u32).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        // Time for a process spawned meanwhile to count its start.
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    assert_eq!(shared.sharing().costly, 1, "only the early call cost a start: {:?}", shared.sharing());
    assert_eq!(starts(&state), 3);
    // Neither ran whole to EOF, so session 32 runs alone: to EOF, not kept
    // on standby, and it counts, so session 33 shares.
    for salt in 6..=33 {
        let (script, obs, v) = shared.session(&control(), salt).unwrap();
        assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        assert_eq!(obs.eof_sent, salt == 32, "session {salt}");
    }
    assert_eq!(shared.sharing().costly, 2, "{:?}", shared.sharing());
}

#[test]
fn a_server_acting_after_its_answer_is_confirmed_without_its_shared_process() {
    // The server answers a call at once and acts 300 ms later. In the shared
    // process the call has not acted by the marker, so exactly-once fails
    // there and is run again fresh, with the same tokens: the shared
    // process must be gone by then, or its late action would be counted as
    // the fresh session's second one.
    let target = python_server("acts_after_answer.py", &[], Limits::default());
    let mut shared = SharedChild::new(&target).focused(Some(CheckId::ExactlyOnce));
    let steps = vec![Step::Control(0)];
    let spec = ScriptSpec::whole(Revision::R2025_06_18, steps);
    let (script, obs, violations) = shared.session(&spec, 1).unwrap();
    assert!(violations.is_empty(), "{}", report::session(&script, &obs, &violations));
    assert_eq!(obs.effects.len(), 1, "the fresh session's call acted once");
}

#[test]
fn a_valid_call_slower_than_waited_for_acts_late_without_ending_sharing() {
    // The server answers calls concurrently, each 20 ms after it reads it,
    // but its fourth call takes 1 s: slower than the shared process learned
    // to wait, so it acts after its script, during the fifth, which runs in
    // another revision's process. A valid call acting once, late, hides no
    // finding: sharing goes on, nothing is counted late, and the fifth
    // script's effects are its own.
    let target = python_server("cancels_on_eof.py", &["0.02", "4:1.0"], Limits::default());
    let mut shared = SharedChild::new(&target).focused(Some(CheckId::NoEffectOnReject));
    for salt in 1..=6 {
        let revision = if salt <= 4 { Revision::R2025_06_18 } else { Revision::R2024_11_05 };
        let spec = ScriptSpec::whole(revision, vec![Step::Control(0)]);
        let (script, obs, v) = shared.session(&spec, salt).unwrap();
        let own = v.iter().all(|v| v.check != CheckId::NoEffectOnReject);
        assert!(own, "{}", report::session(&script, &obs, &v));
        let acted = if salt == 4 { 0 } else { 1 };
        assert_eq!(obs.effects.len(), acted, "session {salt}: {}", report::session(&script, &obs, &v));
        if salt == 4 {
            // Time for the slow call to act before the next script's end.
            std::thread::sleep(std::time::Duration::from_millis(1200));
        }
    }
    assert_eq!(shared.sharing().off, None, "{:?}", shared.sharing());
    assert_eq!(target.late_effects.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn a_late_effect_gives_sharing_up_only_when_the_hunted_check_reads_effects() {
    // A call whose id is `true` is must-reject; its answer, if the server
    // misreads it, is waited for briefly (the exit grace, before any call
    // has shown how long calls take). This server runs it as a call that
    // acts 1.5 s later, during the next script. A hunt for `liveness` reads
    // no effects, nor that answer, so neither is waited for, and neither
    // can hide a finding of it: sharing goes on (the answer lands in the
    // next script's stdout, which the hunt does not read). A hunt for
    // `no-effect-on-reject` gives sharing up.
    let bool_id = Step::JsonRpc(JsonRpc { kind: jsonrpc::Kind::IdBool, tool: 0 });
    let spec = |steps| ScriptSpec::whole(Revision::R2025_06_18, steps);
    for (focus, kept) in [(CheckId::Liveness, true), (CheckId::NoEffectOnReject, false)] {
        let target = python_server("cancels_on_eof.py", &["1.5"], Limits::default());
        let mut shared = SharedChild::new(&target).focused(Some(focus));
        shared.session(&spec(vec![bool_id.clone()]), 1).unwrap();
        // Until it has acted and answered: its answer is no later script's.
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let (script, obs, v) = shared.session(&spec(vec![Step::Control(0)]), 2).unwrap();
        assert!(v.iter().all(|v| v.check != focus), "{focus}: {}", report::session(&script, &obs, &v));
        assert_eq!(obs.effects.len(), 1, "{focus}: the late effect is not the next script's");
        assert_eq!(target.late_effects.load(std::sync::atomic::Ordering::Relaxed), 1, "{focus}");
        assert_eq!(shared.sharing().off.is_none(), kept, "{focus}: {:?}", shared.sharing());
    }
}

#[test]
fn a_job_ends_its_processes_together_each_seeing_eof_before_any_is_killed() {
    // Each takes 5 s to exit at EOF, so each is ended by SIGTERM once its
    // grace runs out. Ended one after another, each would see EOF only
    // once the one before was killed.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let target = python_server("slow_exit.py", &[log.to_str().unwrap()], Limits::default());
    let mut shared = SharedChild::new(&target);
    shared.warm(&Revision::ALL).unwrap();
    drop(shared);
    let lines = std::fs::read_to_string(&log).unwrap();
    let n = Revision::ALL.len();
    let expected: Vec<&str> = std::iter::repeat_n("eof", n).chain(std::iter::repeat_n("term", n)).collect();
    assert_eq!(lines.lines().collect::<Vec<_>>(), expected);
}

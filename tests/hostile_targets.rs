//! Hostile child processes: each ends in a clear finding or harness error
//! within bounded time and memory, and leaves no process behind, whether its
//! process was spawned for its session or ahead of it. Servers that are
//! slow but correct (to start, to read, to act) are waited for, not flagged.

use portcullis::campaign::session;
use portcullis::catalogue::Catalogue;
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::process::{ChildTarget, Command, Waits};
use portcullis::{CheckId, Policy, Revision, ScriptSpec, attack::Step};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn target(script: &str) -> ChildTarget {
    target_waiting(script, Waits::from_ms(700, 30, 300))
}

fn target_waiting(script: &str, waits: Waits) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes start"));
    let command = Command::new("sh", ["-c", script]);
    ChildTarget::new(command, waits.with_capture(1 << 20), Catalogue::reference().tools, probes)
}

fn spec() -> ScriptSpec {
    ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0)])
}

/// Runs one session in a process spawned for it, and one in a process
/// spawned ahead while an earlier session ran (as `portcullis fuzz` runs
/// fresh sessions), and returns the ids of the checks each one failed.
fn checks_of(script: &str) -> [Vec<CheckId>; 2] {
    let started = Instant::now();
    let alone = session(&target(script), Policy::Close, &spec(), 1);
    let ahead = target(script).started_ahead(true);
    let _earlier = session(&ahead, Policy::Close, &spec(), 1);
    let spawned_ahead = session(&ahead, Policy::Close, &spec(), 2);
    drop(ahead);
    assert!(started.elapsed() < Duration::from_secs(30), "bounded: took {:?}", started.elapsed());
    [alone, spawned_ahead].map(|r| {
        let (_, obs, v) = r.expect("the harness runs");
        // The bound, and room for an echo of the few hundred bytes sent.
        assert!(obs.stdout.len() <= (1 << 20) + (16 << 10), "bounded capture: {}", obs.stdout.len());
        v.into_iter().map(|v| v.check).collect()
    })
}

/// Whether a process with this pid is alive (and not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[test]
fn a_flood_on_stdout_is_cut_and_flagged() {
    for c in checks_of("yes 'not json'") {
        assert!(c.contains(&CheckId::StdoutClean), "{c:?}");
    }
}

#[test]
fn a_target_that_never_exits_or_reads_is_ended() {
    for c in checks_of("sleep 1000") {
        assert!(c.contains(&CheckId::Liveness), "{c:?}");
    }
}

/// Runs a script that appends a process id to the file named by
/// `{pidfile}`, and returns the failed checks and every id it wrote (one
/// per process started, spawned ahead or not).
fn checks_and_pids(script: &str) -> ([Vec<CheckId>; 2], Vec<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let c = checks_of(&script.replace("{pidfile}", &pidfile.display().to_string()));
    let pids = std::fs::read_to_string(&pidfile).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect();
    (c, pids)
}

#[test]
fn a_target_that_ignores_sigterm_is_killed() {
    let (checks, pids) = checks_and_pids("trap '' TERM; echo $$ >> {pidfile}; cat >/dev/null; sleep 1000");
    for c in checks {
        assert!(c.contains(&CheckId::Liveness), "{c:?}");
    }
    // One per session, and the one spawned ahead that no session took.
    assert_eq!(pids.len(), 4, "{pids:?}");
    assert!(pids.iter().all(|p| !alive(*p)), "a process ignoring SIGTERM was left behind");
}

#[test]
fn a_child_left_running_is_ended_with_its_group() {
    let (_, pids) = checks_and_pids("sleep 1000 & echo $! >> {pidfile}; exec cat >/dev/null");
    assert_eq!(pids.len(), 4, "{pids:?}");
    assert!(pids.iter().all(|p| !alive(*p)), "a background child was left behind");
}

#[test]
fn a_target_that_closes_stdout_at_once_is_flagged() {
    for c in checks_of("exec >&-; cat >/dev/null") {
        assert!(c.contains(&CheckId::Correlation) || c.contains(&CheckId::ExactlyOnce), "{c:?}");
    }
}

#[test]
fn binary_garbage_is_flagged() {
    for c in checks_of("head -c 100000 /dev/urandom; cat >/dev/null") {
        assert!(c.contains(&CheckId::StdoutClean), "{c:?}");
    }
}

#[test]
fn a_line_stopped_midway_is_a_fragment() {
    for c in checks_of(r#"printf '{"jsonrpc":"2.0","id":1,"res'; cat >/dev/null"#) {
        assert!(c.contains(&CheckId::StdoutClean), "{c:?}");
    }
}

#[test]
fn a_target_that_exits_immediately_is_flagged() {
    for c in checks_of("exit 3") {
        assert!(c.contains(&CheckId::Liveness), "{c:?}");
    }
}

#[test]
fn a_command_that_does_not_start_is_a_harness_fault() {
    let mut t = target("true");
    t.command.program = "/nonexistent/portcullis-no-such-server".into();
    for t in [t.clone(), t.started_ahead(true)] {
        let r = session(&t, Policy::Close, &spec(), 1);
        assert!(matches!(r, Err(portcullis::Fault::Spawn { .. })), "{:?}", r.map(|(_, _, v)| v));
    }
}

#[test]
fn a_target_slow_to_read_stdin_is_waited_for() {
    // It reads nothing for 200 ms, far longer than the 30 ms quiet: calm
    // counts only once it has read what was written, so its answer and its
    // effect are still this session's, with no EOF to hurry it.
    let gateway = format!("sleep 0.2; exec {} reference-gateway --policy keep-open", env!("CARGO_BIN_EXE_portcullis"));
    let spec = ScriptSpec { eof: false, ..spec() };
    let (script, obs, v) = session(&target(&gateway), Policy::KeepOpen, &spec, 1).expect("the harness runs");
    assert!(v.is_empty(), "{}", portcullis::report::session(&script, &obs, &v));
    assert_eq!(obs.effects.len(), 1, "the valid call acted once");
}

#[test]
fn an_effect_long_after_the_answer_is_still_the_sessions_when_eof_follows() {
    // It answers the call at once and fetches its URL 150 ms later, far
    // past the 30 ms calm, then exits at EOF once the fetch is done.
    let server = r#"python3 -c '
import json, sys, threading, time, urllib.request
def late(url):
    time.sleep(0.15)
    urllib.request.urlopen(url, timeout=5).read()
def say(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
acts = []
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        say({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": m["params"]["protocolVersion"],
             "capabilities": {"tools": {}}, "serverInfo": {"name": "late", "version": "1"}}})
    elif m.get("method") == "tools/call":
        say({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})
        acts.append(threading.Thread(target=late, args=(m["params"]["arguments"]["url"],)))
        acts[-1].start()
for a in acts:
    a.join()
'"#;
    // An exit grace and a start bound long enough for a loaded machine:
    // the server exits once its fetch is done, so neither is waited out.
    let waits = Waits::from_ms(700, 30, 5000).starting_within(Duration::from_secs(10));
    let ahead = target_waiting(server, waits).started_ahead(true);
    for salt in [1, 2] {
        let (script, obs, v) = session(&ahead, Policy::Close, &spec(), salt).expect("the harness runs");
        assert_eq!(obs.effects.len(), 1, "{}", portcullis::report::session(&script, &obs, &v));
        assert!(v.is_empty(), "{}", portcullis::report::session(&script, &obs, &v));
    }
}

#[test]
fn a_server_slower_to_start_than_the_exit_grace_is_waited_for_not_flagged() {
    // It reads nothing for 500 ms, longer than the 300 ms exit grace and
    // stall bound (not than the 700 ms timeout): a child that has read
    // nothing yet is still starting. Under close it must then end at the
    // banner line, and it does; a session that gave up at the grace would
    // see it still running and report a policy finding that is not there.
    //
    // A verdict resting on time alone is confirmed as a campaign confirms
    // it, with every wait four times as long: on a loaded machine the
    // server, once started, may take longer than the grace to reach the
    // banner. The confirming server is four times as slow to start too,
    // so it still starts slower than the grace.
    let gateway = |sleep: &str| {
        format!("sleep {sleep}; exec {} reference-gateway --policy close", env!("CARGO_BIN_EXE_portcullis"))
    };
    use portcullis::attack::noise::{Kind, Noise, Text};
    let banner = Step::Noise(Noise { kind: Kind::LineBefore, text: Text::Banner, tool: 0 });
    let closing = ScriptSpec { steps: vec![Step::Control(0), banner], ..spec() };
    let slow = target(&gateway("0.5"));
    let patient = target_waiting(&gateway("2"), Waits::from_ms(700, 30, 300).scaled(4));
    for spec in [spec(), closing] {
        let (script, obs, v) = session(&slow, Policy::Close, &spec, 1).expect("the harness runs");
        let on_time = !v.is_empty() && v.iter().all(|v| v.kind.rests_on_time(obs.exit.ended()));
        let (script, obs, v) = match on_time {
            true => session(&patient, Policy::Close, &spec, 2).expect("the harness runs"),
            false => (script, obs, v),
        };
        assert!(v.is_empty(), "{}", portcullis::report::session(&script, &obs, &v));
    }
}

#[test]
fn a_server_that_exits_past_the_exit_grace_is_flagged_whether_busy_or_asleep() {
    // After EOF one server works on the CPU for 450 ms, the other sleeps
    // 650 ms: both past the 300 ms exit grace, which a flag sets. The wait
    // is the flag's, whatever the server does meanwhile. Each also runs
    // under a launcher that waits for it, as `npx` and `uvx` do.
    let after_eof = |launch: &str, then: &str| {
        format!("{launch} python3 -c 'import sys, time\nsys.stdin.read()\nt = time.time()\n{then}'; exit $?")
    };
    for launch in ["exec", ""] {
        for then in ["while time.time() - t < 0.45: pass", "time.sleep(0.65)"] {
            for c in checks_of(&after_eof(launch, then)) {
                assert!(c.contains(&CheckId::Liveness), "{launch:?} {then:?}: {c:?}");
            }
        }
    }
}

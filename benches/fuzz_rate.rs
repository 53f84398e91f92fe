//! Child-process throughput, in frames per second, measured in one run:
//!
//! - a plain client that starts the server once and sends only valid calls,
//!   one at a time, waiting for each answer (the baseline, the best of three
//!   runs, so noise can only make the ratios worse); a URL argument points
//!   at the same HTTP sink the fuzz sessions' calls reach, so both do the
//!   same work per call;
//! - fuzz sessions through the child driver: a fresh process per session
//!   (each spawned ahead while the one before ran, as `--no-share` runs
//!   them), then keep-open sessions sharing a process with one job and with
//!   two, in alternating rounds whose mean is reported; under the full mix (the
//!   default) and the lean one (`--mix lean`), which draws 16 times fewer
//!   of the scripts that cost a process start; each cold (the clock runs
//!   from the job's start, as a campaign's does, so its first sessions wait
//!   for its shared processes to start, one per revision it draws, and
//!   stops once they have ended) and warm (the clock starts once they have
//!   started and stops at the last session, as the plain client's runs
//!   from its server's start to its last call: the rate a long campaign
//!   tends to). Scripts that need a process of their own still start one on
//!   the clock, warm or cold.
//!
//! Keep-open runs go through [`SharedChild::session`] exactly as the CLI
//! runs them, after a positive control (untimed, as the CLI's comes before
//! its campaign) whose call the jobs learn from; each line also says how
//! many cores the machine kept busy meanwhile. Against
//! `portcullis reference-gateway` always, and against `mcp-server-time`
//! when `PORTCULLIS_BENCH_TIME_SERVER` names its command (`scripts/bench-fuzz`
//! installs it from PyPI and sets it). Run with `cargo bench --bench fuzz_rate`.

use portcullis::attack::lifecycle::{INITIALIZED, initialize_text};
use portcullis::attack::{Step, any_step};
use portcullis::campaign::{HuntConfig, revision_share, session};
use portcullis::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
use portcullis::child::{ChildTarget, Command, Limits, SharedChild, pin_job};
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::script::scripts_mixed;
use portcullis::{CheckId, Mix, Policy, Revision, ScriptSpec};
use proptest::sample::select;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

/// Sessions per keep-open run against a server that starts fast: enough
/// that starting and ending the job's processes weigh little.
const SESSIONS: usize = 1024;
/// Sessions per keep-open run against a slow starter: `portcullis fuzz`'s
/// default `--cases`, unless `PORTCULLIS_BENCH_SLOW_SESSIONS` asks for a
/// longer campaign, over which the fixed starts weigh less.
const SLOW_SESSIONS: usize = 256;
/// Sessions of the fresh-process run, which is slow against a slow starter.
const FRESH_SESSIONS: usize = 32;
const PLAIN_CALLS: usize = 400;
const ROUNDS: usize = 2;

struct Server {
    name: &'static str,
    command: Vec<String>,
    tool: ToolSpec,
    plain_args: String,
    /// The one check hunted for, as `portcullis fuzz --check` would.
    focus: Option<CheckId>,
    /// Sessions per keep-open run.
    sessions: usize,
}

fn plain_client(server: &Server) -> f64 {
    let probes = Probes::start(&ProbeConfig::default()).expect("probes");
    let args = server.plain_args.replace("{sink}", &probes.http_base());
    let mut child = std::process::Command::new(&server.command[0])
        .args(&server.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, "{}", initialize_text(0, Revision::R2025_06_18)).unwrap();
    lines.next();
    writeln!(stdin, "{INITIALIZED}").unwrap();
    let started = Instant::now();
    for id in 1..=PLAIN_CALLS {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{}","arguments":{}}}}}"#,
            server.tool.name, args
        );
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        lines.next();
    }
    let rate = PLAIN_CALLS as f64 / started.elapsed().as_secs_f64();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    rate
}

/// `n` scripts for job `job` of `jobs`, drawn under `mix` from its share of
/// the revisions, as `portcullis fuzz` draws them.
fn specs(mix: Mix, n: usize, job: usize, jobs: usize) -> Vec<ScriptSpec> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[9 + job as u8; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let revisions = select(revision_share(&Revision::ALL, job, jobs)).boxed();
    let strategy = scripts_mixed(revisions, any_step(), mix);
    (0..n).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

fn target(server: &Server) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes"));
    let command = Command { program: server.command[0].clone(), args: server.command[1..].to_vec(), env: vec![] };
    ChildTarget::new(command, Limits::default(), vec![server.tool.clone()], probes)
}

/// Seconds of CPU time the whole machine has spent busy so far (Linux).
fn busy_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> =
        stat.lines().next().unwrap_or_default().split_whitespace().skip(1).flat_map(str::parse).collect();
    let idle = ticks.get(3).unwrap_or(&0.0) + ticks.get(4).unwrap_or(&0.0);
    (ticks.iter().sum::<f64>() - idle) / 100.0
}

/// How keep-open sessions run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Each in a fresh process, as `--no-share` runs them.
    No,
    /// Sharing, as `portcullis fuzz` runs them, the clock running from the
    /// job's start: its first sessions wait for the shared processes.
    Cold,
    /// Sharing, the clock starting once each job's shared processes (one
    /// per revision it draws) are initialized and stopping at the last
    /// session, before they end, as the plain client's runs from its
    /// server's start to its last call: a rate a long campaign tends to.
    Warm,
}

/// Frames per second over `sessions` sessions, split across `jobs` threads
/// (each kept to a core of its own when there are several, and drawing from
/// its share of the revisions, as the CLI runs them), and the machine's busy
/// cores meanwhile; when they `share`, keep-open sessions share one process
/// through [`SharedChild::session`], exactly as `portcullis fuzz` runs them.
fn fuzz_rate(server: &Server, sessions: usize, jobs: usize, share: Share, mix: Mix) -> (f64, f64) {
    let lists: Vec<Vec<ScriptSpec>> = (0..jobs).map(|j| specs(mix, sessions / jobs, j, jobs)).collect();
    // As `portcullis fuzz` does before its campaign, which is timed without
    // it: a positive control, whose call the jobs' targets learn from.
    let measured = target(server);
    let control = ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0)]);
    session(&measured, Policy::KeepOpen, &control, u32::MAX).expect("the control runs");
    let measured = &measured;
    // Every job has its processes started before the clock starts, or none.
    let ready = &Barrier::new(jobs + 1);
    let clock = Mutex::new(None);
    // When each job's last session ended, before its processes end.
    let last = &Mutex::new(Vec::new());
    let frames: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .zip(&lists)
            .map(|(j, specs)| {
                s.spawn(move || {
                    // As `portcullis fuzz --jobs N` does: each job, its
                    // probes and its processes on a core of its own.
                    if jobs > 1 {
                        pin_job(j);
                    }
                    // As `portcullis fuzz` runs them: fresh sessions take a
                    // process spawned ahead.
                    let fresh = share == Share::No;
                    let t = target(server).started_ahead(usize::from(fresh)).learning_with(measured);
                    let revisions = revision_share(&Revision::ALL, j, jobs);
                    let cases = specs.len() as u32;
                    let cfg = HuntConfig { revisions, focus: server.focus, mix, cases, ..HuntConfig::default() };
                    let mut shared = SharedChild::for_campaign(&t, &cfg, jobs);
                    if share == Share::Warm {
                        shared.warm(&cfg.revisions).expect("the shared processes start");
                    }
                    ready.wait();
                    let mut frames = 0;
                    for (i, spec) in specs.iter().enumerate() {
                        let salt = (j * 10_000 + i) as u32;
                        let run = match fresh {
                            false => shared.session(spec, salt),
                            true => session(&t, Policy::KeepOpen, spec, salt),
                        };
                        let run = run.unwrap();
                        frames += run.0.frames.len();
                    }
                    last.lock().unwrap().push(Instant::now());
                    frames
                })
            })
            .collect();
        ready.wait();
        *clock.lock().unwrap() = Some((Instant::now(), busy_seconds()));
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let (started, busy) = clock.into_inner().unwrap().expect("the clock started");
    let stopped = match share {
        Share::Warm => last.lock().unwrap().iter().copied().max().expect("a job ended"),
        _ => Instant::now(),
    };
    let busy = busy_seconds() - busy;
    let seconds = (stopped - started).as_secs_f64();
    (frames as f64 / seconds, busy / ((Instant::now() - started).as_secs_f64()))
}

fn mean(xs: &[(f64, f64)]) -> (f64, f64) {
    let n = xs.len() as f64;
    (xs.iter().map(|x| x.0).sum::<f64>() / n, xs.iter().map(|x| x.1).sum::<f64>() / n)
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_portcullis").to_owned();
    let mut fetch = Catalogue::reference().tools.remove(0);
    fetch.template = None;
    let mut servers = vec![Server {
        name: "portcullis reference-gateway",
        command: vec![bin, "reference-gateway".into(), "--policy".into(), "keep-open".into()],
        tool: fetch,
        plain_args: r#"{"url":"{sink}/plain"}"#.into(),
        focus: None,
        sessions: SESSIONS,
    }];
    if let Ok(cmd) = std::env::var("PORTCULLIS_BENCH_TIME_SERVER") {
        servers.push(Server {
            name: "mcp-server-time",
            command: cmd.split_whitespace().map(str::to_owned).collect(),
            tool: ToolSpec::new("get_current_time", vec![ArgSpec::required("timezone", ArgKind::Text)]),
            plain_args: r#"{"timezone":"UTC"}"#.into(),
            // Its tools cause no effect a probe can see, and it answers no
            // malformed line: almost every session breaks exactly-once and
            // correlation, and a campaign would stop at once. Hunting for a
            // check it holds keeps the campaign going, as it would against a
            // server with no finding.
            focus: Some(CheckId::NoEffectOnReject),
            sessions: std::env::var("PORTCULLIS_BENCH_SLOW_SESSIONS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(SLOW_SESSIONS),
        });
    } else {
        println!("(mcp-server-time skipped: set PORTCULLIS_BENCH_TIME_SERVER, as scripts/bench-fuzz does)");
    }
    for server in &servers {
        let plain = (0..3).map(|_| plain_client(server)).fold(0.0, f64::max);
        let (fresh, fresh_cores) = fuzz_rate(server, FRESH_SESSIONS, 1, Share::No, Mix::Full);
        let mut keep_open = Vec::new();
        for mix in [Mix::Full, Mix::Lean] {
            for share in [Share::Cold, Share::Warm] {
                let (mut one, mut two) = (Vec::new(), Vec::new());
                for _ in 0..ROUNDS {
                    one.push(fuzz_rate(server, server.sessions, 1, share, mix));
                    two.push(fuzz_rate(server, server.sessions, 2, share, mix));
                }
                keep_open.push((mix, share, mean(&one), mean(&two)));
            }
        }
        println!("{} ({} sessions a keep-open run):", server.name, server.sessions);
        if let Some(check) = server.focus {
            println!("  (hunting for {} alone)", check.id());
        }
        println!("  {:<40}  {plain:>9.0} frames/s  1.00×", "plain client (valid calls only)");
        let row = |name: &str, rate: f64, cores: f64, vs: String| {
            println!("  {name:<40}  {rate:>9.0} frames/s  {vs}  ({cores:.2} cores busy)");
        };
        row("fuzz, fresh process per session", fresh, fresh_cores, format!("{:.3}× plain", fresh / plain));
        for (mix, share, (one, one_cores), (two, two_cores)) in keep_open {
            let warm = if share == Share::Warm { ", warm" } else { "" };
            let name = |jobs| format!("fuzz, keep-open, {} mix{warm}, --jobs {jobs}", mix.as_str());
            row(&name(1), one, one_cores, format!("{:.3}× plain", one / plain));
            let vs = format!("{:.3}× plain, {:.2}× --jobs 1", two / plain, two / one);
            row(&name(2), two, two_cores, vs);
        }
    }
}

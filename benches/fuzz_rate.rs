//! Child-process throughput, each rate quoted against a limit measured in
//! the same run:
//!
//! - keep-open: sessions per second through [`Job::session`] (one
//!   persistent process per revision, each script followed by its `ping`
//!   marker, as `portcullis fuzz --policy keep-open` runs them), against a
//!   plain client that starts the server once and makes valid calls one at
//!   a time, each answered before the next (calls per second);
//! - close: sessions per second through [`Job::session`] with one process
//!   per session (one started ahead), against the spawn-bound limit: a
//!   plain client that, with the same number of parallel jobs, starts the
//!   server, initializes, makes one call and closes it, as fast as it can.
//!   Measured on the same work (sessions of one valid call, then EOF), and
//!   on scripts drawn as a campaign draws them, whose malformed frames each
//!   wait the exit grace for a server that does not end its session.
//!
//! - a default campaign: lines per second that `portcullis fuzz --duration`
//!   (drawing, confirming and shrinking, as a user runs it) writes to the
//!   reference gateway, as its report counts them (its frames, and a
//!   marker a session and a handshake a process), against
//!   the same plain client, under keep-open and under close
//!   (`PORTCULLIS_BENCH_CAMPAIGN_SECS`, default 30; 0 skips it).
//!
//! Against `portcullis reference-gateway` always, and against
//! `mcp-server-time` when `PORTCULLIS_BENCH_TIME_SERVER` names its command
//! (`scripts/bench-fuzz` installs it from PyPI and sets it). Run with
//! `cargo bench --bench fuzz_rate`; `PORTCULLIS_BENCH_JOBS` sets the jobs
//! (default 1).

use portcullis::attack::{Step, any_step};
use portcullis::campaign::Job;
use portcullis::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::process::{ChildTarget, Command, Waits};
use portcullis::script::scripts_mixed;
use portcullis::{Mix, Policy, Revision, ScriptSpec};
use proptest::strategy::Just;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

/// The plain client's handshake request.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

struct Server {
    name: &'static str,
    command: Vec<String>,
    /// The command under the close policy, where it differs.
    close_command: Vec<String>,
    tool: ToolSpec,
    plain_args: String,
    keep_open: usize,
    close: usize,
}

/// A server with the plain client's stdio, initialized.
struct Plain {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Plain {
    fn start(server: &Server) -> Plain {
        let mut child = std::process::Command::new(&server.command[0])
            .args(&server.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        writeln!(stdin, "{INITIALIZE}").unwrap();
        lines.next();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
        Plain { child, stdin, lines }
    }

    fn call(&mut self, server: &Server, args: &str, id: usize) {
        let name = &server.tool.name;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
        );
        writeln!(self.stdin, "{call}").unwrap();
        self.stdin.flush().unwrap();
        self.lines.next();
    }

    fn close(self) {
        let Plain { mut child, stdin, .. } = self;
        drop(stdin);
        let _ = child.wait();
    }
}

/// Valid calls per second through one process started once.
fn plain_calls(server: &Server, calls: usize) -> f64 {
    let probes = Probes::start(&ProbeConfig::default()).expect("probes");
    let args = server.plain_args.replace("{sink}", &probes.http_base());
    let mut plain = Plain::start(server);
    let started = Instant::now();
    for id in 1..=calls {
        plain.call(server, &args, id);
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    plain.close();
    rate
}

/// Sessions per second of `jobs` plain clients, each starting the server,
/// initializing, making one call and closing it, `sessions` in all.
fn spawn_bound(server: &Server, sessions: usize, jobs: usize) -> f64 {
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                let probes = Probes::start(&ProbeConfig::default()).expect("probes");
                let args = server.plain_args.replace("{sink}", &probes.http_base());
                for _ in 0..sessions / jobs {
                    let mut plain = Plain::start(server);
                    plain.call(server, &args, 1);
                    plain.close();
                }
            });
        }
    });
    (sessions / jobs * jobs) as f64 / started.elapsed().as_secs_f64()
}

/// What a run's sessions are.
#[derive(Clone, Copy)]
enum Draw {
    /// Scripts as `portcullis fuzz` draws them.
    Campaign,
    /// Scripts as `portcullis fuzz --mix lean` draws them: one in 16 of
    /// those that need a process of their own.
    Lean,
    /// The handshake, one valid call, EOF: the plain client's session.
    OneCall,
}

/// `n` scripts for job `job` of `jobs`.
fn specs(n: usize, job: usize, draw: Draw) -> Vec<ScriptSpec> {
    let revision = Revision::ALL[job % Revision::ALL.len()];
    if let Draw::OneCall = draw {
        return (0..n).map(|i| ScriptSpec::whole(revision, vec![Step::Control(i as u8)])).collect();
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[9 + job as u8; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    // One revision a job, so a keep-open job keeps one process.
    let revisions = Just(revision).boxed();
    let mix = if let Draw::Lean = draw { Mix::Lean } else { Mix::Full };
    let strategy = scripts_mixed(revisions, any_step(), mix);
    (0..n).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

/// Sessions and frames per second through `jobs` jobs under `policy`,
/// `sessions` in all, the clock running from the jobs' start to their end.
fn fuzz_rate(server: &Server, policy: Policy, sessions: usize, jobs: usize, draw: Draw) -> (f64, f64) {
    let lists: Vec<Vec<ScriptSpec>> = (0..jobs).map(|j| specs(sessions / jobs, j, draw)).collect();
    let command = if policy == Policy::Close { &server.close_command } else { &server.command };
    let catalogue = Catalogue { tools: vec![server.tool.clone()], canary_base: "http://127.0.0.1:9".into() };
    let frames: usize = lists.iter().flatten().map(|s| s.render(&catalogue, 0).frames.len()).sum();
    let started = Instant::now();
    std::thread::scope(|s| {
        for (j, list) in lists.iter().enumerate() {
            s.spawn(move || {
                let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes"));
                let command = Command::new(command[0].clone(), command[1..].iter().cloned());
                let target = ChildTarget::new(command, Waits::default(), vec![server.tool.clone()], probes)
                    .started_ahead(policy == Policy::Close);
                let mut job = Job::new(&target, policy, true, j as u64);
                for (i, spec) in list.iter().enumerate() {
                    job.session(spec, (j * 100_000 + i) as u32, portcullis::campaign::Lane::Search)
                        .expect("the harness runs");
                }
                job.finish().expect("the job ends");
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    ((sessions / jobs * jobs) as f64 / elapsed, frames as f64 / elapsed)
}

/// Lines per second that a default `portcullis fuzz` campaign of
/// `seconds` against `command` wrote (its report's `lines_written`), over
/// the run's whole wall time, and its summary line.
fn campaign(bin: &str, command: &[String], seconds: u64) -> (f64, String) {
    let dir = std::env::temp_dir().join(format!("portcullis-bench-campaign-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let started = Instant::now();
    let out = std::process::Command::new(bin)
        .current_dir(&dir)
        .args(["fuzz", "--duration", &format!("{seconds}s"), "--seed", "0", "--tool", "fetch"])
        .args(["--args", r#"{"url":"{canary}"}"#, "--forbidden-tool", "rotate_keys", "--report", "report.json", "--"])
        .args(command)
        .stderr(Stdio::null())
        .output()
        .expect("portcullis fuzz runs");
    let wall = started.elapsed().as_secs_f64();
    let report = std::fs::read(dir.join("report.json")).expect("the campaign's report");
    let report: serde_json::Value = serde_json::from_slice(&report).expect("a JSON report");
    let lines = report["lines_written"].as_u64().expect("the report counts the lines written");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_owned();
    let _ = std::fs::remove_dir_all(&dir);
    (lines as f64 / wall, summary)
}

fn main() {
    let jobs: usize = std::env::var("PORTCULLIS_BENCH_JOBS").ok().and_then(|j| j.parse().ok()).unwrap_or(1);
    let bin = env!("CARGO_BIN_EXE_portcullis").to_owned();
    let campaign_secs: u64 =
        std::env::var("PORTCULLIS_BENCH_CAMPAIGN_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    let mut fetch = Catalogue::reference().tools.remove(0);
    fetch.template = None;
    let mut servers = vec![Server {
        name: "portcullis reference-gateway",
        command: vec![bin.clone(), "reference-gateway".into(), "--policy".into(), "keep-open".into()],
        close_command: vec![bin.clone(), "reference-gateway".into()],
        tool: fetch,
        plain_args: r#"{"url":"{sink}/plain"}"#.into(),
        keep_open: 512,
        close: 128,
    }];
    match std::env::var("PORTCULLIS_BENCH_TIME_SERVER").ok().filter(|c| !c.trim().is_empty()) {
        Some(cmd) => servers.push(Server {
            name: "mcp-server-time",
            command: cmd.split_whitespace().map(str::to_owned).collect(),
            close_command: cmd.split_whitespace().map(str::to_owned).collect(),
            tool: ToolSpec::new("get_current_time", vec![ArgSpec::required("timezone", ArgKind::Text)]),
            plain_args: r#"{"timezone":"UTC"}"#.into(),
            // Its tool has no effect a probe can see, so a keep-open script
            // with a valid call waits the whole answer bound for one: only
            // the close rate says anything about the driver here.
            keep_open: 0,
            close: 24,
        }),
        None => println!("(mcp-server-time skipped: set PORTCULLIS_BENCH_TIME_SERVER, as scripts/bench-fuzz does)"),
    }
    for server in &servers {
        println!("{} (--jobs {jobs}):", server.name);
        if server.keep_open > 0 {
            let plain = (0..3).map(|_| plain_calls(server, 400)).fold(0.0, f64::max);
            let (sessions, frames) = fuzz_rate(server, Policy::KeepOpen, server.keep_open, jobs, Draw::Campaign);
            println!("  plain client, valid calls          {plain:>9.1}/s");
            println!("  keep-open sessions                 {sessions:>9.1}/s  {:.3}× plain", sessions / plain);
            println!("  keep-open frames                   {frames:>9.1}/s  {:.3}× plain", frames / plain);
            let (sessions, frames) = fuzz_rate(server, Policy::KeepOpen, server.keep_open, jobs, Draw::Lean);
            println!("  keep-open sessions, lean mix       {sessions:>9.1}/s  {:.3}× plain", sessions / plain);
            println!("  keep-open frames, lean mix         {frames:>9.1}/s  {:.3}× plain", frames / plain);
            if campaign_secs > 0 {
                for (policy, command) in [("keep-open", &server.command), ("close", &server.close_command)] {
                    let (lines, summary) = campaign(&bin, command, campaign_secs);
                    println!(
                        "  default campaign ({policy}), lines {lines:>9.1}/s  {:.3}× plain  ({summary})",
                        lines / plain
                    );
                }
            }
        }
        let limit = spawn_bound(server, server.close, jobs);
        let (one_call, _) = fuzz_rate(server, Policy::Close, server.close, jobs, Draw::OneCall);
        let (campaign, _) = fuzz_rate(server, Policy::Close, server.close, jobs, Draw::Campaign);
        println!("  spawn-bound limit, sessions        {limit:>9.1}/s");
        println!("  close, one valid call              {one_call:>9.1}/s  {:.3}× spawn-bound", one_call / limit);
        println!("  close, drawn as a campaign         {campaign:>9.1}/s  {:.3}× spawn-bound", campaign / limit);
    }
}

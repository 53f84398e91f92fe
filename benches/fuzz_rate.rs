//! Child-process throughput, in frames per second, measured in one run:
//!
//! - a plain client that starts the server once and sends only valid calls,
//!   one at a time, waiting for each answer (the baseline); a URL argument
//!   points at the same HTTP sink the fuzz sessions' calls reach, so both do
//!   the same work per call;
//! - fuzz sessions through the child driver with one job, and with two.
//!
//! Against `portcullis reference-gateway` always, and against
//! `mcp-server-time` when `PORTCULLIS_BENCH_TIME_SERVER` names its command
//! (`scripts/bench-fuzz` installs it from PyPI and sets it).
//! Run with `cargo bench --bench fuzz_rate`.

use portcullis::attack::lifecycle::{INITIALIZED, initialize_text};
use portcullis::campaign::session;
use portcullis::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
use portcullis::child::{ChildTarget, Command, Limits, SharedChild};
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::script::any_script;
use portcullis::{Policy, Revision, ScriptSpec};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

/// Sessions per keep-open run: `portcullis fuzz`'s default case count.
const SESSIONS: usize = 256;
/// Sessions of the fresh-process run, which is slow against a slow starter.
const FRESH_SESSIONS: usize = 32;
const PLAIN_CALLS: usize = 2000;

struct Server {
    name: &'static str,
    command: Vec<String>,
    tool: ToolSpec,
    plain_args: String,
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

fn specs() -> Vec<ScriptSpec> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[9; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = any_script();
    (0..SESSIONS).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

fn target(server: &Server) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes"));
    let command = Command { program: server.command[0].clone(), args: server.command[1..].to_vec(), env: vec![] };
    ChildTarget::new(command, Limits::default(), vec![server.tool.clone()], probes)
}

/// Frames per second over `specs`, split across `jobs` threads; with
/// `share`, keep-open sessions share one process through
/// [`SharedChild::session`], exactly as `portcullis fuzz` runs them.
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let f: Vec<f64> = stat.rsplit(')').next().unwrap().split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f[11] + f[12] + f[13] + f[14]) / 100.0
}

fn fuzz_rate(server: &Server, specs: &[ScriptSpec], jobs: usize, share: bool) -> f64 {
    let started = Instant::now();
    let c0 = cpu();
    let frames: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                s.spawn(move || {
                    let t = target(server);
                    let mut shared = SharedChild::new(&t);
                    let mut frames = 0;
                    for (i, spec) in specs.iter().skip(j).step_by(jobs).enumerate() {
                        let salt = (j * 10_000 + i) as u32;
                        let run = match share {
                            true => shared.session(spec, salt),
                            false => session(&t, Policy::KeepOpen, spec, salt),
                        };
                        let run = run.unwrap();
                        frames += run.0.frames.len();
                    }
                    frames
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    eprintln!("CPU jobs {jobs} share {share}: {:.2} cores", (cpu() - c0) / started.elapsed().as_secs_f64());
    frames as f64 / started.elapsed().as_secs_f64()
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
    }];
    if let Ok(cmd) = std::env::var("PORTCULLIS_BENCH_TIME_SERVER") {
        servers.push(Server {
            name: "mcp-server-time",
            command: cmd.split_whitespace().map(str::to_owned).collect(),
            tool: ToolSpec::new("get_current_time", vec![ArgSpec::required("timezone", ArgKind::Text)]),
            plain_args: r#"{"timezone":"UTC"}"#.into(),
        });
    } else {
        println!("(mcp-server-time skipped: set PORTCULLIS_BENCH_TIME_SERVER, as scripts/bench-fuzz does)");
    }
    let specs = specs();
    for server in &servers {
        let plain = plain_client(server);
        let fresh = fuzz_rate(server, &specs[..FRESH_SESSIONS], 1, false);
        let one = fuzz_rate(server, &specs, 1, true);
        let two = fuzz_rate(server, &specs, 2, true);
        println!("{}:", server.name);
        println!("  plain client (valid calls only)   {plain:>9.0} frames/s  1.00×");
        println!("  fuzz, fresh process per session   {fresh:>9.0} frames/s  {:.3}× plain", fresh / plain);
        println!("  fuzz, keep-open shared, --jobs 1  {one:>9.0} frames/s  {:.3}× plain", one / plain);
        let vs = format!("{:.3}× plain, {:.2}× --jobs 1", two / plain, two / one);
        println!("  fuzz, keep-open shared, --jobs 2  {two:>9.0} frames/s  {vs}");
    }
}

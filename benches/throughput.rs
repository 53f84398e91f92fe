//! In-process throughput: sessions per second through the reference gateway
//! (and through the gateway plus every check), beside a bare serde_json parse
//! of the same stdin bytes, line by line — measured in the same run, rounds
//! interleaved, medians compared. Run with `cargo bench --bench throughput`.
//! Target: the gateway alone at 0.5× the bare parse or better.

use portcullis::campaign::session;
use portcullis::reference::Reference;
use portcullis::run::run;
use portcullis::script::{Script, ScriptSpec, any_script};
use portcullis::{Catalogue, Policy, Session};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SCRIPTS: usize = 2_000;
const ROUNDS: usize = 15;

/// A generated session: its choices and its rendering.
type Drawn = (ScriptSpec, Script);
/// One measured subject.
type Subject = (&'static str, fn(&[Drawn]));

fn scripts() -> Vec<Drawn> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[42; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = any_script();
    let catalogue = Catalogue::reference();
    (0..SCRIPTS)
        .map(|i| {
            let spec = strategy.new_tree(&mut runner).expect("draws").current();
            let script = spec.render(&catalogue, i as u32);
            (spec, script)
        })
        .collect()
}

fn bare_parse(all: &[Drawn]) {
    for (_, s) in all {
        for line in s.stdin().split(|b| *b == b'\n') {
            let _ = black_box(serde_json::from_slice::<serde_json::Value>(line));
        }
    }
}

fn gateway(all: &[Drawn]) {
    let target = Reference::strict();
    for (spec, s) in all {
        let session = Session { policy: Policy::KeepOpen, revision: spec.revision, salt: 0 };
        black_box(run(&target, &session, s).expect("runs"));
    }
}

fn gateway_and_checks(all: &[Drawn]) {
    let target = Reference::strict();
    for (spec, _) in all {
        black_box(session(&target, Policy::KeepOpen, spec, 0).expect("runs"));
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let all = scripts();
    let bytes: usize = all.iter().map(|(_, s)| s.stdin().len()).sum();
    let mut times = [vec![], vec![], vec![]];
    let subjects: [Subject; 3] = [
        ("bare serde_json parse", bare_parse),
        ("reference gateway", gateway),
        ("gateway + checks", gateway_and_checks),
    ];
    for _ in 0..ROUNDS {
        for (i, (_, f)) in subjects.iter().enumerate() {
            let t = Instant::now();
            f(&all);
            times[i].push(t.elapsed());
        }
    }
    println!(
        "{SCRIPTS} generated sessions, {:.1} MiB of stdin, {ROUNDS} interleaved rounds, medians:",
        bytes as f64 / (1 << 20) as f64
    );
    let base = median(times[0].clone());
    for (i, (name, _)) in subjects.iter().enumerate() {
        let m = median(times[i].clone());
        let rate = SCRIPTS as f64 / m.as_secs_f64();
        let ratio = base.as_secs_f64() / m.as_secs_f64();
        println!("  {name:<24} {rate:>10.0} sessions/s  {:>8.2} ms  {ratio:.2}× the bare parse", m.as_secs_f64() * 1e3);
    }
}

//! Sessions sharing one keep-open process: against the strict reference as
//! a child process they show no violation (sharing adds no false alarm),
//! and most scripts can share.

use portcullis::catalogue::Catalogue;
use portcullis::child::{ChildTarget, Command, Limits, SharedChild};
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::report;
use portcullis::script::any_script;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::Arc;

#[test]
fn shared_sessions_of_the_reference_are_clean() {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let args = ["reference-gateway", "--policy", "keep-open"].map(String::from).to_vec();
    // `write_note` acts only with --notes-dir: call `fetch`, forbid `rotate_keys`.
    let mut tools = Catalogue::reference().tools;
    tools.retain(|t| t.name != "write_note");
    let command = Command { program: env!("CARGO_BIN_EXE_portcullis").into(), args, env: vec![] };
    let target = ChildTarget::new(command, Limits::default(), tools, probes);
    let mut shared = SharedChild::new(&target);
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]));
    let strategy = any_script();
    let mut ran = 0;
    for salt in 0..60 {
        let spec = strategy.new_tree(&mut runner).unwrap().current();
        if let Some((script, obs, v)) = shared.run(&spec, salt).unwrap() {
            ran += 1;
            assert!(v.is_empty(), "{}", report::session(&script, &obs, &v));
        }
    }
    assert!(ran >= 40, "only {ran} of 60 scripts could share a process");
}

//! The fuzz-target entry points, run by the ordinary test suite: the
//! reference survives all three, and the raw-bytes target bites on mutants
//! whose bugs need no labels to see.

use portcullis::libfuzzer::{check_oracle, check_raw_stdin, check_script};
use portcullis::reference::{Mutant, Reference};
use portcullis::script::any_script;
use portcullis::{Catalogue, Policy};
use proptest::prelude::*;

proptest! {
    #![proptest_config(portcullis::campaign::persist_to("proptest-regressions/fuzzing.txt"))]

    #[test]
    fn random_bytes_pass_all_three_targets(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_raw_stdin(&Reference::strict(), &bytes);
        check_script(&Reference::strict(), &bytes);
        check_oracle(&bytes);
    }

    #[test]
    fn a_gateway_of_either_policy_passes_the_script_target(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        close in any::<bool>(),
    ) {
        let policy = if close { Policy::Close } else { Policy::KeepOpen };
        check_script(&pinned(policy), &bytes);
    }

    #[test]
    fn generated_attack_streams_pass_the_raw_target(spec in any_script()) {
        let stdin = spec.render(&Catalogue::reference(), 1).stdin();
        check_raw_stdin(&Reference::strict(), &stdin);
    }
}

/// The strict reference as a gateway of the user's: following one policy
/// whatever a session asks, when pinned to it, and noting the revision of
/// every session it starts.
#[derive(Default)]
struct Strict {
    pinned: Option<Policy>,
    revisions: std::sync::Mutex<Vec<portcullis::Revision>>,
}

fn pinned(policy: Policy) -> Strict {
    Strict { pinned: Some(policy), ..Strict::default() }
}

impl portcullis::Target for Strict {
    type Gateway = portcullis::reference::ReferenceGateway;

    fn catalogue(&self) -> Catalogue {
        Catalogue::reference()
    }

    fn start(
        &self,
        session: &portcullis::Session,
        recorder: portcullis::Recorder,
    ) -> Result<Self::Gateway, portcullis::Fault> {
        self.revisions.lock().unwrap().push(session.revision);
        let policy = self.pinned.unwrap_or(session.policy);
        Reference::strict().start(&portcullis::Session { policy, ..*session }, recorder)
    }
}

#[test]
fn a_gateway_of_either_policy_passes_a_script_that_closes() {
    // A malformed line, then a valid call: one policy ends the session
    // there, the other answers and goes on; neither is a finding.
    use portcullis::attack::{Step, noise};
    let banner = Step::Noise(noise::Noise { kind: noise::Kind::LineBefore, text: noise::Text::Banner, tool: 0 });
    let spec = portcullis::ScriptSpec::whole(portcullis::Revision::R2025_11_25, vec![banner, Step::Control(0)]);
    for policy in Policy::ALL {
        let (script, obs, v) = portcullis::campaign::session(&pinned(policy), Policy::Auto, &spec, 1).unwrap();
        assert!(v.is_empty(), "{policy}: {}", portcullis::report::session(&script, &obs, &v));
    }
}

fn bites(m: Mutant, bytes: &[u8]) -> bool {
    std::panic::catch_unwind(|| check_raw_stdin(&Reference::mutant(m), bytes)).is_err()
}

#[test]
fn the_raw_target_bites_on_label_free_bugs() {
    let call = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"http://127.0.0.1:9/x"}}}"#;
    let line = [call.as_slice(), b"\n"].concat();
    assert!(bites(Mutant::StartupBanner, b""));
    assert!(bites(Mutant::NoExitOnEof, b"x"));
    assert!(bites(Mutant::LateDiagnostic, &line));
    assert!(!bites(Mutant::LateDiagnostic, b"no call here\n"), "quiet without a call");
}

/// The reference without [`Target::fork`]: every input runs after a
/// handshake of its own.
struct NoFork(Reference);

impl portcullis::Target for NoFork {
    type Gateway = <Reference as portcullis::Target>::Gateway;

    fn catalogue(&self) -> Catalogue {
        self.0.catalogue()
    }

    fn start(
        &self,
        session: &portcullis::Session,
        recorder: portcullis::Recorder,
    ) -> Result<Self::Gateway, portcullis::Fault> {
        self.0.start(session, recorder)
    }
}

#[test]
fn copied_and_fresh_sessions_judge_raw_input_alike() {
    let call = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"http://127.0.0.1:9/x"}}}"#;
    let inputs: [&[u8]; 4] = [b"", b"x\n{\"a\":1}\n[", call, b"\n\n{}\n"];
    let mut failed = 0;
    for m in [None, Some(Mutant::LateDiagnostic), Some(Mutant::NoExitOnEof), Some(Mutant::StartupBanner)] {
        let reference = || Reference { mutant: m, ..Reference::strict() };
        let copied = portcullis::libfuzzer::RawStdin::new(reference());
        let fresh = portcullis::libfuzzer::RawStdin::new(NoFork(reference()));
        for input in inputs {
            let input = [input, b"\n"].concat();
            let a = std::panic::catch_unwind(|| copied.check(&input)).is_err();
            let b = std::panic::catch_unwind(|| fresh.check(&input)).is_err();
            assert_eq!(a, b, "{m:?} on {:?}", String::from_utf8_lossy(&input));
            failed += usize::from(a);
        }
    }
    // the strict reference holds on all four; each mutant fails on some
    assert!((9..16).contains(&failed), "{failed} of 16 failed");
}

#[test]
fn the_bare_handshake_is_the_rendered_one() {
    for revision in portcullis::Revision::ALL {
        let spec = portcullis::ScriptSpec { eof: false, ..portcullis::ScriptSpec::whole(revision, vec![]) };
        assert_eq!(portcullis::script::Script::handshake(revision), spec.render(&Catalogue::reference(), 0));
    }
}

#[test]
fn the_script_target_draws_the_handshake_era_unless_given_the_stateless_one() {
    use portcullis::Revision;
    use portcullis::libfuzzer::check_script_in;
    let inputs: Vec<Vec<u8>> = (0..400u32).map(|i| (0..64).map(|j| (i * 31 + j * 7) as u8).collect()).collect();
    let (handshaken, all) = (Strict::default(), Strict::default());
    for bytes in &inputs {
        check_script(&handshaken, bytes);
        check_script_in(&all, bytes, &Revision::ALL);
    }
    let handshaken = handshaken.revisions.into_inner().unwrap();
    assert!(!handshaken.is_empty() && handshaken.iter().all(|r| r.has_handshake()), "{handshaken:?}");
    assert!(all.revisions.into_inner().unwrap().contains(&Revision::R2026_07_28), "and all five when given them");
}

//! The fuzz-target entry points, run by the ordinary test suite: the
//! reference survives all three, and the raw-bytes target bites on mutants
//! whose bugs need no labels to see.

use portcullis::Catalogue;
use portcullis::fuzzing::{check_oracle, check_raw_stdin, check_script};
use portcullis::reference::{Mutant, Reference};
use portcullis::script::any_script;
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
    fn generated_attack_streams_pass_the_raw_target(spec in any_script()) {
        let stdin = spec.render(&Catalogue::reference(), 1).stdin();
        check_raw_stdin(&Reference::strict(), &stdin);
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

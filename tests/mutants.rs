//! Must-bite: every planted bug in the built-in catalogue is caught, within
//! the default case count and the default seed, by the check expected to
//! catch it. A change that blinds the suite to any of them fails here.

use portcullis::campaign::{HuntConfig, hunt};
use portcullis::reference::{Mutant, Reference};
use portcullis::report;

#[test]
fn the_catalogue_has_at_least_fifteen_mutants_and_every_check_bites() {
    assert!(Mutant::ALL.len() >= 15);
    for check in portcullis::CheckId::ALL {
        assert!(Mutant::ALL.iter().any(|m| m.expected() == check), "no mutant exercises {check}");
    }
}

#[test]
fn every_mutant_is_caught_by_its_expected_check() {
    let mut missed = Vec::new();
    for &m in Mutant::ALL {
        // 256 is proptest's default case count; fixed here so that
        // PROPTEST_CASES cannot make the suite look sharper than it is.
        let cfg =
            HuntConfig::default().cases(256).policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
        match hunt(&Reference::mutant(m), &cfg).expect("the harness runs") {
            Some(f) => {
                assert_eq!(f.check, m.expected(), "{}", report::finding(&f, None));
                assert!(!f.violations.is_empty());
            }
            None => missed.push(m.name()),
        }
    }
    assert!(missed.is_empty(), "mutants the suite missed in 256 cases: {missed:?}");
}

#[test]
fn a_caught_mutant_shrinks_to_a_minimal_script_with_escaped_bounded_bytes() {
    let cfg = HuntConfig::default().policy(Mutant::ReplaceInvalidUtf8.policy());
    let f = hunt(&Reference::mutant(Mutant::ReplaceInvalidUtf8), &cfg).unwrap().expect("caught");
    // Handshake plus the one offending frame.
    assert_eq!(f.script.frames.len(), 3, "{}", report::finding(&f, None));
    let text = report::finding(&f, Some("portcullis mutants --only replace-invalid-utf8"));
    assert!(text.contains("First offending stdin frame:"), "{text}");
    assert!(text.contains("\\x"), "invalid bytes are escaped: {text}");
    assert!(text.contains("Reproduce with:"));
    for line in text.lines() {
        // A report shows about 240 bytes of any one frame or line.
        assert!(line.len() < 1000, "line too long: {line}");
    }
}

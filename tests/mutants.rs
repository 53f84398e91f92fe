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
        let cfg = HuntConfig::default()
            .cases(256)
            .seed(0)
            .policy(m.policy())
            .revisions(m.revisions())
            .focus(Some(m.expected()));
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
    let cfg = HuntConfig::default().seed(0).policy(Mutant::ReplaceInvalidUtf8.policy());
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

#[test]
fn a_served_frame_that_acts_and_is_answered_is_one_finding_with_its_answer_as_evidence() {
    // The mutant acts on a request of a version it does not speak and
    // answers it with a success: one behaviour, shown by two checks.
    let m = Mutant::AnyVersion;
    let cfg = HuntConfig::default().cases(256).seed(0).policy(m.policy()).revisions(m.revisions()).max_shrink_ms(2_000);
    let found = portcullis::campaign::hunt_all(&Reference::mutant(m), &cfg).expect("the harness runs");
    let keys: Vec<String> = found.iter().map(|f| f.distinct().to_string()).collect();
    let tables = report::distinct_table(&found, &[]);
    assert_eq!(keys, ["no-effect-on-reject/effect_of_rejected (bad_envelope_version)"], "{tables}");
    let also: Vec<String> = found[0].also.iter().map(|k| k.to_string()).collect();
    assert_eq!(also, ["correlation/rejected_succeeded (bad_envelope_version)"], "{tables}");
    let line = found[0].cause_line().unwrap();
    assert!(line.ends_with("; also shown as correlation/rejected_succeeded"), "{line}");
    // Both rules of the cause showed it: the one its own session does not
    // show has a witness, a session whose frame breaks that rule.
    let (rules, own) = (found[0].evidence(), found[0].script.frames.iter().filter_map(|f| f.expect.rule()));
    let own: Vec<&str> = own.map(|r| r.id()).collect();
    assert_eq!(rules, ["handshake_version", "unsupported_version"], "{tables}");
    let witnessed: Vec<&str> = found[0].witnesses.iter().map(|w| w.rule.as_str()).collect();
    let other: Vec<&str> = rules.iter().map(String::as_str).filter(|r| !own.contains(r)).collect();
    assert_eq!(witnessed, other, "{tables}");
    // Each witness, run again, shows the finding under its rule.
    let key = found[0].distinct();
    for w in &found[0].witnesses {
        let (script, obs, violations) =
            portcullis::campaign::session(&Reference::mutant(m), cfg.policy, &w.spec, w.salt)
                .expect("the harness runs");
        assert!(key.shown_in(&violations, &script, &obs), "{} does not show {key}", w.rule);
        let at_fault = violations.iter().filter_map(|v| v.frame).filter_map(|i| script.frames[i].expect.rule());
        let shown: Vec<&str> = at_fault.map(|r| r.id()).collect();
        assert!(shown.contains(&w.rule.as_str()), "{} among {shown:?}", w.rule);
    }
    // Hunted alone, the answer is a finding of its own.
    let alone =
        portcullis::campaign::hunt_all(&Reference::mutant(m), &cfg.focus(Some(portcullis::CheckId::Correlation)));
    let keys: Vec<String> = alone.unwrap().iter().map(|f| f.distinct().to_string()).collect();
    assert_eq!(keys, ["correlation/rejected_succeeded (bad_envelope_version)"]);
}

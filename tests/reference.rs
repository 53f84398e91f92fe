//! The strict reference gateway passes every check under both policies and
//! every revision it speaks. Seeds vary per run; failures persist in
//! proptest-regressions/reference.txt and replay first.

use portcullis::campaign::session;
use portcullis::reference::Reference;
use portcullis::report;
use portcullis::script::any_script;
use portcullis::{Policy, Revision};
use proptest::prelude::*;

fn holds(policy: Policy, spec: &portcullis::ScriptSpec) -> Result<(), TestCaseError> {
    let (script, obs, violations) = session(&Reference::strict(), policy, spec, 0).expect("the harness runs");
    prop_assert!(
        violations.is_empty(),
        "reference not clean under {policy}:{}",
        report::session(&script, &obs, &violations)
    );
    Ok(())
}

proptest! {
    #![proptest_config(portcullis::campaign::persist_to("proptest-regressions/reference.txt"))]

    #[test]
    fn reference_is_clean_under_close(spec in any_script()) {
        holds(Policy::Close, &spec)?;
    }

    #[test]
    fn reference_is_clean_under_keep_open(spec in any_script()) {
        holds(Policy::KeepOpen, &spec)?;
    }
}

/// Every revision and policy gets its own deterministic hunt as well, so no
/// combination depends on the draw.
#[test]
fn reference_is_clean_per_revision_and_policy() {
    use portcullis::campaign::{HuntConfig, hunt};
    for revision in Revision::ALL {
        for policy in Policy::ALL {
            let cfg = HuntConfig::default().revisions(vec![revision]).policy(policy).cases(128);
            if let Some(f) = hunt(&Reference::strict(), &cfg).expect("the harness runs") {
                panic!("{}", report::finding(&f, None));
            }
        }
    }
}

//! Late evidence against claims other jobs made.

use super::Job;
use crate::attack::Step;
use crate::attack::jsonrpc::{JsonRpc, Kind};
use crate::campaign::{Known, Lane};
use crate::catalogue::Catalogue;
use crate::check::CheckId;
use crate::finding::Finding;
use crate::probe::{ProbeConfig, Probes};
use crate::process::{ChildTarget, Command, Waits};
use crate::protocol::{Policy, Revision};
use crate::script::ScriptSpec;
use std::sync::Arc;

/// The Python interpreter itself, not a shim that may pick another.
fn python3() -> String {
    let asked = std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
    let named = asked.ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    named.filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".to_owned())
}

/// The effects, judged late, of a server that refuses a call with
/// `"id": true` as it must and acts on it 300 ms later, after its
/// script's window: by a job that knows what `known` holds.
fn late_effects(known: Option<&Known>) -> Vec<Finding> {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes start"));
    let server = format!("{}/tests/servers/acts_after_error.py", env!("CARGO_MANIFEST_DIR"));
    let fetch = Catalogue::reference().tools.into_iter().filter(|t| t.name == "fetch").collect();
    let target = ChildTarget::new(Command::new(python3(), [server]), Waits::default(), fetch, probes);
    let mut job = Job::new(&target, Policy::KeepOpen, true, 0);
    if let Some(known) = known {
        job = job.knowing(known);
    }
    let revision = Revision::R2025_06_18;
    let bad = ScriptSpec::whole(revision, vec![Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 })]);
    job.session(&bad, 1, Lane::Search).expect("the harness runs");
    job.session(&ScriptSpec::whole(revision, vec![Step::Control(0)]), 2, Lane::Search).expect("the harness runs");
    let mut found = job.take_found();
    found.extend(job.finish().expect("the job ends"));
    found.retain(|f| f.check == CheckId::NoEffectOnReject);
    found
}

/// Late evidence of a finding another job has claimed by time alone, and
/// not yet confirmed, is judged all the same: were that claim let go, the
/// evidence would be lost. One made on evidence is not judged again.
#[test]
fn late_evidence_of_a_finding_claimed_by_time_alone_is_still_judged() {
    let alone = late_effects(None);
    let key = alone.first().unwrap_or_else(|| panic!("the late effect is found")).distinct();
    let doubtful = Known::default();
    assert!(doubtful.claim(&key, true));
    let judged = late_effects(Some(&doubtful));
    let judged: Vec<_> = judged.iter().map(Finding::distinct).collect();
    assert_eq!(judged, std::slice::from_ref(&key), "judged beside the claim");
    let sure = Known::default();
    assert!(sure.claim(&key, false));
    assert!(late_effects(Some(&sure)).is_empty(), "made on evidence, it is not judged again");
}

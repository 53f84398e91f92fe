//! Servers built like the official SDKs' answer requests concurrently (a
//! ping after a slow call is answered first) and cancel the calls still in
//! flight when stdin closes. A client that waits for its answers before it
//! goes on sees them act exactly once: both come out clean, in the
//! persistent process and in a process per session.

use crate::common::python_server;
use portcullis::attack::Step;
use portcullis::campaign::Job;
use portcullis::process::Waits;
use portcullis::{Policy, Revision, ScriptSpec, report};

#[test]
fn servers_that_answer_concurrently_and_cancel_at_eof_are_clean() {
    for server in ["cancels_on_eof.py", "concurrent.py"] {
        for policy in [Policy::KeepOpen, Policy::Close] {
            let target = python_server(server, &[], Waits::default());
            let mut job = Job::new(&target, policy, true, 0);
            for salt in 1..=4 {
                let steps = vec![Step::Control(0), Step::Control(0)];
                let spec = ScriptSpec { eof: salt % 2 == 0, ..ScriptSpec::whole(Revision::R2025_06_18, steps) };
                let (script, obs, v) =
                    job.session(&spec, salt, portcullis::campaign::Lane::Search).expect("the harness runs");
                assert!(v.is_empty(), "{server} {policy}: {}", report::session(&script, &obs, &v));
            }
            let found = job.finish().expect("the job ends");
            assert!(found.is_empty(), "{server} {policy}: {found:#?}");
        }
    }
}

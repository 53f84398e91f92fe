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

/// The reference's stateless era (2026-07-28), line by line: the first
/// request fixes a connection's era, and in a stateless session only a
/// request whose envelope is whole and names 2026-07-28 runs.
#[test]
fn the_reference_speaks_the_stateless_era_strictly() {
    use portcullis::{Gateway, Recorder, Session, Settle, Target};
    use serde_json::{Value, json};
    let env = |version: &str| json!({"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}});
    let call = |id: i64, meta: Value| {
        let args = json!({"url": format!("http://127.0.0.1:9/t{id}")});
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"_meta": meta, "name": "fetch", "arguments": args}})
    };
    // Each line, then what it got back and how many effects it caused.
    let talk = |lines: &[Value]| -> Vec<(Value, usize)> {
        let recorder = Recorder::new();
        let session = Session { policy: Policy::KeepOpen, revision: Revision::R2026_07_28, salt: 0 };
        let mut gateway = Reference::strict().start(&session, recorder.clone()).expect("a session");
        let mut out = Vec::new();
        for line in lines {
            let before = recorder.actions().len();
            gateway.write_stdin(format!("{line}\n").as_bytes()).expect("written");
            gateway.settle(&Settle::default()).expect("settled");
            let answer: Value = serde_json::from_slice(&gateway.take_stdout()).unwrap_or(Value::Null);
            out.push((answer, recorder.actions().len() - before));
        }
        out
    };
    let opened = talk(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": env("2026-07-28")}}),
        call(2, env("2026-07-28")),
        call(3, json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
        call(4, json!({})),
        call(5, env("2025-11-25")),
        json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": env("2026-07-28")}}),
    ]);
    let (discover, _) = &opened[0];
    assert_eq!(discover["result"]["supportedVersions"], json!(["2026-07-28"]), "{discover}");
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");
    assert_eq!(
        (opened[1].0["result"]["resultType"].as_str(), opened[1].1),
        (Some("complete"), 1),
        "a whole envelope runs"
    );
    let code = |at: usize| opened[at].0["error"]["code"].as_i64();
    assert_eq!((code(2), opened[2].1), (Some(-32602), 0), "half an envelope: {}", opened[2].0);
    assert_eq!((code(3), opened[3].1), (Some(-32602), 0), "no envelope: {}", opened[3].0);
    assert_eq!((code(4), opened[4].1), (Some(-32022), 0), "another revision: {}", opened[4].0);
    assert_eq!(opened[4].0["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}));
    assert_eq!((code(5), code(6)), (Some(-32601), Some(-32601)), "no initialize or ping in a stateless session");

    // `initialize` first opens the handshake era: a call with the envelope
    // then runs as that era's call, and its result has no `resultType`.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let legacy = talk(&[init, call(2, env("2026-07-28"))]);
    assert_eq!(legacy[0].0["result"]["protocolVersion"], "2025-11-25");
    assert!(legacy[1].0["result"].get("resultType").is_none() && legacy[1].1 == 1, "{}", legacy[1].0);
}

/// A round trip's retry is written only once the call asked about has been
/// answered, filled with what that answer handed out: the confirmed retry
/// acts once, a spent, altered or foreign state acts on nothing, and each
/// planted bug that honours one is caught at that retry, under
/// `no-effect-on-reject`.
#[test]
fn a_retry_is_filled_from_the_answer_and_acts_only_on_the_state_of_its_own_call() {
    use portcullis::attack::Step;
    use portcullis::attack::roundtrip::{Kind, RoundTrip};
    use portcullis::reference::Mutant;
    use portcullis::{CheckId, ScriptSpec};
    let spec = |kind| {
        let step = Step::RoundTrip(RoundTrip { kind, tool: 0, pick: 3 });
        ScriptSpec::whole(Revision::R2026_07_28, vec![step])
    };
    let strict = Reference::strict;
    let planted = Reference::mutant;
    let runs = [
        (Kind::Confirmed, strict(), 1, None),
        (Kind::ReplayedState, strict(), 1, None),
        (Kind::AlteredState, strict(), 0, None),
        (Kind::ForeignState, strict(), 0, None),
        (Kind::ReplayedState, planted(Mutant::ReplayRequestState), 2, Some(CheckId::NoEffectOnReject)),
        (Kind::ForeignState, planted(Mutant::UnboundRequestState), 1, Some(CheckId::NoEffectOnReject)),
        (Kind::AlteredState, planted(Mutant::TrustRequestState), 1, Some(CheckId::NoEffectOnReject)),
    ];
    for (kind, target, effects, caught) in runs {
        let (script, obs, violations) = session(&target, Policy::KeepOpen, &spec(kind), 0).expect("the harness runs");
        let shown = report::session(&script, &obs, &violations);
        let retries = script.frames.iter().filter(|f| f.fill.is_some()).count();
        assert!(retries > 0 && obs.filled.len() == retries, "{kind:?}: every retry waits on a fill\n{shown}");
        assert!(obs.filled.iter().all(|f| f.written.is_ok()), "{kind:?}: every retry was filled and written\n{shown}");
        assert!(!shown.contains("portcullis:fill:"), "{kind:?}: the report shows the bytes written\n{shown}");
        assert_eq!(obs.effects.len(), effects, "{kind:?}\n{shown}");
        assert_eq!(violations.first().map(|v| v.check), caught, "{kind:?}\n{shown}");
        if caught.is_some() {
            assert_eq!(violations[0].frame, Some(script.frames.len() - 1), "at the last retry\n{shown}");
        }
    }
}

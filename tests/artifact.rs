//! Artifacts round-trip exactly: scripts and labels.

use portcullis::script::any_script;
use portcullis::{Catalogue, Script};
use proptest::prelude::*;

proptest! {
    #![proptest_config(portcullis::campaign::persist_to("proptest-regressions/artifact.txt"))]

    #[test]
    fn scripts_serialize_and_come_back_the_same(spec in any_script()) {
        let script = spec.render(&Catalogue::reference(), 5);
        let text = serde_json::to_string(&script).unwrap();
        let back: Script = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, script);
        let spec_back: portcullis::ScriptSpec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        prop_assert_eq!(spec_back, spec);
    }
}

#[test]
fn rebasing_moves_every_canary_to_the_new_sink() {
    let spec =
        portcullis::ScriptSpec::whole(portcullis::Revision::R2025_06_18, vec![portcullis::attack::Step::Control(0)]);
    let mut script = spec.render(&Catalogue::reference(), 1);
    script.rebase("http://127.0.0.1:9", "http://127.0.0.1:4242");
    let text = String::from_utf8(script.stdin()).unwrap();
    assert!(text.contains("http://127.0.0.1:4242/pc") && !text.contains(":9/"), "{text}");
    let portcullis::Expect::Act(calls) = &script.frames[2].expect else { panic!("a call") };
    assert!(calls[0].arguments["url"].as_str().unwrap().starts_with("http://127.0.0.1:4242/"));
    assert_eq!(*script.write_ends.last().unwrap(), script.stdin().len());
}

/// An artifact saved before keys held causes named the rule of its frame,
/// one saved by an older build an older class:
/// it reads as the same finding, so a replay of it says FAILED for the
/// same bug; other keys (a crash line) read as they were.
#[test]
fn an_artifact_keyed_by_a_rule_reads_as_its_cause() {
    use portcullis::artifact::Artifact;
    use portcullis::campaign::{HuntConfig, hunt};
    use portcullis::reference::{Mutant, Reference};
    let m = Mutant::BoolId;
    let cfg = HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
    let f = hunt(&Reference::mutant(m), &cfg).expect("the harness runs").expect("the mutant is caught");
    let key = f.distinct();
    assert_eq!(key.what, "invalid_request", "{key}");
    let artifact = Artifact::new(&f, vec![], "", vec![]);
    assert_eq!(artifact.key(), Some(key.clone()));
    let rule = f.rule().expect("a rule").id().to_owned();
    let old = Artifact { keyed_by_cause: false, what: Some(rule), ..artifact.clone() };
    assert_eq!(old.key(), Some(key.clone()), "a rule reads as its cause");
    // Keys of older builds: the frame's attack kind reads as the class the
    // frame belongs to now; a class it never belonged to, as it was.
    let frame = f.violations[0].frame.map(|i| f.script.frames[i].kind.to_string()).expect("a frame at fault");
    let by_kind = Artifact { what: Some(frame), ..artifact.clone() };
    assert_eq!(by_kind.key(), Some(key.clone()), "an attack kind reads as its class");
    let by_other_cause = Artifact { what: Some("nesting_depth".into()), ..artifact.clone() };
    assert_eq!(by_other_cause.key().map(|k| k.what), Some("nesting_depth".into()), "a class the frame never had stays");
    let crash = Artifact { keyed_by_cause: false, what: Some("thread 'main' panicked".into()), ..artifact };
    assert_eq!(crash.key().map(|k| k.what), Some("thread 'main' panicked".into()), "other keys as they were");
}

/// An artifact saved when a look-alike placed in a `ping` that the server
/// refused as an unknown method was keyed by its attack kind reads as the
/// method's finding, so a replay of it says FAILED for the same bug;
/// refused for another reason, it keeps its key.
#[test]
fn a_missing_method_saved_under_its_look_alike_reads_as_the_method() {
    use portcullis::artifact::Artifact;
    use portcullis::attack::{Step, placed};
    use portcullis::check::Kind;
    use portcullis::{CheckId, Violation};
    let step =
        Step::Placed(placed::Placed { kind: placed::Kind::NextLine, place: placed::Place::Ping, tool: 0, pick: 0 });
    let spec = portcullis::ScriptSpec::whole(portcullis::Revision::R2025_06_18, vec![step]);
    let script = spec.render(&Catalogue::reference(), 1);
    let at = script.frames.iter().position(|f| f.kind == "placed_next_line").expect("the look-alike");
    let m = portcullis::reference::Mutant::BoolId;
    let cfg = portcullis::HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
    let f = portcullis::hunt(&portcullis::reference::Reference::mutant(m), &cfg).expect("the harness runs");
    let f = f.expect("the mutant is caught");
    let saved = |code: &str| Artifact {
        check: "correlation".into(),
        kind: Some("valid_refused".into()),
        what: Some("placed_next_line".into()),
        violations: vec![format!(
            "[correlation] responses do not answer requests one to one with the right codes: \
             the valid request id 2 was answered with error {code} (frame #{at}) at stdout bytes 0..80"
        )],
        spec: spec.clone(),
        script: script.clone(),
        ..Artifact::new(&f, vec![], "", vec![])
    };
    let what = |a: &Artifact| a.key().map(|k| k.what);
    assert_eq!(what(&saved("Some(-32601)")), Some("ping".into()));
    assert_eq!(what(&saved("-32601")), Some("ping".into()));
    assert_eq!(what(&saved("Some(-32602)")), Some("placed_next_line".into()));
    let refused = Kind::ValidRefused { id: "2".into(), code: Some(-32601) };
    let v = Violation { check: CheckId::Correlation, frame: Some(at), span: None, kind: refused };
    assert_eq!(saved("Some(-32601)").showing(&[v], &script, &f.observation).len(), 1, "a replay shows it");
}

/// An artifact saved before keys held causes has no `keyed_by_cause`: it
/// reads as false.
#[test]
fn an_artifact_without_keyed_by_cause_reads_as_keyed_by_rule() {
    use portcullis::artifact::Artifact;
    use portcullis::campaign::{HuntConfig, hunt};
    use portcullis::reference::{Mutant, Reference};
    let m = Mutant::LaxJsonrpc;
    let cfg = HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
    let f = hunt(&Reference::mutant(m), &cfg).expect("the harness runs").expect("the mutant is caught");
    let mut json = serde_json::to_value(Artifact::new(&f, vec![], "", vec![])).unwrap();
    assert_eq!(json["keyed_by_cause"], true);
    json.as_object_mut().unwrap().remove("keyed_by_cause");
    json["what"] = f.rule().expect("a rule").id().into();
    let old: Artifact = serde_json::from_value(json).unwrap();
    assert!(!old.keyed_by_cause);
    assert_eq!(old.key(), Some(f.distinct()));
}

/// An end under keep-open saved before version 2 was keyed by the frame
/// written last, not the one it ended on: a replay of it shows any such
/// end (unless it was keyed by a crash line); one saved since, only an
/// end of its own class.
#[test]
fn an_end_under_keep_open_of_version_one_shows_whatever_frame_it_is_blamed_on() {
    use portcullis::artifact::Artifact;
    use portcullis::attack::{Step, terminator};
    use portcullis::campaign::{HuntConfig, hunt};
    use portcullis::check::Kind;
    use portcullis::reference::{Mutant, Reference};
    use portcullis::{CheckId, Violation};
    let m = Mutant::BoolId;
    let cfg = HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
    let f = hunt(&Reference::mutant(m), &cfg).expect("the harness runs").expect("the mutant is caught");
    let saved = Artifact {
        check: "policy".into(),
        kind: Some("ended_under_keep_open".into()),
        what: Some("valid_call".into()),
        violations: Vec::new(),
        ..Artifact::new(&f, vec![], "", vec![])
    };
    let cr = Step::Terminator(terminator::Terminator { kind: terminator::Kind::RawCr, tool: 0 });
    let script =
        portcullis::ScriptSpec::whole(portcullis::Revision::R2025_06_18, vec![cr]).render(&Catalogue::reference(), 1);
    let at = script.frames.iter().position(|f| f.kind == "raw_cr_in_string").expect("the raw CR");
    let ended =
        Violation { check: CheckId::Policy, frame: Some(at), span: None, kind: Kind::EndedUnderKeepOpen { at: 0 } };
    let shown = |a: &Artifact| !a.showing(std::slice::from_ref(&ended), &script, &f.observation).is_empty();
    assert!(!shown(&saved), "since version 2, an end of another class is another finding");
    let own = script.frames[at].expect.rule_or_tolerated().expect("a rule").cause().id().to_owned();
    assert!(shown(&Artifact { what: Some(own), ..saved.clone() }), "an end of its own class shows it");
    let crashed = Artifact { portcullis_artifact: 1, what: Some("thread 'main' panicked".into()), ..saved.clone() };
    assert!(!crashed.keyed_by_last_frame() && !shown(&crashed), "one keyed by a crash line keeps its key");
    let old = Artifact { portcullis_artifact: 1, ..saved };
    assert!(old.keyed_by_last_frame() && shown(&old), "before it, any end under keep-open");
}

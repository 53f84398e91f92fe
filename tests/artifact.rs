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

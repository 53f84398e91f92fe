//! A tool whose call template nests its token, as `--args` may
//! (`{"entities":[{"name":"{token}","observations":["seen {token}"]}]}`):
//! every family renders frames that carry the token where the template put
//! it, every acting frame's arguments are, as a JSON parser reads them,
//! exactly the call it expects, and a script given fresh tokens
//! ([`Script::resalt`]) is the script rendered with them.

use portcullis::attack::{Family, any_revision, any_step};
use portcullis::script::scripts;
use portcullis::{Catalogue, Expect, Script, ToolSpec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

fn nested() -> Catalogue {
    let template = json!({
        "entities": [{"name": "{token}", "entityType": "thing", "observations": ["seen {token}", "at {canary}"]}],
        "dryRun": false,
    });
    let tool = ToolSpec { template: template.as_object().cloned(), ..ToolSpec::new("create_entities", vec![]) };
    Catalogue { tools: vec![tool], canary_base: "http://127.0.0.1:9".into() }
}

fn draw(family: Family, n: usize) -> Vec<Script> {
    let strategy = scripts(any_revision(), family.steps());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let catalogue = nested();
    (0..n).map(|i| strategy.new_tree(&mut runner).unwrap().current().render(&catalogue, i as u32)).collect()
}

#[test]
fn every_family_puts_the_token_where_the_template_nests_it() {
    let mut acting = 0;
    for family in Family::ALL {
        for script in draw(family, 200) {
            for frame in &script.frames {
                let what = || format!("{}/{}: {:?}", frame.family, frame.kind, String::from_utf8_lossy(&frame.bytes));
                let holds = |t: &str| memchr::memmem::find(&frame.bytes, t.as_bytes()).is_some();
                assert!(frame.tokens.iter().all(|t| holds(t)), "a frame's tokens are in its bytes: {}", what());
                let Expect::Act(calls) = &frame.expect else { continue };
                assert!(!frame.tokens.is_empty(), "an acting frame carries its token: {}", what());
                for call in calls {
                    let name = call.arguments["entities"][0]["name"].as_str().unwrap_or_default();
                    assert!(name.starts_with(&call.token), "the token stays nested: {}", what());
                }
                // One request on one line: what a parser reads is the call.
                let line = frame.bytes.strip_suffix(b"\n").unwrap_or(&frame.bytes);
                if let (Ok(v), [call]) = (serde_json::from_slice::<Value>(line), calls.as_slice())
                    && v.get("method") == Some(&json!("tools/call"))
                {
                    assert_eq!(v["params"]["arguments"], Value::Object(call.arguments.clone()), "{}", what());
                    acting += 1;
                }
            }
        }
    }
    assert!(acting > 100, "acting frames were read back: {acting}");
}

#[test]
fn attacks_on_a_nested_argument_keep_its_token() {
    // The attacks that rewrite the token's argument (a duplicate, single
    // quotes, a wrong type) still carry the token, so an effect they cause
    // is theirs.
    let kinds = ["duplicate_argument", "single_quotes", "mistyped_array", "mistyped_object", "deep_nesting"];
    let mut seen = std::collections::BTreeSet::new();
    for family in [Family::Ambiguity, Family::Shape] {
        for script in draw(family, 300) {
            for frame in script.frames.iter().filter(|f| kinds.contains(&f.kind.as_ref())) {
                assert!(!frame.tokens.is_empty(), "{}: {:?}", frame.kind, String::from_utf8_lossy(&frame.bytes));
                seen.insert(frame.kind.to_string());
            }
        }
    }
    assert_eq!(seen.len(), kinds.len(), "drawn: {seen:?}");
}

/// Whether `a` and `b` differ only in the salt digits of a token cut short
/// (a truncated frame ends inside one): no whole token is left to resalt,
/// and no effect can carry it.
fn same_but_cut_tokens(a: &[u8], b: &[u8]) -> bool {
    let cut_salt_digit = |i: usize| {
        (1..=8).any(|k| {
            let Some(p) = i.checked_sub(k + 1) else { return false };
            let run = |x: &[u8]| x[p + 2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
            let whole = |x: &[u8]| run(x) == 8 && x.get(p + 10) == Some(&b't');
            let cut = |x: &[u8]| x[p..].starts_with(b"pc") && (k..=8).contains(&run(x)) && !whole(x);
            cut(a) && cut(b)
        })
    };
    a.len() == b.len() && (0..a.len()).all(|i| a[i] == b[i] || cut_salt_digit(i))
}

proptest! {
    #![proptest_config(Config { cases: 64, ..portcullis::campaign::persist_to("proptest-regressions/templates.txt") })]

    #[test]
    fn fresh_tokens_are_the_script_rendered_with_them(
        spec in scripts(any_revision(), any_step()),
        old in any::<u32>(),
        new in any::<u32>(),
    ) {
        for catalogue in [nested(), Catalogue::reference()] {
            let mut moved = spec.render(&catalogue, old);
            moved.resalt(old, new);
            let rendered = spec.render(&catalogue, new);
            prop_assert_eq!(&moved.write_ends, &rendered.write_ends);
            prop_assert_eq!(moved.frames.len(), rendered.frames.len());
            for (a, b) in moved.frames.iter().zip(&rendered.frames) {
                prop_assert_eq!(&a.expect, &b.expect);
                prop_assert_eq!(&a.tokens, &b.tokens);
                prop_assert!(same_but_cut_tokens(&a.bytes, &b.bytes), "{:?}", String::from_utf8_lossy(&a.bytes));
            }
        }
    }
}

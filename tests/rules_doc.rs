//! docs/checks.md lists every rule with its level, class, owed reply,
//! citation and a one-line example, as the code has them: the table is
//! built here from the rules and from frames the generators draw, and must
//! appear in the docs verbatim. `PORTCULLIS_BLESS=1` rewrites it.

use portcullis::campaign::{HuntConfig, strategy};
use portcullis::frame::Reply;
use portcullis::{Catalogue, Expect, Revision, Rule};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::collections::HashMap;

/// The shortest frame the generators draw for each rule.
fn examples() -> HashMap<Rule, Vec<u8>> {
    let catalogue = Catalogue::reference();
    let scripts = strategy(&HuntConfig::default().revisions(Revision::ALL.to_vec()));
    let mut runner = TestRunner::deterministic();
    let mut shortest: HashMap<Rule, Vec<u8>> = HashMap::new();
    for _ in 0..4000 {
        let spec = scripts.new_tree(&mut runner).expect("a script").current();
        for frame in spec.render(&catalogue, 1).frames {
            let rule = match frame.expect {
                Expect::Reject(r) | Expect::Tolerate(r, _) | Expect::Unjudged(r) => r,
                _ => continue,
            };
            let entry = shortest.entry(rule).or_insert_with(|| frame.bytes.clone());
            if frame.bytes.len() < entry.len() {
                *entry = frame.bytes.clone();
            }
        }
    }
    shortest
}

/// Bytes as a Rust byte string body, the envelope's first
/// `"jsonrpc":"2.0",` shown as `…`; past 110 characters, the first 30 and
/// the last 75, where most attacks sit.
fn shown(bytes: &[u8]) -> String {
    let envelope = br#""jsonrpc":"2.0","#;
    let skip = bytes.windows(envelope.len()).position(|w| w == envelope);
    let mut pieces: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if Some(i) == skip {
            pieces.push("…".into());
            i += envelope.len();
            continue;
        }
        pieces.push(match bytes[i] {
            b'\n' => "\\n".into(),
            b'\r' => "\\r".into(),
            b'\t' => "\\t".into(),
            b'|' => "\\|".into(),
            b'`' => "\\x60".into(),
            b @ 0x20..=0x7e => (b as char).to_string(),
            other => format!("\\x{other:02x}"),
        });
        i += 1;
    }
    if pieces.len() > 110 {
        let tail = pieces.split_off(pieces.len() - 75);
        pieces.truncate(30);
        pieces.push("…".into());
        pieces.extend(tail);
    }
    pieces.concat()
}

fn reply(rule: Rule) -> String {
    match rule.reply() {
        Reply::Silent => "none".to_owned(),
        Reply::Error { codes, tool_error_ok } => {
            let codes: Vec<String> = codes.iter().map(i64::to_string).collect();
            let codes = if codes.is_empty() { "any error".to_owned() } else { codes.join(" or ") };
            if tool_error_ok { format!("{codes}, or `isError`") } else { codes }
        }
        other => panic!("a reply the table cannot say: {other:?}"),
    }
}

fn table() -> String {
    let examples = examples();
    let mut t = String::from(
        "| rule | cause | level | class | owed reply | citation | example |\n|---|---|---|---|---|---|---|\n",
    );
    for rule in Rule::ALL {
        let example = examples.get(rule).map(|b| format!("`{}`", shown(b))).unwrap_or_else(|| "(none drawn)".into());
        t.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} | {}: {} |\n",
            rule.id(),
            rule.cause().id(),
            rule.level(),
            format!("{:?}", rule.class()).to_lowercase(),
            reply(*rule),
            rule.citation(),
            rule.why(),
            example
        ));
    }
    t
}

#[test]
fn docs_list_every_rule_with_its_level_citation_and_an_example() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md");
    let doc = std::fs::read_to_string(path).expect("docs/checks.md");
    let table = table();
    if std::env::var_os("PORTCULLIS_BLESS").is_some() {
        let start = doc.find("| rule | cause | level |").expect("the rules table");
        let end = start + doc[start..].find("\n\n").expect("the table ends");
        std::fs::write(path, format!("{}{}{}", &doc[..start], table.trim_end(), &doc[end..])).unwrap();
        return;
    }
    assert!(
        doc.contains(&table),
        "docs/checks.md's rules table is not the code's; rerun with PORTCULLIS_BLESS=1:\n{table}"
    );
    assert!(!table.contains("(none drawn)"), "every rule has an example the generators draw:\n{table}");
}

#[test]
fn docs_list_every_cause_with_the_input_it_is_about() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md")).unwrap();
    for cause in portcullis::frame::Cause::ALL {
        let row = format!("| `{}` | {} |", cause.id(), cause.what());
        assert!(doc.contains(&row), "docs/checks.md lists {row}");
    }
}

/// A cause holds rules of one level (spec or hardening; tolerated rules
/// may join either), so a finding's level is its cause's; and no cause id
/// is also an attack kind or a rule, so a key never reads as another.
#[test]
fn a_cause_holds_one_level_and_its_id_names_nothing_else() {
    use portcullis::Level;
    use portcullis::attack::Family;
    use portcullis::frame::Cause;
    for cause in Cause::ALL {
        let levels: std::collections::BTreeSet<String> = Rule::ALL
            .iter()
            .filter(|r| r.cause() == cause && r.level() != Level::Tolerated)
            .map(|r| r.level().to_string())
            .collect();
        assert!(levels.len() <= 1, "{} mixes levels {levels:?}", cause.id());
        // A tool result refusing a frame is at most hardening where its
        // rule lets a tool refuse it that way: that level too is one per cause.
        let tool_result: std::collections::BTreeSet<String> = Rule::ALL
            .iter()
            .filter(|r| r.cause() == cause && r.level() != Level::Tolerated)
            .map(|r| if r.tool_error_ok() { r.level().max(Level::Hardening) } else { r.level() }.to_string())
            .collect();
        assert!(tool_result.len() <= 1, "{} mixes levels of a tool result {tool_result:?}", cause.id());
        let kinds: Vec<&str> = Family::ALL.iter().flat_map(|f| f.kind_names()).collect();
        assert!(!kinds.contains(&cause.id()), "{} is an attack kind too", cause.id());
        assert!(Rule::ALL.iter().all(|r| r.id() != cause.id()), "{} is a rule too", cause.id());
    }
    assert!(Rule::ALL.iter().all(|r| Cause::ALL.contains(&r.cause())));
}

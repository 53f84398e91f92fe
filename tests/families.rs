//! What each attack family generates: every sub-kind shows up within a
//! bounded number of draws, and every frame's label agrees with an oracle
//! written apart from the reference gateway (serde_json plus the rule's own
//! definition).

use portcullis::attack::{Family, any_revision};
use portcullis::script::{Script, scripts};
use portcullis::{Catalogue, Expect, Frame, Id, Revision, Rule};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;
use std::collections::BTreeSet;

/// Draws per family: sub-kinds are equally likely, so even the largest
/// family (24 kinds, about 4.5 steps a script) sees each many times.
const DRAWS: usize = 400;

fn draw(family: Family) -> Vec<Script> {
    // Sized calls run to 32 MiB each: fewer scripts see every size kind.
    let draws = if family == Family::Size { DRAWS / 5 } else { DRAWS };
    let strategy = scripts(any_revision(), family.steps());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let catalogue = Catalogue::reference();
    (0..draws)
        .map(|i| strategy.new_tree(&mut runner).expect("strategy draws").current().render(&catalogue, i as u32))
        .collect()
}

/// Draws scripts of one family and checks coverage and every label.
fn shows_what_it_generates(family: Family) {
    let scripts = draw(family);
    let mut seen = BTreeSet::new();
    for script in &scripts {
        for (i, frame) in script.frames.iter().enumerate() {
            if frame.family == family.name() {
                seen.insert(frame.kind.to_string());
            }
            if let Err(e) = oracle(script, i) {
                let bytes = String::from_utf8_lossy(&frame.bytes);
                panic!("{}/{}: label {:?} is wrong: {e}\nbytes: {bytes:?}", frame.family, frame.kind, frame.expect);
            }
        }
    }
    let missing: Vec<_> = family.kind_names().into_iter().filter(|k| !seen.contains(*k)).collect();
    assert!(missing.is_empty(), "family {} never drew {missing:?} in {} scripts", family.name(), scripts.len());
}

macro_rules! family_tests {
    ($($name:ident => $family:expr,)*) => {
        $(#[test]
        fn $name() {
            shows_what_it_generates($family);
        })*
    };
}

family_tests! {
    noise_shows_what_it_generates => Family::Noise,
    concat_shows_what_it_generates => Family::Concat,
    truncate_shows_what_it_generates => Family::Truncate,
    terminator_shows_what_it_generates => Family::Terminator,
    encoding_shows_what_it_generates => Family::Encoding,
    ambiguity_shows_what_it_generates => Family::Ambiguity,
    jsonrpc_shows_what_it_generates => Family::JsonRpc,
    shape_shows_what_it_generates => Family::Shape,
    lifecycle_shows_what_it_generates => Family::Lifecycle,
    placed_shows_what_it_generates => Family::Placed,
    size_shows_what_it_generates => Family::Size,
    envelope_shows_what_it_generates => Family::Envelope,
    roundtrip_shows_what_it_generates => Family::RoundTrip,
}

/// The frame's one line, when it is exactly one strict JSON value on one
/// LF-terminated line (as serde_json, with its recursion limit, sees it).
fn one_strict_line(bytes: &[u8]) -> Option<Value> {
    let line = bytes.strip_suffix(b"\n")?;
    if line.contains(&b'\n') || line.contains(&b'\r') || line.contains(&0) || line.starts_with(b"\xEF\xBB\xBF") {
        return None;
    }
    serde_json::from_slice(line).ok()
}

/// Whether any object in the text has a key twice (after unescaping).
fn has_duplicate_key(bytes: &[u8]) -> bool {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    struct Dup;
    impl<'de> Visitor<'de> for Dup {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("json")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<bool, A::Error> {
            let (mut keys, mut dup) = (BTreeSet::new(), false);
            while let Some(k) = m.next_key::<String>()? {
                dup |= !keys.insert(k);
                dup |= m.next_value::<DupSeed>()?.0;
            }
            Ok(dup)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
            let mut dup = false;
            while let Some(d) = s.next_element::<DupSeed>()? {
                dup |= d.0;
            }
            Ok(dup)
        }
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E>(self, _: &str) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
    }
    struct DupSeed(bool);
    impl<'de> serde::Deserialize<'de> for DupSeed {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Dup).map(DupSeed)
        }
    }
    let _ = IgnoredAny;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.deserialize_any(Dup).unwrap_or(false)
}

fn oracle(script: &Script, index: usize) -> Result<(), String> {
    let frame = &script.frames[index];
    if frame.family == "size" && frame.kind != "valid_call" {
        let sizes = [4_095, 4_096, 4_097, 8_192, 16_384, 65_535, 65_536, 65_537];
        let (n, mib) = (frame.bytes.len(), 1 << 20);
        if !(sizes.contains(&n) || [mib - 1, mib, mib + 1, 8 * mib, 16 * mib, 32 * mib].contains(&n)) {
            return Err(format!("a sized call of {n} bytes is no size the family sends"));
        }
    }
    for t in &frame.tokens {
        if !String::from_utf8_lossy(&frame.bytes).contains(t.as_str()) {
            return Err(format!("token {t} is not in the bytes"));
        }
    }
    if !script.revision.has_handshake() {
        enveloped(frame)?;
    }
    retry_oracle(script, index)?;
    match &frame.expect {
        Expect::Inert { .. } => {
            let blank = frame.bytes.strip_suffix(b"\n").is_some_and(|l| l.iter().all(|b| *b == b' ' || *b == b'\t'));
            let line = one_strict_line(&frame.bytes);
            if !blank && line.is_none() {
                return Err("inert frame is neither blank nor one JSON line".into());
            }
            // A call that acts on nothing: one of a tool that must first be
            // confirmed, asked about, and no retry.
            let call = line.filter(|v| v["method"] == "tools/call");
            match call {
                Some(v) => {
                    let name = v["params"]["name"].as_str().unwrap_or_default();
                    let confirms = Catalogue::reference().tool(name).is_some_and(|t| t.confirms);
                    let retry =
                        v["params"].get("requestState").is_some() || v["params"].get("inputResponses").is_some();
                    (confirms && !retry).then_some(()).ok_or(format!("an inert call of {name:?} that may act: {v}"))
                }
                None => Ok(()),
            }
        }
        Expect::Act(calls) => act_oracle(script.revision, &frame.bytes, calls),
        Expect::Tolerate(Rule::CrBeforeLf, calls) => {
            let line = frame.bytes.strip_suffix(b"\r\n").ok_or("a cr_before_lf frame does not end in CRLF")?;
            act_oracle(script.revision, &[line, b"\n"].concat(), calls)
        }
        Expect::Tolerate(Rule::LargeMessage, calls) if frame.bytes.len() > 65_536 => {
            act_oracle(script.revision, &frame.bytes, calls)
        }
        Expect::Tolerate(Rule::ImpreciseNumber, calls) => {
            one_strict_line(&frame.bytes).ok_or("an imprecise_number frame is not one strict JSON line")?;
            if !number_literals(&frame.bytes).iter().any(|n| imprecise(n)) {
                return Err("no number in the frame is imprecise".into());
            }
            if calls.is_empty() { Ok(()) } else { act_oracle(script.revision, &frame.bytes, calls) }
        }
        // A valid call with a member beside `arguments` that no schema names:
        // acting on it, it acts as the call says.
        Expect::Tolerate(Rule::UnknownMember, calls) => {
            let line = one_strict_line(&frame.bytes).ok_or("an unknown_member frame is not one strict JSON line")?;
            let params = line["params"].as_object().ok_or("no params object")?;
            if !params.keys().any(|k| !["name", "arguments", "_meta"].contains(&k.as_str())) {
                return Err("no member beside `arguments`".into());
            }
            act_oracle(script.revision, &frame.bytes, calls)
        }
        // A call with a whole 2026-07-28 envelope, in a handshake-era session.
        Expect::Tolerate(Rule::ModernEnvelope, calls) => {
            if !script.revision.has_handshake() {
                return Err("a modern envelope in a session of the stateless revision".into());
            }
            act_oracle(Revision::R2026_07_28, &frame.bytes, calls)
        }
        // A call whose `_meta` holds a reserved key no revision defines, or a
        // key the naming rules refuse: acting on it, it acts as it says.
        Expect::Tolerate(rule @ (Rule::ReservedMetaKey | Rule::MalformedMetaKey), calls) => {
            let line = one_strict_line(&frame.bytes).ok_or("a _meta key frame is not one strict JSON line")?;
            let meta = line["params"]["_meta"].as_object().ok_or("no _meta object")?;
            let wanted = if *rule == Rule::ReservedMetaKey { MetaKey::ReservedUndefined } else { MetaKey::Malformed };
            if !meta.keys().any(|k| meta_key(k) == wanted) {
                return Err(format!("no `_meta` key is {wanted:?}"));
            }
            act_oracle(script.revision, &frame.bytes, calls)
        }
        // A notification that breaks a hardening rule: no reading runs anything.
        Expect::Tolerate(rule, calls) if calls.is_empty() && frame.id.is_none() && frame.tokens.is_empty() => {
            reject_oracle(script, index, frame, *rule)
        }
        Expect::Tolerate(rule, _) => Err(format!("{} is not a tolerated rule the oracle knows", rule.id())),
        Expect::Reject(rule) | Expect::Unjudged(rule) => reject_oracle(script, index, frame, *rule),
        other => Err(format!("a label the oracle does not know: {other:?}")),
    }
}

/// In a session of the stateless revision, every request whose params are
/// an object carries a whole envelope naming it, unless the envelope (or
/// the method, one of the other era) is what the frame breaks.
fn enveloped(frame: &Frame) -> Result<(), String> {
    let (bytes, expect) = (&frame.bytes, &frame.expect);
    let envelope_rules = [
        Rule::MissingEnvelope,
        Rule::BadEnvelope,
        Rule::UnsupportedVersion,
        Rule::HandshakeVersion,
        Rule::LegacyMethod,
    ];
    // The envelope family's duplicate key is the envelope's own.
    let own_duplicate = frame.family == "envelope" && expect.rule() == Some(Rule::DuplicateKey);
    if own_duplicate || expect.rule().is_some_and(|r| envelope_rules.contains(&r)) {
        return Ok(());
    }
    let Some(v) = one_strict_line(bytes) else { return Ok(()) };
    let request = v["method"].is_string() && v.get("id").is_some() && v["params"].is_object();
    let meta = &v["params"]["_meta"];
    let whole = meta["io.modelcontextprotocol/protocolVersion"] == Revision::R2026_07_28.as_str()
        && meta["io.modelcontextprotocol/clientCapabilities"].is_object();
    match !request || whole {
        true => Ok(()),
        false => Err(format!("a request of 2026-07-28 without a whole envelope: {v}")),
    }
}

/// What a `_meta` key is, by the 2026-07-28 schema's naming rules.
#[derive(Debug, PartialEq)]
enum MetaKey {
    /// Well formed, and not reserved, or one MCP defines.
    Fine,
    /// Under a prefix whose second label is `modelcontextprotocol` or
    /// `mcp`, and not one of the keys MCP defines for requests.
    ReservedUndefined,
    /// A prefix that is not dot-separated labels (a letter first, a letter
    /// or digit last, letters, digits and hyphens between), or a name that
    /// does not start and end with a letter or digit (dots, hyphens and
    /// underscores between).
    Malformed,
}

fn meta_key(key: &str) -> MetaKey {
    let label = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphabetic()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let b = name.as_bytes();
    let name_ok = b.is_empty()
        || (b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c)));
    if !name_ok || prefix.is_some_and(|p| !p.split('.').all(label)) {
        return MetaKey::Malformed;
    }
    let defined = ["protocolVersion", "clientCapabilities", "clientInfo", "logLevel"];
    let reserved = prefix.is_some_and(|p| matches!(p.split('.').nth(1), Some("modelcontextprotocol" | "mcp")));
    match reserved && !(prefix == Some("io.modelcontextprotocol") && defined.contains(&name)) {
        true => MetaKey::ReservedUndefined,
        false => MetaKey::Fine,
    }
}

#[test]
fn the_meta_key_oracle_reads_the_schemas_own_examples() {
    for fine in ["com.example/x", "com.example.mcp/x", "io.modelcontextprotocol/protocolVersion", "plain", "a/"] {
        assert_eq!(meta_key(fine), MetaKey::Fine, "{fine}");
    }
    for reserved in ["io.modelcontextprotocol/other", "dev.mcp/x", "org.modelcontextprotocol.api/x", "com.mcp.tools/x"]
    {
        assert_eq!(meta_key(reserved), MetaKey::ReservedUndefined, "{reserved}");
    }
    for malformed in ["1com.example/x", "com..example/x", "com.example/x-", "com.example/x y", "a/b/c", "-x"] {
        assert_eq!(meta_key(malformed), MetaKey::Malformed, "{malformed}");
    }
}

/// The number literals of a JSON text, outside its strings.
fn number_literals(bytes: &[u8]) -> Vec<String> {
    let (mut out, mut in_string, mut escaped, mut current) = (Vec::new(), false, false, String::new());
    for &b in bytes {
        if in_string {
            (in_string, escaped) = (escaped || b != b'"', !escaped && b == b'\\');
            continue;
        }
        if b.is_ascii_digit() || (b"-+.eE".contains(&b) && !current.is_empty()) || (b == b'-' && current.is_empty()) {
            current.push(b as char);
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        in_string = b == b'"';
    }
    out
}

/// Whether no double holds the number exactly: an integer past 2^53, more
/// significant digits than a double keeps, or one that underflows.
fn imprecise(literal: &str) -> bool {
    let Ok(value) = literal.parse::<f64>() else { return false };
    let mantissa = literal.split(['e', 'E']).next().unwrap_or_default();
    let digits = mantissa.chars().filter(char::is_ascii_digit).collect::<String>();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
    let integer = literal.chars().all(|c| c.is_ascii_digit() || c == '-');
    (integer && value.abs() > 9_007_199_254_740_991.0)
        || significant > 17
        || (value == 0.0 && digits.chars().any(|c| c != '0'))
        || (value != 0.0 && !value.is_normal())
}

/// Every valid call is the call it stands for, and carries the envelope
/// where its revision has one.
fn act_oracle(revision: Revision, bytes: &[u8], calls: &[portcullis::Call]) -> Result<(), String> {
    let v = one_strict_line(bytes).ok_or("a valid frame is not one strict JSON line")?;
    if has_duplicate_key(bytes) {
        return Err("a valid frame has a duplicate key".into());
    }
    let messages = match v {
        Value::Array(items) => items,
        other => vec![other],
    };
    if messages.len() != calls.len() {
        return Err("message count differs from call count".into());
    }
    for (m, c) in messages.iter().zip(calls) {
        let ok = m["jsonrpc"] == "2.0"
            && m["method"] == "tools/call"
            && Id::from_value(&m["id"]).as_ref() == Some(&c.id)
            && m["params"]["name"] == c.tool.as_str()
            && m["params"]["arguments"] == Value::Object(c.arguments.clone());
        if !ok {
            return Err(format!("message {m} is not call {c:?}"));
        }
        let meta = &m["params"]["_meta"];
        let enveloped = meta["io.modelcontextprotocol/protocolVersion"] == revision.as_str()
            && meta["io.modelcontextprotocol/clientCapabilities"].is_object();
        if revision.has_envelope() && !enveloped {
            return Err(format!("call {m} of {revision} has no whole envelope"));
        }
    }
    Ok(())
}

fn reject_oracle(script: &Script, index: usize, frame: &Frame, rule: Rule) -> Result<(), String> {
    use portcullis::Class;
    let catalogue = Catalogue::reference();
    let line = one_strict_line(&frame.bytes);
    let holds = match (rule, &line) {
        (Rule::DuplicateKey, _) => has_duplicate_key(&frame.bytes),
        (Rule::LineTooLong, _) => frame.bytes.len() > portcullis::reference::MAX_LINE,
        (Rule::Truncated, _) => {
            line.is_none() && serde_json::from_slice::<Value>(frame.bytes.trim_ascii_end()).is_err()
        }
        (r, None) => r.class() == Class::Malformed,
        (r, Some(_)) if r.class() == Class::Malformed => false,
        (_, Some(v)) => {
            let params = &v["params"];
            let tool = params["name"].as_str().and_then(|n| catalogue.tool(n));
            let args = params["arguments"].as_object();
            let handshake = script.frames.iter().position(|f| f.kind == "initialize").unwrap_or(0);
            match rule {
                Rule::NotAnObject => !v.is_object() && !v.is_array(),
                Rule::BadJsonrpc => v["jsonrpc"] != "2.0",
                Rule::BadId => v.get("id").is_some_and(|id| Id::from_value(id).is_none()),
                Rule::ImpreciseId => {
                    v.get("id").is_some_and(|id| id.as_f64().is_some_and(|f| f.abs() > 9007199254740991.0))
                }
                Rule::BadMethod => !v["method"].is_string(),
                Rule::BadParams => !params.is_object(),
                Rule::PositionalParams => params.is_array(),
                Rule::BatchNotAllowed => v.is_array() && !script.revision.has_batches(),
                Rule::EmptyBatch => v == &Value::Array(vec![]),
                Rule::ClientResponse => v.get("result").is_some() || v.get("error").is_some(),
                Rule::AmbiguousMessage => v.get("result").is_some() && v.get("method").is_some(),
                Rule::BadToolName => !params["name"].is_string(),
                Rule::BadArguments => params.get("arguments").is_some_and(|a| !a.is_object()),
                Rule::BeforeInitialize => index < handshake,
                Rule::RepeatedInitialize => v["method"] == "initialize" && index > handshake,
                Rule::MissingEnvelope => !script.revision.has_handshake() && params.get("_meta").is_none(),
                Rule::BadEnvelope => {
                    let meta = &params["_meta"];
                    let version = &meta["io.modelcontextprotocol/protocolVersion"];
                    let capabilities = &meta["io.modelcontextprotocol/clientCapabilities"];
                    meta.is_object() && !(version.is_string() && capabilities.is_object())
                }
                Rule::UnsupportedVersion | Rule::HandshakeVersion => {
                    let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
                    let known = version.and_then(|v| v.parse::<Revision>().ok());
                    params["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object()
                        && match rule {
                            Rule::UnsupportedVersion => version.is_some() && known.is_none(),
                            _ => known.is_some_and(|r| r.has_handshake()),
                        }
                }
                Rule::LegacyMethod => {
                    let legacy = ["initialize", "ping", "logging/setLevel"];
                    !script.revision.has_handshake() && legacy.contains(&v["method"].as_str().unwrap_or(""))
                }
                Rule::UnknownMethod => {
                    !["tools/call", "tools/list", "ping", "initialize"].contains(&v["method"].as_str().unwrap_or(""))
                }
                Rule::UnknownTool => params["name"].is_string() && tool.is_none(),
                Rule::UnauthorizedTool => tool.is_some_and(|t| !t.authorized),
                Rule::UnknownArgument => tool.zip(args).is_some_and(|(t, a)| a.keys().any(|k| t.arg(k).is_none())),
                Rule::MistypedArgument => tool.zip(args).is_some_and(|(t, a)| {
                    a.iter().any(|(k, v)| match (t.arg(k).map(|s| &s.kind), v.as_str()) {
                        (_, None) => true,
                        (Some(portcullis::ArgKind::Enum(allowed)), Some(s)) => !allowed.iter().any(|x| x == s),
                        _ => false,
                    })
                }),
                Rule::MissingArgument => {
                    tool.zip(args).is_some_and(|(t, a)| t.args.iter().any(|s| s.required && !a.contains_key(&s.name)))
                }
                Rule::NotificationCall => v["method"] == "tools/call" && v.get("id").is_none(),
                // A call of a tool that acts only once confirmed, without
                // the capability to be asked, after one that declared it.
                Rule::MissingCapability => {
                    let elicits = |v: &Value| {
                        v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object()
                    };
                    let declared_before = script.frames[..index]
                        .iter()
                        .filter_map(|f| one_strict_line(&f.bytes))
                        .any(|f| f["params"]["name"] == params["name"] && elicits(&f));
                    tool.is_some_and(|t| t.confirms) && !elicits(v) && declared_before
                }
                // A state no result could have handed out (the script is
                // written before any answer is read), and no answers.
                Rule::ForgedState => {
                    tool.is_some_and(|t| t.confirms)
                        && params["requestState"].is_string()
                        && params.get("inputResponses").is_none()
                }
                Rule::UnrequestedInput => {
                    tool.is_some_and(|t| t.confirms)
                        && params.get("requestState").is_none()
                        && params["inputResponses"].is_object()
                }
                // A retry whose state the driver fills from the answer to
                // an earlier call: spent by a retry of the same call before
                // it, altered, or handed out for other arguments.
                Rule::ReplayedState | Rule::AlteredState | Rule::ForeignState => {
                    let Some(fill) = &frame.fill else { return Err("no fill".into()) };
                    let call_of = |f: &Frame| one_strict_line(&f.bytes).map(|v| v["params"]["arguments"].clone());
                    let asked = script.frames[..index].iter().find(|f| f.id.as_ref() == Some(&fill.from));
                    let same_call = asked.and_then(call_of) == Some(params["arguments"].clone());
                    let spent = script.frames[..index].iter().any(|f| {
                        let acts = matches!(f.expect, Expect::Act(_));
                        acts && f.fill.as_ref().is_some_and(|g| g.from == fill.from) && call_of(f) == call_of(frame)
                    });
                    let altered = matches!(fill.state, portcullis::frame::Reuse::Altered { .. });
                    tool.is_some_and(|t| t.confirms)
                        && params["requestState"] == portcullis::frame::Fill::STATE.trim_matches('"')
                        && match rule {
                            Rule::ReplayedState => same_call && spent && !altered,
                            Rule::AlteredState => same_call && !spent && altered,
                            _ => asked.is_some() && !same_call && !altered,
                        }
                }
                _ => false,
            }
        }
    };
    holds.then_some(()).ok_or_else(|| format!("the bytes do not show {}", rule.id()))
}

/// A frame that carries the state placeholder is a retry the driver fills:
/// it names, as where its state comes from, an earlier call of the same
/// tool that is owed a result and acts on nothing yet (the call asked
/// about), and it carries the answers placeholder too. A frame without
/// the placeholder names nothing to fill from.
fn retry_oracle(script: &Script, index: usize) -> Result<(), String> {
    let frame = &script.frames[index];
    let state = portcullis::frame::Fill::STATE.as_bytes();
    let holds = |bytes: &[u8], part: &[u8]| bytes.windows(part.len()).any(|w| w == part);
    let placeholder = holds(&frame.bytes, state);
    let Some(fill) = &frame.fill else {
        return match placeholder {
            true => Err("a state placeholder with nothing to fill it from".into()),
            false => Ok(()),
        };
    };
    if !placeholder || !holds(&frame.bytes, portcullis::frame::Fill::ANSWERS.as_bytes()) {
        return Err("a retry without its placeholders".into());
    }
    let name = |f: &Frame| one_strict_line(&f.bytes).map(|v| v["params"]["name"].clone());
    let asked = script.frames[..index].iter().find(|f| f.id.as_ref() == Some(&fill.from));
    match asked {
        Some(a) if a.expect == Expect::Inert { request: true } && name(a).is_some() && name(a) == name(frame) => Ok(()),
        _ => Err(format!("the retry fills from id {}, which is no earlier call of its tool asked about", fill.from)),
    }
}

/// The frame a shape attack of `kind` renders for `tool`, after the handshake.
fn shape_frame(tool: portcullis::ToolSpec, kind: portcullis::attack::shape::Kind) -> Frame {
    use portcullis::attack::{Step, shape::Shape};
    let catalogue = Catalogue::new(vec![tool]);
    let spec =
        portcullis::ScriptSpec::whole(portcullis::Revision::R2025_06_18, vec![Step::Shape(Shape { kind, tool: 0 })]);
    spec.render(&catalogue, 3).frames[2].clone()
}

#[test]
fn labels_follow_the_tools_own_schema() {
    use portcullis::attack::shape::Kind;
    use portcullis::{ArgKind, ArgSpec, ToolSpec};
    let listed =
        |schema: Value| ToolSpec::from_listing(&serde_json::json!({"name": "get", "inputSchema": schema})).unwrap();
    let url = serde_json::json!({"url": {"type": "string", "format": "uri"}});
    let open = listed(serde_json::json!({"type": "object", "properties": url, "required": ["url"]}));
    let closed = listed(
        serde_json::json!({"type": "object", "properties": url, "required": ["url"], "additionalProperties": false}),
    );
    assert!(!open.closed && closed.closed);
    // An extra argument is must-reject only where the schema forbids it.
    assert!(matches!(shape_frame(open.clone(), Kind::UnknownArgument).expect, Expect::Act(_)));
    assert_eq!(shape_frame(closed.clone(), Kind::UnknownArgument).expect, Expect::Reject(Rule::UnknownArgument));
    // So is the rejected call a lifecycle attack makes before a valid one.
    let rejected_then_valid = |tool: &ToolSpec| {
        use portcullis::attack::{Step, lifecycle};
        let step = Step::Lifecycle(lifecycle::Lifecycle { kind: lifecycle::Kind::RejectedThenValid, tool: 0 });
        let spec = portcullis::ScriptSpec::whole(portcullis::Revision::R2025_06_18, vec![step]);
        spec.render(&Catalogue::new(vec![tool.clone()]), 3).frames[2].expect.clone()
    };
    assert_eq!(rejected_then_valid(&open), Expect::Reject(Rule::UnknownTool));
    assert_eq!(rejected_then_valid(&closed), Expect::Reject(Rule::UnknownArgument));
    // A token in an argument an open schema does not declare may be of any type.
    let template = serde_json::json!({"url": "{canary}", "note": "{token}"}).as_object().cloned();
    let undeclared = ToolSpec { template, ..open.clone() };
    assert!(matches!(shape_frame(undeclared, Kind::MistypedArray).expect, Expect::Act(_)));
    // A missing argument needs a required one to leave out.
    assert_eq!(shape_frame(open, Kind::MissingArgument).expect, Expect::Reject(Rule::MissingArgument));
    let all_optional =
        ToolSpec::new("get", vec![ArgSpec::optional("url", ArgKind::Url), ArgSpec::required("q", ArgKind::Text)]);
    let missing = shape_frame(all_optional.clone(), Kind::MissingArgument);
    let valid = shape_frame(all_optional, Kind::Valid);
    assert_ne!(missing.bytes, valid.bytes, "a missing argument is never the valid call");
    // Nothing required; the user's template puts the canary in `url`.
    let template = serde_json::json!({"url": "{canary}"}).as_object().cloned();
    let nothing_required = ToolSpec { template, ..ToolSpec::new("get", vec![ArgSpec::optional("url", ArgKind::Url)]) };
    let kept = shape_frame(nothing_required, Kind::MissingArgument);
    assert!(matches!(kept.expect, Expect::Act(_)), "with nothing to leave out it is a valid call: {kept:?}");
}

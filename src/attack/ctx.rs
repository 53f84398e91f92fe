//! The rendering context: turns the small choices a strategy draws into exact
//! bytes, handing out unique ids and canary tokens as it goes.

use crate::catalogue::{ArgKind, Catalogue, ToolSpec, any_string, replace_first};
use crate::frame::{Call, Expect, Frame, Rule};
use crate::protocol::{Id, Revision};
use serde_json::{Map, Value};

/// Where in the lifecycle the next frame lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Before `initialize`: only the handshake may be sent.
    BeforeInit,
    /// After the handshake.
    Ready,
}

/// Hands out ids and tokens and renders calls for one script.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The revision the script negotiates.
    pub revision: Revision,
    /// The target's tools.
    pub catalogue: &'a Catalogue,
    /// Where the next frame lands.
    pub phase: Phase,
    salt: u32,
    first_id: i64,
    next_id: i64,
    next_token: u32,
    boundary_ids: i64,
}

/// The parts of a valid call before they are written out, so an attack can
/// spoil exactly one of them.
#[derive(Clone, Debug)]
pub struct CallParts {
    /// The request id.
    pub id: i64,
    /// The canary token.
    pub token: String,
    /// The tool.
    pub tool: ToolSpec,
    /// The arguments, each carrying the token where it can.
    pub arguments: Map<String, Value>,
    /// The envelope's `_meta` object as JSON text, in a revision whose
    /// requests carry one ([`Revision::envelope`]).
    pub meta: Option<String>,
}

impl CallParts {
    /// The `arguments` object as JSON text.
    pub fn args_json(&self) -> String {
        Value::Object(self.arguments.clone()).to_string()
    }

    /// The `params` object as JSON text, with the given raw `arguments`
    /// text (and the envelope first, where the revision has one).
    pub fn params_with(&self, args_raw: &str) -> String {
        self.params_meta(self.meta.as_deref(), args_raw)
    }

    /// [`params_with`](Self::params_with) with `meta` as the raw `_meta`
    /// text, if any.
    fn params_meta(&self, meta: Option<&str>, args_raw: &str) -> String {
        params_of(meta, &self.tool.name, args_raw)
    }

    /// The opening of the `params` object: `{`, and the envelope and a
    /// comma where the revision has one.
    pub fn params_open(&self) -> String {
        self.meta.as_deref().map_or_else(|| "{".to_owned(), |m| format!(r#"{{"_meta":{m},"#))
    }

    /// The `params` object as JSON text for a call of the tool `name`
    /// with the raw `arguments` text, in this call's revision.
    pub fn params_naming(&self, name: &str, args_raw: &str) -> String {
        params_of(self.meta.as_deref(), name, args_raw)
    }

    /// The valid `params` object as JSON text with one more raw member
    /// (`"key":value`) in its `_meta`, which holds the envelope too where
    /// the revision has one.
    pub fn params_meta_adding(&self, member: &str) -> String {
        self.params_meta(Some(&meta_with(self.meta.as_deref(), member)), &self.args_json())
    }

    /// The valid `params` object as JSON text with one more raw member
    /// (`"key":value`) after `arguments`.
    pub fn params_adding(&self, member: &str) -> String {
        let params = self.params_with(&self.args_json());
        format!("{},{member}}}", &params[..params.len() - 1])
    }

    /// The whole request as JSON text, with the given raw `params` text.
    pub fn request_with(&self, params_raw: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{params_raw}}}"#, self.id)
    }

    /// The whole valid request as one JSON text (no terminator).
    pub fn request(&self) -> String {
        self.request_with(&self.params_with(&self.args_json()))
    }

    /// The name of the argument that carries the token.
    pub fn token_key(&self) -> String {
        self.arguments
            .iter()
            .find(|(_, v)| any_string(v, &|s| s.contains(&self.token)))
            .map(|(k, _)| k.clone())
            .expect("a call carries its token in an argument")
    }

    /// The byte offset just after the token in `text`, a rendering of this call.
    pub fn token_end(&self, text: &str) -> usize {
        text.find(&self.token).expect("a call carries its token") + self.token.len()
    }

    /// The request bytes with `insert` right after the token, inside the
    /// string that carries it.
    pub fn request_inserting(&self, insert: &[u8]) -> Vec<u8> {
        let text = self.request();
        let at = self.token_end(&text);
        [&text.as_bytes()[..at], insert, &text.as_bytes()[at..]].concat()
    }

    /// Like [`request_inserting`](Self::request_inserting) for text that
    /// leaves the call valid: the expected argument changes with it.
    pub fn insert_valid(&mut self, insert: &str) -> String {
        self.insert_valid_as(insert.as_bytes(), insert)
    }

    /// [`insert_valid`](Self::insert_valid) with `raw` in the request
    /// text (an escape, say) that reads as `value`. Where the token sits in
    /// a URL, the text goes in the request's `params._meta` instead, which
    /// every revision allows and no tool acts on: the character is read,
    /// yet the tool gets the same URL (a tool may refuse a URL with such a
    /// character anywhere in it, and that is no refusal of the call).
    pub fn insert_valid_as(&mut self, raw: &[u8], value: &str) -> String {
        let token = self.token.clone();
        let key = self.token_key();
        let in_url =
            self.arguments.get(&key).and_then(|v| string_with(v, &token)).is_some_and(|s| in_a_url(&s, &token));
        // Only free text takes it as it is: a name, a path or an id may be
        // held to a pattern its schema gives (or one it does not), and a
        // server that refuses the call for it is right.
        let free = self.tool.arg(&key).is_some_and(|a| a.kind == ArgKind::Text) && free_text(&key);
        if in_url || !free {
            let raw = std::str::from_utf8(raw).expect("a valid insert is UTF-8");
            return self.request_with(&self.params_meta_adding(&format!(r#""note":"{raw}""#)));
        }
        let bytes = self.request_inserting(raw);
        if let Some(v) = self.arguments.get_mut(&key) {
            replace_first(v, &token, &format!("{token}{value}"));
        }
        String::from_utf8(bytes).expect("valid insert keeps UTF-8")
    }

    /// What the executor must receive for it.
    pub fn call(&self) -> Call {
        Call {
            id: Id::Int(self.id),
            token: self.token.clone(),
            tool: self.tool.name.clone(),
            arguments: self.arguments.clone(),
        }
    }

    /// The call these parts make, its arguments moved, not copied.
    pub fn into_call(self) -> Call {
        Call { id: Id::Int(self.id), token: self.token, tool: self.tool.name.clone(), arguments: self.arguments }
    }
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    Value::from(s).to_string()
}

impl<'a> Ctx<'a> {
    /// A fresh context; `salt` keeps tokens of different sessions apart.
    pub fn new(revision: Revision, catalogue: &'a Catalogue, salt: u32) -> Self {
        Ctx { revision, catalogue, phase: Phase::Ready, salt, first_id: 1, next_id: 1, next_token: 1, boundary_ids: 0 }
    }

    /// The same context handing out request ids from `first` on, so scripts
    /// that share one session never reuse an id.
    pub fn with_first_id(mut self, first: i64) -> Self {
        self.first_id = first;
        self.next_id = first;
        self
    }

    /// A new canary token: fixed width, so no token is a prefix of another.
    pub fn token(&mut self) -> String {
        let t = crate::token::token(self.salt, self.next_token);
        self.next_token += 1;
        t
    }

    /// A new integer request id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// An id on the double precision boundary: 2^53 - 1 for the first such
    /// id of a script whose ids start at 1, just under it otherwise, so
    /// scripts sharing one session never reuse one.
    pub fn boundary_id(&mut self) -> i64 {
        const MAX_SAFE: i64 = (1 << 53) - 1;
        let id = MAX_SAFE - (self.first_id - 1) - self.boundary_ids;
        self.boundary_ids += 1;
        id
    }

    /// `text`, an integer id on or past a boundary readers differ at
    /// (2^53 + 1, the ends of i64 and u64 and just past them), moved by a step
    /// that keeps what a reader can do with it (a double holds it exactly,
    /// or not, as it does `text`; an integer type holds it or not as it
    /// holds `text`), so that scripts sharing one session never send the
    /// same one: `text` itself in a script whose ids start at 1. The step
    /// never wraps: past the first few hundred scripts of one process the
    /// id leaves the few values a double rounds to the boundary itself,
    /// and stays one no double holds.
    pub fn past_boundary(&mut self, text: &str) -> String {
        const P53: i128 = 1 << 53;
        const P63: i128 = 1 << 63;
        const P64: i128 = 1 << 64;
        let Ok(v) = text.parse::<i128>() else { return text.to_owned() };
        let k = i128::from(self.first_id - 1) + i128::from(self.boundary_ids);
        self.boundary_ids += 1;
        let moved = match v {
            // Odd, past 2^53: no double holds it.
            v if v.abs() == P53 + 1 => v + v.signum() * 2 * k,
            // Odd, just under 2^63 or 2^64: no double holds it.
            v if v == P63 - 1 || v == P64 - 1 => v - 2 * k,
            // Doubles hold multiples of 2048 past 2^63 and of 4096 past 2^64.
            v if v == -P63 || v == P63 => v + 2048 * k,
            v if v == P64 => v + 4096 * k,
            v => v,
        };
        moved.to_string()
    }

    /// A runnable tool, picked by `pick`. Panics when the catalogue has none.
    pub fn tool(&self, pick: u8) -> ToolSpec {
        let tools = self.catalogue.runnable();
        assert!(!tools.is_empty(), "the catalogue has no runnable tool that can carry a token");
        tools[pick as usize % tools.len()].clone()
    }

    /// A tool listed but not authorized, when the catalogue has one.
    pub fn forbidden_tool(&self) -> Option<ToolSpec> {
        self.catalogue.forbidden().first().map(|t| (*t).clone())
    }

    /// The parts of a valid call of `tool` with a fresh id and token.
    pub fn parts_for(&mut self, tool: ToolSpec) -> CallParts {
        let token = self.token();
        let id = self.id();
        let arguments = tool.arguments_for(&token, &self.catalogue.canary_base);
        CallParts { id, token, tool, arguments, meta: self.revision.envelope() }
    }

    /// The parts of a valid call of a runnable tool.
    pub fn parts(&mut self, pick: u8) -> CallParts {
        let tool = self.tool(pick);
        self.parts_for(tool)
    }

    /// The `params` object of a request with no other member, in this
    /// context's revision: `{}`, or the envelope alone.
    pub fn params_bare(&self) -> String {
        match self.revision.envelope() {
            Some(m) => format!(r#"{{"_meta":{m}}}"#),
            None => "{}".to_owned(),
        }
    }

    /// A request's `_meta` object, in this context's revision, with one
    /// more raw member (`"key":value`) after the envelope, if any.
    pub fn meta_with(&self, member: &str) -> String {
        meta_with(self.revision.envelope().as_deref(), member)
    }

    /// A frame that is valid where it lands: it acts, unless it lands before
    /// the handshake of a revision that has one, when it must be rejected.
    pub fn acting(&self, bytes: Vec<u8>, calls: Vec<Call>, family: &'static str, kind: &'static str) -> Frame {
        let id = (calls.len() == 1).then(|| calls[0].id.clone());
        let tokens = calls.iter().map(|c| c.token.clone()).collect();
        let expect = match self.phase {
            Phase::BeforeInit if self.revision.has_handshake() => Expect::Reject(Rule::BeforeInitialize),
            _ => Expect::Act(calls),
        };
        Frame { bytes, expect, id, tokens, family: family.into(), kind: kind.into(), fill: None }
    }

    /// A frame that is valid but for a tolerated rule: each reading either
    /// rejects it or acts once, unless it lands before the handshake, when
    /// it must be rejected.
    pub fn tolerated(
        &self,
        bytes: Vec<u8>,
        rule: Rule,
        calls: Vec<Call>,
        family: &'static str,
        kind: &'static str,
    ) -> Frame {
        let mut frame = self.acting(bytes, calls, family, kind);
        if let Expect::Act(calls) = frame.expect {
            frame.expect = Expect::Tolerate(rule, calls);
        }
        frame
    }

    /// A must-reject frame.
    pub fn rejected(
        &self,
        bytes: Vec<u8>,
        rule: Rule,
        id: Option<Id>,
        tokens: Vec<String>,
        family: &'static str,
        kind: &'static str,
    ) -> Frame {
        // A token that did not survive the attack (a dropped argument) is
        // not the frame's: only tokens in its bytes attribute effects to it.
        let tokens = tokens.into_iter().filter(|t| contains(&bytes, t.as_bytes())).collect();
        Frame { bytes, expect: Expect::Reject(rule), id, tokens, family: family.into(), kind: kind.into(), fill: None }
    }

    /// A must-reject frame built from call parts whose id is still valid.
    pub fn rejected_call(
        &self,
        text: String,
        rule: Rule,
        parts: &CallParts,
        family: &'static str,
        kind: &'static str,
    ) -> Frame {
        self.rejected(line(text), rule, Some(Id::Int(parts.id)), vec![parts.token.clone()], family, kind)
    }

    /// A plain valid `tools/call` frame.
    pub fn valid_call(&mut self, pick: u8, family: &'static str) -> Frame {
        let parts = self.parts(pick);
        self.acting(line(parts.request()), vec![parts.call()], family, "valid_call")
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// A `tools/call`'s `params` text: `_meta` first where there is one.
fn params_of(meta: Option<&str>, name: &str, args_raw: &str) -> String {
    let meta = meta.map(|m| format!(r#""_meta":{m},"#)).unwrap_or_default();
    format!(r#"{{{meta}"name":{},"arguments":{args_raw}}}"#, json_str(name))
}

/// The `_meta` object `envelope` (or an empty one) with `member` added
/// after what it holds.
fn meta_with(envelope: Option<&str>, member: &str) -> String {
    match envelope {
        Some(m) => format!("{},{member}}}", &m[..m.len() - 1]),
        None => format!("{{{member}}}"),
    }
}

/// `text` with its LF terminator, as bytes.
pub fn line(text: impl Into<Vec<u8>>) -> Vec<u8> {
    let mut b = text.into();
    b.push(b'\n');
    b
}

/// The first string in `v`, at any depth, that holds `token`.
fn string_with(v: &Value, token: &str) -> Option<String> {
    match v {
        Value::String(s) => s.contains(token).then(|| s.clone()),
        Value::Array(items) => items.iter().find_map(|x| string_with(x, token)),
        Value::Object(m) => m.values().find_map(|x| string_with(x, token)),
        _ => None,
    }
}

/// Whether an argument's name says it holds free text, not a name the
/// server looks up or creates (a path, a file, an id), which a server may
/// rightly refuse at 4 KiB, or with a character its pattern leaves out.
pub(crate) fn free_text(key: &str) -> bool {
    let key = key.to_lowercase();
    !["path", "file", "dir", "folder", "name", "id", "key", "url", "uri"].iter().any(|n| key.contains(n))
}

/// Whether `token` sits in `s` after a URL's scheme, with no `#` in `s`.
fn in_a_url(s: &str, token: &str) -> bool {
    let Some(at) = s.find(token) else { return false };
    s[..at].contains("://") && !s.contains('#') && !s.contains('"') && !s.contains('\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{ArgKind, ArgSpec};

    fn parts(kind: ArgKind) -> CallParts {
        parts_at(Revision::LATEST_HANDSHAKEN, kind)
    }

    fn parts_at(revision: Revision, kind: ArgKind) -> CallParts {
        let catalogue = Catalogue::new(vec![ToolSpec::new("t", vec![ArgSpec::required("a", kind)])]);
        Ctx::new(revision, &catalogue, 1).parts(0)
    }

    #[test]
    fn a_request_of_a_revision_with_an_envelope_carries_it_and_what_goes_in_meta_joins_it() {
        let mut url = parts_at(Revision::R2026_07_28, ArgKind::Url);
        let v: Value = serde_json::from_str(&url.request()).expect("valid JSON");
        let meta = &v["params"]["_meta"];
        assert_eq!(meta[crate::protocol::VERSION_KEY], "2026-07-28", "{v}");
        assert!(meta[crate::protocol::CAPABILITIES_KEY].is_object(), "{v}");
        let text = url.insert_valid("é");
        assert_eq!(text.matches(r#""_meta""#).count(), 1, "one _meta: {text}");
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(
            (v["params"]["_meta"]["note"].as_str(), v["params"]["_meta"][crate::protocol::VERSION_KEY].as_str()),
            (Some("é"), Some("2026-07-28"))
        );
        let legacy: Value = serde_json::from_str(&parts(ArgKind::Url).request()).expect("valid JSON");
        assert!(legacy["params"].get("_meta").is_none(), "no envelope before 2026-07-28: {legacy}");
    }

    #[test]
    fn a_look_alike_beside_a_url_goes_in_meta_and_elsewhere_after_the_token() {
        let mut url = parts(ArgKind::Url);
        let before = url.arguments.clone();
        let text = url.insert_valid("é");
        assert_eq!(url.arguments, before, "the tool gets the same URL");
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["params"]["_meta"]["note"], "é", "{text}");
        let mut pair = parts(ArgKind::Url);
        let text = pair.insert_valid_as(br"\ud83d\ude00", "\u{1F600}");
        assert!(text.contains(r#""_meta":{"note":"\ud83d\ude00"}"#), "the raw text carries the escape: {text}");
        assert_eq!(pair.arguments, before, "{text}");
        let mut note = parts(ArgKind::Text);
        let token = note.token.clone();
        note.insert_valid("é");
        assert!(note.arguments["a"].as_str().is_some_and(|a| a.contains(&format!("{token}é"))), "{:?}", note.arguments);
        // A name may be held to a pattern: the tool gets it as it is.
        for kind in [ArgKind::Text, ArgKind::Path] {
            let catalogue = Catalogue::new(vec![ToolSpec::new("t", vec![ArgSpec::required("name", kind)])]);
            let mut named = Ctx::new(Revision::LATEST_HANDSHAKEN, &catalogue, 1).parts(0);
            let before = named.arguments.clone();
            let text = named.insert_valid("é");
            assert_eq!(named.arguments, before, "{text}");
            let v: Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(v["params"]["_meta"]["note"], "é", "{text}");
        }
    }
}

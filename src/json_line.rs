//! Reading one line a server wrote as a JSON value. JSON's grammar (RFC 8259
//! §7) allows any `\uXXXX` escape, an unpaired surrogate too, and a server
//! that echoes what it was sent writes them (`JSON.stringify` does); serde_json
//! refuses them. Such a line is still exactly one JSON value, so it is read
//! with each unpaired surrogate escape taken as U+FFFD.

use crate::protocol::Id;
use serde_json::Value;

/// The line as a JSON value, if it is exactly one (unpaired surrogate escapes
/// allowed).
pub(crate) fn parse(line: &[u8]) -> Option<Value> {
    match serde_json::from_slice(line) {
        Ok(v) => Some(v),
        Err(_) => serde_json::from_slice(&without_lone_surrogates(line)?).ok(),
    }
}

/// The surrogate a `\uXXXX` escape at `at` (the backslash) names, if any:
/// true for a high one, false for a low one.
fn surrogate_at(line: &[u8], at: usize) -> Option<bool> {
    let hex = line.get(at + 2..at + 6)?;
    if line.get(at + 1) != Some(&b'u') {
        return None;
    }
    let unit = u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    match unit {
        0xD800..=0xDBFF => Some(true),
        0xDC00..=0xDFFF => Some(false),
        _ => None,
    }
}

/// `line` with every unpaired surrogate escape inside a string replaced by
/// `\ufffd` (the same width); `None` when it has none.
fn without_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let mut out = line.to_vec();
    let mut changed = false;
    let (mut i, mut in_string) = (0, false);
    while i < line.len() {
        match line[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                match surrogate_at(line, i) {
                    Some(true) if surrogate_at(line, i + 6) == Some(false) => i += 6,
                    Some(_) => {
                        out[i..i + 6].copy_from_slice(br"\ufffd");
                        changed = true;
                    }
                    None => {}
                }
                // Past the escape's second byte; a `\u`'s hex digits are
                // neither quotes nor backslashes.
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    changed.then_some(out)
}

/// How many bytes of `bytes` its whole lines take: up to its last LF, as
/// what follows is not a line yet.
pub(crate) fn whole(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |end| end + 1)
}

/// The JSON value of each LF-separated line of `lines` that is one.
pub(crate) fn values(lines: &[u8]) -> impl Iterator<Item = Value> + '_ {
    lines.split(|b| *b == b'\n').filter_map(parse)
}

/// The messages a value holds: each of a batch's, or the value itself.
pub(crate) fn messages(v: &Value) -> &[Value] {
    v.as_array().map_or(std::slice::from_ref(v), Vec::as_slice)
}

/// The answers a client waits for: each of `ids`, and one for each of
/// `or_null`: its id, when it has one, or an error with a null id; or, for
/// one with no id readable, a response whose id names nothing awaited.
#[derive(Clone, Debug, Default)]
pub(crate) struct Awaited {
    ids: Vec<Id>,
    or_null: Vec<Option<Id>>,
    /// Responses with a null id, and with an id that named nothing awaited.
    nulls: usize,
    unnamed: usize,
    /// Whether those of `or_null` with no id readable are left out of the
    /// wait (a marker after them is awaited, or what they get is left to
    /// the quiet wait).
    readable_only: bool,
}

impl Awaited {
    /// What `settle` names.
    pub(crate) fn of(settle: &crate::seam::Settle) -> Awaited {
        Awaited { ids: settle.owed.clone(), or_null: settle.owed_or_null.clone(), ..Awaited::default() }
    }

    /// The same, with the answers to `ids` awaited too.
    #[cfg(feature = "process")]
    pub(crate) fn and(mut self, ids: Vec<Id>) -> Awaited {
        self.ids.extend(ids);
        self
    }

    /// The answers to `ids`, by id only.
    #[cfg(feature = "process")]
    pub(crate) fn ids(ids: Vec<Id>) -> Awaited {
        Awaited { ids, ..Awaited::default() }
    }

    /// The answers to `ids`, and one to each of `or_null` by its id or
    /// null; those of `or_null` with no id readable count for what covers
    /// the rest, and are not waited for themselves.
    #[cfg(feature = "process")]
    pub(crate) fn or_null(ids: Vec<Id>, or_null: Vec<Option<Id>>) -> Awaited {
        Awaited { ids, or_null, readable_only: true, ..Awaited::default() }
    }

    /// Takes in the responses among the whole lines of `lines`.
    pub(crate) fn strike(&mut self, lines: &[u8]) {
        for v in values(lines) {
            for m in messages(&v).iter().filter(|m| m.get("result").is_some() || m.get("error").is_some()) {
                let Some(got) = m.get("id").filter(|id| !id.is_null()) else {
                    self.nulls += 1;
                    continue;
                };
                let got = Id::from_value(got);
                let named = |o: &Id| got.as_ref().is_some_and(|g| same_request(o, g));
                if let Some(at) = self.ids.iter().position(named) {
                    self.ids.remove(at);
                } else if let Some(at) = self.or_null.iter().position(|o| o.as_ref().is_some_and(named)) {
                    self.or_null.remove(at);
                } else {
                    self.unnamed += 1;
                }
            }
        }
    }

    /// Whether every answer came: those awaited by id, and as many others
    /// as are owed by id or null (null ids for any of them, ids naming
    /// nothing awaited only for those with no id readable).
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.uncovered().iter().all(|o| self.readable_only && o.is_none())
    }

    /// The answers owed by id or null (each with its id, where readable)
    /// that nothing has answered yet. A null id answers a request whose id
    /// could not be read first (one with an id would rather be answered by
    /// it), then the earliest, as a server that answers in order does.
    pub(crate) fn uncovered(&self) -> Vec<Option<Id>> {
        let unreadable = self.or_null.iter().filter(|o| o.is_none()).count();
        let spare = self.nulls + self.unnamed.min(unreadable);
        let (mut unnamed, mut named) = (spare.min(unreadable), spare.saturating_sub(unreadable));
        let mut left = Vec::new();
        for owed in &self.or_null {
            let spent = if owed.is_none() { &mut unnamed } else { &mut named };
            match *spent {
                0 => left.push(owed.clone()),
                _ => *spent -= 1,
            }
        }
        left
    }
}

/// Whether the response `v` (one object, or a batch) answers request `id`.
#[cfg(feature = "process")]
pub(crate) fn answers(v: &Value, id: &Id) -> bool {
    answered_ids(v).any(|got| same_request(id, &got))
}

/// The ids a response carries: one object's, or each of a batch's.
#[cfg(feature = "process")]
fn answered_ids(v: &Value) -> impl Iterator<Item = Id> + '_ {
    messages(v).iter().filter_map(|r| r.get("id")).filter_map(Id::from_value)
}

/// Whether an answer with id `got` shows the server done with request
/// `owed`: the same id, or the same digits retyped. Whether the id came
/// back right is for the checks to judge; the wait is only for the server.
fn same_request(owed: &Id, got: &Id) -> bool {
    match (owed, got) {
        (Id::Int(n), Id::Str(s)) | (Id::Str(s), Id::Int(n)) => s.parse() == Ok(*n),
        _ => owed == got,
    }
}

/// `stdout` without its first whole line that is a response (a result
/// or an error, no method) with id `id`: the answer to a request the
/// harness wrote for itself (a marker, a handshake left out).
#[cfg(feature = "process")]
pub(crate) fn without_answer(stdout: &[u8], id: &Value) -> Vec<u8> {
    let answers = |v: &Value| {
        v.get("id") == Some(id) && v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
    };
    let mut at = 0;
    for line in stdout.split_inclusive(|b| *b == b'\n') {
        if line.ends_with(b"\n") && parse(&line[..line.len() - 1]).is_some_and(|v| answers(&v)) {
            return [&stdout[..at], &stdout[at + line.len()..]].concat();
        }
        at += line.len();
    }
    stdout.to_vec()
}

/// Whether `result` asks the client for input (MCP 2026-07-28's
/// `resultType` `input_required`), which acts on nothing yet.
pub(crate) fn asks_input(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn unpaired_surrogates_read_as_replacement_characters() {
        assert_eq!(parse(br#"{"a":"x\ud800y"}"#), Some(json!({"a": "x\u{FFFD}y"})));
        assert_eq!(parse(br#"{"a":"\udc00"}"#), Some(json!({"a": "\u{FFFD}"})));
        assert_eq!(parse(br#"{"a":"\ud800\ud800\udc00"}"#), Some(json!({"a": "\u{FFFD}\u{10000}"})));
        assert_eq!(parse(br#"{"a":"\ud83d\ude00"}"#), Some(json!({"a": "😀"})));
    }

    #[test]
    fn only_escapes_inside_strings_count() {
        // An escaped backslash then the text `ud800`: no escape at all.
        assert_eq!(parse(br#"{"a":"\\ud800"}"#), Some(json!({"a": "\\ud800"})));
        // Outside a string it is not JSON, with or without the rewrite.
        assert_eq!(parse(br#"{"a":1}\ud800"#), None);
        assert_eq!(parse(br#"{"a":"x"} {"b":1}"#), None);
    }

    #[test]
    #[cfg(feature = "process")]
    fn a_null_id_answers_an_unreadable_request_first_then_the_earliest() {
        use super::Awaited;
        use crate::protocol::Id;
        let or_null = vec![Some(Id::Int(5)), None, Some(Id::Int(7))];
        let null = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;
        let mut a = Awaited::or_null(vec![Id::Str("mark".into())], or_null.clone());
        // The marker's answer names what is awaited: it answers none of them.
        a.strike(br#"{"jsonrpc":"2.0","id":"mark","result":{}}"#);
        assert_eq!(a.uncovered(), or_null);
        a.strike(null);
        assert_eq!(a.uncovered(), [Some(Id::Int(5)), Some(Id::Int(7))]);
        a.strike(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#);
        assert_eq!(a.uncovered(), [Some(Id::Int(5))]);
        assert!(!a.is_empty());
        a.strike(null);
        assert!(a.uncovered().is_empty() && a.is_empty());
        // What has no id readable is not waited for, but counts first.
        let mut a = Awaited::or_null(Vec::new(), vec![None, Some(Id::Int(5))]);
        assert!(!a.is_empty(), "5 is awaited");
        a.strike(null);
        assert_eq!(a.uncovered(), [Some(Id::Int(5))]);
        assert!(!a.is_empty(), "the null answered the unreadable one");
        a.strike(br#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}"#);
        assert!(a.is_empty());
    }
}

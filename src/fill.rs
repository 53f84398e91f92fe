//! Frames whose bytes wait on an earlier answer (MCP 2026-07-28 multi
//! round-trip): a retry carries the `requestState` and answers an
//! `input_required` result handed out, which no script can know when it is
//! drawn. Such a frame is built with placeholders and a [`Fill`]; the driver
//! writes it only once the request it names has been answered, with the
//! placeholders replaced ([`fill`]), and records what it wrote
//! ([`Filled`]). A frame whose request was not answered with a state is not
//! written, and is judged as no frame at all ([`written`]).

use crate::frame::{Expect, Frame};
pub use crate::frame::{Fill, Reuse};
use crate::json_line;
use crate::protocol::Id;
use crate::script::Script;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::ops::Range;

/// Why the driver wrote no bytes for a frame that waits on a fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unwritten {
    /// No earlier frame sent the call it fills from.
    NotSent,
    /// The gateway had ended before it.
    Ended,
    /// The call asked about got no answer.
    NoAnswer,
    /// The call asked about was answered without asking for input.
    NotAsked,
    /// Its answer handed out no (or an empty) `requestState`.
    NoState,
    /// Its answer asked for input no answer here can give.
    Unanswerable,
    /// An earlier retry with the same state was not served.
    EarlierNotServed,
    /// The frame's bytes no longer hold its placeholders.
    NoPlaceholders,
}

impl std::fmt::Display for Unwritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unwritten::NotSent => "the call asked about was not sent",
            Unwritten::Ended => "the gateway had ended",
            Unwritten::NoAnswer => "the call asked about got no answer",
            Unwritten::NotAsked => "the call asked about was answered without asking for input",
            Unwritten::NoState => "its answer handed out no requestState, or an empty one",
            Unwritten::Unanswerable => "its answer asked for input no answer here can give",
            Unwritten::EarlierNotServed => "an earlier retry with the same state was not served",
            Unwritten::NoPlaceholders => "the frame lost its placeholders",
        })
    }
}

/// What the driver wrote for a frame with a [`Fill`]: its bytes, or why
/// it wrote nothing, and how many effects the session had shown before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filled {
    /// The frame's index in its script.
    pub frame: usize,
    /// The bytes written, or why none were.
    pub written: Result<Vec<u8>, Unwritten>,
    /// How many effects had reached the executor when it was written: an
    /// earlier one cannot be its.
    pub effects_before: usize,
}

/// The bytes of `frame` (built with [`Fill`] `fill`) once the answer to
/// `fill.from` in `stdout` is known: its placeholders replaced by the state
/// and by accepting answers to what it asked. `earlier` are the retries
/// written before it with the same state, each of which must have been
/// served (a state is spent by the retry that redeems it). Else why the
/// frame cannot be written.
pub(crate) fn fill(frame: &Frame, fill: &Fill, stdout: &[u8], earlier: &[Id]) -> Result<Vec<u8>, Unwritten> {
    let result = match response(stdout, &fill.from) {
        None => return Err(Unwritten::NoAnswer),
        Some(r) => r.get("result").cloned().filter(json_line::asks_input),
    };
    let result = result.ok_or(Unwritten::NotAsked)?;
    let handed = result.get("requestState").and_then(Value::as_str);
    // A server may ask for input and hand out no state (the schema asks for
    // one of the two): the retry that confirms carries the answers alone.
    // Any other retry is about the state, and has none to be about.
    let answers_alone = matches!(frame.expect, crate::frame::Expect::Act(_)) && result.get("inputRequests").is_some();
    if handed.is_none() && !answers_alone {
        return Err(Unwritten::NoState);
    }
    if !earlier.iter().all(|id| response(stdout, id).is_some_and(|r| served(&r))) {
        return Err(Unwritten::EarlierNotServed);
    }
    let state = match (handed, &fill.state) {
        (Some(state), Reuse::Verbatim) => Some(state.to_owned()),
        (Some(state), Reuse::Altered { at }) => Some(altered(state, *at).ok_or(Unwritten::NoState)?),
        (None, _) => None,
    };
    let answers = match result.get("inputRequests") {
        Some(Value::Object(asked)) => accepting(asked).ok_or(Unwritten::Unanswerable)?,
        None => json!({}),
        Some(_) => return Err(Unwritten::Unanswerable),
    };
    let placeholders = (find(&frame.bytes, Fill::STATE), find(&frame.bytes, Fill::ANSWERS));
    let (Some(at_state), Some(at_answers)) = placeholders else { return Err(Unwritten::NoPlaceholders) };
    // With no state, the member that would carry it goes, comma and all.
    let (at_state, state_len, state) = match state {
        Some(state) => (at_state, Fill::STATE.len(), Value::from(state).to_string()),
        None => {
            let member = format!("\"requestState\":{},", Fill::STATE);
            let at = find(&frame.bytes, &member).ok_or(Unwritten::NoPlaceholders)?;
            (at, member.len(), String::new())
        }
    };
    let answers = answers.to_string();
    let mut spliced = [(at_state, state_len, state.as_bytes()), (at_answers, Fill::ANSWERS.len(), answers.as_bytes())];
    spliced.sort_by_key(|(at, ..)| *at);
    let (mut bytes, mut from) = (Vec::with_capacity(frame.bytes.len() + state.len() + answers.len()), 0);
    for (at, len, with) in spliced {
        bytes.extend_from_slice(&frame.bytes[from..at]);
        bytes.extend_from_slice(with);
        from = at + len;
    }
    bytes.extend_from_slice(&frame.bytes[from..]);
    Ok(bytes)
}

fn find(bytes: &[u8], placeholder: &str) -> Option<usize> {
    memchr::memmem::find(bytes, placeholder.as_bytes())
}

/// The response to request `id` in the whole lines of `stdout`: a message
/// with that id and a result or an error, not a request of the server's.
pub(crate) fn response(stdout: &[u8], id: &Id) -> Option<Value> {
    let whole = &stdout[..json_line::whole(stdout)];
    json_line::values(whole).find_map(|v| {
        json_line::messages(&v)
            .iter()
            .find(|m| {
                let responds = m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some());
                responds && m.get("id").and_then(Id::from_value).as_ref() == Some(id)
            })
            .cloned()
    })
}

/// Whether response `r` served its request: a result that is no refusal
/// (`isError`) and asks for nothing more.
fn served(r: &Value) -> bool {
    let result = r.get("result");
    result.is_some_and(|res| !json_line::asks_input(res) && res.get("isError") != Some(&Value::Bool(true)))
}

/// `state` with one character in its first half changed to another of its
/// kind (a digit to a digit, a letter to a letter of the same case,
/// anything else to `A`), so it stays as well formed as it was and is no
/// longer what was handed. The first half: the last characters of base64
/// may carry bits a decoder drops, so a change there may change nothing.
fn altered(state: &str, at: u8) -> Option<String> {
    let mut chars: Vec<char> = state.chars().collect();
    let i = at as usize % chars.len().div_ceil(2).max(1);
    let c = chars.get_mut(i)?;
    *c = match *c {
        '9' => '0',
        'z' => 'a',
        'Z' => 'A',
        c if c.is_ascii_alphanumeric() => (c as u8 + 1) as char,
        _ => 'A',
    };
    Some(chars.into_iter().collect())
}

/// Answers that accept each of `asked`: an elicitation's form filled in
/// from its schema ([`value_for`]). `None` when one asks for something else
/// (sampling, roots, a URL to visit) or a required field has no value a
/// correct server surely accepts.
fn accepting(asked: &Map<String, Value>) -> Option<Value> {
    let mut answers = Map::new();
    for (key, request) in asked {
        if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
            return None;
        }
        let params = request.get("params");
        if params.and_then(|p| p.get("mode")).and_then(Value::as_str).is_some_and(|m| m != "form") {
            return None; // a URL the user must visit: nothing a client can answer here
        }
        let schema = params.and_then(|p| p.get("requestedSchema"));
        let properties = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
        let required: Vec<&str> = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut content = Map::new();
        for (name, field) in properties.into_iter().flatten() {
            match value_for(field) {
                Some(v) => drop(content.insert(name.clone(), v)),
                None if required.contains(&name.as_str()) => return None,
                None => {}
            }
        }
        answers.insert(key.clone(), json!({"action": "accept", "content": content}));
    }
    Some(Value::Object(answers))
}

/// A value an elicitation field of this schema surely accepts: its
/// default, its `const`, the first of its enum, or true for a boolean.
/// Nothing for any other field: a made-up string or number may break a
/// format, pattern or bound, and a correct server would then refuse it.
fn value_for(field: &Value) -> Option<Value> {
    let first = field.get("enum").and_then(Value::as_array).and_then(|e| e.first());
    let given = field.get("default").or_else(|| field.get("const")).or(first);
    match (given, field.get("type").and_then(Value::as_str)) {
        (Some(v), _) => Some(v.clone()),
        (None, Some("boolean")) => Some(Value::Bool(true)),
        _ => None,
    }
}

/// Each frame of `script` that waits on a fill, with its span in stdin.
pub(crate) fn waiting(script: &Script) -> Vec<(usize, Range<usize>)> {
    let spans = script.frame_spans().into_iter().enumerate();
    spans.filter(|(i, _)| script.frames[*i].fill.is_some()).collect()
}

/// The write spans of `script` with a write boundary before and after each
/// frame that waits on a fill (`waiting`, as [`waiting`] gives them), and none inside one: the driver writes such
/// a frame alone, once it is filled.
pub(crate) fn write_spans(script: &Script, waiting: &[(usize, Range<usize>)]) -> Vec<Range<usize>> {
    let filled: Vec<&Range<usize>> = waiting.iter().map(|(_, r)| r).collect();
    if filled.is_empty() {
        return script.write_spans();
    }
    let mut ends: Vec<usize> = script.write_ends.clone();
    ends.extend(filled.iter().flat_map(|r| [r.start, r.end]));
    ends.retain(|e| *e > 0 && !filled.iter().any(|r| r.start < *e && *e < r.end));
    ends.sort_unstable();
    ends.dedup();
    let mut start = 0;
    ends.into_iter()
        .map(|end| {
            let span = start..end;
            start = end;
            span
        })
        .collect()
}

/// `script` as it was written: each frame in `filled` with the bytes the
/// driver wrote for it, and one it did not write made an empty frame that
/// owes and carries nothing.
pub(crate) fn written<'a>(script: &'a Script, filled: &[Filled]) -> Cow<'a, Script> {
    if script.frames.iter().all(|f| f.fill.is_none()) {
        return Cow::Borrowed(script);
    }
    let mut written = script.clone();
    for (i, frame) in written.frames.iter_mut().enumerate().filter(|(_, f)| f.fill.is_some()) {
        // A retry the driver never reached (it stopped before) was not
        // written either.
        match filled.iter().find(|f| f.frame == i).map(|f| &f.written) {
            Some(Ok(bytes)) => frame.bytes = bytes.clone(),
            _ => {
                frame.bytes.clear();
                frame.expect = Expect::Inert { request: false };
                frame.tokens.clear();
                frame.id = None;
            }
        }
    }
    let mut at = 0;
    written.write_ends = written
        .frames
        .iter()
        .map(|f| f.bytes.len())
        .filter(|n| *n > 0)
        .map(|n| {
            at += n;
            at
        })
        .collect();
    Cow::Owned(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_altered_state_differs_in_one_character_of_the_same_kind() {
        assert_eq!(altered("rs0009ab", 3).as_deref(), Some("rs0109ab"));
        assert_eq!(altered("rs9009ab", 6).as_deref(), Some("rs0009ab"), "in the first half");
        assert_eq!(altered("a.bcd", 1).as_deref(), Some("aAbcd"));
        assert_eq!(altered("", 0), None);
    }

    #[test]
    fn accepting_answers_fill_each_elicitation_and_refuse_what_they_cannot_answer() {
        let ask =
            |schema: Value| json!({"confirm": {"method": "elicitation/create", "params": {"requestedSchema": schema}}});
        let asked = ask(
            json!({"properties": {"confirm": {"type": "boolean"}, "why": {"type": "array"}}, "required": ["confirm"]}),
        );
        let answers = accepting(asked.as_object().unwrap()).unwrap();
        assert_eq!(answers, json!({"confirm": {"action": "accept", "content": {"confirm": true}}}));
        let asked = ask(json!({"properties": {"why": {"type": "array"}}, "required": ["why"]}));
        assert_eq!(accepting(asked.as_object().unwrap()), None);
        // A made-up string may break a format or a pattern: unanswerable.
        let asked = ask(json!({"properties": {"email": {"type": "string"}}, "required": ["email"]}));
        assert_eq!(accepting(asked.as_object().unwrap()), None);
        let asked = ask(json!({"properties": {"n": {"type": "integer", "default": 3}, "c": {"enum": ["b", "a"]}}}));
        let content = json!({"n": 3, "c": "b"});
        assert_eq!(
            accepting(asked.as_object().unwrap()),
            Some(json!({"confirm": {"action": "accept", "content": content}}))
        );
        let url = json!({"u": {"method": "elicitation/create", "params": {"mode": "url", "url": "https://x"}}});
        assert_eq!(accepting(url.as_object().unwrap()), None);
        let sampling = json!({"s": {"method": "sampling/createMessage", "params": {}}});
        assert_eq!(accepting(sampling.as_object().unwrap()), None);
    }

    #[test]
    fn a_frame_is_filled_from_the_input_required_answer_to_its_request() {
        let frame = Frame {
            bytes: format!(
                "{{\"params\":{{\"requestState\":{},\"inputResponses\":{}}}}}\n",
                Fill::STATE,
                Fill::ANSWERS
            )
            .into_bytes(),
            expect: Expect::Inert { request: false },
            id: None,
            tokens: vec![],
            family: "roundtrip".into(),
            kind: "confirmed".into(),
            fill: None,
        };
        let how = Fill { from: Id::Int(3), state: Reuse::Verbatim };
        let other = br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"no"}}"#;
        // A request of the server's with the same id is no answer.
        let request = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        let asked = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"s1","inputRequests":{}}}"#;
        let stdout = [&other[..], b"\n", &request[..], b"\n", &asked[..], b"\n"].concat();
        let bytes = fill(&frame, &how, &stdout, &[]).unwrap();
        assert_eq!(bytes, b"{\"params\":{\"requestState\":\"s1\",\"inputResponses\":{}}}\n");
        let cut = &stdout[..stdout.len() - 1];
        assert_eq!(fill(&frame, &how, cut, &[]), Err(Unwritten::NoAnswer), "a line not yet ended");
        let complete = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}"#;
        let why = fill(&frame, &how, &[&complete[..], b"\n"].concat(), &[]);
        assert_eq!(why, Err(Unwritten::NotAsked));
        // A replay waits on the retry that spent the state: served, or not.
        let served = br#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[]}}"#;
        let refused = br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"spent"}}"#;
        let after = |r: &[u8]| fill(&frame, &how, &[&stdout[..], r, b"\n"].concat(), &[Id::Int(4)]);
        assert!(after(served).is_ok());
        assert_eq!(after(refused), Err(Unwritten::EarlierNotServed));
        // Input asked for with no state: the confirming retry carries the
        // answers alone; a retry about the state has none to be about.
        let stateless = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{}}}"#;
        let stdout = [&stateless[..], b"\n"].concat();
        assert_eq!(fill(&frame, &how, &stdout, &[]), Err(Unwritten::NoState));
        let confirms = Frame { expect: Expect::Act(vec![]), ..frame.clone() };
        assert_eq!(fill(&confirms, &how, &stdout, &[]).unwrap(), b"{\"params\":{\"inputResponses\":{}}}\n");
    }

    #[test]
    fn a_frame_not_written_is_judged_as_no_frame_and_a_filled_one_as_written() {
        use crate::catalogue::Catalogue;
        use crate::protocol::Revision;
        let script = crate::script::ScriptSpec::whole(Revision::R2026_07_28, vec![]).render(&Catalogue::reference(), 1);
        let mut script = script;
        let mut retry = script.frames[0].clone();
        retry.expect = Expect::Reject(crate::frame::Rule::AlteredState);
        retry.tokens = vec!["t".into()];
        retry.fill = Some(Fill { from: Id::Int(1), state: Reuse::Verbatim });
        script.frames.extend([retry.clone(), retry.clone(), retry]);
        let filled = [
            Filled { frame: 1, written: Err(Unwritten::NoState), effects_before: 0 },
            Filled { frame: 2, written: Ok(b"x\n".to_vec()), effects_before: 0 },
        ];
        let written = written(&script, &filled);
        let (skipped, sent) = (&written.frames[1], &written.frames[2]);
        for skipped in [skipped, &written.frames[3]] {
            // Not filled, or never reached: no frame.
            assert!(skipped.bytes.is_empty() && skipped.tokens.is_empty() && skipped.id.is_none());
            assert_eq!(skipped.expect, Expect::Inert { request: false });
        }
        assert_eq!((&sent.bytes[..], sent.tokens.len()), (&b"x\n"[..], 1));
        assert_eq!(written.write_ends.last(), Some(&(script.frames[0].bytes.len() + 2)));
    }
}

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

/// What the driver wrote for a frame with a [`Fill`]: its bytes, or
/// nothing where the request it waits on got no state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filled {
    /// The frame's index in its script.
    pub frame: usize,
    /// The bytes written, if any.
    pub bytes: Option<Vec<u8>>,
}

/// The bytes of `frame` (built with [`Fill`] `fill`) once the answer to
/// `fill.from` in `stdout` is known: its placeholders replaced by the state
/// and by accepting answers to what it asked. `None` when no such answer
/// came with a state, or it asked for input no answer here can give.
pub(crate) fn fill(frame: &Frame, fill: &Fill, stdout: &[u8]) -> Option<Vec<u8>> {
    let result = handed(stdout, &fill.from)?;
    let state = result.get("requestState")?.as_str()?;
    let state = match fill.state {
        Reuse::Verbatim => state.to_owned(),
        Reuse::Altered { at } => altered(state, at)?,
    };
    let answers = match result.get("inputRequests") {
        Some(Value::Object(asked)) => accepting(asked)?,
        None => json!({}),
        Some(_) => return None,
    };
    let text = std::str::from_utf8(&frame.bytes).ok()?;
    let text = text.replacen(Fill::STATE, &Value::from(state).to_string(), 1);
    Some(text.replacen(Fill::ANSWERS, &answers.to_string(), 1).into_bytes())
}

/// The `input_required` result answering request `id` in `stdout`.
pub(crate) fn handed(stdout: &[u8], id: &Id) -> Option<Value> {
    let whole = &stdout[..json_line::whole(stdout)];
    json_line::values(whole)
        .flat_map(|v| json_line::messages(&v).to_vec())
        .find(|m| m.get("id").and_then(Id::from_value).as_ref() == Some(id))
        .and_then(|m| m.get("result").cloned())
        .filter(json_line::asks_input)
}

/// Whether the answer to `id` is in `stdout` yet, whatever it says.
pub(crate) fn answered(stdout: &[u8], id: &Id) -> bool {
    let whole = &stdout[..json_line::whole(stdout)];
    json_line::values(whole)
        .any(|v| json_line::messages(&v).iter().any(|m| m.get("id").and_then(Id::from_value).as_ref() == Some(id)))
}

/// `state` with one character changed to another of its kind (a digit to
/// a digit, a letter to a letter of the same case, anything else to `A`),
/// so it stays as well formed as it was and is no longer what was handed.
fn altered(state: &str, at: u8) -> Option<String> {
    let mut chars: Vec<char> = state.chars().collect();
    let i = at as usize % chars.len().max(1);
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
/// from its schema (a boolean true, the first of an enum, a number at its
/// minimum, a string). `None` when one asks for something else (sampling,
/// roots) or a required field of a kind no value here fits.
fn accepting(asked: &Map<String, Value>) -> Option<Value> {
    let mut answers = Map::new();
    for (key, request) in asked {
        if request.get("method").and_then(Value::as_str) != Some("elicitation/create") {
            return None;
        }
        let schema = request.get("params").and_then(|p| p.get("requestedSchema"));
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

/// A value an elicitation field of this schema accepts.
fn value_for(field: &Value) -> Option<Value> {
    if let Some(first) = field.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return Some(first.clone());
    }
    match field.get("type").and_then(Value::as_str)? {
        "boolean" => Some(Value::Bool(true)),
        "string" => Some(field.get("default").cloned().unwrap_or_else(|| Value::from("yes"))),
        "number" | "integer" => {
            Some(field.get("default").or_else(|| field.get("minimum")).cloned().unwrap_or_else(|| Value::from(1)))
        }
        _ => None,
    }
}

/// Each frame of `script` that waits on a fill, with its span in stdin.
pub(crate) fn waiting(script: &Script) -> Vec<(usize, Range<usize>)> {
    let spans = script.frame_spans().into_iter().enumerate();
    spans.filter(|(i, _)| script.frames[*i].fill.is_some()).collect()
}

/// The write spans of `script` with a write boundary before and after each
/// frame that waits on a fill, and none inside one: the driver writes such
/// a frame alone, once it is filled.
pub(crate) fn write_spans(script: &Script) -> Vec<Range<usize>> {
    let waiting = waiting(script);
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
    if filled.is_empty() {
        return Cow::Borrowed(script);
    }
    let mut written = script.clone();
    for f in filled {
        let Some(frame) = written.frames.get_mut(f.frame) else { continue };
        match &f.bytes {
            Some(bytes) => frame.bytes = bytes.clone(),
            None => {
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
        assert_eq!(altered("rs0009ab", 5).as_deref(), Some("rs0000ab"));
        assert_eq!(altered("a.b", 1).as_deref(), Some("aAb"));
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
        let asked = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"s1","inputRequests":{}}}"#;
        let stdout = [&other[..], b"\n", &asked[..], b"\n"].concat();
        let bytes = fill(&frame, &how, &stdout).unwrap();
        assert_eq!(bytes, b"{\"params\":{\"requestState\":\"s1\",\"inputResponses\":{}}}\n");
        assert_eq!(fill(&frame, &how, &stdout[..stdout.len() - 1]), None, "a line not yet ended is no answer");
        let complete = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}"#;
        assert_eq!(fill(&frame, &how, &[&complete[..], b"\n"].concat()), None);
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
        script.frames.extend([retry.clone(), retry]);
        let filled = [Filled { frame: 1, bytes: None }, Filled { frame: 2, bytes: Some(b"x\n".to_vec()) }];
        let written = written(&script, &filled);
        let (skipped, sent) = (&written.frames[1], &written.frames[2]);
        assert!(skipped.bytes.is_empty() && skipped.tokens.is_empty() && skipped.id.is_none());
        assert_eq!(skipped.expect, Expect::Inert { request: false });
        assert_eq!((&sent.bytes[..], sent.tokens.len()), (&b"x\n"[..], 1));
        assert_eq!(written.write_ends.last(), Some(&(script.frames[0].bytes.len() + 2)));
    }
}

//! `stdout-clean`: each stdout line is UTF-8, one JSON value, and a
//! server-to-client shape the revision permits; nothing trails the last LF.

use super::{CheckId, Facts, Kind, Violation};
use crate::protocol::Revision;
use serde_json::{Map, Value};

pub(super) fn check(facts: &Facts, out: &mut Vec<Violation>) {
    let stdout = &facts.obs.stdout;
    for line in &facts.lines {
        let bytes = &stdout[line.range.clone()];
        if let Some(p) = line_problem(bytes, line.value.as_ref(), shaped_by(facts, line.value.as_ref())) {
            out.push(Violation::at_stdout(
                CheckId::StdoutClean,
                line.range.clone(),
                None,
                Kind::NotProtocol { problem: p },
            ));
        }
    }
    let tail = facts.lines.last().map(|l| l.range.end + 1).unwrap_or(0);
    let finished = facts.obs.exit.ended() || facts.obs.eof_sent;
    if tail < stdout.len() && finished {
        let kind = Kind::AfterLastLf { bytes: stdout.len() - tail };
        out.push(Violation::at_stdout(CheckId::StdoutClean, tail..stdout.len(), None, kind));
    }
}

/// The revision whose shapes the response `value` is judged by: the
/// session's, but for the answer to a request of the handshake era sent in
/// a session of a revision without one (`legacy_method`: `initialize` or
/// `ping` with no envelope), which a server of both eras may still answer
/// as that era does, with no `resultType`.
fn shaped_by(facts: &Facts, value: Option<&Value>) -> Revision {
    let frame = value.and_then(|v| v.get("id")).filter(|_| value.is_some_and(|v| v.get("method").is_none()));
    let frame = frame.and_then(|id| facts.frame_of(id)).and_then(|i| facts.script.frames.get(i));
    match frame.and_then(|f| f.expect.rule_or_tolerated()) {
        Some(crate::frame::Rule::LegacyMethod) => Revision::LATEST_HANDSHAKEN,
        _ => facts.revision,
    }
}

/// What is wrong with one stdout line (its LF left off) that `value` is
/// read from, if anything: it must be one server-to-client message (or,
/// where `revision` has batches, a batch of responses).
pub(crate) fn line_problem(bytes: &[u8], value: Option<&Value>, revision: Revision) -> Option<String> {
    match value {
        None if std::str::from_utf8(bytes).is_err() => Some("a line that is not UTF-8".to_owned()),
        None if bytes.iter().all(u8::is_ascii_whitespace) => Some("an empty line".to_owned()),
        None => Some("a line that is not exactly one JSON value".to_owned()),
        Some(Value::Array(items)) if revision.has_batches() && !items.is_empty() => {
            items.iter().find_map(|m| response_shape(m, revision).err().map(|e| format!("in a batch response: {e}")))
        }
        Some(Value::Array(_)) => Some(format!("an array, which {revision} does not permit")),
        Some(v) => message_shape(v, revision).err(),
    }
}

/// A server may send a response, a notification or, where `revision` lets
/// it, a request.
fn message_shape(v: &Value, revision: Revision) -> Result<(), String> {
    let o = v.as_object().ok_or("a JSON value that is not an object")?;
    if o.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err("`jsonrpc` is not \"2.0\"".into());
    }
    match o.get("method") {
        Some(Value::String(_)) => {
            if o.contains_key("result") || o.contains_key("error") {
                return Err("a message with both `method` and a result or error".into());
            }
            match (o.get("id"), o.get("params")) {
                (Some(_), _) if !revision.has_server_requests() => {
                    Err(format!("a request from the server, which {revision} does not permit"))
                }
                (Some(id), _) if !valid_id(id) => Err("a request whose id is not a string or integer".into()),
                (_, Some(p)) if !p.is_object() => Err("`params` that is not an object".into()),
                _ => Ok(()),
            }
        }
        Some(_) => Err("`method` that is not a string".into()),
        None => response_shape(v, revision),
    }
}

/// A response, its result an object (with `resultType` where `revision`
/// requires one), or an error with a code and a message.
fn response_shape(v: &Value, revision: Revision) -> Result<(), String> {
    let o = v.as_object().ok_or("a response that is not an object")?;
    if o.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err("`jsonrpc` is not \"2.0\"".into());
    }
    match (o.get("result"), o.get("error")) {
        (Some(r), None) => {
            require_id(o, false)?;
            match r.as_object() {
                None => Err("a result that is not an object".into()),
                Some(r) if revision.has_result_type() && !r.get("resultType").is_some_and(Value::is_string) => {
                    Err(format!("a result without `resultType`, which {revision} requires"))
                }
                Some(_) => Ok(()),
            }
        }
        (None, Some(e)) => {
            require_id(o, true)?;
            let code = e.get("code").is_some_and(|c| c.is_i64() || c.is_u64());
            let message = e.get("message").is_some_and(Value::is_string);
            (code && message).then_some(()).ok_or_else(|| "an error without an integer code and a message".into())
        }
        (Some(_), Some(_)) => Err("a response with both `result` and `error`".into()),
        (None, None) => Err("neither a request, a notification nor a response".into()),
    }
}

fn require_id(o: &Map<String, Value>, null_ok: bool) -> Result<(), String> {
    match o.get("id") {
        Some(Value::Null) if null_ok => Ok(()),
        Some(id) if valid_id(id) => Ok(()),
        Some(_) => Err("a response id that is not a string or integer".into()),
        None => Err("a response without an id".into()),
    }
}

/// A string or an integer: JSON Schema's integer is any number with no
/// fraction, so an id echoed past 2^64 (read as a float here) is one.
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64() || id.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_revision_needs_a_result_type_and_takes_no_request_from_the_server() {
        let read = |s: &str| serde_json::from_str::<Value>(s).expect("JSON");
        let untyped = read(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        let typed = read(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#);
        let request = read(r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#);
        let error = read(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m"}}"#);
        let note = read(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#);
        let (old, new) = (Revision::R2025_11_25, Revision::R2026_07_28);
        for v in [&untyped, &typed, &request, &error, &note] {
            assert_eq!(line_problem(b"", Some(v), old), None, "{v}");
        }
        for v in [&typed, &error, &note] {
            assert_eq!(line_problem(b"", Some(v), new), None, "{v}");
        }
        assert!(line_problem(b"", Some(&untyped), new).is_some_and(|p| p.contains("resultType")));
        assert!(line_problem(b"", Some(&request), new).is_some_and(|p| p.contains("request from the server")));
    }

    #[test]
    fn an_answer_to_a_request_of_the_handshake_era_needs_no_result_type() {
        use crate::attack::Step;
        use crate::attack::envelope::{Envelope, Kind as EnvelopeKind};
        use crate::catalogue::Catalogue;
        use crate::check::{CheckId, check};
        use crate::frame::Rule;
        use crate::observation::Observation;
        use crate::protocol::Policy;
        use crate::script::ScriptSpec;
        use crate::seam::Session;
        let revision = Revision::R2026_07_28;
        let ping = Step::Envelope(Envelope { kind: EnvelopeKind::Ping, tool: 0, pick: 0 });
        let script = ScriptSpec::whole(revision, vec![ping]).render(&Catalogue::reference(), 1);
        let legacy = script.frames.iter().find(|f| f.expect.rule_or_tolerated() == Some(Rule::LegacyMethod));
        let id = legacy.and_then(|f| f.id.clone()).expect("a ping of the handshake era").to_json();
        let judged = |answer: &str| {
            let stdout = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"]}}}}\n\
                 {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{answer}}}\n"
            );
            let obs = Observation { stdout: stdout.into_bytes(), ..Observation::none() };
            let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
            check(&script, &obs, &session).into_iter().filter(|v| v.check == CheckId::StdoutClean).count()
        };
        // Answered as the handshake era answers a ping, or as 2026-07-28 would.
        assert_eq!(judged("{}"), 0);
        assert_eq!(judged(r#"{"resultType":"complete"}"#), 0);
        // Still a result that is no object.
        assert_eq!(judged("7"), 1);
    }
}

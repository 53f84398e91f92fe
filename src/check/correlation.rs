//! `correlation`: one response per request id, none to ids never sent,
//! success for valid requests, errors for rejected ones with the codes
//! JSON-RPC prescribes, and `null` ids only on parse and invalid-request
//! errors.

use super::facts::Judged;
use super::{CheckId, Facts, Kind, Violation};
use crate::frame::{Frame, Reply as Owed};
use crate::protocol::{Id, code};
use crate::seam::Exit;
use std::collections::{HashMap, HashSet};

pub(super) fn check(facts: &Facts, out: &mut Vec<Violation>) {
    // Responses to each id, and the frame they answer.
    let mut per_id: HashMap<Id, (usize, usize)> = HashMap::new();
    let mut answered: HashSet<usize> = HashSet::new();
    let mut null_errors = 0;
    for r in &facts.replies {
        let range = r.range.clone();
        if r.id.is_null() {
            if r.error {
                null_errors += 1;
                if !matches!(r.code, Some(code::PARSE_ERROR | code::INVALID_REQUEST)) {
                    out.push(Violation::at_stdout(
                        CheckId::Correlation,
                        range,
                        None,
                        Kind::NullIdCode { code: r.code },
                    ));
                }
            }
            continue;
        }
        let Some(i) = facts.frame_of_among(&r.id, &answered) else {
            if Id::from_value(&r.id).is_none() {
                // An id the suite cannot name (echoed past 2^64): it answers
                // a frame whose id could not be read exactly.
                null_errors += usize::from(r.error);
                continue;
            }
            let kind = Kind::UnknownId { id: r.id.to_string() };
            out.push(Violation::at_stdout(CheckId::Correlation, range, None, kind));
            continue;
        };
        if facts.after_close(i) {
            continue;
        }
        answered.insert(i);
        // An id the suite cannot name (`true`, or past 2^64) is counted by
        // the frame it answers.
        if let Some(id) = Id::from_value(&r.id) {
            per_id.entry(id).or_insert((0, i)).0 += 1;
        }
        let problem = match &facts.judged[i] {
            Judged::Inert { .. } if r.error => Some(Kind::ValidRefused { id: r.id.to_string(), code: r.code }),
            Judged::Reject(rule) => match (rule.reply(), r.error) {
                (Owed::Error { codes, .. }, true)
                    if !codes.is_empty() && !r.code.is_some_and(|c| codes.contains(&c)) =>
                {
                    Some(Kind::WrongCode { code: r.code, rule: *rule, expected: codes })
                }
                (_, true) => None,
                (Owed::Error { tool_error_ok: true, .. }, false)
                    if r.tool_error && facts.revision.tool_errors_as_results() =>
                {
                    None
                }
                // Asking for the input again acts on nothing.
                (_, false) if r.asks_input && rule.may_ask_again() => None,
                // An `isError` result is a refusal, never a success.
                (_, false) if r.tool_error => Some(Kind::ToolErrorResult { rule: *rule }),
                (_, false) => Some(Kind::RejectedSucceeded { rule: *rule }),
            },
            _ => None,
        };
        if let Some(p) = problem {
            out.push(Violation::at_stdout(CheckId::Correlation, range, Some(i), p));
        }
    }
    for (id, (n, i)) in &per_id {
        if *n > 1 {
            let kind = Kind::RepeatedAnswer { id: id.to_string(), times: *n };
            out.push(Violation::at_frame(CheckId::Correlation, facts, *i, kind));
        }
    }
    owed_replies(facts, &per_id, &answered, null_errors, out);
}

/// Every request the gateway was there to see must be answered: by id where
/// its id is readable, else by an error with a null id.
fn owed_replies(
    facts: &Facts,
    per_id: &HashMap<Id, (usize, usize)>,
    answered_frames: &HashSet<usize>,
    null_errors: usize,
    out: &mut Vec<Violation>,
) {
    if matches!(facts.obs.exit, Exit::Crashed(_)) {
        return; // liveness reports it; what went unanswered is no news
    }
    let answered = |id: &Id| per_id.get(id).is_some_and(|(n, _)| *n > 0);
    let mut anonymous = Vec::new();
    // A frame cut at EOF never ended as a line: it owes no answer, and
    // what is judged of it is that it has no effect.
    let frames = &facts.script.frames;
    let cut_at_eof = |i: usize| facts.script.eof && i + 1 == frames.len() && !frames[i].bytes.ends_with(b"\n");
    for (i, frame) in frames.iter().enumerate() {
        if !facts.reached(i) || facts.closing == Some(i) || cut_at_eof(i) {
            continue;
        }
        let (by_id, anonymous_ok) = owed(&facts.judged[i], frame);
        if anonymous_ok {
            // One whose id is still within its deadline is not missing yet:
            // its answer may come by that id, or with a null one.
            let awaited = frame.id.as_ref().is_some_and(|id| facts.obs.awaiting.contains(id));
            if !answered_frames.contains(&i) && !awaited {
                anonymous.push(i);
            }
            continue;
        }
        // An answer still within its deadline is not missing yet.
        let missing = by_id.into_iter().filter(|id| !answered(id) && !facts.obs.awaiting.contains(id));
        for id in missing {
            out.push(Violation::at_frame(CheckId::Correlation, facts, i, Kind::Unanswered { id: id.to_string() }));
        }
    }
    // Not shown to have read past the script (its marker unanswered) and
    // still running: an error is missing only for a frame before one whose
    // answer came, as lines are read in order.
    if facts.obs.marker_unanswered && !facts.obs.exit.ended() {
        anonymous.retain(|i| answered_frames.iter().any(|j| j > i));
    }
    if null_errors < anonymous.len() {
        let first = anonymous[null_errors];
        let kind = Kind::NoNullIdError { needed: anonymous.len(), came: null_errors };
        out.push(Violation::at_frame(CheckId::Correlation, facts, first, kind));
    }
}

/// What a frame is owed: responses by id, or (when the flag is set) one
/// response that may carry its id or, as JSON-RPC allows for a request it
/// could not read or found invalid, a null id.
fn owed(judged: &Judged, frame: &Frame) -> (Vec<Id>, bool) {
    match judged {
        Judged::Inert { request: true } => (frame.id.iter().cloned().collect(), false),
        Judged::Act(calls) => (calls.iter().map(|c| c.id.clone()).collect(), false),
        Judged::Reject(rule) if matches!(rule.reply(), Owed::Error { .. }) => match rule.null_id_ok() {
            false => (frame.id.iter().cloned().collect(), false),
            true => (vec![], true),
        },
        // A tolerated frame is answered either way: by its id where every
        // reader reads it whole (`Rule::read_whole`), else maybe with a null
        // id; one not judged owes nothing.
        Judged::Either { calls: Some(_), .. } => match frame.owed_ids() {
            ids if !ids.is_empty() => (ids, false),
            _ => (vec![], frame.owes_anonymous_error()),
        },
        _ => (vec![], false),
    }
}

#[cfg(test)]
mod tests {
    use crate::attack::Step;
    use crate::attack::truncate::{Kind, Truncate};
    use crate::catalogue::Catalogue;
    use crate::check::{CheckId, check};
    use crate::observation::Observation;
    use crate::protocol::{Policy, Revision};
    use crate::script::ScriptSpec;
    use crate::seam::{Exit, Session};

    /// What a server that wrote `stdout` and exited once stdin closed showed.
    fn exited_after_eof(stdout: Vec<u8>) -> Observation {
        Observation { stdout, exit: Exit::Exited(0), eof_sent: true, ..Observation::none() }
    }

    /// The correlation violations of a session of one truncated call (cut
    /// `kind`) against a server that answers `initialize` and nothing else,
    /// and exits once stdin closes.
    fn unanswered(kind: Kind) -> usize {
        let revision = Revision::R2025_06_18;
        let spec = ScriptSpec::whole(revision, vec![Step::Truncate(Truncate { kind, tool: 0, cut: 3 })]);
        let script = spec.render(&Catalogue::reference(), 1);
        let init = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#);
        let obs = exited_after_eof(format!("{init}\n").into_bytes());
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        check(&script, &obs, &session).iter().filter(|v| v.check == CheckId::Correlation).count()
    }

    /// The correlation violations of a session of one call with a
    /// mistyped argument, refused with an `isError` result, at `revision`,
    /// with their levels.
    fn refused_as_a_tool_error(revision: Revision) -> Vec<(&'static str, crate::protocol::Level)> {
        use crate::attack::shape::{Kind, Shape};
        let spec = ScriptSpec::whole(revision, vec![Step::Shape(Shape { kind: Kind::MistypedArray, tool: 0 })]);
        let script = spec.render(&Catalogue::reference(), 1);
        let call = script.frames.iter().find(|f| f.family == "shape").expect("the call");
        let id = call.id.clone().expect("an id").to_json();
        let init = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#);
        let refusal = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"isError":true}}}}"#);
        let obs = exited_after_eof(format!("{init}\n{refusal}\n").into_bytes());
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        let found = check(&script, &obs, &session).into_iter().filter(|v| v.check == CheckId::Correlation);
        found.map(|v| (v.kind.name(), v.level(&script))).collect()
    }

    /// Whether a session of a frame with `"id": true` (owed an error that
    /// may carry a null id) then a valid call, its marker unanswered and
    /// the server running on after EOF, shows `no_null_id_error` where the
    /// server answered `initialize` and, with `later`, the call.
    fn null_id_error_missing_past_an_unanswered_marker(later: bool) -> bool {
        use crate::attack::jsonrpc::{JsonRpc, Kind};
        let revision = Revision::R2025_06_18;
        let steps = vec![Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 }), Step::Control(0)];
        let script = ScriptSpec::whole(revision, steps).render(&Catalogue::reference(), 1);
        let id = script.frames.last().and_then(|f| f.id.clone()).expect("the call's id").to_json();
        let init = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#);
        let call = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#);
        let stdout = if later { format!("{init}\n{call}\n") } else { format!("{init}\n") };
        // Still running once stdin closed.
        let obs =
            Observation { stdout: stdout.into_bytes(), marker_unanswered: true, eof_sent: true, ..Observation::none() };
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        check(&script, &obs, &session).iter().any(|v| v.kind.name() == "no_null_id_error")
    }

    #[test]
    fn past_an_unanswered_marker_a_null_id_error_is_missing_only_before_a_later_answer() {
        assert!(null_id_error_missing_past_an_unanswered_marker(true), "the call's answer shows the frame read");
        assert!(!null_id_error_missing_past_an_unanswered_marker(false), "nothing shows it read");
    }

    #[test]
    fn an_is_error_refusal_is_at_most_hardening_before_2025_11_25_and_fine_from_it() {
        use crate::protocol::Level;
        assert_eq!(refused_as_a_tool_error(Revision::R2025_06_18), [("tool_error_result", Level::Hardening)]);
        assert_eq!(refused_as_a_tool_error(Revision::R2025_11_25), []);
    }

    /// The correlation violations of a 2026-07-28 session of one call with a
    /// reserved `_meta` key, labelled `rule`, against a server that wrote
    /// `stdout` after the discover answer, with `awaiting` still in time.
    fn tolerated(rule: crate::frame::Rule, stdout: &str, awaiting: Vec<crate::protocol::Id>) -> Vec<String> {
        use crate::attack::envelope::{Envelope, Kind};
        let revision = Revision::R2026_07_28;
        let step = Step::Envelope(Envelope { kind: Kind::ReservedPrefix, tool: 0, pick: 0 });
        let mut script = ScriptSpec::whole(revision, vec![step]).render(&Catalogue::reference(), 1);
        let crate::frame::Expect::Tolerate(_, calls) = script.frames[1].expect.clone() else { panic!("tolerated") };
        script.frames[1].expect = crate::frame::Expect::Tolerate(rule, calls);
        let discovered =
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"]}}"#;
        let stdout = format!("{discovered}\n{stdout}").into_bytes();
        let obs = Observation { stdout, awaiting, ..Observation::none() };
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        let all = check(&script, &obs, &session);
        all.iter().filter(|v| v.check == CheckId::Correlation).map(|v| v.kind.name().to_owned()).collect()
    }

    #[test]
    fn a_tolerated_request_read_whole_owes_its_answer_by_id_and_by_its_deadline() {
        use crate::frame::Rule;
        use crate::protocol::Id;
        // Answered later than the marker, but within its deadline: nothing yet.
        assert!(tolerated(Rule::ReservedMetaKey, "", vec![Id::Int(2)]).is_empty());
        // Its deadline passed with no answer: missing, by its id.
        assert_eq!(tolerated(Rule::ReservedMetaKey, "", vec![]), ["unanswered"]);
        // A null-id error is no answer to a request every reader reads whole.
        let null = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
        assert_eq!(tolerated(Rule::ReservedMetaKey, &format!("{null}\n"), vec![]), ["unanswered"]);
        // A call past a line limit may be refused as a line, with a null id.
        assert!(tolerated(Rule::LargeMessage, &format!("{null}\n"), vec![]).is_empty());
    }

    /// Two frames with `"id": true` then one of invalid UTF-8, each owed an
    /// error with a null id, against a server that answered the first two
    /// with results that echo `true` and the third with a null-id error:
    /// each echo answers a frame of its own (a success to a frame it must
    /// refuse), and no error is missing, least of all the third frame's.
    #[test]
    fn each_answer_echoing_an_invalid_id_answers_a_frame_of_its_own() {
        use crate::attack::encoding::{Encoding, Kind as EncodingKind};
        use crate::attack::jsonrpc::{JsonRpc, Kind};
        let revision = Revision::R2025_06_18;
        let id_bool = Step::JsonRpc(JsonRpc { kind: Kind::IdBool, tool: 0 });
        let steps = vec![id_bool.clone(), id_bool, Step::Encoding(Encoding { kind: EncodingKind::Overlong, tool: 0 })];
        let script = ScriptSpec::whole(revision, steps).render(&Catalogue::reference(), 1);
        let init = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#);
        let echoed = r#"{"jsonrpc":"2.0","id":true,"result":{"content":[]}}"#;
        let null = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
        let obs = exited_after_eof(format!("{init}\n{echoed}\n{echoed}\n{null}\n").into_bytes());
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        let found = check(&script, &obs, &session);
        let correlation: Vec<_> =
            found.iter().filter(|v| v.check == CheckId::Correlation).map(|v| (v.kind.name(), v.frame)).collect();
        assert_eq!(correlation, [("rejected_succeeded", Some(2)), ("rejected_succeeded", Some(3))], "{found:?}");
    }

    #[test]
    fn a_frame_cut_at_eof_owes_no_answer_but_one_cut_before_a_newline_does() {
        assert_eq!(unanswered(Kind::AtEof), 0, "its line never ended");
        assert!(unanswered(Kind::ThenValid) > 0, "a whole line owes its error, and the valid call its answer");
    }
}

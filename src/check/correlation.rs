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
        let Some(i) = facts.frame_of(&r.id) else {
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
    for (i, frame) in facts.script.frames.iter().enumerate() {
        if !facts.reached(i) || facts.closing == Some(i) {
            continue;
        }
        let (by_id, anonymous_ok) = owed(&facts.judged[i], frame);
        if anonymous_ok {
            if !answered_frames.contains(&i) {
                anonymous.push(i);
            }
            continue;
        }
        let missing = by_id.into_iter().filter(|id| !answered(id));
        for id in missing {
            out.push(Violation::at_frame(CheckId::Correlation, facts, i, Kind::Unanswered { id: id.to_string() }));
        }
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
        // A tolerated frame is answered either way; one not judged owes nothing.
        Judged::Either { calls: Some(_), .. } => (vec![], frame.id.is_some()),
        _ => (vec![], false),
    }
}

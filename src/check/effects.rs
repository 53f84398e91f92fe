//! The effect checks. Each effect is attributed to frames by the canary
//! tokens it carries, and then judged once:
//!
//! - no known token, or only tokens of must-reject frames, or a frame the
//!   gateway answered with an error: `no-effect-on-reject`;
//! - tokens of a rejected frame and a later valid one (state carried over),
//!   or a valid frame after the session should have closed: `policy`;
//! - tokens of several valid frames, other arguments than the request's, or
//!   a count other than one: `exactly-once`.

use super::facts::Judged;
use super::{CheckId, Facts, Kind, Violation};
use crate::seam::Action;
use crate::token::tokens_in;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

pub(super) fn check(facts: &Facts, out: &mut Vec<Violation>) {
    let answered_error = answered(facts, true);
    let mut counts: HashMap<(usize, String), usize> = HashMap::new();
    let mut taken = HashMap::new();
    for (n, effect) in facts.obs.effects.iter().enumerate() {
        let frames = owners(facts, (n, effect), &mut taken);
        let effect_text = format!("effect #{n} `{}` {}", effect.tool, effect.arguments_text());
        let describe = || effect_text.clone();
        let rejected: Vec<usize> = frames.iter().copied().filter(|i| !acts(facts, *i)).collect();
        let valid: Vec<usize> = frames.iter().copied().filter(|i| acts(facts, *i)).collect();
        let v = match (rejected.first(), valid.last()) {
            (None, None) => Violation {
                check: CheckId::NoEffectOnReject,
                frame: None,
                span: None,
                kind: Kind::Untokened { effect: describe() },
            },
            (Some(&r), Some(&last)) if r < last => Violation::at_frame(
                CheckId::Policy,
                facts,
                last,
                Kind::StateCarried { effect: describe(), rejected: r },
            ),
            (Some(&r), _) => {
                let rule = facts.script.frames[r].expect.rule();
                Violation::at_frame(
                    CheckId::NoEffectOnReject,
                    facts,
                    r,
                    Kind::EffectOfRejected { effect: describe(), rule },
                )
            }
            (None, Some(_)) if valid.len() > 1 => Violation::at_frame(
                CheckId::ExactlyOnce,
                facts,
                valid[0],
                Kind::MixedArguments { effect: describe(), frames: valid.clone() },
            ),
            (None, Some(&f)) if facts.after_close(f) => Violation::at_frame(
                CheckId::Policy,
                facts,
                f,
                Kind::EffectAfterClose { effect: describe(), closing: facts.closing.unwrap_or(0) },
            ),
            (None, Some(&f)) if answered_error.contains(&f) => {
                Violation::at_frame(CheckId::NoEffectOnReject, facts, f, Kind::EffectOfRefused { effect: describe() })
            }
            (None, Some(&f)) => match judge_arguments(facts, f, effect) {
                Ok(token) => {
                    *counts.entry((f, token)).or_default() += 1;
                    continue;
                }
                Err(why) => {
                    Violation::at_frame(CheckId::ExactlyOnce, facts, f, Kind::WrongCall { effect: describe(), why })
                }
            },
        };
        out.push(v);
    }
    let succeeded = answered(facts, false);
    let asked_input: BTreeSet<usize> =
        facts.replies.iter().filter(|r| r.asks_input).filter_map(|r| facts.frame_of(&r.id)).collect();
    for (i, judged) in facts.judged.iter().enumerate() {
        // A frame either way may act once, or not at all; once it was
        // answered with a success, it must have acted.
        let (calls, least) = match judged {
            Judged::Act(calls) => (calls, 1),
            Judged::Either { calls: Some(calls), .. } => (calls, usize::from(succeeded.contains(&i))),
            Judged::Either { calls: None, rule } => {
                for ((f, token), n) in counts.iter().filter(|((f, _), n)| *f == i && **n > 1) {
                    let kind = Kind::UnjudgedRepeated { rule: *rule, times: *n, token: token.clone() };
                    out.push(Violation::at_frame(CheckId::ExactlyOnce, facts, *f, kind));
                }
                continue;
            }
            _ => continue,
        };
        if !facts.reached(i) {
            continue;
        }
        for call in calls {
            let n = counts.get(&(i, call.token.clone())).copied().unwrap_or(0);
            // A call whose answer is still within its deadline may still
            // act; one answered with a request for input (MCP 2026-07-28)
            // acts only once retried with it.
            if n == 0 && (facts.obs.awaiting.contains(&call.id) || asked_input.contains(&i)) {
                continue;
            }
            if !(least..=1).contains(&n) {
                let id = call.id.to_string();
                let kind = match n {
                    0 => Kind::NeverExecuted { id, refused: answered_error.contains(&i) },
                    times => Kind::ExecutedTimes { id, times },
                };
                out.push(Violation::at_frame(CheckId::ExactlyOnce, facts, i, kind));
            }
        }
    }
}

/// Whether frame `i` is one that may act.
fn acts(facts: &Facts, i: usize) -> bool {
    facts.judged[i].may_act()
}

/// The frames whose tokens effect `n` carries, ascending. A token several
/// frames carry (a call asked about, retried, and retried again) goes to
/// the frames that may act first, one effect each in order, and past them
/// to the last that may not: `taken` counts the effects seen with each. A
/// frame written after the effect came (a retry) is not among them.
fn owners(facts: &Facts, (n, effect): (usize, &Action), taken: &mut HashMap<String, usize>) -> Vec<usize> {
    let mut found = BTreeSet::new();
    let mut strings = vec![effect.tool.as_str()];
    let mut stack: Vec<&Value> = effect.arguments.values().collect();
    strings.extend(effect.arguments.keys().map(String::as_str));
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => strings.push(s),
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                strings.extend(o.keys().map(String::as_str));
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    let mut tokens: Vec<&str> = strings.into_iter().flat_map(tokens_in).collect();
    tokens.sort_unstable();
    tokens.dedup();
    for t in tokens {
        let Some(carriers) = facts.carriers.get(t) else {
            found.extend(facts.owner.get(t).copied());
            continue;
        };
        let before = |i: &usize| facts.written_after.get(i).is_none_or(|after| n >= *after);
        let carriers: Vec<usize> = carriers.iter().copied().filter(before).collect();
        let taken = taken.entry(t.to_owned()).or_insert(0);
        let (acting, inert): (Vec<usize>, Vec<usize>) = carriers.iter().partition(|i| acts(facts, **i));
        found.extend(acting.get(*taken).or(inert.last()).or(acting.last()).copied());
        *taken += 1;
    }
    found.into_iter().collect()
}

/// The frames the gateway answered with an error response (or a tool
/// error) when `with_error`, else with a success result.
fn answered(facts: &Facts, with_error: bool) -> BTreeSet<usize> {
    let replies = facts.replies.iter().filter(|r| (r.error || r.tool_error) == with_error);
    replies.filter_map(|r| facts.frame_of(&r.id)).collect()
}

/// The token of the call the effect executes, when its tool and arguments
/// are exactly the request's.
fn judge_arguments(facts: &Facts, f: usize, effect: &Action) -> Result<String, String> {
    let text = effect.arguments_text();
    let calls = match &facts.judged[f] {
        Judged::Act(calls) | Judged::Either { calls: Some(calls), .. } => calls,
        // Either reading may act, with arguments of its own: count it.
        _ => {
            let tokens = &facts.script.frames[f].tokens;
            let found = tokens.iter().find(|t| text.contains(t.as_str()) || effect.tool.contains(t.as_str()));
            return found.cloned().ok_or_else(|| "carries the frame's token nowhere".to_owned());
        }
    };
    let call = calls
        .iter()
        .find(|c| text.contains(&c.token) || effect.tool.contains(&c.token))
        .ok_or("carries the frame's token nowhere")?;
    if effect.is_observed() {
        return Ok(call.token.clone()); // a probe sees the effect, not the call: count it
    }
    if effect.tool != call.tool {
        return Err(format!("ran tool `{}` for a call of `{}`", effect.tool, call.tool));
    }
    if effect.arguments != call.arguments {
        let extra: Vec<&String> = effect.arguments.keys().filter(|k| !call.arguments.contains_key(*k)).collect();
        let detail = if extra.is_empty() {
            format!("arguments differ from the request's {}", Value::Object(call.arguments.clone()))
        } else {
            format!("arguments {extra:?} that the request did not carry reached the executor")
        };
        return Err(detail);
    }
    Ok(call.token.clone())
}

#[cfg(test)]
mod tests {
    use crate::attack::Step;
    use crate::attack::roundtrip::{Kind, RoundTrip};
    use crate::catalogue::Catalogue;
    use crate::check::{CheckId, check};
    use crate::fill::Filled;
    use crate::frame::Expect;
    use crate::observation::Observation;
    use crate::protocol::{Policy, Revision};
    use crate::script::ScriptSpec;
    use crate::seam::{Action, Session};

    /// A confirmed round trip whose one effect came before (or after) its
    /// retry was written: an effect before the retry is the asked call's,
    /// which must act on nothing yet.
    fn confirmed_with_the_effect(before_the_retry: bool) -> Vec<(CheckId, Option<usize>)> {
        let revision = Revision::R2026_07_28;
        let step = Step::RoundTrip(RoundTrip { kind: Kind::Confirmed, tool: 0, pick: 0 });
        let script = ScriptSpec::whole(revision, vec![step]).render(&Catalogue::reference(), 1);
        let retry = script.frames.iter().position(|f| f.fill.is_some()).expect("a retry");
        let Expect::Act(calls) = &script.frames[retry].expect else { panic!("the retry acts") };
        let call = &calls[0];
        let answer = |id: &str, result: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        let asked = script.frames[retry - 1].id.clone().expect("the call asked about").to_json();
        let stdout = [
            answer("1", r#"{"resultType":"complete","supportedVersions":["2026-07-28"]}"#),
            answer(&asked, r#"{"resultType":"input_required","requestState":"s"}"#),
            answer(&call.id.to_json(), r#"{"resultType":"complete","content":[]}"#),
        ]
        .map(|l| l + "\n")
        .concat();
        let effect = Action { tool: call.tool.clone(), arguments: call.arguments.clone() };
        let written = Ok(script.frames[retry].bytes.clone());
        let obs = Observation {
            stdout: stdout.into_bytes(),
            effects: vec![effect],
            filled: vec![Filled { frame: retry, written, effects_before: usize::from(before_the_retry) }],
            ..Observation::none()
        };
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        check(&script, &obs, &session).into_iter().map(|v| (v.check, v.frame)).collect()
    }

    #[test]
    fn an_effect_that_came_before_the_retry_was_written_is_the_asked_calls() {
        assert_eq!(confirmed_with_the_effect(false), vec![], "the retry acted, once");
        let found = confirmed_with_the_effect(true);
        assert_eq!(found.first(), Some(&(CheckId::NoEffectOnReject, Some(1))), "the asked call acted: {found:?}");
        assert!(found.contains(&(CheckId::ExactlyOnce, Some(2))), "and the retry did not: {found:?}");
    }
}

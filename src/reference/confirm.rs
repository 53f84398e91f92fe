//! The confirmation step of a tool that acts only once the client has
//! confirmed (MCP 2026-07-28, multi round-trip): its call gets an
//! `input_required` result that asks, through an elicitation, and hands out
//! an opaque `requestState`; only a retry of the same call carrying that
//! state and an answer that accepts may act, once. The call needs the
//! client's `elicitation` capability, declared by that request itself.

use super::reply::Text;
use crate::protocol::CAPABILITIES_KEY;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The key the reference asks for its confirmation under.
const ASKED: &str = "confirm";

/// The `requestState`s handed out and not yet redeemed, each with the call
/// (tool and arguments) it was handed out for.
#[derive(Clone, Debug, Default)]
pub(super) struct Handed {
    calls: HashMap<String, (String, Map<String, Value>)>,
    next: u64,
}

/// Which checks of a `requestState` a planted bug leaves out.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lax {
    /// A state never handed out confirms the call the retry names.
    pub(super) trusting: bool,
    /// A state is not spent when it is redeemed.
    pub(super) replaying: bool,
    /// A state redeems whatever call the retry names.
    pub(super) unbound: bool,
}

/// What a call of a confirming tool comes to.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// Ask the client first: this `input_required` result.
    Ask(Value),
    /// The client confirmed the call the state was handed out for: act.
    Confirmed,
    /// The client declined: no action.
    Declined,
    /// Refused with -32602 and this message.
    Refused(Text),
}

/// Whether a request's own envelope declares the `elicitation` capability.
pub(super) fn declares_elicitation(params: Option<&Value>) -> bool {
    let capabilities = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(CAPABILITIES_KEY));
    capabilities.and_then(|c| c.get("elicitation")).is_some_and(Value::is_object)
}

impl Handed {
    /// The step for a call of `tool` with `arguments` and `params`, with
    /// the checks `lax` leaves out (planted bugs).
    pub(super) fn step(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
        params: &Map<String, Value>,
        lax: Lax,
    ) -> Step {
        let answers = params.get("inputResponses");
        let state = match params.get("requestState") {
            None if answers.is_none() => return Step::Ask(self.ask(tool, arguments)),
            None => return Step::Refused(text!("Invalid params: inputResponses answer no input_required result")),
            Some(Value::String(s)) => s,
            Some(_) => return Step::Refused(text!("Invalid params: requestState must be a string")),
        };
        let handed = match lax.replaying {
            true => self.calls.get(state).cloned(),
            false => self.calls.remove(state),
        };
        match handed {
            Some((t, a)) if !lax.unbound && (t != tool || &a != arguments) => {
                return Step::Refused(text!("Invalid params: requestState was handed out for another call"));
            }
            // The planted bug takes the state for a confirmation given.
            None if lax.trusting => return Step::Confirmed,
            None => return Step::Refused(text!("Invalid params: requestState was not handed out")),
            Some(_) => {}
        }
        let answer = answers.and_then(|a| a.get(ASKED));
        let accepted = answer.and_then(|a| a.get("action")) == Some(&json!("accept"))
            && answer.and_then(|a| a.get("content")).and_then(|c| c.get(ASKED)) == Some(&json!(true));
        match (accepted, answer) {
            (true, _) => Step::Confirmed,
            (false, Some(_)) => Step::Declined,
            (false, None) => Step::Refused(text!("Invalid params: the retry does not answer what was asked")),
        }
    }

    /// An `input_required` result asking to confirm the call, and the state
    /// that redeems it.
    fn ask(&mut self, tool: &str, arguments: &Map<String, Value>) -> Value {
        let mut h = DefaultHasher::new();
        (self.next, tool, Value::Object(arguments.clone()).to_string()).hash(&mut h);
        let state = format!("rs{:04x}{:016x}", self.next, h.finish());
        self.next += 1;
        self.calls.insert(state.clone(), (tool.to_owned(), arguments.clone()));
        let schema = json!({"type": "object", "properties": {ASKED: {"type": "boolean"}}, "required": [ASKED]});
        let params = json!({"mode": "form", "message": format!("Run {tool}?"), "requestedSchema": schema});
        json!({
            "resultType": "input_required",
            "inputRequests": {ASKED: {"method": "elicitation/create", "params": params}},
            "requestState": state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: Lax = Lax { trusting: false, replaying: false, unbound: false };
    const TRUSTING: Lax = Lax { trusting: true, ..STRICT };

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn only_the_handed_state_with_an_accepting_answer_redeems_the_call_it_was_handed_for() {
        let mut handed = Handed::default();
        let args = params(json!({"url": "http://x/a"}));
        let Step::Ask(asked) = handed.step("purge_cache", &args, &Map::new(), STRICT) else { panic!("asks first") };
        let state = asked["requestState"].as_str().unwrap().to_owned();
        assert_eq!(asked["resultType"], "input_required");
        let yes = json!({ASKED: {"action": "accept", "content": {ASKED: true}}});
        let retry = |state: &str, answers: &Value| params(json!({"requestState": state, "inputResponses": answers}));
        let refused = |s: &Step| matches!(s, Step::Refused(_));
        let other = params(json!({"url": "http://x/b"}));
        assert!(refused(&handed.step("purge_cache", &args, &retry("rs-forged", &yes), STRICT)));
        assert!(refused(&handed.step("purge_cache", &args, &params(json!({"inputResponses": yes})), STRICT)));
        assert!(refused(&handed.step("purge_cache", &other, &retry(&state, &yes), STRICT)), "another call's");
        assert!(refused(&handed.step("purge_cache", &args, &retry(&state, &yes), STRICT)), "a state redeems once");
        let Step::Ask(asked) = handed.step("purge_cache", &args, &Map::new(), STRICT) else { panic!() };
        let state = asked["requestState"].as_str().unwrap().to_owned();
        let no = json!({ASKED: {"action": "decline"}});
        assert_eq!(handed.step("purge_cache", &args, &retry(&state, &no), STRICT), Step::Declined);
        let Step::Ask(asked) = handed.step("purge_cache", &args, &Map::new(), STRICT) else { panic!() };
        let state = asked["requestState"].as_str().unwrap().to_owned();
        assert_eq!(handed.step("purge_cache", &args, &retry(&state, &yes), STRICT), Step::Confirmed);
        // The planted bug honours a state never handed out, answers or not.
        assert_eq!(handed.step("purge_cache", &args, &retry("rs-forged", &yes), TRUSTING), Step::Confirmed);
        let bare = params(json!({"requestState": "rs-forged"}));
        assert_eq!(handed.step("purge_cache", &args, &bare, TRUSTING), Step::Confirmed);
        assert!(refused(&handed.step("purge_cache", &args, &bare, STRICT)));
    }

    #[test]
    fn elicitation_is_declared_only_by_an_object_in_the_requests_own_capabilities() {
        let with = |caps: Value| json!({"_meta": {CAPABILITIES_KEY: caps}});
        assert!(declares_elicitation(Some(&with(json!({"elicitation": {}})))));
        assert!(!declares_elicitation(Some(&with(json!({})))));
        assert!(!declares_elicitation(Some(&with(json!({"elicitation": true})))));
        assert!(!declares_elicitation(None));
    }

    #[test]
    fn the_planted_bugs_redeem_a_spent_state_or_one_for_another_call() {
        let mut handed = Handed::default();
        let (args, other) = (params(json!({"url": "http://x/a"})), params(json!({"url": "http://x/b"})));
        let yes = json!({ASKED: {"action": "accept", "content": {ASKED: true}}});
        let mut retry_of = |lax: Lax, arguments: &Map<String, Value>| {
            let Step::Ask(asked) = handed.step("purge_cache", &args, &Map::new(), STRICT) else { panic!() };
            let retry = params(json!({"requestState": asked["requestState"], "inputResponses": yes}));
            let first = handed.step("purge_cache", arguments, &retry, lax);
            (first, handed.step("purge_cache", arguments, &retry, lax))
        };
        let replaying = Lax { replaying: true, ..STRICT };
        assert_eq!(retry_of(replaying, &args), (Step::Confirmed, Step::Confirmed), "a spent state redeems again");
        assert!(matches!(retry_of(STRICT, &args), (Step::Confirmed, Step::Refused(_))));
        let unbound = Lax { unbound: true, ..STRICT };
        assert!(matches!(retry_of(unbound, &other), (Step::Confirmed, Step::Refused(_))), "another call's state");
        assert!(matches!(retry_of(STRICT, &other), (Step::Refused(_), Step::Refused(_))));
    }
}

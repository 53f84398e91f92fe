//! Valid calls that a shared process had not acted on by the end of their
//! script, and so may still act during a later one.
//!
//! A script's wait for a call's answer is learned from how late calls have
//! answered so far; a call slower than that is still in flight when the
//! next script starts. Its effect then carries another session's tokens,
//! which would count as a late effect and give sharing up. But a valid call
//! that acts once, late, hides no finding: no check of a later script reads
//! another session's effect, and its own script has already been judged
//! without it. So such an effect is taken as that call's, once; any other
//! effect of another session (a must-reject frame's, or the same call's
//! second) is still late. The calls are a target's, as its probes are: the
//! late effect may come while another of its processes (another revision's,
//! a fresh session's) runs.

use crate::attack::tokens_in;
use crate::frame::Expect;
use crate::script::Script;
use crate::seam::Action;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// How many calls still to act are kept at most: past it, the oldest are
/// forgotten (their late effect counts as late, as it would without this).
const MOST: usize = 1024;

/// Tokens of a target's valid calls that had not acted when their script
/// ended, oldest first.
#[derive(Debug, Default)]
pub(crate) struct LateCalls {
    tokens: Mutex<VecDeque<String>>,
    /// Effects taken as calls acting late so far.
    acted: AtomicU32,
}

impl LateCalls {
    /// Notes the valid calls of `script` that no effect among `effects`
    /// carries the token of.
    pub(crate) fn note(&self, script: &Script, effects: &[Action]) {
        let texts: Vec<String> = effects.iter().map(Action::arguments_text).collect();
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        for frame in &script.frames {
            let Expect::Act(calls) = &frame.expect else { continue };
            for call in calls.iter().filter(|c| !texts.iter().any(|t| t.contains(&c.token))) {
                if tokens.len() == MOST {
                    tokens.pop_front();
                }
                tokens.push_back(call.token.clone());
            }
        }
    }

    /// Sets aside an effect that carries no token of the running session:
    /// taken as a noted call acting late when each token in it is one (so
    /// that call acting again counts as late), else counted in `late`.
    pub(crate) fn set_aside(&self, effect: &Action, late: &AtomicUsize) {
        if !self.take(&effect.arguments_text()) {
            late.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether an effect whose arguments read `text` is one noted call
    /// acting late, which it takes.
    fn take(&self, text: &str) -> bool {
        let found: Vec<&str> = tokens_in(text).collect();
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        if found.is_empty() || !found.iter().all(|t| tokens.iter().any(|n| n == t)) {
            return false;
        }
        tokens.retain(|n| !found.contains(&n.as_str()));
        self.acted.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Effects taken as calls acting late so far.
    pub(crate) fn acted(&self) -> u32 {
        self.acted.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::protocol::Revision;
    use crate::script::ScriptSpec;
    use serde_json::Map;

    fn effect(text: &str) -> Action {
        let mut arguments = Map::new();
        arguments.insert("url".into(), text.into());
        Action { tool: "probe:http".into(), arguments }
    }

    #[test]
    fn a_call_that_had_not_acted_may_act_late_once() {
        let steps = vec![crate::attack::Step::Control(0), crate::attack::Step::Control(0)];
        let spec = ScriptSpec::whole(Revision::R2025_06_18, steps);
        let script = spec.render(&Catalogue::reference(), 7);
        let tokens: Vec<String> = script
            .frames
            .iter()
            .filter_map(|f| match &f.expect {
                Expect::Act(calls) => Some(calls[0].token.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(tokens.len(), 2);
        let late = LateCalls::default();
        // The first call acted in its script; the second had not.
        late.note(&script, &[effect(&format!("http://127.0.0.1:1/{}", tokens[0]))]);
        assert!(!late.take(&tokens[0]), "a call that acted in its script is not expected again");
        assert!(late.take(&format!("/{}", tokens[1])), "the one that had not may act late");
        assert!(!late.take(&tokens[1]), "but only once");
        assert!(!late.take("no token at all"));
        assert_eq!(late.acted(), 1);
        let counted = AtomicUsize::new(0);
        late.set_aside(&effect(&tokens[1]), &counted);
        assert_eq!(counted.load(Ordering::Relaxed), 1, "what is not taken counts as late");
    }
}

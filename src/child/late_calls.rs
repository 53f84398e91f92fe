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
//! second) is still late.

use crate::attack::tokens_in;
use crate::frame::Expect;
use crate::script::Script;
use crate::seam::Action;
use std::collections::HashSet;

/// How many calls still to act are kept at most; past it, another call's
/// late effect counts as late, as it would without this.
const MOST: usize = 1024;

/// Tokens of a process's valid calls that had not acted when their script
/// ended.
#[derive(Debug, Default)]
pub(crate) struct LateCalls {
    tokens: HashSet<String>,
    /// Effects taken as calls acting late so far.
    pub(crate) acted: u32,
}

impl LateCalls {
    /// Notes the valid calls of `script` that no effect among `effects`
    /// carries the token of.
    pub(crate) fn note(&mut self, script: &Script, effects: &[Action]) {
        let texts: Vec<String> = effects.iter().map(Action::arguments_text).collect();
        for frame in &script.frames {
            let Expect::Act(calls) = &frame.expect else { continue };
            for call in calls {
                if self.tokens.len() < MOST && !texts.iter().any(|t| t.contains(&call.token)) {
                    self.tokens.insert(call.token.clone());
                }
            }
        }
    }

    /// Whether an effect whose arguments read `text` (with no token of the
    /// running session's) is one noted call acting late: each token in it
    /// is a noted call's, which it takes, so that call acting again counts
    /// as late.
    pub(crate) fn take(&mut self, text: &str) -> bool {
        let tokens: Vec<&str> = tokens_in(text).collect();
        if tokens.is_empty() || !tokens.iter().all(|t| self.tokens.contains(*t)) {
            return false;
        }
        for t in tokens {
            self.tokens.remove(t);
        }
        self.acted += 1;
        true
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
        let spec = ScriptSpec { revision: Revision::R2025_06_18, steps, splits: vec![], joins: vec![], eof: true };
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
        let mut late = LateCalls::default();
        // The first call acted in its script; the second had not.
        late.note(&script, &[effect(&format!("http://127.0.0.1:1/{}", tokens[0]))]);
        assert!(!late.take(&tokens[0]), "a call that acted in its script is not expected again");
        assert!(late.take(&format!("/{}", tokens[1])), "the one that had not may act late");
        assert!(!late.take(&tokens[1]), "but only once");
        assert!(!late.take("no token at all"));
        assert_eq!(late.acted, 1);
    }
}

//! The rejected frames an audit sends: the must-reject frames of a short
//! campaign, taken from their scripts. Only frames whose verdict does not
//! hang on the frames around them are taken: each a whole line, none of
//! the lifecycle family (whose frames are wrong only before or after some
//! other), none breaking a rule only the hardening level judges.

use crate::campaign::{HuntConfig, seeded_runner, strategy};
use crate::catalogue::Catalogue;
use crate::frame::{Expect, Frame};
use crate::protocol::{Level, Revision};
use proptest::strategy::{Strategy, ValueTree};
use std::collections::HashMap;

/// Most frames taken of any one rule.
const PER_RULE: usize = 2;
/// Largest frame taken: the audit is about what the server touches, and
/// the huge frames of the size family would only make it slow.
const LARGEST: usize = 1 << 20;
/// Scripts drawn at most while looking for frames.
const DRAWS: usize = 4000;

/// Up to `count` must-reject frames calling `catalogue`'s tools, from the
/// scripts seed `seed` draws; the tokens of the `n`th script drawn are
/// salted with `salt + n`, so no two frames share one.
pub fn rejected(catalogue: &Catalogue, revision: Revision, salt: u32, seed: u64, count: usize) -> Vec<Frame> {
    let cfg = HuntConfig::default().revisions(vec![revision]).level(Level::Spec).seed(seed);
    let scripts = strategy(&cfg);
    let mut runner = seeded_runner(proptest::test_runner::Config::default(), seed);
    let mut per_rule: HashMap<&'static str, usize> = HashMap::new();
    let mut frames = Vec::new();
    for n in 0..DRAWS {
        if frames.len() >= count {
            break;
        }
        let Ok(tree) = scripts.new_tree(&mut runner) else { break };
        // Ids of their own per script, far from the opening's and the pings'.
        let script = tree.current().render_from(catalogue, salt.wrapping_add(n as u32), 1000 + 100 * n as i64);
        for frame in script.frames {
            let Expect::Reject(rule) = frame.expect else { continue };
            let whole_line = frame.bytes.ends_with(b"\n") && frame.bytes.len() <= LARGEST;
            let taken = per_rule.entry(rule.id()).or_default();
            let waits = frame.fill.is_some(); // written only by a driver that fills it
            if rule.level() != Level::Spec || frame.family == "lifecycle" || !whole_line || waits || *taken >= PER_RULE
            {
                continue;
            }
            *taken += 1;
            frames.push(frame);
            if frames.len() >= count {
                break;
            }
        }
    }
    frames
}

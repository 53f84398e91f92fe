//! Shrinking in flight: for a finding that shows only once a deadline has
//! passed (an answer or an effect that never came by it), each shrinking
//! step waits out that deadline, so proptest's one candidate at a time
//! would spend it on every step. Here a round's candidates are cut from the
//! script at once (each step kept alone, halves, quarters and single steps
//! dropped, write boundaries dropped) and run together, each judged when
//! its own evidence is in; the smallest that still shows the finding is
//! the next round's script. The hunt confirms what it shrank to in a fresh
//! session, as it does proptest's.

use super::handed::Handed;
use super::lane::SessionRun;
use crate::finding::Distinct;
use crate::script::{Script, ScriptSpec};
use crate::seam::Fault;
use std::time::Instant;

/// Most candidates a round runs together.
pub(crate) const FLIGHT: usize = 24;

/// Runs a round of candidates, each with its salt, in order, starting none
/// after the instant given (when one is): what ran, in order.
pub(crate) type RunRound<'a> =
    dyn Fn(&[(ScriptSpec, u32)], &Distinct, Option<Instant>) -> Result<Vec<SessionRun>, Fault> + 'a;

/// What a runner that runs sessions in a shared process offers the hunt:
/// whether it can run a finding's candidates together (the script it was
/// caught with), a round of candidates, each with its salt, each session
/// judged once its evidence is in; and the scripts the shared process ran
/// before a search session, by its salt, where it ran in one; and what a
/// script writes, so that a candidate the same as one run is not rerun.
pub(crate) struct Flight<'a> {
    /// Whether the finding's candidates can run together.
    pub(crate) takes: &'a dyn Fn(&Distinct, &ScriptSpec) -> bool,
    /// Runs a round of candidates of the finding, in order.
    pub(crate) run: &'a RunRound<'a>,
    /// The scripts a shared process ran before the search session of this
    /// salt, and the salt its tokens carried there; `None` where it ran
    /// fresh. A finding such a session showed is confirmed fresh before it
    /// is reported, and one no fresh session repeats is reported with them,
    /// as state-dependent.
    pub(crate) history: &'a dyn Fn(u32) -> Option<(Vec<Script>, u32)>,
    /// The bytes a script writes, with tokens of one fixed salt; `None`
    /// for one too large to keep. Two shrinking candidates that write the
    /// same bytes are the same experiment: the second is not run again.
    pub(crate) written: &'a dyn Fn(&ScriptSpec) -> Option<Vec<u8>>,
    /// Where a finding the search catches is handed, to be shrunk and
    /// confirmed in a lane of its own (a shrinker) while the search draws
    /// on; `None` to do it inline.
    pub(crate) apart: Option<&'a dyn Fn(Handed)>,
}

/// The candidates cut from `spec`, largest cuts first, none twice and none
/// equal to `spec`: without its extra write boundaries; each step alone;
/// without each half, quarter, … and each single step.
pub(crate) fn cuts(spec: &ScriptSpec) -> Vec<ScriptSpec> {
    let mut out: Vec<ScriptSpec> = Vec::new();
    let mut add = |c: ScriptSpec| {
        if c != *spec && !out.contains(&c) && out.len() < FLIGHT {
            out.push(c);
        }
    };
    if !spec.splits.is_empty() || !spec.joins.is_empty() {
        add(ScriptSpec { splits: Vec::new(), joins: Vec::new(), ..spec.clone() });
    }
    let n = spec.steps.len();
    let mut sizes = Vec::new();
    let mut size = n.div_ceil(2);
    while size >= 1 && sizes.last() != Some(&1) {
        sizes.push(size);
        size = size.div_ceil(2);
    }
    let without = |size: usize, add: &mut dyn FnMut(ScriptSpec)| {
        for start in (0..n).step_by(size) {
            let mut steps = spec.steps.clone();
            steps.drain(start..(start + size).min(n));
            add(ScriptSpec { steps, ..spec.clone() });
        }
    };
    // Halves and quarters first, then each step alone, then the rest: a
    // long script's round is not spent on single steps.
    for size in sizes.iter().take(2) {
        without(*size, &mut add);
    }
    if n > 1 {
        for keep in &spec.steps {
            add(ScriptSpec { steps: vec![keep.clone()], ..spec.clone() });
        }
    }
    for size in sizes.iter().skip(2) {
        without(*size, &mut add);
    }
    out
}

/// The smallest of the `candidates` that `shown` says still show the
/// finding (those past its end did not run): fewest steps, then fewest
/// write boundaries, then first.
pub(crate) fn smallest(candidates: Vec<ScriptSpec>, shown: &[bool]) -> Option<ScriptSpec> {
    let size = |c: &ScriptSpec| (c.steps.len(), c.splits.len() + c.joins.len());
    let shown = candidates.into_iter().zip(shown).filter(|(_, shown)| **shown);
    shown.map(|(c, _)| c).min_by_key(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::Step;
    use crate::protocol::Revision;

    fn spec(n: usize) -> ScriptSpec {
        ScriptSpec::whole(Revision::LATEST, (0..n as u8).map(Step::Control).collect())
    }

    #[test]
    fn cuts_keep_each_step_alone_and_drop_every_chunk() {
        let s = spec(4);
        let cuts = cuts(&s);
        for i in 0..4u8 {
            assert!(cuts.iter().any(|c| c.steps == vec![Step::Control(i)]), "step {i} alone");
        }
        let dropped = |a: u8, b: u8| cuts.iter().any(|c| c.steps == vec![Step::Control(a), Step::Control(b)]);
        assert!(dropped(2, 3) && dropped(0, 1), "each half dropped");
        assert_eq!(cuts.iter().filter(|c| c.steps.len() == 3).count(), 4, "each single step dropped");
        assert!(!cuts.contains(&s), "never the script itself");
    }

    #[test]
    fn a_single_step_is_cut_to_nothing_and_boundaries_go_first() {
        let s = ScriptSpec { splits: vec![3], ..spec(1) };
        let cuts = cuts(&s);
        assert_eq!(cuts[0], spec(1), "boundaries dropped first");
        assert!(cuts.iter().any(|c| c.steps.is_empty()));
    }

    #[test]
    fn a_round_is_bounded() {
        assert_eq!(cuts(&spec(40)).len(), FLIGHT);
    }
}

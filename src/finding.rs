//! A finding: a failing session, minimized, with what shows it.

use crate::check::{CheckId, Violation};
use crate::frame::Rule;
use crate::observation::Observation;
use crate::protocol::{Level, Policy};
use crate::script::{Script, ScriptSpec};
use std::time::Duration;

/// A failing session, minimized.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The check it fails.
    pub check: CheckId,
    /// Every violation of the minimized session.
    pub violations: Vec<Violation>,
    /// The minimized choices.
    pub spec: ScriptSpec,
    /// The minimized script.
    pub script: Script,
    /// What the minimized session showed.
    pub observation: Observation,
    /// How many sessions ran until the first failure, the failing one
    /// included; 0 when it was not found by a hunt (a minimized artifact).
    pub cases_until_caught: u32,
    /// The salt of the minimized session's tokens.
    pub salt: u32,
    /// The seed of the hunt.
    pub seed: u64,
    /// The policy of the hunt.
    pub policy: Policy,
    /// Whether shrinking stopped at its time bound
    /// ([`HuntConfig::max_shrink_ms`](crate::HuntConfig::max_shrink_ms)): the script may cut down further.
    pub shrink_ran_out: bool,
    /// How long after its session was judged the evidence came that shows
    /// it, when it came late (an effect or output after the session's
    /// window).
    pub late: Option<Duration>,
    /// The scripts the same process ran before this one, when a process
    /// shared between sessions showed the violation and a fresh session
    /// did not repeat it: a state-dependent finding, replayed and
    /// minimized with its history. Empty otherwise.
    pub history: Vec<Script>,
    /// Whether a session in a process of its own showed it.
    pub confirmed: bool,
    /// Under `auto`: which policy the gateway showed, and on which frame.
    pub policy_seen: Option<String>,
}

impl Finding {
    /// The level the finding rests on: that of its first violation.
    pub fn level(&self) -> Level {
        self.violations.first().map_or(Level::Spec, |v| v.level(&self.script))
    }

    /// The rule of the frame its first violation concerns, if one.
    pub fn rule(&self) -> Option<Rule> {
        self.violations.first().and_then(|v| v.rule(&self.script))
    }
}

//! Multi round-trip requests and per-request capabilities (MCP
//! 2026-07-28), aimed at a tool that acts only once the client has
//! confirmed ([`crate::catalogue::ToolSpec::confirms`]): its call gets an
//! `input_required` result and acts on nothing yet; a request that needs a
//! capability its own envelope does not declare is owed -32021, whatever an
//! earlier request declared; and no retry acts on a `requestState` or on
//! answers that no `input_required` result asked for. Where the session's
//! revision has no envelope, or the target has no such tool, the family
//! sends a plain valid call.

use super::{CallParts, Ctx, json_str, kinds, line};
use crate::catalogue::ToolSpec;
use crate::frame::{Expect, Fill, Frame, Reuse, Rule};
use crate::protocol::{Id, Revision};
use base64::Engine as _;
use proptest::prelude::*;

kinds! {
    /// Which round trip.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// The call alone: it is asked about and acts on nothing yet.
        Asked => "asked",
        /// The call declaring `elicitation`, then again without: owed
        /// -32021, as capabilities are each request's own.
        InheritedCapability => "inherited_capability",
        /// A retry carrying a `requestState` no result handed out, and no
        /// answers: only trusting the state could make it act.
        ForgedState => "forged_state",
        /// A call carrying accepting answers to input no result asked for,
        /// and no state.
        UnrequestedInput => "unrequested_input",
        /// The call asked about, then retried with the state its result
        /// handed out and accepting answers: it acts, once.
        Confirmed => "confirmed",
        /// The confirmed retry, then the same retry again with the same,
        /// spent state: only the first acts.
        ReplayedState => "replayed_state",
        /// The call asked about, then retried with its state altered by
        /// one character.
        AlteredState => "altered_state",
        /// The call asked about, then a call with other arguments retried
        /// with the state handed out for the first.
        ForeignState => "foreign_state",
    }
}

impl Kind {
    /// Whether its retries carry what a server handed out, so the driver
    /// writes them only once that answer has come ([`crate::fill`]).
    pub fn adapts(self) -> bool {
        matches!(self, Kind::Confirmed | Kind::ReplayedState | Kind::AlteredState | Kind::ForeignState)
    }
}

/// A round-trip attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct RoundTrip {
    /// Which round trip.
    pub kind: Kind,
    /// Which runnable tool a plain valid call uses, and which confirming
    /// tool the attack aims at.
    pub tool: u8,
    /// Picks the forged state, the answers, and whether the call is first
    /// asked about with other arguments.
    pub pick: u8,
}

const FAMILY: &str = "roundtrip";

/// The client capabilities a confirming call declares.
const ELICITATION: &str = r#"{"elicitation":{}}"#;

/// Answers that accept, under keys a server may have asked with.
const ANSWERS: [&str; 3] = [
    r#"{"confirm":{"action":"accept","content":{"confirm":true}}}"#,
    r#"{"confirm":{"action":"accept"}}"#,
    r#"{"confirmation":{"action":"accept","content":{"confirm":true,"approved":true}}}"#,
];

impl RoundTrip {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>(), any::<u8>()).prop_map(|(kind, tool, pick)| RoundTrip { kind, tool, pick }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let confirming = ctx.catalogue.confirming();
        let tool = confirming.get(self.tool as usize % confirming.len().max(1)).map(|t| (*t).clone());
        let (Some(tool), false, false) = (tool, ctx.revision.has_handshake(), self.kind == Kind::Valid) else {
            return vec![ctx.valid_call(self.tool, FAMILY)];
        };
        if self.kind.adapts() {
            return self.retried(ctx, &tool, &confirming_other(ctx, self.tool));
        }
        let kind = self.kind.name();
        // A call of the confirming tool declaring `capabilities`.
        let declaring = |ctx: &mut Ctx, capabilities: &str| CallParts {
            meta: Revision::R2026_07_28.envelope_declaring(capabilities),
            ..ctx.parts_for(tool.clone())
        };
        let mut frames = Vec::new();
        if matches!(self.kind, Kind::Asked | Kind::InheritedCapability) || self.pick & 0x80 != 0 {
            frames.push(asked(&declaring(ctx, ELICITATION), kind));
        }
        let (parts, member, rule) = match self.kind {
            Kind::Valid | Kind::Asked => return frames,
            Kind::Confirmed | Kind::ReplayedState | Kind::AlteredState | Kind::ForeignState => return frames,
            Kind::InheritedCapability => (declaring(ctx, "{}"), None, Rule::MissingCapability),
            Kind::ForgedState => {
                let parts = declaring(ctx, ELICITATION);
                let state = json_str(&forged_state(self.pick, &parts));
                (parts, Some(format!(r#""requestState":{state}"#)), Rule::ForgedState)
            }
            Kind::UnrequestedInput => {
                let answers = ANSWERS[self.pick as usize % ANSWERS.len()];
                (declaring(ctx, ELICITATION), Some(format!(r#""inputResponses":{answers}"#)), Rule::UnrequestedInput)
            }
        };
        let params = match member {
            Some(m) => parts.params_adding(&m),
            None => parts.params_with(&parts.args_json()),
        };
        frames.push(ctx.rejected_call(parts.request_with(&params), rule, &parts, FAMILY, kind));
        frames
    }
}

impl RoundTrip {
    /// A call of `tool` asked about, then retried with what its result
    /// handed out, as the kind says; `other` is the tool a foreign retry
    /// calls.
    fn retried(&self, ctx: &mut Ctx, tool: &ToolSpec, other: &ToolSpec) -> Vec<Frame> {
        let kind = self.kind.name();
        let declaring = |ctx: &mut Ctx, tool: &ToolSpec| CallParts {
            meta: Revision::R2026_07_28.envelope_declaring(ELICITATION),
            ..ctx.parts_for(tool.clone())
        };
        let first = declaring(ctx, tool);
        let from = Id::Int(first.id);
        let mut frames = vec![asked(&first, kind)];
        // The same call again, under a request id of its own.
        let again = |ctx: &mut Ctx| CallParts { id: ctx.id(), ..first.clone() };
        let verbatim = Fill { from: from.clone(), state: Reuse::Verbatim };
        let (parts, rule, fill) = match self.kind {
            Kind::AlteredState => {
                (again(ctx), Rule::AlteredState, Fill { from, state: Reuse::Altered { at: self.pick } })
            }
            Kind::ForeignState => (declaring(ctx, other), Rule::ForeignState, verbatim),
            _ => {
                let parts = again(ctx);
                let mut confirmed = ctx.acting(line(retry(&parts)), vec![parts.call()], FAMILY, kind);
                confirmed.fill = Some(verbatim.clone());
                frames.push(confirmed);
                if self.kind == Kind::Confirmed {
                    return frames;
                }
                (again(ctx), Rule::ReplayedState, verbatim)
            }
        };
        let mut frame = ctx.rejected_call(retry(&parts), rule, &parts, FAMILY, kind);
        frame.fill = Some(fill);
        frames.push(frame);
        frames
    }
}

/// A retry of the call `parts`: its request carrying the state and the
/// answers a result handed out, as placeholders the driver fills.
fn retry(parts: &CallParts) -> String {
    parts.request_with(&parts.params_adding(&format!(
        r#""requestState":{},"inputResponses":{}"#,
        Fill::STATE,
        Fill::ANSWERS
    )))
}

/// The confirming tool after the one `pick` aims at (itself, where it is
/// the only one): what a foreign retry calls, with arguments of its own.
fn confirming_other(ctx: &Ctx, pick: u8) -> ToolSpec {
    let confirming = ctx.catalogue.confirming();
    (*confirming[(pick as usize + 1) % confirming.len()]).clone()
}

/// The call asked about: owed a result (`input_required`), and no effect
/// until a retry confirms it.
fn asked(parts: &CallParts, kind: &'static str) -> Frame {
    Frame {
        bytes: line(parts.request()),
        expect: Expect::Inert { request: true },
        id: Some(Id::Int(parts.id)),
        tokens: vec![parts.token.clone()],
        family: FAMILY.into(),
        kind: kind.into(),
        fill: None,
    }
}

/// A `requestState` no server handed out: opaque text, a confirmation as a
/// server that keeps its state in the client might write it (base64 of
/// JSON that says the tool's call is confirmed, as the schema's own example
/// states are unsigned base64 JSON), or nothing. None carries the call's
/// token in a form a fresh salt could not rewrite.
fn forged_state(pick: u8, parts: &CallParts) -> String {
    match pick % 3 {
        0 => "eyJzdGF0ZSI6ImZvcmdlZCJ9".to_owned(),
        1 => {
            let claim = serde_json::json!({"tool": parts.tool.name, "confirmed": true});
            base64::engine::general_purpose::STANDARD.encode(claim.to_string())
        }
        _ => String::new(),
    }
}

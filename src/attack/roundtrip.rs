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
use crate::frame::{Expect, Frame, Rule};
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

//! Truncation: a value cut short and followed by EOF, or by a newline and a
//! valid frame; and a value broken across two lines at a point where JSON
//! allows whitespace, which a gateway that joins lines would repair.

use super::{Ctx, kinds};
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// How the value is cut.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Cut short, then LF, then a valid call.
        ThenValid => "truncated_then_valid",
        /// Broken by an LF where JSON allows whitespace.
        BrokenLine => "broken_line",
        /// Cut short, then EOF. Renders only as the script's last frame.
        AtEof => "truncated_at_eof",
    }
}

/// A truncation attack. `cut` picks the offset, always after the token so the
/// cut frame still carries it.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Truncate {
    /// How the value is cut.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
    /// Picks the offset of the cut.
    pub cut: u16,
}

const FAMILY: &str = "truncate";

impl Truncate {
    /// The strategy. `AtEof` is drawn too; the script renders it last.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>(), any::<u16>()).prop_map(|(kind, tool, cut)| Truncate { kind, tool, cut }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let parts = ctx.parts(self.tool);
        let text = parts.request();
        let start = parts.token_end(&text);
        let id = Some(Id::Int(parts.id));
        let tokens = vec![parts.token.clone()];
        match self.kind {
            Kind::Valid => vec![ctx.acting(super::line(text), vec![parts.call()], FAMILY, kind)],
            Kind::ThenValid | Kind::AtEof => {
                // Cut somewhere in [start, len - 1): never the whole value.
                let at = start + self.cut as usize % (text.len() - 1 - start);
                let mut bytes = text.as_bytes()[..at].to_vec();
                if self.kind == Kind::AtEof {
                    return vec![ctx.rejected(bytes, Rule::Truncated, id, tokens, FAMILY, kind)];
                }
                bytes.push(b'\n');
                let cut = ctx.rejected(bytes, Rule::Truncated, id, tokens, FAMILY, kind);
                vec![cut, ctx.valid_call(self.tool, FAMILY)]
            }
            Kind::BrokenLine => {
                // Structural points after the token: before a closing brace
                // or a comma, where a newline is only JSON whitespace.
                let points: Vec<usize> =
                    (start..text.len()).filter(|&i| matches!(text.as_bytes()[i], b'}' | b',')).collect();
                let at = points[self.cut as usize % points.len()];
                let bytes = format!("{}\n{}\n", &text[..at], &text[at..]).into_bytes();
                vec![ctx.rejected(bytes, Rule::BrokenLine, id, tokens, FAMILY, kind)]
            }
        }
    }
}

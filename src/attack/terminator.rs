//! Line terminators: raw control characters inside strings (a whole call
//! hidden between two CRs among them), terminators other than LF, blank
//! lines, huge lines, and the valid look-alikes (padding, U+2028 and NEL
//! inside strings) that a strict gateway must still accept.

use super::{Ctx, kinds, line};
use crate::frame::{Expect, Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

/// Bytes of stray text before the call in a huge line: past the reference
/// gateway's 1 MiB line bound.
pub(crate) const HUGE_LINE: usize = (1 << 20) + 64;

kinds! {
    /// Which terminator trick.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: spaces and tabs around the value.
        Padded => "padded",
        /// Valid: a raw U+2028 LINE SEPARATOR inside a string.
        LineSeparator => "line_separator_in_string",
        /// Valid: a raw U+0085 NEXT LINE inside a string.
        NextLine => "nel_in_string",
        /// Inert: an empty line.
        EmptyLine => "empty_line",
        /// Inert: a line of spaces and tabs.
        BlankLine => "blank_line",
        /// A raw LF inside a string: the value spans two lines.
        RawLf => "raw_lf_in_string",
        /// A raw CR inside a string.
        RawCr => "raw_cr_in_string",
        /// A raw TAB inside a string.
        RawTab => "raw_tab_in_string",
        /// A valid call terminated by CRLF.
        Crlf => "crlf",
        /// Two calls separated by a lone CR on one LF line.
        CrSeparated => "cr_separated",
        /// A whole call between two raw CRs inside a string of a `ping`:
        /// a reader that ends lines at CR runs it.
        CrHiddenCall => "cr_hidden_call",
        /// Over a megabyte of stray text, then a call, on one line.
        Huge => "huge_line",
    }
}

/// A terminator attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Terminator {
    /// Which trick.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "terminator";

impl Terminator {
    /// The strategy. Huge lines are rare: they cost a megabyte each.
    pub fn strategy() -> BoxedStrategy<Self> {
        let common: Vec<Kind> = Kind::ALL.iter().copied().filter(|k| *k != Kind::Huge).collect();
        let kind = prop_oneof![30 => proptest::sample::select(common), 1 => Just(Kind::Huge)];
        (kind, any::<u8>()).prop_map(|(kind, tool)| Terminator { kind, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let inert = |bytes: &[u8]| Frame {
            bytes: bytes.to_vec(),
            expect: Expect::Inert { request: false },
            id: None,
            tokens: vec![],
            family: FAMILY.into(),
            kind: kind.into(),
            fill: None,
        };
        match self.kind {
            Kind::Valid => return vec![ctx.valid_call(self.tool, FAMILY)],
            Kind::EmptyLine => return vec![inert(b"\n")],
            Kind::BlankLine => return vec![inert(b" \t  \n")],
            _ => {}
        }
        let mut parts = ctx.parts(self.tool);
        let id = Some(Id::Int(parts.id));
        let tokens = vec![parts.token.clone()];
        let reject =
            |ctx: &Ctx, bytes: Vec<u8>, rule| ctx.rejected(bytes, rule, id.clone(), tokens.clone(), FAMILY, kind);
        match self.kind {
            Kind::Padded => {
                let text = format!("  \t{} \t", parts.request());
                vec![ctx.acting(line(text), vec![parts.call()], FAMILY, kind)]
            }
            Kind::LineSeparator | Kind::NextLine => {
                let sep = if self.kind == Kind::LineSeparator { "\u{2028}" } else { "\u{85}" };
                let text = parts.insert_valid(sep);
                vec![ctx.acting(line(text), vec![parts.call()], FAMILY, kind)]
            }
            Kind::RawLf => vec![reject(ctx, line(parts.request_inserting(b"\n/")), Rule::RawControl)],
            Kind::RawCr => vec![reject(ctx, line(parts.request_inserting(b"\r")), Rule::RawControl)],
            Kind::RawTab => vec![reject(ctx, line(parts.request_inserting(b"\t")), Rule::RawControl)],
            Kind::Crlf => {
                let bytes = format!("{}\r\n", parts.request()).into_bytes();
                vec![ctx.tolerated(bytes, Rule::CrBeforeLf, vec![parts.call()], FAMILY, kind)]
            }
            Kind::CrSeparated => {
                let b = ctx.parts(self.tool);
                let text = format!("{}\r{}", parts.request(), b.request());
                let mut frame = reject(ctx, line(text), Rule::ForeignTerminator);
                frame.tokens.push(b.token);
                vec![frame]
            }
            Kind::CrHiddenCall => {
                let ping = ctx.id();
                // In a request that acts on nothing: the marker's method.
                let hidden = format!(r#""portcullis":"{}{}{}""#, '\r', parts.request(), '\r');
                let text = format!(
                    r#"{{"jsonrpc":"2.0","id":{ping},"method":"{}","params":{{"_meta":{}}}}}"#,
                    ctx.revision.marker_method(),
                    ctx.meta_with(&hidden)
                );
                let tokens = vec![parts.token.clone()];
                vec![ctx.rejected(line(text), Rule::RawControl, Some(Id::Int(ping)), tokens, FAMILY, kind)]
            }
            Kind::Huge => {
                // Built to its size: kept in the ledger, a line grown by
                // doubling would hold twice its megabyte.
                let request = parts.request();
                let mut bytes = Vec::with_capacity(HUGE_LINE + request.len() + 1);
                bytes.resize(HUGE_LINE, b'A');
                bytes.extend_from_slice(request.as_bytes());
                bytes.push(b'\n');
                vec![reject(ctx, bytes, Rule::LineTooLong)]
            }
            Kind::Valid | Kind::EmptyLine | Kind::BlankLine => unreachable!("handled above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::protocol::Revision;

    #[test]
    fn a_huge_line_is_its_megabyte_then_a_call_with_no_room_to_spare() {
        for revision in [Revision::LATEST_HANDSHAKEN, Revision::R2026_07_28] {
            let catalogue = Catalogue::reference();
            let huge = Terminator { kind: Kind::Huge, tool: 0 };
            let frame = huge.render(&mut Ctx::new(revision, &catalogue, 1)).remove(0);
            assert_eq!(frame.bytes.capacity(), frame.bytes.len(), "{revision:?}");
            let (stray, call) = frame.bytes.split_at(HUGE_LINE);
            assert!(stray.iter().all(|b| *b == b'A'), "{revision:?}");
            assert_eq!(call.iter().filter(|b| **b == b'\n').count(), 1, "one line, ended: {revision:?}");
            let call: serde_json::Value = serde_json::from_slice(call).expect("a call after the stray text");
            assert_eq!(call["params"]["name"], catalogue.tools[0].name, "{revision:?}");
            assert!(matches!(frame.expect, Expect::Reject(Rule::LineTooLong)), "{revision:?}: {:?}", frame.expect);
        }
    }
}

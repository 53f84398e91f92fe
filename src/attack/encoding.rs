//! Encoding tricks: invalid UTF-8 in its several forms inside a string, a
//! byte-order mark, NUL bytes and escaped lone surrogates; and the valid
//! look-alikes (a raw multibyte character, an escaped surrogate pair).

use super::{Ctx, kinds, line};
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// Which encoding trick.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: a raw two-byte character after the token.
        Multibyte => "multibyte",
        /// Valid: an escaped surrogate pair after the token.
        EscapedPair => "escaped_pair",
        /// A stray continuation byte.
        StrayContinuation => "stray_continuation",
        /// An overlong encoding of '/'.
        Overlong => "overlong",
        /// A UTF-8-encoded surrogate (U+D800).
        EncodedSurrogate => "encoded_surrogate",
        /// A multibyte sequence cut short.
        TruncatedSequence => "truncated_sequence",
        /// A byte that never appears in UTF-8.
        InvalidByte => "invalid_byte",
        /// Latin-1 'é'.
        Latin1 => "latin1",
        /// A byte-order mark before the value.
        Bom => "bom",
        /// A raw NUL inside a string.
        NulInString => "nul_in_string",
        /// A raw NUL after the value.
        NulAfter => "nul_after",
        /// An escaped lone high surrogate.
        LoneHigh => "lone_high_surrogate",
        /// An escaped lone low surrogate.
        LoneLow => "lone_low_surrogate",
    }
}

/// An encoding attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Encoding {
    /// Which trick.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "encoding";

impl Encoding {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>()).prop_map(|(kind, tool)| Encoding { kind, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let mut parts = ctx.parts(self.tool);
        let valid = |ctx: &Ctx, text: String, parts: &super::CallParts| {
            ctx.acting(line(text), vec![parts.call()], FAMILY, kind)
        };
        let (bytes, rule) = match self.kind {
            Kind::Valid => return vec![valid(ctx, parts.request(), &parts)],
            Kind::Multibyte => {
                let text = parts.insert_valid("é");
                return vec![valid(ctx, text, &parts)];
            }
            Kind::EscapedPair => {
                // The raw text carries the escape; the argument, the character.
                let text = parts.insert_valid_as(br"\ud83d\ude00", "\u{1F600}");
                return vec![valid(ctx, text, &parts)];
            }
            Kind::StrayContinuation => (parts.request_inserting(b"\x80"), Rule::InvalidUtf8),
            Kind::Overlong => (parts.request_inserting(b"\xC0\xAF"), Rule::InvalidUtf8),
            Kind::EncodedSurrogate => (parts.request_inserting(b"\xED\xA0\x80"), Rule::InvalidUtf8),
            Kind::TruncatedSequence => (parts.request_inserting(b"\xE2\x82"), Rule::InvalidUtf8),
            Kind::InvalidByte => (parts.request_inserting(b"\xFF"), Rule::InvalidUtf8),
            Kind::Latin1 => (parts.request_inserting(b"\xE9"), Rule::InvalidUtf8),
            Kind::Bom => ([b"\xEF\xBB\xBF".as_slice(), parts.request().as_bytes()].concat(), Rule::ByteOrderMark),
            Kind::NulInString => (parts.request_inserting(b"\0"), Rule::NulByte),
            Kind::NulAfter => ([parts.request().as_bytes(), b"\0"].concat(), Rule::NulByte),
            Kind::LoneHigh => (parts.request_inserting(br"\ud800"), Rule::LoneSurrogate),
            Kind::LoneLow => (parts.request_inserting(br"\udc00"), Rule::LoneSurrogate),
        };
        let id = Some(Id::Int(parts.id));
        vec![ctx.rejected(line(bytes), rule, id, vec![parts.token.clone()], FAMILY, kind)]
    }
}

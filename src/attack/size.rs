//! Valid calls sized around common buffer limits (a page, a pipe's 64 KiB,
//! a megabyte, up to 32 MiB), so that a server that acts on a cut call,
//! answers for it twice, or dies on it is seen. Up to 64 KiB a call must
//! act, its bulk in `_meta`; past that a server may refuse it (it is
//! `tolerated`), but never act on it with other arguments, and the bulk
//! goes into a free-text argument where the tool has one (not a path, a
//! name or an id), else into `_meta`.

use super::{Ctx, free_text, kinds, line};
use crate::catalogue::ArgKind;
use crate::frame::{Frame, Rule};
use proptest::prelude::*;
use serde_json::Value;

kinds! {
    /// Which sizes.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Around a page: 4 KiB less a byte to 16 KiB.
        Page => "page_sized_call",
        /// Around a pipe's buffer: 64 KiB less a byte to 64 KiB and a byte.
        Pipe => "pipe_sized_call",
        /// Around a megabyte: a server may refuse it.
        Megabyte => "megabyte_call",
        /// 8, 16 or 32 MiB: a server may refuse it.
        Huge => "huge_call",
    }
}

/// A sized call: its line, LF included, is exactly the size picked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Size {
    /// Which sizes.
    pub kind: Kind,
    /// Picks the size among the kind's.
    pub size: u8,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "size";

/// How often each kind is drawn, out of [`WEIGHTS`]'s sum: a megabyte and
/// more are rarer, as each costs its size to write, to read and to keep.
const WEIGHTS: [(Kind, u8); 5] =
    [(Kind::Valid, 4), (Kind::Page, 6), (Kind::Pipe, 6), (Kind::Megabyte, 2), (Kind::Huge, 1)];

/// Built from fuzzer bytes with the strategy's weights, so that a fuzzing
/// run is not spent mostly on 32 MiB calls.
impl<'a> arbitrary::Arbitrary<'a> for Size {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let total: u8 = WEIGHTS.iter().map(|(_, w)| w).sum();
        let mut pick = u.arbitrary::<u8>()? % total;
        let mut kind = Kind::Valid;
        for (k, w) in WEIGHTS {
            if pick < w {
                kind = k;
                break;
            }
            pick -= w;
        }
        Ok(Size { kind, size: u.arbitrary()?, tool: u.arbitrary()? })
    }
}

const PAGE: [usize; 5] = [4_095, 4_096, 4_097, 8_192, 16_384];
const PIPE: [usize; 3] = [65_535, 65_536, 65_537];
const MEGABYTE: [usize; 3] = [(1 << 20) - 1, 1 << 20, (1 << 20) + 1];
const HUGE: [usize; 3] = [8 << 20, 16 << 20, 32 << 20];

/// The largest line every server must serve: 64 KiB, LF included. Past
/// it a server may refuse (Go's default line scanner stops there).
const MUST_SERVE: usize = 65_536;

impl Size {
    /// The strategy, with the kinds' `WEIGHTS`.
    pub fn strategy() -> BoxedStrategy<Self> {
        let kinds: Vec<(u32, BoxedStrategy<Kind>)> =
            WEIGHTS.iter().map(|(k, w)| (u32::from(*w), Just(*k).boxed())).collect();
        let kind = proptest::strategy::Union::new_weighted(kinds);
        (kind, any::<u8>(), any::<u8>()).prop_map(|(kind, size, tool)| Size { kind, size, tool }).boxed()
    }

    /// The line size, LF included.
    pub fn bytes(&self) -> Option<usize> {
        let sizes: &[usize] = match self.kind {
            Kind::Valid => return None,
            Kind::Page => &PAGE,
            Kind::Pipe => &PIPE,
            Kind::Megabyte => &MEGABYTE,
            Kind::Huge => &HUGE,
        };
        Some(sizes[self.size as usize % sizes.len()])
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let Some(target) = self.bytes() else { return vec![ctx.valid_call(self.tool, FAMILY)] };
        let mut parts = ctx.parts(self.tool);
        let room = target.saturating_sub(parts.request().len() + 1);
        // A call every server must serve keeps its arguments as they are (a
        // schema may bound a string's length); past that, a server may refuse
        // the call, and the bulk goes where a cut would show.
        let text_arg = parts.arguments.iter().find_map(|(k, v)| {
            let text = parts.tool.arg(k).is_some_and(|a| a.kind == ArgKind::Text) && free_text(k);
            (target > MUST_SERVE && text && v.is_string()).then(|| k.clone())
        });
        let bytes = match text_arg {
            Some(key) => {
                if let Some(Value::String(s)) = parts.arguments.get_mut(&key) {
                    s.push_str(&"x".repeat(room));
                }
                line(parts.request())
            }
            None => {
                // In `_meta` (beside the envelope where there is one), less
                // what the member itself takes of the room.
                let padded =
                    |pad: &str| parts.request_with(&parts.params_meta_adding(&format!(r#""portcullis":"{pad}""#)));
                let member = padded("").len() - parts.request().len();
                line(padded(&"x".repeat(room.saturating_sub(member))))
            }
        };
        let calls = vec![parts.call()];
        if target <= MUST_SERVE {
            vec![ctx.acting(bytes, calls, FAMILY, self.kind.name())]
        } else {
            vec![ctx.tolerated(bytes, Rule::LargeMessage, calls, FAMILY, self.kind.name())]
        }
    }
}

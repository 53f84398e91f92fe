//! Valid calls sized around common buffer limits (a page, a pipe's 64 KiB,
//! a megabyte, up to 32 MiB), so that a server that acts on a cut call,
//! answers for it twice, or dies on it is seen. Up to 64 KiB a call must
//! act, its bulk in `_meta`; past that a server may refuse it (it is
//! `tolerated`), but never act on it with other arguments, and the bulk
//! goes into a free-text argument where the tool has one (not a path, a
//! name or an id), else into `_meta`.

use super::{CallParts, Ctx, free_text, kinds};
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

/// Where a call's bulk goes, in its rendering before [`bulk_line`].
const BULK: &str = "portcullis-bulk-";

/// A mark for the bulk that `text`, the call rendered without it, does
/// not hold (a tool's name or argument could hold any one): so found only
/// where it was put. It has no prefix that is also its suffix, so no
/// text around it can make it appear earlier.
fn mark_absent_from(text: &str) -> String {
    (0u32..).map(|n| format!("{BULK}{n:08x}")).find(|m| !text.contains(m.as_str())).expect("a free mark")
}

/// The string argument `key` of `parts`.
fn text_of<'a>(parts: &'a mut CallParts, key: &str) -> &'a mut String {
    match parts.arguments.get_mut(key) {
        Some(Value::String(s)) => s,
        _ => unreachable!("the bulk goes in a string argument"),
    }
}

/// `text` as a line, its `mark` replaced by `n` bytes of `x`, in a buffer
/// of exactly its size.
fn bulk_line(text: &str, mark: &str, n: usize) -> Vec<u8> {
    let at = text.find(mark).expect("the call holds its bulk's mark");
    let rest = &text.as_bytes()[at + mark.len()..];
    let mut line = Vec::with_capacity(at + n + rest.len() + 1);
    line.extend_from_slice(&text.as_bytes()[..at]);
    line.resize(at + n, b'x');
    line.extend_from_slice(rest);
    line.push(b'\n');
    line
}

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
        // The bulk is rendered as a short mark, then spliced in once, into
        // a buffer of the line's size: a 32 MiB call is built without a
        // copy per layer of JSON, and kept without room to spare.
        let bytes = match text_arg {
            Some(key) => {
                let mark = mark_absent_from(&parts.request());
                text_of(&mut parts, &key).push_str(&mark);
                let line = bulk_line(&parts.request(), &mark, room);
                // The call the server must act on carries the bulk itself.
                let text = text_of(&mut parts, &key);
                let mut bulk = std::mem::take(text).into_bytes();
                bulk.truncate(bulk.len() - mark.len());
                bulk.reserve_exact(room);
                bulk.resize(bulk.len() + room, b'x');
                *text = String::from_utf8(bulk).expect("text and ASCII bulk");
                line
            }
            None => {
                // In `_meta` (beside the envelope where there is one), less
                // what the member itself takes of the room.
                let padded =
                    |pad: &str| parts.request_with(&parts.params_meta_adding(&format!(r#""portcullis":"{pad}""#)));
                let bare = padded("");
                let mark = mark_absent_from(&bare);
                let member = bare.len() - parts.request().len();
                bulk_line(&padded(&mark), &mark, room.saturating_sub(member))
            }
        };
        let calls = vec![parts.into_call()];
        if target <= MUST_SERVE {
            vec![ctx.acting(bytes, calls, FAMILY, self.kind.name())]
        } else {
            vec![ctx.tolerated(bytes, Rule::LargeMessage, calls, FAMILY, self.kind.name())]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{ArgSpec, Catalogue, ToolSpec};
    use crate::frame::Expect;
    use crate::protocol::Revision;

    #[test]
    fn a_sized_call_is_its_size_with_no_room_to_spare_and_its_call_carries_the_bulk() {
        // A tool may be named like the bulk's first mark: the bulk goes
        // where it was put all the same.
        let tools = ["t", "portcullis-bulk-00000000"];
        for ((arg, kind), tool) in [("note", ArgKind::Text), ("url", ArgKind::Url)].into_iter().zip(tools) {
            let catalogue = Catalogue::new(vec![ToolSpec::new(tool, vec![ArgSpec::required(arg, kind)])]);
            for revision in [Revision::LATEST_HANDSHAKEN, Revision::R2026_07_28] {
                for (kind, size) in [(Kind::Page, 0), (Kind::Pipe, 2), (Kind::Megabyte, 1), (Kind::Huge, 0)] {
                    let sized = Size { kind, size, tool: 0 };
                    let frame = sized.render(&mut Ctx::new(revision, &catalogue, 1)).remove(0);
                    let what = format!("{arg} {revision:?} {kind:?}");
                    assert_eq!(Some(frame.bytes.len()), sized.bytes(), "{what}");
                    assert_eq!(frame.bytes.capacity(), frame.bytes.len(), "{what}");
                    let v: Value = serde_json::from_slice(&frame.bytes).expect("valid JSON");
                    assert!(!String::from_utf8_lossy(&frame.bytes).contains("portcullis-bulk-00000001"), "{what}");
                    assert_eq!(v["params"]["name"], tool, "{what}");
                    let (Expect::Act(calls) | Expect::Tolerate(_, calls)) = &frame.expect else {
                        panic!("{what}: a sized call acts or is tolerated")
                    };
                    assert_eq!(v["params"]["arguments"], Value::Object(calls[0].arguments.clone()), "{what}");
                }
            }
        }
    }
}

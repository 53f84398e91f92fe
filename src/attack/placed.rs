//! Ambiguities placed where a server's schema validation cannot reject the
//! call first, so they reach its parser: in `_meta`, in a member beside the
//! arguments, and in the strings of other messages (a
//! `ping`, a `tools/list`, a notification). Numbers sit on the precision
//! boundaries of doubles and 64-bit integers, as values and as ids; nesting comes at every scale
//! up to 100,000; raw line terminators hide in strings of every kind of
//! message. The valid look-alikes (U+2028 and NEL in a string, 2^53 - 1)
//! must be served as usual; in a member beside the arguments, which no
//! schema names, a server may also refuse them (`unknown_member`).

use super::{Ctx, kinds, line};
use crate::frame::{Expect, Frame, Rule};
use crate::protocol::{Id, Level};
use proptest::prelude::*;

kinds! {
    /// What is placed.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: a raw U+2028 LINE SEPARATOR inside a string.
        LineSeparator => "placed_line_separator",
        /// Valid: a raw U+0085 NEXT LINE inside a string.
        NextLine => "placed_next_line",
        /// A number on a precision boundary: 2^53 - 1 is exact (valid), one
        /// no double holds exactly is tolerated, one past every double is not.
        Number => "boundary_number",
        /// A call whose id is an integer on a precision boundary: 2^53 - 1
        /// is valid; past it, no reader can be relied on to echo it.
        NumberId => "boundary_id",
        /// An object with the same key twice.
        DuplicateKey => "placed_duplicate_key",
        /// `NaN`, `Infinity` or `-Infinity`.
        NonFinite => "placed_non_finite",
        /// An escaped lone UTF-16 surrogate in a string.
        LoneSurrogate => "placed_lone_surrogate",
        /// Arrays nested from 129 to 100,000 deep.
        DeepNesting => "placed_deep_nesting",
        /// A trailing comma, a comment or single quotes.
        NotStrict => "placed_not_strict",
        /// A raw LF inside a string.
        RawLf => "placed_raw_lf",
        /// A raw CR inside a string.
        RawCr => "placed_raw_cr",
        /// A raw TAB inside a string.
        RawTab => "placed_raw_tab",
    }
}

kinds! {
    /// Where it is placed.
    pub enum Place {
        /// `params._meta` of a `tools/call`.
        Meta => "meta",
        /// A member of a `tools/call`'s params beside `arguments`.
        Sibling => "sibling",
        /// `params._meta` of a `ping` request.
        Ping => "ping",
        /// `params._meta` of a `tools/list` request.
        ToolsList => "tools_list",
        /// A `notifications/cancelled` for no request: its `reason` string,
        /// or its `_meta`.
        Notification => "notification",
    }
}

/// A placed ambiguity.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Placed {
    /// What is placed.
    pub kind: Kind,
    /// Where.
    pub place: Place,
    /// Which runnable tool the call uses.
    pub tool: u8,
    /// Picks the number, the depth or the dialect.
    pub pick: u8,
}

const FAMILY: &str = "placed";

/// Nesting depths: past serde_json's 128, Python's recursion limit, and
/// the limits readers set at 512, 1,000 and 10,000, up to 100,000.
pub(crate) const DEPTHS: [usize; 7] = [129, 200, 513, 1_001, 1_200, 10_001, 100_000];

/// What every reading of a placed number is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// A double holds it exactly.
    Exact,
    /// No double holds it exactly: a reader may round it, or refuse it.
    Imprecise,
    /// Past every double.
    OutOfRange,
}

/// Integer ids on the boundaries: whether a double holds each exactly.
const IDS: [(&str, bool); 9] = [
    ("9007199254740991", true),
    ("-9007199254740991", true),
    ("9007199254740993", false),
    ("-9007199254740993", false),
    ("9223372036854775807", false),
    ("-9223372036854775808", false),
    ("9223372036854775808", false),
    ("18446744073709551615", false),
    ("18446744073709551616", false),
];

/// Numbers on the boundaries.
const NUMBERS: [(&str, Read); 16] = [
    ("9007199254740991", Read::Exact),
    ("-9007199254740991", Read::Exact),
    ("9007199254740993", Read::Imprecise),
    ("-9007199254740993", Read::Imprecise),
    ("9223372036854775807", Read::Imprecise),
    ("9223372036854775808", Read::Imprecise),
    ("-9223372036854775809", Read::Imprecise),
    ("18446744073709551615", Read::Imprecise),
    ("18446744073709551616", Read::Imprecise),
    ("340282366920938463463374607431768211457", Read::Imprecise),
    ("0.30000000000000000000000000000001", Read::Imprecise),
    ("4.9e-324", Read::Imprecise),
    ("1e-400", Read::Imprecise),
    ("1e400", Read::OutOfRange),
    ("-1e400", Read::OutOfRange),
    ("1.8e308", Read::OutOfRange),
];

/// How the frame must be read.
enum Verdict {
    Valid,
    Reject(Rule),
    Tolerate(Rule),
}

/// The placed value as JSON text, and how it must be read.
fn value(kind: Kind, pick: u8) -> (String, Verdict) {
    let string = |raw: &str| (format!("\"portcullis{raw}placed\""), Verdict::Reject(Rule::RawControl));
    let pick = pick as usize;
    match kind {
        Kind::Valid | Kind::NumberId | Kind::LineSeparator => ("\"portcullis\u{2028}placed\"".into(), Verdict::Valid),
        Kind::NextLine => ("\"portcullis\u{85}placed\"".into(), Verdict::Valid),
        Kind::Number => {
            let (text, read) = NUMBERS[pick % NUMBERS.len()];
            let verdict = match read {
                Read::Exact => Verdict::Valid,
                Read::Imprecise => Verdict::Tolerate(Rule::ImpreciseNumber),
                Read::OutOfRange => Verdict::Reject(Rule::NumberOutOfRange),
            };
            (text.to_owned(), verdict)
        }
        Kind::DuplicateKey => {
            (r#"{"portcullis":"first","portcullis":"second"}"#.into(), Verdict::Reject(Rule::DuplicateKey))
        }
        Kind::NonFinite => {
            let text = ["NaN", "Infinity", "-Infinity"][pick % 3];
            (text.into(), Verdict::Reject(Rule::NonFiniteNumber))
        }
        Kind::LoneSurrogate => (r#""portcullis\ud800placed""#.into(), Verdict::Reject(Rule::LoneSurrogate)),
        Kind::DeepNesting => {
            let depth = DEPTHS[pick % DEPTHS.len()];
            (format!("{}0{}", "[".repeat(depth), "]".repeat(depth)), Verdict::Reject(Rule::TooDeep))
        }
        Kind::NotStrict => {
            let text = [r#"["portcullis",]"#, r#"/* portcullis */ "placed""#, "'portcullis'"][pick % 3];
            (text.into(), Verdict::Reject(Rule::NotStrictJson))
        }
        Kind::RawLf => string("\n"),
        Kind::RawCr => string("\r"),
        Kind::RawTab => string("\t"),
    }
}

impl Placed {
    /// The strategy: every kind in every place, about as often.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), Place::any(), any::<u8>(), any::<u8>())
            .prop_map(|(kind, place, tool, pick)| Placed { kind, place, tool, pick })
            .boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        if self.kind == Kind::Valid {
            return vec![ctx.valid_call(self.tool, FAMILY)];
        }
        if self.kind == Kind::NumberId {
            return vec![self.id(ctx)];
        }
        let (value, verdict) = value(self.kind, self.pick);
        let message = |method: &str, id: Option<i64>, params: String| {
            let id = id.map(|id| format!(r#""id":{id},"#)).unwrap_or_default();
            line(format!(r#"{{"jsonrpc":"2.0",{id}"method":"{method}","params":{params}}}"#))
        };
        let member = format!(r#""portcullis":{value}"#);
        let (bytes, id) = match self.place {
            Place::Meta | Place::Sibling => {
                let parts = ctx.parts(self.tool);
                // In `_meta`, beside the envelope where the revision has one.
                let params = match self.place {
                    Place::Sibling => parts.params_adding(&member),
                    _ => parts.params_meta_adding(&member),
                };
                let text = parts.request_with(&params);
                // A member beside `arguments` that no schema names: a server
                // may refuse the call for it, whatever it holds.
                let verdict = match (self.place, verdict) {
                    (Place::Sibling, Verdict::Valid) => Verdict::Tolerate(Rule::UnknownMember),
                    (_, verdict) => verdict,
                };
                let frame = match verdict {
                    Verdict::Valid => ctx.acting(line(text), vec![parts.call()], FAMILY, kind),
                    Verdict::Reject(rule) => ctx.rejected_call(text, rule, &parts, FAMILY, kind),
                    Verdict::Tolerate(rule) => ctx.tolerated(line(text), rule, vec![parts.call()], FAMILY, kind),
                };
                return vec![frame];
            }
            // The marker's method where the revision has no `ping`.
            Place::Ping | Place::ToolsList => {
                let method = if self.place == Place::Ping { ctx.revision.marker_method() } else { "tools/list" };
                let id = ctx.id();
                let params = format!(r#"{{"_meta":{}}}"#, ctx.meta_with(&member));
                (message(method, Some(id), params), Some(Id::Int(id)))
            }
            Place::Notification => {
                let unsent = ctx.id();
                // A string goes in `reason`; anything else in `_meta`.
                let rest = match value.starts_with('"') {
                    true => format!(r#""reason":{value}"#),
                    false => format!(r#""reason":"placed","_meta":{{{member}}}"#),
                };
                let params = format!(r#"{{"requestId":{unsent},{rest}}}"#);
                (message("notifications/cancelled", None, params), None)
            }
        };
        let request = id.is_some();
        let expect = match verdict {
            Verdict::Valid => Expect::Inert { request },
            // A notification has nothing to run and no answer: a reader that
            // takes it leniently does nothing, as one that refuses it should
            // (the spec owes a parse error only for what is not JSON).
            Verdict::Reject(rule) if !request && rule.level() != Level::Spec => Expect::Tolerate(rule, vec![]),
            Verdict::Reject(rule) => Expect::Reject(rule),
            Verdict::Tolerate(rule) => Expect::Tolerate(rule, vec![]),
        };
        vec![Frame { bytes, expect, id, tokens: vec![], family: FAMILY.into(), kind: kind.into(), fill: None }]
    }

    /// A call whose id is an integer on a precision boundary: 2^53 - 1 (or
    /// just under it, so no two calls share one) is valid; past it, no
    /// reader can be relied on to echo it (moved along its boundary, so no
    /// two scripts of one session share one either).
    fn id(&self, ctx: &mut Ctx) -> Frame {
        let (text, exact) = IDS[self.pick as usize % IDS.len()];
        let mut parts = ctx.parts(self.tool);
        if exact {
            let sign = if text.starts_with('-') { -1 } else { 1 };
            parts.id = sign * ctx.boundary_id();
            return ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, Kind::NumberId.name());
        }
        let text = ctx.past_boundary(text);
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{text},"method":"tools/call","params":{}}}"#,
            parts.params_with(&parts.args_json())
        );
        ctx.rejected(line(text), Rule::ImpreciseId, None, vec![parts.token.clone()], FAMILY, Kind::NumberId.name())
    }
}

#[cfg(test)]
mod tests {
    use super::IDS;
    use crate::attack::Ctx;
    use crate::catalogue::Catalogue;
    use crate::protocol::Revision;

    /// What a reader does with an integer: how a double reads it, and
    /// whether i64 and u64 hold it.
    fn read(v: i128) -> (i128, bool, bool) {
        (v as f64 as i128, i64::try_from(v).is_ok(), u64::try_from(v).is_ok())
    }

    /// Every id past a boundary is the boundary itself in a script whose
    /// ids start at 1, and moved along it in the scripts after it in one
    /// session: no two share one, and each is read as the boundary is (a
    /// double rounds it or holds it as it does the boundary; i64 and u64
    /// hold it or not alike).
    #[test]
    fn ids_past_a_boundary_differ_per_script_and_read_as_the_boundary_does() {
        let catalogue = Catalogue::reference();
        for (text, exact) in IDS.iter().filter(|(_, exact)| !exact) {
            let boundary: i128 = text.parse().unwrap();
            let mut seen = std::collections::HashSet::new();
            // Each script sends two such calls, each with an id of its own;
            // past 256 and 4096 ids a step taken modulo either would come
            // back to an id an earlier script sent.
            for first in [1, 3, 5, 101, 255, 257, 513, 4097, 4099, 617_491] {
                let mut ctx = Ctx::new(Revision::R2025_06_18, &catalogue, 1).with_first_id(first);
                let mut sent = Vec::new();
                for _ in 0..2 {
                    ctx.id();
                    sent.push(ctx.past_boundary(text));
                }
                if first == 1 {
                    assert_eq!(&sent[0], text);
                }
                for moved in sent {
                    assert!(seen.insert(moved.clone()), "{text}: {moved} sent twice");
                    let v: i128 = moved.parse().unwrap();
                    let (double, i64_holds, u64_holds) = read(v);
                    let (bdouble, bi64, bu64) = read(boundary);
                    assert_eq!((i64_holds, u64_holds), (bi64, bu64), "{text} → {moved}");
                    assert_eq!(double == v, bdouble == boundary, "{text} → {moved}: exact as a double alike ({exact})");
                    if first < 256 && boundary.abs() > 1 << 60 && bdouble != boundary {
                        assert_eq!(double, bdouble, "{text} → {moved} rounds where the boundary does");
                    }
                }
            }
        }
    }
}

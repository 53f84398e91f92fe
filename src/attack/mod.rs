//! Attack generators: one family per module, each a proptest strategy over
//! small independent choices (a sub-kind, a tool, an offset) that a context
//! renders into exact bytes with labels known by construction.
//!
//! Every family also yields a `valid_call` control frame, so a suite that
//! never sees a valid request executed cannot pass a dead gateway. Every type
//! here implements [`arbitrary::Arbitrary`] too, so cargo fuzz can build the
//! same steps from raw bytes.

pub mod ambiguity;
pub mod concat;
mod ctx;
pub mod encoding;
pub mod envelope;
pub mod jsonrpc;
pub mod lifecycle;
pub mod noise;
pub mod placed;
pub mod roundtrip;
pub mod shape;
pub mod size;
pub mod terminator;
pub mod truncate;

pub(crate) use ctx::{CallParts, Ctx, Phase, free_text, json_str, line};

use crate::frame::Frame;
use crate::protocol::Revision;
use proptest::prelude::*;

/// Declares a family's sub-kinds: a fieldless enum with `ALL` and stable
/// snake_case names, which label the frames it renders.
macro_rules! kinds {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[doc = $d:literal])* $v:ident => $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
        #[non_exhaustive]
        pub enum $name { $($(#[doc = $d])* $v,)* }

        impl $name {
            /// Every sub-kind, the control first so shrinking heads there.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// The stable name frames of this sub-kind carry.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }

            /// A strategy over the sub-kinds.
            pub fn any() -> proptest::strategy::BoxedStrategy<$name> {
                proptest::sample::select($name::ALL).boxed()
            }
        }
    };
}
pub(crate) use kinds;

/// A family of attacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Stray text and banners.
    Noise,
    /// Several JSON values on one line.
    Concat,
    /// Truncated values and values broken across lines.
    Truncate,
    /// Raw terminators in strings, foreign line terminators, blank and huge lines.
    Terminator,
    /// Invalid UTF-8, BOM, NUL, escaped lone surrogates.
    Encoding,
    /// Duplicate and escaped keys, non-finite and huge numbers, deep nesting.
    Ambiguity,
    /// JSON-RPC type confusion, notifications, client responses, batches.
    JsonRpc,
    /// MCP tools/call shape errors, unknown and unauthorized tools.
    Shape,
    /// Lifecycle abuse and state carried across a rejected frame.
    Lifecycle,
    /// Ambiguities placed where validation cannot reject the call first:
    /// `_meta`, a member beside the arguments, the id, other messages.
    Placed,
    /// Valid calls sized around buffer limits, up to 32 MiB.
    Size,
    /// The stateless revision's envelope, and methods of the other era.
    Envelope,
    /// Per-request capabilities and multi round-trip confirmations.
    RoundTrip,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 13] = [
        Family::Noise,
        Family::Concat,
        Family::Truncate,
        Family::Terminator,
        Family::Encoding,
        Family::Ambiguity,
        Family::JsonRpc,
        Family::Shape,
        Family::Lifecycle,
        Family::Placed,
        Family::Size,
        Family::Envelope,
        Family::RoundTrip,
    ];

    /// The family's stable name, as frames carry it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Noise => "noise",
            Family::Concat => "concat",
            Family::Truncate => "truncate",
            Family::Terminator => "terminator",
            Family::Encoding => "encoding",
            Family::Ambiguity => "ambiguity",
            Family::JsonRpc => "jsonrpc",
            Family::Shape => "shape",
            Family::Lifecycle => "lifecycle",
            Family::Placed => "placed",
            Family::Size => "size",
            Family::Envelope => "envelope",
            Family::RoundTrip => "roundtrip",
        }
    }

    /// The names of every sub-kind the family labels its frames with.
    pub fn kind_names(self) -> Vec<&'static str> {
        let names: Vec<&'static str> = match self {
            Family::Noise => noise::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Concat => concat::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Truncate => truncate::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Terminator => terminator::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Encoding => encoding::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Ambiguity => ambiguity::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::JsonRpc => jsonrpc::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Shape => shape::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Lifecycle => lifecycle::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Placed => placed::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Size => size::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::Envelope => envelope::Kind::ALL.iter().map(|k| k.name()).collect(),
            Family::RoundTrip => roundtrip::Kind::ALL.iter().map(|k| k.name()).collect(),
        };
        names
    }

    /// A strategy over this family's steps.
    pub fn steps(self) -> BoxedStrategy<Step> {
        match self {
            Family::Noise => noise::Noise::strategy().prop_map(Step::Noise).boxed(),
            Family::Concat => concat::Concat::strategy().prop_map(Step::Concat).boxed(),
            Family::Truncate => truncate::Truncate::strategy().prop_map(Step::Truncate).boxed(),
            Family::Terminator => terminator::Terminator::strategy().prop_map(Step::Terminator).boxed(),
            Family::Encoding => encoding::Encoding::strategy().prop_map(Step::Encoding).boxed(),
            Family::Ambiguity => ambiguity::Ambiguity::strategy().prop_map(Step::Ambiguity).boxed(),
            Family::JsonRpc => jsonrpc::JsonRpc::strategy().prop_map(Step::JsonRpc).boxed(),
            Family::Shape => shape::Shape::strategy().prop_map(Step::Shape).boxed(),
            Family::Lifecycle => lifecycle::Lifecycle::strategy().prop_map(Step::Lifecycle).boxed(),
            Family::Placed => placed::Placed::strategy().prop_map(Step::Placed).boxed(),
            Family::Size => size::Size::strategy().prop_map(Step::Size).boxed(),
            Family::Envelope => envelope::Envelope::strategy().prop_map(Step::Envelope).boxed(),
            Family::RoundTrip => roundtrip::RoundTrip::strategy().prop_map(Step::RoundTrip).boxed(),
        }
    }
}

/// One element of a script: a valid control call or one family's attack.
/// It renders to one or more frames.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Step {
    /// A plain valid `tools/call` of the runnable tool picked by the byte.
    Control(u8),
    /// Stray text and banners.
    Noise(noise::Noise),
    /// Concatenated values.
    Concat(concat::Concat),
    /// Truncation and broken lines.
    Truncate(truncate::Truncate),
    /// Line terminators.
    Terminator(terminator::Terminator),
    /// Encoding tricks.
    Encoding(encoding::Encoding),
    /// JSON ambiguity.
    Ambiguity(ambiguity::Ambiguity),
    /// JSON-RPC type confusion.
    JsonRpc(jsonrpc::JsonRpc),
    /// MCP shape errors.
    Shape(shape::Shape),
    /// Lifecycle abuse.
    Lifecycle(lifecycle::Lifecycle),
    /// Ambiguities placed outside the arguments.
    Placed(placed::Placed),
    /// Sized valid calls.
    Size(size::Size),
    /// The stateless revision's envelope.
    Envelope(envelope::Envelope),
    /// Per-request capabilities and confirmations.
    RoundTrip(roundtrip::RoundTrip),
}

impl Step {
    /// The frames this step writes, in order.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        match self {
            Step::Control(tool) => vec![ctx.valid_call(*tool, "control")],
            Step::Noise(s) => s.render(ctx),
            Step::Concat(s) => s.render(ctx),
            Step::Truncate(s) => s.render(ctx),
            Step::Terminator(s) => s.render(ctx),
            Step::Encoding(s) => s.render(ctx),
            Step::Ambiguity(s) => s.render(ctx),
            Step::JsonRpc(s) => s.render(ctx),
            Step::Shape(s) => s.render(ctx),
            Step::Lifecycle(s) => s.render(ctx),
            Step::Placed(s) => s.render(ctx),
            Step::Size(s) => s.render(ctx),
            Step::Envelope(s) => s.render(ctx),
            Step::RoundTrip(s) => s.render(ctx),
        }
    }

    /// Whether the step belongs before the handshake (a call before
    /// `initialize`).
    pub fn before_handshake(&self) -> bool {
        matches!(self, Step::Lifecycle(l) if l.kind == lifecycle::Kind::EarlyCall)
    }
}

/// A strategy over steps of every family, with plain controls mixed in.
/// Each family weighs as many sub-kinds as it has, so every sub-kind is
/// about as likely as any other; plain controls make up about a sixth.
pub fn any_step() -> BoxedStrategy<Step> {
    let mut arms: Vec<(u32, BoxedStrategy<Step>)> = vec![(20, any::<u8>().prop_map(Step::Control).boxed())];
    arms.extend(Family::ALL.iter().map(|f| (f.kind_names().len() as u32, f.steps())));
    proptest::strategy::Union::new_weighted(arms).boxed()
}

/// The revisions, as a strategy.
pub fn any_revision() -> BoxedStrategy<Revision> {
    proptest::sample::select(Revision::ALL.to_vec()).boxed()
}

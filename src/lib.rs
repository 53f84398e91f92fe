//! # portcullis
//!
//! A property-based fuzzing suite for the stdio boundary of MCP servers and
//! gateways. It proves two things about a gateway:
//!
//! 1. **stdout carries only complete protocol messages**: no banner, debug
//!    line or fragment;
//! 2. **no rejected frame reaches the executor**: a malformed, ambiguous,
//!    unauthorized or otherwise rejected frame causes no effect, and a valid
//!    request causes exactly one, with exactly its arguments.
//!
//! ## The model
//!
//! The pipeline runs one way:
//!
//! ```text
//! attack ──► script ──► gateway seam ──► observation ──► checks ──► report
//! ```
//!
//! - [`attack`] families are proptest strategies over small choices; a
//!   [`ScriptSpec`] of them renders into a [`Script`] of [`Frame`]s: exact
//!   bytes, each labelled by construction as must-reject (with the [`Rule`]
//!   that makes it so) or valid (with the [`Call`] it must cause). Every
//!   frame that could act carries a unique canary token in its arguments.
//! - The [`Gateway`] trait is the one seam: the [`reference`](mod@reference) gateway, its
//!   built-in mutants, a user's Rust gateway and a child process all
//!   implement it. The executor is a [`Recorder`] that logs typed
//!   [`Action`]s and performs nothing.
//! - [`run::run`] drives a script through the seam into an
//!   [`Observation`]; [`check::check`] turns it into [`Violation`]s of named
//!   checks; [`campaign`] hunts with proptest and shrinks a failure while
//!   it keeps the same check id; [`report`] prints it.
//!
//! ## Where to start
//!
//! - [`prelude`]: what a gateway author needs, in one import.
//! - [`adapter`]: a line handler or a `run(reader, writer)` loop (blocking,
//!   or async with the `tokio` feature) under test in a few lines of glue.
//! - [`libfuzzer`]: entry points for `cargo fuzz`, and [`fuzz_gateway!`].
//! - `process` (feature `process`, Linux): a real child process behind the
//!   same seam, its effects seen by out-of-band probes.
//!
//! ## Features
//!
//! - `cli` (default): the `portcullis` command line; brings `process`.
//! - `process`: the child-process driver and effect probes; Linux only
//!   (process groups, pidfd, `/proc`).
//! - `tokio`: the async adapter.
//!
//! A gateway author's dev-dependency wants none of them:
//! `portcullis = { version = "0.1", default-features = false }` builds
//! anywhere Rust does, without the command line's, HTTP or process crates.

#![deny(missing_docs)]

/// Chainable setters, one per field, for a `#[non_exhaustive]` config
/// that users start from its default.
macro_rules! setters {
    ($ty:ident; $($(#[$doc:meta])* $field:ident: $fty:ty),* $(,)?) => {
        impl $ty {
            $($(#[$doc])* pub fn $field(mut self, $field: $fty) -> Self {
                self.$field = $field;
                self
            })*
        }
    };
}

pub mod adapter;
pub mod artifact;
pub mod attack;
pub mod campaign;
pub mod catalogue;
pub mod check;
#[cfg(all(feature = "cli", target_os = "linux"))]
#[doc(hidden)]
pub mod cli;
mod counted;
mod escape;
#[doc(hidden)]
pub mod fill;
mod finding;
pub mod frame;
mod json_line;
pub mod libfuzzer;
mod observation;
pub mod prelude;
#[cfg(all(feature = "process", target_os = "linux"))]
pub mod probe;
#[cfg(all(feature = "process", target_os = "linux"))]
pub mod process;
pub mod protocol;
pub mod reference;
pub mod report;
pub mod run;
pub mod script;
pub mod seam;
mod token;

#[doc(hidden)]
pub use campaign::PolicySeen;
#[doc(hidden)]
pub use campaign::delta;
pub use campaign::{HuntConfig, assert_holds, hunt, hunt_all};
pub use catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
pub use check::{CheckId, Violation};
pub use finding::Finding;
pub use frame::{Call, Cause, Class, Expect, Frame, Rule};
pub use observation::Observation;
pub use protocol::{Id, Level, Policy, Revision};
pub use script::{Mix, Part, Script, ScriptSpec};
pub use seam::{Action, Exit, Fault, Gateway, Recorder, Session, Settle, Target};

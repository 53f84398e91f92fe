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

#![deny(missing_docs)]

pub mod artifact;
pub mod attack;
pub mod call_template;
pub mod campaign;
pub mod catalogue;
pub mod check;
#[cfg(all(feature = "cli", target_os = "linux"))]
pub mod cli;
pub mod delta;
pub mod escape;
pub mod finding;
pub mod frame;
mod json_line;
pub mod libfuzzer;
pub mod observation;
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
pub mod token;

pub use catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
pub use check::{CheckId, Violation};
pub use finding::Finding;
pub use frame::{Call, Class, Expect, Frame, Rule};
pub use observation::Observation;
pub use protocol::{Id, Policy, Revision};
pub use script::{Mix, Script, ScriptSpec};
pub use seam::{Action, Exit, Fault, Gateway, Recorder, Session, Settle, Target};

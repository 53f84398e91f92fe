//! What a gateway author needs, in one import:
//!
//! ```
//! use portcullis::prelude::*;
//! ```
//!
//! The seam ([`Gateway`], [`Target`], [`Session`], [`Recorder`], [`Action`],
//! [`Exit`], [`Fault`]), the tools a target offers ([`Catalogue`], [`ToolSpec`], [`ArgSpec`],
//! [`ArgKind`]),
//! the hunt ([`HuntConfig`], [`hunt`], [`assert_holds`]) and what it finds
//! ([`Finding`], [`CheckId`], [`Violation`], [`Policy`], [`Revision`]).

pub use crate::campaign::{Finding, HuntConfig, assert_holds, hunt};
pub use crate::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
pub use crate::check::{CheckId, Violation};
pub use crate::protocol::{Level, Policy, Revision};
pub use crate::seam::{Action, Exit, Fault, Gateway, Recorder, Session, Target};

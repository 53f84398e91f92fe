//! What a gateway author needs, in one import:
//!
//! ```
//! use portcullis::prelude::*;
//! ```
//!
//! The seam ([`Gateway`], [`Target`], [`Session`], [`Recorder`], [`Action`],
//! [`Exit`], [`Fault`]), the tools a target offers ([`Catalogue`], [`ToolSpec`]),
//! the hunt ([`HuntConfig`], [`hunt`], [`assert_holds`]) and what it finds
//! ([`Finding`], [`CheckId`], [`Violation`], [`Policy`], [`Revision`]).

pub use crate::campaign::{Finding, HuntConfig, assert_holds, hunt};
pub use crate::catalogue::{Catalogue, ToolSpec};
pub use crate::check::{CheckId, Violation};
pub use crate::protocol::{Policy, Revision};
pub use crate::seam::{Action, Exit, Fault, Gateway, Recorder, Session, Target};

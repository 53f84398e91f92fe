//! Regression tests promoted from fuzz crashes and saved findings by
//! `portcullis promote`, one module each.

mod crash_deep_nesting;

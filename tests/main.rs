//! The integration tests, in one binary: each module holds one subject,
//! and `cli`, `common` and `servers/` what several share.

mod artifact;
mod cli;
mod common;
mod concurrent;
mod control;
mod environment;
mod families;
mod fuzz_cli;
mod fuzzing;
mod hostile;
mod hostile_targets;
mod late;
mod minimize;
mod mutants;
mod probes;
mod reference;
#[path = "regression/main.rs"]
mod regression;
mod remembering;
mod seam;
mod stopping;
mod templates;

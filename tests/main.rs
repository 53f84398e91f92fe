//! The integration tests, in one binary: each module holds one subject,
//! and `cli`, `common` and `servers/` what several share.

mod action;
mod adapters;
mod artifact;
mod audit;
mod baseline;
mod cli;
mod common;
mod concurrent;
mod control;
mod cr_lines;
mod delta;
mod environment;
mod families;
mod flight;
mod forbidden;
mod fuzz_cli;
mod hostile;
mod hostile_targets;
mod late;
mod layout;
mod libfuzzer;
mod mutants;
mod policy_probe;
mod probes;
mod profiles;
mod reference;
#[path = "regression/main.rs"]
mod regression;
mod release_gate;
mod remembering;
mod rmcp_gateway;
mod rules_doc;
mod seam;
mod stalled;
mod starting;
mod stopping;
mod templates;
mod verdicts;

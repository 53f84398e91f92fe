//! What a campaign's reports are written from.

use crate::finding::Finding;
use crate::{CheckId, Level, Mix};
use std::path::{Path, PathBuf};

/// What a campaign ended with, or has found so far.
pub struct Outcome {
    /// Each distinct finding and where its artifact is, in the order
    /// they were first seen.
    pub findings: Vec<(Finding, PathBuf)>,
    /// How many sessions ran.
    pub sessions: u32,
    /// HTTP sink requests the run was told to leave out.
    pub ignored_requests: usize,
    /// The mix scripts were drawn from.
    pub mix: Mix,
}

/// What the reports say beside the findings: what ran, what was judged,
/// and how to run a finding again.
pub struct Context<'a> {
    /// The command the campaign drove.
    pub command: &'a [String],
    /// The one check the run hunted alone, if one.
    pub focus: Option<CheckId>,
    /// The level judged.
    pub level: Level,
    /// The shell command that runs `subcommand` (`replay`, `minimize`) on
    /// an artifact.
    pub rerun: &'a dyn Fn(&str, &Path) -> String,
}

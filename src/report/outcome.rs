//! What a campaign's reports are written from.

use crate::finding::Finding;
use crate::{CheckId, Level, Mix};
use std::path::{Path, PathBuf};

/// What a campaign ended with, or has found so far.
pub struct Outcome {
    /// Each distinct finding and where its artifact is, in the order
    /// they were first seen.
    pub findings: Vec<(Finding, PathBuf)>,
    /// The findings folded into one of `findings` as its evidence
    /// ([`Finding::also`]), each with where its artifact is.
    pub folded: Vec<(Finding, PathBuf)>,
    /// How many sessions ran.
    pub sessions: u32,
    /// HTTP sink requests the run was told to leave out.
    pub ignored_requests: usize,
    /// The lines written to the servers by the run's lanes (scripts,
    /// markers and handshakes), where the run has ended and counted them.
    pub lines_written: Option<u64>,
    /// The mix scripts were drawn from.
    pub mix: Mix,
    /// How its causes stand against `--baseline`, where one was given.
    pub standing: Option<Standing>,
}

/// How a run's causes stand against a baseline of known ones.
#[derive(Debug, Default, PartialEq, Clone)]
pub struct Standing {
    /// The baseline file.
    pub file: String,
    /// Causes it does not list: they fail the run.
    pub new: Vec<String>,
    /// Causes it knows, each by the run's key, with its reason.
    pub known: Vec<(String, String)>,
    /// Causes it lists that the run did not see, each with its reason.
    pub possibly_fixed: Vec<(String, String)>,
}

impl Standing {
    /// The reason the baseline gives for the finding `f`, where it knows
    /// it (by its key, or the one it would fold into).
    pub fn reason(&self, f: &Finding) -> Option<&str> {
        let key = f.distinct().to_string();
        self.known.iter().find(|(k, _)| *k == key).map(|(_, r)| r.as_str())
    }
}

impl Outcome {
    /// What a run that found `found` (in the order first seen) ended
    /// with after `sessions` sessions: each finding that is evidence of
    /// another folded into it ([`crate::finding::fold`]).
    pub fn new(found: Vec<(Finding, PathBuf)>, sessions: u32, ignored_requests: usize, mix: Mix) -> Outcome {
        let (findings, folded) = crate::finding::fold(found, |(f, _)| f);
        Outcome { findings, folded, sessions, ignored_requests, lines_written: None, mix, standing: None }
    }

    /// Where the artifact of the folded finding `key` is.
    pub fn folded_at(&self, key: &crate::finding::Distinct) -> Option<&Path> {
        self.folded.iter().find(|(f, _)| f.distinct() == *key).map(|(_, p)| p.as_path())
    }
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

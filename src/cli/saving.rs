//! Findings saved as they come: a finding's artifact is written as soon as
//! a fresh session has shown it, and written again (the earlier file of
//! this run removed) once it is shrunk and confirmed; `--report`,
//! `--junit` and `--sarif` are rewritten each time. A run stopped by a
//! signal, a timeout or a crash keeps everything it had found.

use super::fuzz_args::Args;
use crate::artifact::Artifact;
use crate::campaign::{Distinct, Finding};
use crate::catalogue::ToolSpec;
use crate::process::Waits;
use crate::report::Outcome;
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Mutex;

/// The findings of one run saved so far, by finding key, in the order
/// first saved.
pub(super) struct Saved<'a> {
    args: &'a Args,
    tools: &'a [ToolSpec],
    by_key: Mutex<Vec<(Distinct, Finding, PathBuf)>>,
}

impl<'a> Saved<'a> {
    pub(super) fn new(args: &'a Args, tools: &'a [ToolSpec]) -> Saved<'a> {
        Saved { args, tools, by_key: Mutex::default() }
    }

    /// Saves `f`'s artifact, in place of the one this run saved for the
    /// same finding, and rewrites the reports with every finding so far
    /// after `sessions` sessions.
    pub(super) fn record(&self, f: &Finding, base: &str, waits: Option<Waits>, sessions: u32) -> Result<PathBuf> {
        let (f, path) = save(f, self.tools, base, waits, self.args)?;
        let key = f.distinct();
        let mut saved = self.by_key.lock().unwrap_or_else(|e| e.into_inner());
        match saved.iter_mut().find(|(k, ..)| *k == key) {
            Some(entry) => {
                // This run's own earlier file, for the same finding.
                let _ = std::fs::remove_file(&entry.2);
                *entry = (key, f, path.clone());
            }
            None => saved.push((key, f, path.clone())),
        }
        let found = saved.iter().map(|(_, f, p)| (f.clone(), p.clone())).collect();
        let outcome = Outcome::new(found, sessions, 0, self.args.mix);
        self.args.write_reports(&outcome)?;
        Ok(path)
    }

    /// Where the finding `key` was saved, if it was.
    pub(super) fn path_of(&self, key: &Distinct) -> Option<PathBuf> {
        let saved = self.by_key.lock().unwrap_or_else(|e| e.into_inner());
        saved.iter().find(|(k, ..)| k == key).map(|(.., p)| p.clone())
    }
}

/// Saves the artifact before anything is reported, so no finding is lost.
pub(super) fn save(
    f: &Finding,
    tools: &[ToolSpec],
    base: &str,
    waits: Option<Waits>,
    args: &Args,
) -> Result<(Finding, PathBuf)> {
    let mut artifact = Artifact::new(f, tools.to_vec(), base, args.child.command.clone());
    artifact.profile_tmp = args.child.tmp_path();
    if let Some(w) = waits {
        artifact = artifact.waited(w.answer, w.quiet, w.exit_grace).started_within(w.start);
    }
    let path = artifact.save(&args.artifacts).map_err(|e| anyhow::anyhow!("saving the finding failed: {e}"))?;
    Ok((f.clone(), path))
}

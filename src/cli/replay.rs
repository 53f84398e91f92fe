//! `portcullis replay FILE -- COMMAND`: runs a saved finding's exact script
//! again (with fresh canary tokens of the same width) against a command and
//! says FIXED or FAILED.

use super::setup::{ChildFlags, Setup};
use crate::artifact::Artifact;
use crate::campaign::{FreshRun, run_fresh};
use crate::process::ChildTarget;
use crate::{Script, report};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `portcullis replay`.
#[derive(clap::Args)]
pub struct Args {
    /// A finding artifact saved by `portcullis fuzz` or `portcullis minimize`.
    artifact: PathBuf,
    #[command(flatten)]
    child: ChildFlags,
}

/// The artifact's target and exact script, moved onto this run's sink.
pub fn load(path: &std::path::Path, child: &ChildFlags) -> Result<(Artifact, Setup, ChildTarget, Script)> {
    let artifact = Artifact::load(path)?;
    let setup = child.setup()?;
    let target = setup.target(artifact.tools.clone());
    let mut script = artifact.script.clone();
    script.rebase(&artifact.canary_base, &setup.probes.http_base());
    Ok((artifact, setup, target, script))
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let (artifact, _setup, target, script) = load(&args.artifact, &args.child)?;
    // Tokens of its own: a server that remembers the calls of the run that
    // saved the artifact must meet this one's as new.
    let FreshRun { script, salt, observation: obs, violations } =
        run_fresh(&target, artifact.policy, &script, artifact.salt)?;
    let still: Vec<_> = violations.iter().filter(|v| v.check.id() == artifact.check).cloned().collect();
    println!(
        "seed: {}  salt: {salt:08x} (saved: {:08x})  policy: {}  check: {}",
        artifact.seed, artifact.salt, artifact.policy, artifact.check
    );
    if still.is_empty() {
        println!("FIXED: the session no longer breaks {}", artifact.check);
        if !violations.is_empty() {
            println!("(other checks still fail:)\n{}", report::session(&script, &obs, &violations));
        }
        Ok(ExitCode::SUCCESS)
    } else {
        println!("FAILED: {}", report::session(&script, &obs, &still));
        Ok(ExitCode::from(1))
    }
}

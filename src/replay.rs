//! `portcullis replay FILE -- COMMAND`: runs a saved finding's session again
//! against a command and says FIXED or FAILED.

use crate::setup::ChildFlags;
use anyhow::Result;
use portcullis::artifact::Artifact;
use portcullis::campaign::session;
use portcullis::report;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `portcullis replay`.
#[derive(clap::Args)]
pub struct Args {
    /// A finding artifact saved by `portcullis fuzz`.
    artifact: PathBuf,
    #[command(flatten)]
    child: ChildFlags,
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let artifact = Artifact::load(&args.artifact)?;
    let setup = args.child.setup()?;
    let target = setup.target(artifact.tools.clone());
    let (script, obs, violations) =
        session(&target, artifact.policy, &artifact.spec, artifact.salt).map_err(|e| anyhow::anyhow!("{e}"))?;
    let still: Vec<_> = violations.iter().filter(|v| v.check.id() == artifact.check).cloned().collect();
    println!(
        "seed: {}  salt: {:08x}  policy: {}  check: {}",
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

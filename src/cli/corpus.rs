//! `portcullis corpus --out DIR`: a seed corpus for the raw-bytes fuzz
//! target, drawn from the attack generators: one file per script's stdin,
//! named by a hash of its bytes, never overwriting a file already there.

use crate::Catalogue;
use crate::campaign::seeded_runner;
use crate::script::any_script;
use anyhow::{Context, Result};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::Config;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `portcullis corpus`.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write the seeds (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// How many scripts to draw.
    #[arg(long, default_value_t = 512)]
    count: u32,
    /// RNG seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: &Args) -> Result<ExitCode> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let mut runner = seeded_runner(Config::default(), args.seed);
    let strategy = any_script();
    let catalogue = Catalogue::reference();
    let (mut written, mut kept) = (0, 0);
    for i in 0..args.count {
        let spec = strategy.new_tree(&mut runner).map_err(|e| anyhow::anyhow!("{e}"))?.current();
        let script = spec.render(&catalogue, i);
        // The target sends the handshake itself: seed only what follows it.
        let body = script.after_handshake().map(|s| s.stdin()).unwrap_or_else(|| script.stdin());
        let mut h = DefaultHasher::new();
        body.hash(&mut h);
        let path = args.out.join(format!("{:016x}", h.finish()));
        if path.exists() {
            kept += 1;
            continue;
        }
        std::fs::write(&path, &body).with_context(|| format!("writing {}", path.display()))?;
        written += 1;
    }
    out!("{written} seeds written to {} ({kept} already there)", args.out.display());
    Ok(ExitCode::SUCCESS)
}

//! `portcullis replay FILE -- COMMAND`: runs a saved finding's exact script
//! again (with fresh canary tokens of the same width) against a command and
//! says FIXED or FAILED. A state-dependent finding is replayed with its
//! history: the scripts its process ran before, then the script, in one
//! session.

use super::setup::{ChildFlags, Setup};
use crate::artifact::Artifact;
use crate::campaign::replay_whole;
use crate::campaign::{PATIENCE, resalted};
use crate::finding::on_time;
use crate::process::{ChildTarget, Waits};
use crate::seam::Session;
use crate::{Script, report};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `portcullis replay`.
#[derive(clap::Args)]
pub struct Args {
    /// A finding artifact saved by `portcullis fuzz` or `portcullis minimize`.
    artifact: PathBuf,
    #[command(flatten)]
    child: ChildFlags,
}

/// A saved finding, ready to run again.
pub struct Loaded {
    pub artifact: Artifact,
    pub setup: Setup,
    pub target: ChildTarget,
    /// The finding's script, moved onto this run's sink.
    pub script: Script,
    /// The scripts its process ran before it (a state-dependent finding),
    /// moved onto this run's sink.
    pub history: Vec<Script>,
    /// The flags, a profile's filled in; they hold its `{tmp}`.
    pub child: ChildFlags,
}

/// One run of a saved finding's session: the script as sent (tokens of
/// its own, their salt), what it showed, its violations, those that show
/// the finding, and how many effects came after it ended.
pub struct Replayed {
    pub script: Script,
    pub salt: u32,
    pub obs: crate::Observation,
    pub violations: Vec<crate::check::Violation>,
    pub still: Vec<crate::check::Violation>,
    pub late: usize,
}

impl Loaded {
    /// `script`, the finding's session, run once more with tokens of its
    /// own (a server that remembers the calls of the run that saved the
    /// artifact meets these as new), to its end and past it, with every
    /// wait `patience` times as long.
    pub fn run_once(&self, script: &Script, patience: u32) -> Result<Replayed> {
        let (script, salt) = resalted(script, self.artifact.salt);
        let session = Session { policy: self.artifact.policy, revision: script.revision, salt };
        let (obs, violations, late) = replay_whole(&self.target, &session, &script, patience)?;
        let still = self.artifact.showing(&violations, &script, &obs);
        Ok(Replayed { script, salt, obs, violations, still, late })
    }

    /// The session to run: the script, or, when a persistent process ran
    /// it (it holds no handshake of its own), the script after `history` in
    /// one session, as the process ran them.
    pub fn session(&self, history: &[Script]) -> Script {
        match self.script.has_handshake() {
            true => self.script.clone(),
            false => self.script.with_history(history),
        }
    }
}

/// The artifact's target and exact scripts, moved onto this run's sink.
pub fn load(path: &std::path::Path, child: &ChildFlags) -> Result<Loaded> {
    let artifact = Artifact::load(path)?;
    let (child, _) = child.with_profile(&[])?;
    let mut setup = child.setup()?;
    if let Some([answer, quiet, exit_grace]) = artifact.waits_ms {
        let start = Duration::from_millis(artifact.start_ms.unwrap_or(0));
        setup.waits = setup.waits.at_least(Waits::from_ms(answer, quiet, exit_grace).starting_within(start));
    }
    let target = setup.target(artifact.tools.clone());
    // Its evidence came late once: the waits grow to cover that, as the
    // campaign's did when it confirmed the finding.
    if let Some(late) = artifact.late_ms {
        target.cover(Duration::from_millis(late));
    }
    let base = setup.probes.http_base();
    // The profile's `{tmp}` is made afresh: paths into the old one move.
    let tmp = artifact.profile_tmp.as_deref().zip(child.tmp_path());
    let onto_sink = |script: &Script| {
        let mut script = script.clone();
        script.rebase(&artifact.canary_base, &base);
        if let Some((old, new)) = &tmp {
            script.rebase(old, new);
        }
        script
    };
    let script = onto_sink(&artifact.script);
    // Each run makes every token new (run_fresh), the history's too.
    let history = artifact.history.iter().map(onto_sink).collect();
    Ok(Loaded { artifact, setup, target, script, history, child })
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let loaded = load(&args.artifact, &args.child)?;
    let (artifact, script) = (&loaded.artifact, loaded.session(&loaded.history));
    if !loaded.history.is_empty() {
        out!(
            "state-dependent: the {} scripts its process ran before go first, in the same session",
            loaded.history.len()
        );
    }
    // Run to its end: what the server writes and does while the session
    // ends, and what it does after, is the session's. Evidence may come
    // later in a fresh process than in the campaign's warm one (a Python
    // server's first call, say, answered after the session went quiet),
    // and later still on a loaded machine: a session that no longer shows
    // the finding says FIXED only once a session with doubled waits,
    // which awaits the answers that may come with a null id, and tokens
    // of its own again, agrees. A finding shown by time alone (no answer,
    // effect or exit within a wait) says FAILED only once a session with
    // every wait four times as long shows it too, as the hunt confirms it.
    let mut patience = 1;
    let Replayed { script, salt, obs, violations, still, .. } = loop {
        let run = loaded.run_once(&script, patience)?;
        if run.late > 0 {
            out!("late: {} effects came after the session ended, and count", run.late);
        }
        let timed = run.still.iter().all(|v| on_time(v, &run.script, &run.obs));
        patience = match (run.still.is_empty(), patience) {
            (true, 1) => 2,
            (false, p) if timed && p < PATIENCE => PATIENCE,
            _ => break run,
        };
    };
    let finding = artifact.key().map_or(artifact.check.clone(), |k| k.to_string());
    out!(
        "seed: {}  salt: {salt:08x} (saved: {:08x})  policy: {}  finding: {finding}",
        artifact.seed,
        artifact.salt,
        artifact.policy
    );
    if still.is_empty() {
        out!("FIXED: the session no longer shows {finding}");
        if !violations.is_empty() {
            out!("(other checks still fail:)\n{}", report::session(&script, &obs, &violations));
        }
        Ok(ExitCode::SUCCESS)
    } else {
        out!("FAILED: the session still shows {finding}\n{}", report::session(&script, &obs, &still));
        Ok(ExitCode::from(1))
    }
}

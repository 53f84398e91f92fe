//! The campaign of `portcullis fuzz`, as the command line sees it: its
//! flags as a plan, a job's targets per `--jobs`, a progress bar, and each
//! finding saved as it comes. The engine (`campaign::run_campaign`) does
//! the rest.

use super::bar::Bar;
use super::fuzz_args::Args;
use super::interrupt;
use super::saving::{Saved, save};
use super::setup::Setup;
use crate::campaign::{Distinct, Finding, Lanes, Onlooker, Plan, run_campaign, splits};
use crate::catalogue::ToolSpec;
use crate::process::{ChildTarget, Waits};
use crate::report::{self, Outcome};
use crate::{Policy, Revision};
use anyhow::{Result, bail};
use std::time::Duration;

/// What watches the engine: the bar, and the artifacts saved so far.
struct Watching<'a> {
    bar: Bar,
    saved: Saved<'a>,
}

impl Onlooker for Watching<'_> {
    fn searched(&self, n: u32) {
        self.bar.searched(n);
    }

    fn shrinking(&self, finding: &Distinct, steps: u32, elapsed: Duration) {
        self.bar.shrinking(finding, steps, elapsed);
    }

    fn shrunk(&self) {
        self.bar.shrunk();
    }

    fn say(&self, line: &str) {
        self.bar.say(line);
    }

    fn record(&self, f: &Finding, base: &str, waits: Option<Waits>, sessions: u32) -> Result<(), String> {
        self.saved.record(f, base, waits, sessions).map(|_| ()).map_err(|e| format!("{e:#}"))
    }

    fn saved(&self, key: &Distinct) -> bool {
        self.saved.path_of(key).is_some()
    }

    fn stopped(&self) -> bool {
        interrupt::stopped().is_some()
    }
}

/// Runs the campaign under `policy` over `revisions`, with `first` as the
/// first job's setup, and saves what it found; the positive control's
/// finding, if it had one, is the run's first. The finding keys in
/// `accepted` (a baseline's) do not count toward `--max-findings`.
pub(super) fn campaign(
    args: &Args,
    (policy, accepted): (Policy, Vec<String>),
    first: Setup,
    tools: &[ToolSpec],
    revisions: &[Revision],
    control: Option<Finding>,
) -> Result<Outcome> {
    let cases = args.cases();
    let plan = Plan {
        cases,
        seed: args.seed,
        policy,
        level: args.level(),
        revisions: revisions.to_vec(),
        duration: args.duration,
        shrink_ms: args.shrink_ms,
        focus: args.check,
        mix: args.mix,
        max_findings: args.max_findings,
        accepted,
        no_share: args.no_share,
    };
    let control = control.map(|f| (f, first.probes.http_base()));
    // The jobs watch the same files: each judges only its own records.
    let siblings = first.siblings.clone();
    let jobs = args.jobs.min(cases.max(1) as usize);
    let mut setups = vec![first];
    for _ in 1..jobs {
        setups.push(Setup { siblings: siblings.clone(), ..args.child.setup()? });
    }
    // Each job's search hands what it catches to a lane of its own, with
    // other processes of the server, unless only one may run at a time.
    // Under keep-open, the scripts that need a process of their own are
    // drawn on a third, beside the search. Each lane's waits grow with the
    // search's, and the search's with its.
    let mut lanes = Vec::new();
    let mut kept = Vec::new();
    for setup in setups {
        let search = setup.target(tools.to_vec()).started_ahead(!args.no_ahead);
        let mut beside = |wanted: bool| -> Result<Option<ChildTarget>> {
            if !wanted || args.no_ahead {
                return Ok(None);
            }
            let other = Setup { siblings: siblings.clone(), ..args.child.setup()? };
            let target = other.target(tools.to_vec()).started_ahead(true).waits_shared_with(&search);
            kept.push(other);
            Ok(Some(target))
        };
        let shrink = beside(true)?;
        let own = beside(splits(&plan))?;
        kept.push(setup);
        lanes.push(Lanes { search, shrink, own });
    }
    let watching = Watching { bar: Bar::new(cases, args.duration), saved: Saved::new(args, tools) };
    let ran = run_campaign(&plan, lanes, &watching, control);
    watching.bar.finish();
    let mut findings = Vec::new();
    for (f, base, waits) in ran.found {
        match watching.saved.path_of(&f.distinct()) {
            Some(path) => findings.push((f, path)),
            None => findings.push(save(&f, tools, &base, waits, args)?),
        }
    }
    // A harness error ends the run, but not before what the jobs found is
    // saved: no finding is lost.
    if let Some(e) = ran.error {
        let saved = match findings.len() {
            0 => String::new(),
            n => format!(" ({} saved under {} first)", report::counted(n, "finding"), args.artifacts.display()),
        };
        bail!("harness error: {e}{saved}");
    }
    let outcome =
        Outcome { lines_written: Some(ran.lines), ..Outcome::new(findings, ran.sessions, ran.ignored, args.mix) };
    // Saved as they came: the witnesses of their other rules (and of those
    // folded in) are known only now. Added where they can be; an artifact
    // that cannot take them keeps what it has.
    for (f, path) in &outcome.findings {
        if let Err(e) = with_witnesses(path, f) {
            say!("portcullis: {}: the witnesses of its other rules were not added: {e}", path.display());
        }
    }
    Ok(outcome)
}

/// Adds `f`'s witnesses to the artifact this run saved for it at `path`,
/// in place and whole.
fn with_witnesses(path: &std::path::Path, f: &Finding) -> Result<()> {
    if f.witnesses.is_empty() {
        return Ok(());
    }
    let mut artifact = crate::artifact::Artifact::load(path)?;
    artifact.witnesses = f.witnesses.clone();
    artifact.save_over(path)?;
    Ok(())
}

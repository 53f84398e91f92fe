//! `portcullis minimize FILE -- COMMAND`: delta debugging of a saved
//! finding, keeping the same finding key (check, kind, rule): for a
//! state-dependent finding the
//! earlier scripts its process ran first, whole, then frames, then bytes;
//! the result is saved as a new artifact beside the old one.

use super::replay::{Loaded, load};
use super::setup::ChildFlags;
use crate::Script;
use crate::campaign::run_fresh;
use crate::delta::minimize_on;
use crate::finding::{Distinct, Finding, distinct};
use crate::report::{self, counted};
use crate::{CheckId, Fault};
use anyhow::{Result, anyhow, bail};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Flags of `portcullis minimize`.
#[derive(clap::Args)]
pub struct Args {
    /// A finding artifact saved by `portcullis fuzz`.
    artifact: PathBuf,
    /// The whole minimization's budget in milliseconds, the runs that
    /// confirm the finding before and after included; the best cut so far
    /// is kept when it runs out.
    #[arg(long, default_value_t = 5_000, value_name = "N")]
    budget_ms: u64,
    /// Keep one candidate's process started ahead while the one before
    /// runs: faster against a slow starter, but a server that reads shared
    /// state as it starts then reads it before the candidate before has
    /// written it.
    #[arg(long)]
    ahead: bool,
    #[command(flatten)]
    child: ChildFlags,
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let loaded = load(&args.artifact, &args.child)?;
    let (artifact, setup, target) = (&loaded.artifact, &loaded.setup, &loaded.target);
    let check = CheckId::from_id(&artifact.check)
        .ok_or_else(|| anyhow!("unknown check {:?} in the artifact", artifact.check))?;
    let started = Instant::now();
    let budget = Duration::from_millis(args.budget_ms);
    let whole = loaded.session(&loaded.history);
    let before = (whole.frames.len(), whole.stdin().len());
    // An old key that says too little is read from a run of its session now.
    let key = match artifact.key() {
        Some(key) if artifact.keyed_by_last_frame() => key_of_old(&loaded, check, Some(&key.kind))?,
        Some(key) => key,
        None => key_of_old(&loaded, check, None)?,
    };
    let script = loaded.session(&fewer_scripts(&loaded, &key, started + budget / 2)?);
    // Only candidates may keep a process started ahead (--ahead): the run
    // that first confirms the finding has the machine to itself, as the
    // campaign's session had.
    let candidates = target.clone().started_ahead(args.ahead);
    let left = budget.saturating_sub(started.elapsed());
    let m = match minimize_on(&candidates, target, artifact.policy, script.clone(), &key, artifact.salt, left) {
        Ok(m) => m,
        // The saved session no longer fails at these waits: fixed, it
        // failed once, or it shows only in the patient session a replay
        // runs before it says FIXED (answers awaited past the quiet wait).
        Err(Fault::Config { what }) if shows_patiently(&loaded, &script)? => bail!(
            "nothing to minimize at these waits: {what}, but a session with doubled waits shows it \
             (replay says FAILED); a larger --quiet-ms or --timeout-ms lets each cut show it"
        ),
        Err(Fault::Config { what }) => bail!("nothing to minimize: {what} now (replay it to see it FIXED)"),
        Err(e) => return Err(e.into()),
    };
    if !key.shown_in(&m.violations, &m.script, &m.observation) {
        bail!("the minimized script showed {key} as a candidate but not when run again: the finding is flaky");
    }
    let after = (m.script.frames.len(), m.script.stdin().len());
    let run = (m.script.into(), m.observation, m.violations);
    let shown = Finding::shown(&key, artifact.spec.clone(), run, m.salt, (artifact.seed, artifact.policy));
    let late = artifact.late_ms.map(Duration::from_millis);
    let finding = Finding { shrink_ran_out: m.out_of_time, late, ..shown };
    let mut saved = crate::artifact::Artifact::new(
        &finding,
        artifact.tools.clone(),
        &setup.probes.http_base(),
        artifact.command.clone(),
    );
    saved.spec = artifact.spec.clone();
    // A replay of the cut finding waits as long as the campaign's did.
    saved.waits_ms = artifact.waits_ms;
    saved.start_ms = artifact.start_ms;
    // Its paths were moved into this run's `{tmp}`.
    saved.profile_tmp = loaded.child.tmp_path();
    // The witnesses of its cause's other rules stay with it.
    saved.witnesses = artifact.witnesses.clone();
    let dir = args.artifact.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let path = saved.save(dir)?;
    let replay = loaded.child.command_line("replay", &path);
    out!("{}", report::finding(&finding, Some(&replay)));
    out!(
        "minimized {} / {} to {} / {} in {}, {} ms{}{}",
        counted(before.0, "frame"),
        counted(before.1, "byte"),
        counted(after.0, "frame"),
        counted(after.1, "byte"),
        counted(m.runs, "session"),
        started.elapsed().as_millis(),
        if m.oracle { "" } else { " (frames only: the reference disagreed with the labels)" },
        ran_out(
            m.out_of_time,
            after == before,
            m.runs,
            started.elapsed() / m.runs.max(1) as u32,
            target.waits().answer
        ),
    );
    out!("Saved: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// What the summary line adds where the budget ran out (`out_of_time`)
/// after `runs` sessions of `per_session` on average: where nothing was cut
/// (`uncut`) and it held only a few sessions, or sessions of half the
/// answer wait or more (each may have waited out an answer deadline), more
/// budget may cut; where many quick ones did not, the cuts tried did not
/// keep the finding, and more budget is unlikely to help.
fn ran_out(out_of_time: bool, uncut: bool, runs: usize, per_session: Duration, answer: Duration) -> &'static str {
    match (out_of_time, uncut) {
        (true, true) if runs < 8 || per_session >= answer / 2 => {
            " (budget ran out before any cut: raise --budget-ms to a few times --timeout-ms)"
        }
        (true, true) => " (budget ran out: none of the cuts tried kept the finding; the script may be minimal)",
        (true, false) => " (budget ran out)",
        _ => "",
    }
}

/// The finding key of an artifact saved before keys had kinds (or of
/// `kind`, before keys named the frame such a finding ended on): that of
/// the first violation of its check (and kind) in a run of its session.
fn key_of_old(loaded: &Loaded, check: CheckId, kind: Option<&str>) -> Result<Distinct> {
    let whole = loaded.session(&loaded.history);
    let run = run_fresh(&loaded.target, loaded.artifact.policy, &whole, loaded.artifact.salt)?;
    let first = run.violations.iter().find(|v| v.check == check && kind.is_none_or(|k| v.kind.name() == k));
    first
        .map(|v| distinct(v, &run.script, &run.observation))
        .ok_or_else(|| anyhow!("nothing to minimize: the script does not fail {check} now (replay it to see it FIXED)"))
}

/// The history of a state-dependent finding without the earlier scripts
/// the failure does not need, within `deadline`: whole scripts go before
/// frames and bytes. Runs of scripts are dropped together first, halves,
/// then quarters, down to one at a time, each drop kept when the session
/// still shows the finding; nothing is dropped unless the whole session
/// shows it first.
fn fewer_scripts(loaded: &Loaded, key: &Distinct, deadline: Instant) -> Result<Vec<Script>> {
    let fails = |history: &[Script]| -> Result<bool> {
        let run = run_fresh(&loaded.target, loaded.artifact.policy, &loaded.session(history), loaded.artifact.salt)?;
        Ok(key.shown_in(&run.violations, &run.script, &run.observation))
    };
    let mut history = loaded.history.clone();
    if history.is_empty() || !fails(&history)? {
        return Ok(history);
    }
    let mut run = history.len().div_ceil(2);
    while run >= 1 && Instant::now() < deadline {
        let mut at = 0;
        while at < history.len() && Instant::now() < deadline {
            let mut fewer = history.clone();
            fewer.drain(at..(at + run).min(history.len()));
            match fails(&fewer)? {
                true => history = fewer,
                false => at += run,
            }
        }
        if run == 1 {
            break;
        }
        run = run.div_ceil(2);
    }
    Ok(history)
}

/// Whether `script`, the saved finding's session, shows its finding in a
/// session with doubled waits, as the one `replay` runs before it says
/// FIXED.
fn shows_patiently(loaded: &Loaded, script: &Script) -> Result<bool> {
    Ok(!loaded.run_once(script, 2)?.still.is_empty())
}

#[cfg(test)]
mod tests {
    use super::ran_out;
    use std::time::Duration;

    #[test]
    fn more_budget_is_advised_only_where_sessions_waited_out_their_deadlines() {
        let (ms, answer) = (Duration::from_millis, Duration::from_secs(5));
        assert!(ran_out(true, true, 40, ms(4_900), answer).contains("raise --budget-ms"));
        assert!(ran_out(true, true, 2, ms(100), answer).contains("raise --budget-ms"), "a budget of two sessions");
        // 161 sessions in 30 s against a script already minimal.
        let quick = ran_out(true, true, 161, ms(190), answer);
        assert!(!quick.contains("raise") && quick.contains("may be minimal"), "{quick}");
        assert_eq!(ran_out(true, false, 161, ms(190), answer), " (budget ran out)");
        assert_eq!(ran_out(false, true, 40, ms(4_900), answer), "");
    }
}

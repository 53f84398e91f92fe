//! What `portcullis fuzz` says once its campaign has ended: each new
//! finding in full, each one a baseline knows in a line, the table of
//! distinct findings, the baseline's standing, and the summary line; and
//! the exit code that goes with them.

use super::baseline::{reason_text, standing_text};
use super::fuzz_args::Args;
use super::interrupt;
use crate::campaign::Finding;
use crate::report::{self, Outcome, counted};
use crate::{CheckId, Policy};
use std::path::PathBuf;
use std::process::ExitCode;

/// Says what `outcome` holds, and the exit code: 1 where a finding the
/// baseline does not know is there, unless `updated` (the run wrote the
/// baseline that now knows it).
pub(super) fn told(outcome: &Outcome, args: &Args, updated: bool) -> ExitCode {
    let sessions = counted(outcome.sessions as usize, "session");
    let known = |f: &Finding| outcome.standing.as_ref().and_then(|s| s.reason(f));
    for (f, path) in &outcome.findings {
        if let Some(reason) = known(f) {
            out!("Known: {} ({}), saved in {}", f.distinct(), reason_text(reason), path.display());
            continue;
        }
        let replay = format!(
            "{}\n\nMinimize with:\n  {}",
            args.child.command_line("replay", path),
            args.child.command_line("minimize", path)
        );
        out!("{}", report::finding(f, Some(&replay)));
        out!("Saved: {}", path.display());
        for key in &f.also {
            let at = outcome.folded_at(key).map_or_else(String::new, |p| format!(", saved in {}", p.display()));
            out!("Also shown as {key}{at}");
        }
        out!("");
        if f.shrink_ran_out {
            say!(
                "portcullis: shrinking {} stopped before its end (at --shrink-ms {} ms, --duration or a \
                 stop); the script may cut down further with its Minimize command",
                f.distinct(),
                args.shrink_ms
            );
        }
        if let Some(hint) = keep_open_hint(f) {
            say!("portcullis: {hint}");
        }
    }
    if !outcome.findings.is_empty() {
        let (found, paths): (Vec<Finding>, Vec<PathBuf>) = outcome.findings.iter().cloned().unzip();
        out_raw!("{}", report::distinct_table(&found, &paths));
    }
    if let Some(s) = &outcome.standing {
        out_raw!("{}", standing_text(s));
    }
    let new: Vec<&Finding> = outcome.findings.iter().map(|(f, _)| f).filter(|f| known(f).is_none()).collect();
    let stopped = interrupt::stopped().is_some();
    let known_n = outcome.findings.len() - new.len();
    let aside = match known_n {
        0 => String::new(),
        n => format!(" ({})", counted(n, "known cause")),
    };
    if !new.is_empty() {
        // Each check once, in the order first seen, with how many where more.
        let mut checks: Vec<(String, usize)> = Vec::new();
        for f in &new {
            match checks.iter_mut().find(|(c, _)| *c == f.check.to_string()) {
                Some((_, n)) => *n += 1,
                None => checks.push((f.check.to_string(), 1)),
            }
        }
        let checks: Vec<String> = checks.into_iter().map(|(c, n)| if n > 1 { format!("{n} {c}") } else { c }).collect();
        let what = if known_n > 0 { "new finding" } else { "finding" };
        out!("{} ({}) in {sessions}{aside}", counted(new.len(), what), checks.join(", "));
        return if updated { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    let none = if known_n > 0 { "no new finding" } else { "no finding" };
    match () {
        () if stopped => {
            out!("{none} in {sessions} before portcullis was stopped{aside}");
            ExitCode::SUCCESS
        }
        () => {
            let ignored = match outcome.ignored_requests {
                0 => String::new(),
                n => format!(" ({n} sink requests left out by --sink-ignore)"),
            };
            out!("{none} in {sessions} against `{}`{ignored}{aside}", args.child.command.join(" "));
            ExitCode::SUCCESS
        }
    }
}

/// Under close, a server that went on after a rejected frame may be meant
/// to: servers built on the official SDKs answer such a frame (or skip it)
/// and carry on, which keep-open checks.
fn keep_open_hint(f: &Finding) -> Option<&'static str> {
    // Under close, a policy finding is a server that went on past a frame
    // that must end the session (it answered, acted, or kept running).
    let went_on = f.check == CheckId::Policy && f.policy == Policy::Close;
    went_on.then_some(
        "the server went on after a rejected frame, which --policy close forbids; if it is meant to \
         (servers built on the official SDKs are), --policy keep-open checks instead that such a frame \
         gets an error and that nothing carries over from it",
    )
}

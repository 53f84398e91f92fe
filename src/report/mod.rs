//! Reports for a human, in a fixed order: seed, minimized script, the raw
//! bytes of the first offending frame or line (escaped, bounded), the check
//! and its violations, stderr apart, then commands to reproduce; and,
//! with the `reports` feature, the same findings as JSON, JUnit XML and
//! SARIF.

use crate::check::{Stream, Violation};
pub(crate) use crate::counted::counted;
use crate::escape::{SHOWN, escape};
use crate::finding::Finding;
use crate::frame::Expect;
use crate::observation::Observation;
use crate::script::Script;
use std::fmt::Write as _;

#[cfg(feature = "reports")]
mod outcome;
#[cfg(feature = "reports")]
mod outputs;
#[cfg(feature = "reports")]
mod sarif;
#[cfg(feature = "reports")]
pub use outcome::{Context, Outcome, Standing};
#[cfg(feature = "reports")]
pub use outputs::{Paths, WriteError, json, junit, write, write_atomically};
#[cfg(feature = "reports")]
pub use sarif::log as sarif;

/// The label of a frame in one word or two.
pub(crate) fn label(expect: &Expect) -> String {
    match expect {
        Expect::Inert { .. } => "valid (no action)".to_owned(),
        Expect::Act(calls) => format!("valid ({} call{})", calls.len(), if calls.len() == 1 { "" } else { "s" }),
        Expect::Reject(rule) => format!("must-reject: {} ({}, {:?})", rule.id(), rule.level(), rule.class()),
        Expect::Tolerate(rule, _) => format!("tolerated: {} (rejected or acted once)", rule.id()),
        Expect::Unjudged(rule) => format!("not judged: {} ({})", rule.id(), rule.level()),
    }
}

/// The bytes a session's first violation points at: the whole frame for
/// stdin, the line for stdout.
pub(crate) fn offending<'a>(
    script: &'a Script,
    obs: &'a Observation,
    violations: &[Violation],
) -> Option<(Stream, &'a [u8])> {
    let v = violations.iter().find(|v| v.span.is_some())?;
    let span = v.span.as_ref()?;
    match span.stream {
        Stream::Stdin => {
            // As written, where the frame was filled from an answer.
            let i = v.frame?;
            let filled = obs.filled.iter().find(|f| f.frame == i).and_then(|f| f.written.as_deref().ok());
            Some((Stream::Stdin, filled.unwrap_or(&script.frames[i].bytes[..])))
        }
        Stream::Stdout => Some((Stream::Stdout, &obs.stdout[span.range.clone()])),
    }
}

/// The full human report of a finding. `reproduce` is the command that
/// reruns it, when there is one.
pub fn finding(f: &Finding, reproduce: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "──── portcullis finding: {} ────", f.check);
    let _ = match f.rule() {
        Some(rule) => writeln!(out, "level: {}  rule: {} ({})", f.level(), rule.id(), rule.citation()),
        None => writeln!(out, "level: {}", f.level()),
    };
    if let Some(cause) = f.cause_line() {
        let _ = writeln!(out, "{cause}");
    }
    let _ = writeln!(
        out,
        "seed: {}  policy: {}{}  revision: {}{}",
        f.seed,
        f.policy,
        f.policy_seen.as_deref().map(|s| format!(" (auto: {s})")).unwrap_or_default(),
        f.script.revision,
        match f.cases_until_caught {
            0 => String::new(),
            n => format!("  caught at session {n}"),
        }
    );
    if let Some(late) = f.late {
        let _ = writeln!(
            out,
            "late: the evidence came {} ms after the session was judged{}",
            late.as_millis(),
            match f.confirmed {
                true => "; a fresh session with waits grown to cover it repeated it",
                false => "; a fresh session did not repeat it",
            }
        );
    }
    if !f.history.is_empty() {
        let _ = writeln!(
            out,
            "state-dependent: a process shared between sessions showed it after {} (saved with the finding); \
             no fresh session has repeated it",
            counted(f.history.len(), "earlier script")
        );
    }
    out.push_str(&titled("Minimized script", &f.script, &f.observation, &f.violations));
    if let Some(cmd) = reproduce {
        let _ = writeln!(out, "\nReproduce with:\n  {cmd}");
    }
    out
}

/// One session for a human: the script, the first offending bytes, the
/// violations, stdout, stderr apart, and how the gateway ended.
pub fn session(script: &Script, obs: &Observation, violations: &[Violation]) -> String {
    titled("Script", script, obs, violations)
}

/// [`session`] under `title`.
fn titled(title: &str, script: &Script, obs: &Observation, violations: &[Violation]) -> String {
    let mut out = String::new();
    let eof = if script.eof { ", then EOF" } else { "" };
    let (frames, writes) = (counted(script.frames.len(), "frame"), counted(script.write_ends.len(), "write"));
    let _ = writeln!(out, "\n{title} ({frames}, {writes}{eof}):");
    // Frames as they were written: a retry with what its answer handed out.
    let script = &*crate::fill::written(script, &obs.filled);
    for (i, frame) in script.frames.iter().enumerate() {
        let _ = writeln!(out, "  #{i:<2} {}/{}  {}", frame.family, frame.kind, label(&frame.expect));
        let written = obs.filled.iter().find(|f| f.frame == i).map(|f| f.written.as_ref().err());
        match (&frame.fill, written) {
            (Some(fill), None) => {
                let _ = writeln!(out, "      not written (it waits on the answer to id {}): not reached", fill.from);
            }
            (Some(fill), Some(Some(why))) => {
                let _ = writeln!(out, "      not written (it waits on the answer to id {}): {why}", fill.from);
            }
            (fill, _) => {
                let _ = writeln!(out, "      b\"{}\"", escape(&frame.bytes, SHOWN));
                if let Some(fill) = fill {
                    let _ = writeln!(out, "      (its requestState and answers from the answer to id {})", fill.from);
                }
            }
        }
    }
    if let Some((stream, bytes)) = offending(script, obs, violations) {
        let which = if stream == Stream::Stdin { "stdin frame" } else { "stdout line" };
        let _ = writeln!(out, "\nFirst offending {which}:\n  b\"{}\"", escape(bytes, SHOWN));
    }
    if let Some(first) = violations.first() {
        let _ = writeln!(out, "\nCheck {}: {}", first.check, first.check.failure());
    }
    for v in violations {
        let _ = writeln!(out, "  {v}");
    }
    let _ = writeln!(out, "\nstdout ({} bytes):\n  b\"{}\"", obs.stdout.len(), escape(&obs.stdout, SHOWN * 2));
    let _ = writeln!(out, "stderr ({} bytes):\n  b\"{}\"", obs.stderr.len(), escape(&obs.stderr, SHOWN));
    if obs.cut != (0, 0) {
        let _ = writeln!(out, "cut: {} stdout and {} stderr bytes beyond the capture bound", obs.cut.0, obs.cut.1);
    }
    let _ = writeln!(out, "exit: the gateway {}", obs.exit);
    out
}

/// The table that ends a run: each distinct finding once, with its level,
/// how many sessions showed it, when it was first seen and, where it was
/// saved, its artifact (`paths`, in the same order, or empty).
pub fn distinct_table(findings: &[Finding], paths: &[std::path::PathBuf]) -> String {
    let mut out = format!("Distinct findings ({}):\n", findings.len());
    let rows: Vec<[String; 6]> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let seen = match (f.cases_until_caught, f.first_seen) {
                (0, _) => "-".to_owned(),
                (n, Some(t)) => format!("session {n}, {:.1} s", t.as_secs_f64()),
                (n, None) => format!("session {n}"),
            };
            let path = paths.get(i).map(|p| p.display().to_string()).unwrap_or_default();
            [f.distinct().to_string(), f.level().to_string(), f.hits.to_string(), seen, path, rules_cell(f)]
        })
        .collect();
    let header = ["finding", "level", "sessions", "first seen", "artifact", "rules"];
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).chain([header[c].len()]).max().unwrap_or(0);
    let widths: Vec<usize> = (0..6).map(width).collect();
    let line = |cells: [&str; 6]| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    out.push_str(&line(header));
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]));
    }
    out
}

/// The rules that showed a finding's cause, the first three by name.
fn rules_cell(f: &Finding) -> String {
    let rules = f.evidence();
    match rules.len() {
        0..=3 => rules.join(", "),
        n => format!("{} and {} more", rules[..3].join(", "), n - 3),
    }
}

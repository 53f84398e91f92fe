//! What `check-stdout` says: a line per variant as it ends, each dirty
//! variant in full (the variant, the launch, the first offending line's
//! raw bytes, stderr apart), and the JSON and JUnit reports.

use super::Checked;
use crate::cli::stdout_lines::shown;
use crate::report::write_atomically as atomic_write;
use anyhow::{Context, Result};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::json;
use std::path::Path;

/// Most stderr lines shown under a failure; the reports keep more.
const STDERR_LINES: usize = 20;
/// Most stderr bytes a report keeps of each variant.
const STDERR_KEPT: usize = 64 << 10;

/// One variant's verdict on one line.
pub fn line(c: &Checked) {
    let verdict = match c.dirty.first() {
        None => format!("clean  {} stdout lines", c.lines),
        Some(d) => format!("DIRTY  line {} of {}", d.line, c.lines),
    };
    say!("  {:<14} {} {verdict}; {}", c.variant.name, c.revision, c.transcript.story(c.variant.stdin_closed));
}

/// A dirty variant in full.
pub fn failure(c: &Checked) {
    let first = &c.dirty[0];
    out!("──── portcullis check-stdout: non-protocol stdout ────");
    out!("variant: {} ({}), in {}", c.variant.name, c.variant.what, c.revision);
    out!("launch: {}", c.launch);
    out!("non-protocol stdout on line {}: {}", first.line, shown(&first.bytes));
    out!("  {}", first.problem);
    if c.dirty.len() > 1 {
        let rest: Vec<String> = c.dirty[1..].iter().take(10).map(|d| d.line.to_string()).collect();
        let more = if c.dirty.len() > 11 { ", ..." } else { "" };
        out!("  {} more dirty lines: {}{more}", c.dirty.len() - 1, rest.join(", "));
    }
    out!("outcome: {}", c.transcript.story(c.variant.stdin_closed));
    let text = String::from_utf8_lossy(&c.transcript.stderr);
    let lines: Vec<&str> = text.lines().collect();
    match lines.len() {
        0 => out!("stderr: empty"),
        n => {
            let from = n.saturating_sub(STDERR_LINES);
            let which = if from > 0 { format!(", its last {STDERR_LINES} lines") } else { String::new() };
            out!("stderr ({} bytes{which}):", c.transcript.stderr.len());
            lines[from..].iter().for_each(|l| out!("  | {l}"));
        }
    }
    out!();
}

/// Where each report goes, when asked for.
pub struct Outputs<'a> {
    pub json: Option<&'a Path>,
    pub junit: Option<&'a Path>,
}

pub fn write(outputs: Outputs, command: &str, checked: &[Checked]) -> Result<()> {
    if let Some(p) = outputs.json {
        let text = serde_json::to_string_pretty(&report(command, checked)).expect("JSON serializes");
        atomic_write(p, text.as_bytes())?;
    }
    if let Some(p) = outputs.junit {
        atomic_write(p, junit(checked).to_string().context("rendering JUnit XML")?.as_bytes())?;
    }
    Ok(())
}

fn stderr_kept(stderr: &[u8]) -> String {
    crate::escape::escape(&stderr[stderr.len().saturating_sub(STDERR_KEPT)..], STDERR_KEPT)
}

fn report(command: &str, checked: &[Checked]) -> serde_json::Value {
    let variants: Vec<_> = checked
        .iter()
        .map(|c| {
            let t = &c.transcript;
            json!({
                "variant": c.variant.name,
                "what": c.variant.what,
                "revision": c.revision.as_str(),
                "launch": c.launch,
                "clean": c.dirty.is_empty(),
                "stdout_lines": c.lines,
                "dirty_lines": c.dirty.iter().map(|d| json!({
                    "line": d.line, "bytes": shown(&d.bytes), "problem": d.problem,
                })).collect::<Vec<_>>(),
                "answered": t.answered,
                "unanswered": t.unanswered,
                "exit": t.exit.to_string(),
                "elapsed_ms": t.elapsed.as_millis() as u64,
                "cut": {"stdout": t.cut.0, "stderr": t.cut.1},
                "stderr": stderr_kept(&t.stderr),
            })
        })
        .collect();
    json!({
        "command": command,
        "clean": checked.iter().all(|c| c.dirty.is_empty()),
        "variants": variants,
    })
}

fn junit(checked: &[Checked]) -> Report {
    let mut suite = TestSuite::new("portcullis check-stdout");
    for c in checked {
        let mut status = match c.dirty.first() {
            None => TestCaseStatus::success(),
            Some(d) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!("non-protocol stdout on line {}: {}", d.line, shown(&d.bytes)));
                let each: Vec<String> =
                    c.dirty.iter().map(|d| format!("line {}: {} ({})", d.line, shown(&d.bytes), d.problem)).collect();
                s.set_description(format!("launch: {}\n{}", c.launch, each.join("\n")));
                s
            }
        };
        if c.dirty.is_empty() && c.transcript.unanswered.is_some() && c.variant.name == "released" {
            status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(format!("{} unanswered", c.transcript.unanswered.unwrap_or_default()));
        }
        let mut case = TestCase::new(format!("stdout-clean [{}, {}]", c.variant.name, c.revision), status);
        case.set_system_out(format!("{}\n{}", c.launch, c.transcript.story(c.variant.stdin_closed)));
        case.set_system_err(String::from_utf8_lossy(&c.transcript.stderr).into_owned());
        case.set_time(c.transcript.elapsed);
        suite.add_test_case(case);
    }
    let mut report = Report::new("portcullis");
    report.add_test_suite(suite);
    report
}

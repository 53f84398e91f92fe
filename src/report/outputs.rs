//! The machine-readable reports of a campaign: a JSON report, a JUnit XML
//! file with one test case per check and level, and a SARIF log, each
//! written atomically so a reader never sees half a file.

use super::outcome::{Context, Outcome};
use super::{counted, label, offending};
use crate::escape::{SHOWN, escape};
use crate::{CheckId, Level};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where each report goes, when asked for.
#[derive(Clone, Copy, Default)]
pub struct Paths<'a> {
    /// The JSON report.
    pub json: Option<&'a Path>,
    /// The JUnit XML file.
    pub junit: Option<&'a Path>,
    /// The SARIF log.
    pub sarif: Option<&'a Path>,
}

/// A report that could not be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    /// The file could not be written or put in place.
    Io {
        /// The report's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The JUnit XML could not be rendered.
    Junit(quick_junit::SerializeError),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Io { path, source } => write!(f, "writing {}: {source}", path.display()),
            WriteError::Junit(e) => write!(f, "rendering JUnit XML: {e}"),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io { source, .. } => Some(source),
            WriteError::Junit(e) => Some(e),
        }
    }
}

/// Writes each report asked for in `paths`.
pub fn write(paths: Paths, outcome: &Outcome, context: &Context) -> Result<(), WriteError> {
    if let Some(p) = paths.sarif {
        let log = super::sarif::log(outcome, context);
        write_atomically(p, serde_json::to_string_pretty(&log).expect("SARIF serializes").as_bytes())?;
    }
    if let Some(p) = paths.json {
        write_atomically(
            p,
            serde_json::to_string_pretty(&json(outcome, context)).expect("JSON serializes").as_bytes(),
        )?;
    }
    if let Some(p) = paths.junit {
        write_atomically(p, junit(outcome, context).to_string().map_err(WriteError::Junit)?.as_bytes())?;
    }
    Ok(())
}

/// The JSON report: the run, and each finding with its evidence and the
/// commands that run it again.
pub fn json(outcome: &Outcome, context: &Context) -> serde_json::Value {
    let findings: Vec<_> = outcome
        .findings
        .iter()
        .map(|(f, path)| {
            let first = offending(&f.script, &f.observation, &f.violations);
            json!({
                "check": f.check.id(),
                "distinct": f.distinct().to_string(),
                "sessions": f.hits,
                "first_seen_session": f.cases_until_caught,
                "first_seen_ms": f.first_seen.map(|t| t.as_millis() as u64),
                "failure": f.check.failure(),
                "artifact": path.display().to_string(),
                "reproduce": (context.rerun)("replay", path),
                "minimize": (context.rerun)("minimize", path),
                "policy": f.policy.as_str(),
                "policy_seen": f.policy_seen,
                "level": f.level().as_str(),
                "rule": f.rule().map(|r| json!({"id": r.id(), "level": r.level().as_str(), "citation": r.citation()})),
                "cause": f.cause().map(|c| json!({"id": c.id(), "what": c.what()})),
                "rules": f.evidence(),
                "known": outcome.standing.as_ref().and_then(|s| s.reason(f)),
                "also": f.also.iter().map(|k| json!({
                    "distinct": k.to_string(),
                    "artifact": outcome.folded_at(k).map(|p| p.display().to_string()),
                })).collect::<Vec<_>>(),
                "revision": f.script.revision.as_str(),
                "seed": f.seed,
                "violations": f.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                "first_offending_bytes": first.map(|(_, b)| escape(b, SHOWN)),
                "frames": crate::fill::written(&f.script, &f.observation.filled).frames.iter().map(|fr| json!({
                    "family": fr.family, "kind": fr.kind, "label": label(&fr.expect),
                    "bytes": escape(&fr.bytes, SHOWN),
                })).collect::<Vec<_>>(),
                "stderr": escape(&f.observation.stderr, SHOWN),
                "cut": {"stdout": f.observation.cut.0, "stderr": f.observation.cut.1},
                "late_ms": f.late.map(|d| d.as_millis() as u64),
                "confirmed": f.confirmed,
                "state_dependent": !f.history.is_empty(),
                "history_scripts": f.history.len(),
            })
        })
        .collect();
    json!({
        "command": context.command,
        "sessions": outcome.sessions,
        "ignored_requests": outcome.ignored_requests,
        "lines_written": outcome.lines_written,
        "mix": outcome.mix.as_str(),
        "findings": findings,
        "baseline": outcome.standing.as_ref().map(|s| json!({
            "file": s.file,
            "new": s.new,
            "known": s.known.iter().map(|(k, r)| json!({"finding": k, "reason": r})).collect::<Vec<_>>(),
            "possibly_fixed": s.possibly_fixed.iter().map(|(k, r)| json!({"finding": k, "reason": r})).collect::<Vec<_>>(),
        })),
    })
}

/// One test case per check and level: failed where a finding of that
/// check rests on that level, skipped where the run did not judge it (it
/// hunted another check alone, or judged the spec level only), passed
/// otherwise. Every distinct finding is listed in its case.
pub fn junit(outcome: &Outcome, context: &Context) -> Report {
    let mut suite = TestSuite::new("portcullis fuzz");
    for check in CheckId::ALL {
        for level in Level::JUDGED {
            // A cause the baseline knows fails no case.
            let known = |f: &crate::finding::Finding| outcome.standing.as_ref().and_then(|s| s.reason(f)).is_some();
            let found: Vec<_> =
                outcome.findings.iter().filter(|(f, _)| f.check == check && f.level() == level && !known(f)).collect();
            let status = if !found.is_empty() {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!("{} ({})", check.failure(), counted(found.len(), "distinct finding")));
                let each = found.iter().map(|(f, path)| {
                    let details: Vec<String> = f.violations.iter().map(|v| v.to_string()).collect();
                    let reproduce = (context.rerun)("replay", path);
                    format!(
                        "{}\n{}{}\nartifact: {}\nreproduce: {reproduce}",
                        f.distinct(),
                        f.cause_line().map(|c| format!("{c}\n")).unwrap_or_default(),
                        details.join("\n"),
                        path.display()
                    )
                });
                s.set_description(each.collect::<Vec<_>>().join("\n\n"));
                s
            } else if let Some(only) = context.focus.filter(|only| *only != check) {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("not hunted: the run hunted {only} alone"));
                s
            } else if level > context.level {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("not judged: the run judged the {} level", context.level));
                s
            } else {
                TestCaseStatus::success()
            };
            let mut case = TestCase::new(format!("{} [{level}]", check.id()), status);
            if let Some(s) = &outcome.standing {
                let of_case = outcome.findings.iter().filter(|(f, _)| f.check == check && f.level() == level);
                let line = |f: &crate::finding::Finding| {
                    Some(format!("known ({}): {}: {}", s.file, f.distinct(), s.reason(f)?))
                };
                let known: Vec<String> = of_case.filter_map(|(f, _)| line(f)).collect();
                if !known.is_empty() {
                    case.set_system_out(known.join("\n"));
                }
            }
            suite.add_test_case(case);
        }
    }
    let mut report = Report::new("portcullis");
    report.add_test_suite(suite);
    report
}

/// Writes `bytes` to `path` through a temporary file in the same folder and
/// a rename, so a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let failed = |source| WriteError::Io { path: path.to_owned(), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    tmp.write_all(bytes).map_err(failed)?;
    tmp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

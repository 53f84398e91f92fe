//! The machine-readable outputs of `portcullis fuzz`: a JSON report, a
//! JUnit XML file with one test case per check, and a SARIF log, each
//! written atomically.

use super::fuzz::Outcome;
use super::setup::ChildFlags;
use crate::report::{self, counted};
use crate::{CheckId, Level};
use anyhow::{Context, Result};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// Where each output goes, when asked for.
pub struct Paths<'a> {
    pub json: Option<&'a Path>,
    pub junit: Option<&'a Path>,
    pub sarif: Option<&'a Path>,
}

/// What the run judged: the one check it hunted alone, if one, and the level.
pub struct Judged {
    pub focus: Option<CheckId>,
    pub level: Level,
}

pub fn write(paths: Paths, outcome: &Outcome, child: &ChildFlags, judged: Judged) -> Result<()> {
    let Paths { json: json_path, junit: junit_path, sarif: sarif_path } = paths;
    if let Some(p) = sarif_path {
        let log = super::sarif::log(outcome, child);
        atomic_write(p, serde_json::to_string_pretty(&log).expect("SARIF serializes").as_bytes())?;
    }
    if let Some(p) = json_path {
        atomic_write(p, serde_json::to_string_pretty(&json(outcome, child)).expect("JSON serializes").as_bytes())?;
    }
    if let Some(p) = junit_path {
        atomic_write(p, junit(outcome, child, &judged).to_string().context("rendering JUnit XML")?.as_bytes())?;
    }
    Ok(())
}

fn json(outcome: &Outcome, child: &ChildFlags) -> serde_json::Value {
    let findings: Vec<_> = outcome
        .findings
        .iter()
        .map(|(f, path)| {
            let first = report::offending(&f.script, &f.observation, &f.violations);
            json!({
                "check": f.check.id(),
                "distinct": f.distinct().to_string(),
                "sessions": f.hits,
                "first_seen_session": f.cases_until_caught,
                "first_seen_ms": f.first_seen.map(|t| t.as_millis() as u64),
                "failure": f.check.failure(),
                "artifact": path.display().to_string(),
                "reproduce": child.command_line("replay", path),
                "minimize": child.command_line("minimize", path),
                "policy": f.policy.as_str(),
                "policy_seen": f.policy_seen,
                "level": f.level().as_str(),
                "rule": f.rule().map(|r| json!({"id": r.id(), "level": r.level().as_str(), "citation": r.citation()})),
                "revision": f.script.revision.as_str(),
                "seed": f.seed,
                "violations": f.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                "first_offending_bytes": first.map(|(_, b)| crate::escape::escape(b, crate::escape::SHOWN)),
                "frames": f.script.frames.iter().map(|fr| json!({
                    "family": fr.family, "kind": fr.kind, "label": report::label(&fr.expect),
                    "bytes": crate::escape::escape(&fr.bytes, crate::escape::SHOWN),
                })).collect::<Vec<_>>(),
                "stderr": crate::escape::escape(&f.observation.stderr, crate::escape::SHOWN),
                "cut": {"stdout": f.observation.cut.0, "stderr": f.observation.cut.1},
                "late_ms": f.late.map(|d| d.as_millis() as u64),
                "confirmed": f.confirmed,
                "state_dependent": !f.history.is_empty(),
                "history_scripts": f.history.len(),
            })
        })
        .collect();
    json!({
        "command": child.command,
        "sessions": outcome.sessions,
        "ignored_requests": outcome.ignored_requests,
        "mix": outcome.mix.as_str(),
        "findings": findings,
    })
}

/// One test case per check and level: failed where a finding of that
/// check rests on that level, skipped where the run did not judge it (it
/// hunted another check alone, or judged the spec level only), passed
/// otherwise. Every distinct finding is listed in its case.
fn junit(outcome: &Outcome, child: &ChildFlags, judged: &Judged) -> Report {
    let mut suite = TestSuite::new("portcullis fuzz");
    for check in CheckId::ALL {
        for level in Level::JUDGED {
            let found: Vec<_> =
                outcome.findings.iter().filter(|(f, _)| f.check == check && f.level() == level).collect();
            let status = if !found.is_empty() {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(format!("{} ({})", check.failure(), counted(found.len(), "distinct finding")));
                let each = found.iter().map(|(f, path)| {
                    let details: Vec<String> = f.violations.iter().map(|v| v.to_string()).collect();
                    let reproduce = child.command_line("replay", path);
                    format!(
                        "{}\n{}\nartifact: {}\nreproduce: {reproduce}",
                        f.distinct(),
                        details.join("\n"),
                        path.display()
                    )
                });
                s.set_description(each.collect::<Vec<_>>().join("\n\n"));
                s
            } else if let Some(only) = judged.focus.filter(|only| *only != check) {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("not hunted: the run hunted {only} alone"));
                s
            } else if level > judged.level {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("not judged: the run judged the {} level", judged.level));
                s
            } else {
                TestCaseStatus::success()
            };
            suite.add_test_case(TestCase::new(format!("{} [{level}]", check.id()), status));
        }
    }
    let mut report = Report::new("portcullis");
    report.add_test_suite(suite);
    report
}

/// Writes `bytes` to `path` through a temporary file in the same folder and
/// a rename, so a reader never sees half a file.
pub(super) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("writing {}", path.display()))?;
    tmp.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

//! What `audit` says: the two verdicts and their findings, what the server
//! did in each phase, and the smallest environment and paths it needed;
//! and the JSON and JUnit reports.

use super::Audit;
use super::area::smallest;
use super::judge::{Finding, PROTOCOL_KINDS, Phase, RUNTIME_KINDS, Verdict};
use super::strace::{Act, Event};
use crate::report::write_atomically as atomic_write;
use anyhow::{Context, Result};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What one phase did, as sets.
#[derive(Default)]
struct Did {
    read: BTreeSet<PathBuf>,
    written: BTreeSet<PathBuf>,
    /// Folders opened to be listed (read), apart from files.
    folders: BTreeSet<PathBuf>,
    connected: BTreeSet<String>,
    listened: BTreeSet<String>,
    ran: BTreeSet<String>,
    /// Opens that failed, as named.
    tried: BTreeSet<PathBuf>,
}

/// Folders the kernel makes up: opening them says little of a privilege.
const VIRTUAL: [&str; 3] = ["/proc", "/sys", "/dev"];

fn did<'a>(events: impl IntoIterator<Item = &'a Event>) -> Did {
    let mut d = Did::default();
    for e in events {
        match &e.act {
            Act::Open { path, .. } if VIRTUAL.iter().any(|v| path.starts_with(v)) => {}
            Act::Open { path, write: true, .. } => _ = d.written.insert(path.clone()),
            Act::Open { path, dir: true, .. } => _ = d.folders.insert(path.clone()),
            Act::Open { path, .. } => _ = d.read.insert(path.clone()),
            Act::Connect { to } => _ = d.connected.insert(to.clone()),
            Act::Bind { to } => _ = d.listened.insert(to.clone()),
            Act::Exec { program, .. } => _ = d.ran.insert(program.display().to_string()),
            Act::Tried { path } => _ = d.tried.insert(path.clone()),
        }
    }
    d
}

fn verdict_of(a: &Audit, v: Verdict) -> Vec<&Finding> {
    a.findings.iter().filter(|f| f.verdict == v).collect()
}

fn listed<T: AsRef<str>>(items: impl IntoIterator<Item = T>, most: usize) -> String {
    let all: Vec<String> = items.into_iter().map(|s| s.as_ref().to_owned()).collect();
    match all.len() {
        0 => "none".into(),
        n if n > most => format!("{}, and {} more", all[..most].join(", "), n - most),
        _ => all.join(", "),
    }
}

/// `files` and `folders` folded into the fewest folders, each named as
/// the report names places.
fn folded(a: &Audit, files: &BTreeSet<PathBuf>, folders: &BTreeSet<PathBuf>) -> Vec<String> {
    let (files, folders): (Vec<_>, Vec<_>) = (files.iter().cloned().collect(), folders.iter().cloned().collect());
    smallest(&files, &folders).iter().map(|p| a.places.show(p)).collect()
}

use crate::report::counted;

pub fn print(a: &Audit, known: &dyn Fn(&Finding) -> bool) {
    let vars: Vec<&str> = a.canaries.all.iter().filter(|c| !c.file).map(|c| c.name.as_str()).collect();
    let files: Vec<&str> = a.canaries.all.iter().filter(|c| c.file).map(|c| c.name.as_str()).collect();
    out!(
        "canaries: {} ({}), {} in its temporary HOME, named {{home}} below ({})",
        counted(vars.len(), "variable"),
        listed(&vars, 4),
        counted(files.len(), "file"),
        listed(&files, 5)
    );
    match &a.strace {
        Ok(()) if a.cut_short > 0 => out!(
            "strace: traced, but {} ended before strace could finish its trace",
            match a.cut_short {
                1 => "1 process or thread".to_owned(),
                n => format!("{n} processes or threads"),
            }
        ),
        Ok(()) => out!("strace: traced files opened, connections, sockets bound and programs run"),
        Err(why) => out!("strace: not used: {why}; files, connections and programs are not listed"),
    }
    let restarts = match a.processes {
        1 => String::new(),
        n => format!(" in {n} processes (it ends the session on a bad frame, and was started again)"),
    };
    let frames = match &a.stopped {
        None => format!("{} of {} rejected frames sent{restarts}", a.frames_sent, a.frames_planned),
        Some(why) => format!("{} of {} rejected frames sent{restarts}; {why}", a.frames_sent, a.frames_planned),
    };
    out!("first process: {}", a.transcript.story(false));
    out!("rejected frames: {frames}");
    out!("rules they break: {} ({})", a.covered.len(), listed(&a.covered, 24));
    out!();
    for (verdict, name, clean) in [
        (Verdict::Protocol, "protocol", "every stdout line a protocol message; no rejected frame acted"),
        (
            Verdict::Runtime,
            "runtime",
            "no canary leaked, no canary file opened, nothing opened outside its area, nothing run or connected for a rejected frame",
        ),
    ] {
        let found = verdict_of(a, verdict);
        let new = found.iter().filter(|f| !known(f)).count();
        let aside = match found.len() - new {
            0 => String::new(),
            n => format!(", and {} the baseline knows", crate::report::counted(n, "finding")),
        };
        match (found.is_empty(), new) {
            (true, _) => out!("{name}: clean ({clean})"),
            (false, 0) => out!("{name}: no new finding ({} the baseline knows)", counted(found.len(), "finding")),
            (false, n) if aside.is_empty() => out!("{name}: FAILED ({})", counted(n, "finding")),
            (false, n) => out!("{name}: FAILED ({}{aside})", counted(n, "new finding")),
        }
        for f in found {
            let phase = f.phase.map(|p| format!(" ({})", p.name())).unwrap_or_default();
            let mark = if known(f) { " known:" } else { "" };
            out!("  [{}]{phase}{mark} {}", f.kind, f.detail);
        }
    }
    if a.strace.is_ok() {
        out!();
        out!("what it did, per phase (strace):");
        for (phase, events) in &a.phases {
            let d = did(events);
            out!(
                "  {}: {} read, {} written, {} not there or refused, {}, {} run",
                phase.name(),
                counted(d.read.len() + d.folders.len(), "file"),
                d.written.len(),
                d.tried.len(),
                counted(d.connected.len(), "connection"),
                counted(d.ran.len(), "program"),
            );
            if !d.written.is_empty() {
                out!("    wrote in: {}", listed(folded(a, &d.written, &BTreeSet::new()), 8));
            }
            if !d.connected.is_empty() || !d.listened.is_empty() {
                out!("    connected to: {}; listened on: {}", listed(&d.connected, 8), listed(&d.listened, 8));
            }
            if !d.ran.is_empty() {
                out!("    ran: {}", listed(&d.ran, 8));
            }
        }
    }
    out!();
    out!("smallest needs:");
    out!("  environment: {}", environment(a));
    if a.strace.is_ok() {
        let all = did(a.phases.iter().flat_map(|(_, e)| e));
        out!("  read: {}", listed(folded(a, &all.read, &all.folders), 16));
        out!("  write: {}", listed(folded(a, &all.written, &BTreeSet::new()), 16));
        out!("  network: {}", listed(&all.connected, 16));
        out!("  listen: {}", listed(&all.listened, 16));
        out!("  programs: {}", listed(&all.ran, 16));
    }
}

fn environment(a: &Audit) -> String {
    let n = &a.needs;
    if !n.tried {
        return "not tried (the audit's own opening did not finish)".into();
    }
    if let Some(why) = &n.inconclusive {
        return format!("not found: a trial could not start the server ({why})");
    }
    if !n.without_canaries {
        return "PATH, LANG, HOME and some canary variable: the opening failed without them (a server that needs a \
                credential; name it with --env)"
            .into();
    }
    let mut text = "PATH, LANG, HOME".to_owned();
    if !n.needed.is_empty() {
        text.push_str(&format!(", and {}", n.needed.join(", ")));
    }
    text.push_str("; no canary variable");
    if n.by_call {
        text.push_str(" (judged by the opening and by the tool's call acting)");
    }
    if !n.unneeded.is_empty() {
        text.push_str(&format!("; not needed: {}", n.unneeded.join(", ")));
    }
    text
}

pub fn write(json_path: Option<&Path>, junit_path: Option<&Path>, a: &Audit) -> Result<()> {
    if let Some(p) = json_path {
        atomic_write(p, serde_json::to_string_pretty(&report(a)).expect("JSON serializes").as_bytes())?;
    }
    if let Some(p) = junit_path {
        atomic_write(p, junit(a).to_string().context("rendering JUnit XML")?.as_bytes())?;
    }
    Ok(())
}

fn finding_json(f: &Finding) -> Value {
    json!({"check": f.kind, "phase": f.phase.map(Phase::name), "detail": f.detail})
}

fn did_json(a: &Audit, d: &Did) -> Value {
    let shown = |s: &BTreeSet<PathBuf>| s.iter().map(|p| a.places.show(p)).collect::<Vec<_>>();
    json!({
        "read": shown(&d.read), "folders": shown(&d.folders), "written": shown(&d.written), "tried": shown(&d.tried),
        "connected": d.connected, "listened": d.listened, "ran": d.ran,
    })
}

fn report(a: &Audit) -> Value {
    let verdict = |v| {
        let found = verdict_of(a, v);
        json!({"clean": found.is_empty(), "findings": found.into_iter().map(finding_json).collect::<Vec<_>>()})
    };
    let phases: serde_json::Map<String, Value> =
        a.phases.iter().map(|(p, events)| (p.name().to_owned(), did_json(a, &did(events)))).collect();
    let all = did(a.phases.iter().flat_map(|(_, e)| e));
    json!({
        "command": a.command,
        "protocol": verdict(Verdict::Protocol),
        "runtime": verdict(Verdict::Runtime),
        "canaries": {
            "variables": a.canaries.all.iter().filter(|c| !c.file).map(|c| &c.name).collect::<Vec<_>>(),
            "files": a.canaries.all.iter().filter(|c| c.file).map(|c| format!("{{home}}/{}", c.name)).collect::<Vec<_>>(),
        },
        "strace": {"used": a.strace.is_ok(), "why_not": a.strace.as_ref().err(), "cut_short": a.cut_short},
        "restarts": a.restarts,
        "opening": {"answered": a.transcript.answered, "unanswered": a.transcript.unanswered},
        "frames": {"planned": a.frames_planned, "sent": a.frames_sent, "processes": a.processes, "stopped": a.stopped, "rules": a.covered},
        "exit": a.transcript.exit.to_string(),
        "elapsed_ms": a.transcript.elapsed.as_millis() as u64,
        "phases": a.strace.is_ok().then_some(phases),
        "needs": {
            "environment": environment(a),
            "needed_variables": a.needs.needed,
            "judged_by_call": a.needs.by_call,
            "read": a.strace.is_ok().then(|| folded(a, &all.read, &all.folders)),
            "write": a.strace.is_ok().then(|| folded(a, &all.written, &BTreeSet::new())),
            "network": a.strace.is_ok().then_some(&all.connected),
            "programs": a.strace.is_ok().then_some(&all.ran),
        },
        "stderr": crate::escape::escape(&a.transcript.stderr, 64 << 10),
    })
}

/// Checks the audit cannot judge without strace.
const TRACED: [&str; 3] = ["canary-file-opened", "outside-area", "rejected-frame-activity"];

fn junit(a: &Audit) -> Report {
    let mut suite = TestSuite::new("portcullis audit");
    let kinds = PROTOCOL_KINDS.iter().map(|k| ("protocol", *k)).chain(RUNTIME_KINDS.iter().map(|k| ("runtime", *k)));
    for (verdict, kind) in kinds {
        let found: Vec<&Finding> = a.findings.iter().filter(|f| f.kind == kind).collect();
        let status = if let Some(first) = found.first() {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(first.detail.clone());
            s.set_description(found.iter().map(|f| f.detail.clone()).collect::<Vec<_>>().join("\n"));
            s
        } else if let (true, Err(why)) = (TRACED.contains(&kind), &a.strace) {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("not judged without strace: {why}"));
            s
        } else {
            TestCaseStatus::success()
        };
        suite.add_test_case(TestCase::new(format!("{verdict}: {kind}"), status));
    }
    // The server's stderr once, for the whole audit.
    suite.set_system_err_lossy(&a.transcript.stderr);
    let mut report = Report::new("portcullis");
    report.add_test_suite(suite);
    report
}

//! `portcullis mutants`: the suite against the reference gateway (both
//! policies, every revision) and against every built-in mutant.

use crate::campaign::{Finding, HuntConfig, hunt};
use crate::reference::{Mutant, Reference};
use crate::report;
use crate::{CheckId, Policy, Revision};
use anyhow::{Result, bail};
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

/// Flags of `portcullis mutants`.
#[derive(clap::Args)]
pub struct Args {
    /// RNG seed: the same seed draws the same scripts.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Sessions per hunt (at least 1).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    cases: u32,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Hunt only these mutants (by name); repeatable.
    #[arg(long = "only", value_name = "MUTANT")]
    only: Vec<String>,
    /// Print the full report of each mutant's minimized finding.
    #[arg(long)]
    verbose: bool,
}

struct Row {
    mutant: Mutant,
    finding: Option<Finding>,
    millis: u128,
}

impl Row {
    fn caught(&self) -> bool {
        self.finding.as_ref().is_some_and(|f| f.check == self.mutant.expected())
    }
}

fn config(args: &Args, policy: Policy, revisions: Vec<Revision>, focus: Option<CheckId>) -> HuntConfig {
    HuntConfig { cases: args.cases, seed: args.seed, policy, revisions, focus, ..HuntConfig::default() }
}

/// The minimized frame or stdout line a finding points at, escaped and short.
fn frame_text(f: &Finding) -> String {
    report::offending(&f.script, &f.observation, &f.violations)
        .map(|(_, bytes)| crate::escape::escape(bytes, 60))
        .unwrap_or_default()
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let mut selected = Vec::new();
    for name in &args.only {
        match Mutant::from_name(name) {
            Some(m) => selected.push(m),
            None => bail!("unknown mutant {name:?}; known: {}", names()),
        }
    }
    if selected.is_empty() {
        selected = Mutant::ALL.to_vec();
    }
    let mut dirty = Vec::new();
    for policy in Policy::ALL {
        if let Some(f) = hunt(&Reference::strict(), &config(args, policy, Revision::ALL.to_vec(), None))? {
            dirty.push(f);
        }
    }
    let mut rows = Vec::new();
    for m in selected {
        let started = Instant::now();
        let finding = hunt(&Reference::mutant(m), &config(args, m.policy(), m.revisions(), Some(m.expected())))?;
        rows.push(Row { mutant: m, finding, millis: started.elapsed().as_millis() });
    }
    let caught = rows.iter().filter(|r| r.caught()).count();
    let clean = dirty.is_empty();
    let summary =
        format!("{caught}/{} mutants caught, reference {}", rows.len(), if clean { "clean" } else { "NOT clean" });
    if args.json {
        print_json(&rows, &dirty, &summary);
    } else {
        print_table(args, &rows, &dirty);
        out!("{summary}");
    }
    Ok(if caught == rows.len() && clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn names() -> String {
    Mutant::ALL.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
}

fn print_table(args: &Args, rows: &[Row], dirty: &[Finding]) {
    out!("{:<26} {:<20} {:>6} {:>8}  minimized frame", "mutant", "caught by", "cases", "time");
    for r in rows {
        let (by, cases, frame) = match &r.finding {
            Some(f) if r.caught() => (f.check.id().to_owned(), f.cases_until_caught.to_string(), frame_text(f)),
            Some(f) => {
                (format!("{}≠{}", f.check, r.mutant.expected()), f.cases_until_caught.to_string(), frame_text(f))
            }
            None => ("MISSED".to_owned(), "-".to_owned(), String::new()),
        };
        out!("{:<26} {:<20} {:>6} {:>6}ms  b\"{frame}\"", r.mutant.name(), by, cases, r.millis);
        if args.verbose
            && let Some(f) = &r.finding
        {
            out!("{}", report::finding(f, Some(&reproduce(args, r.mutant))));
        }
    }
    for f in dirty {
        out!("\nThe reference gateway is NOT clean:\n{}", report::finding(f, None));
    }
}

fn reproduce(args: &Args, m: Mutant) -> String {
    format!("{} mutants --only {} --seed {} --cases {} --verbose", super::me(), m.name(), args.seed, args.cases)
}

fn print_json(rows: &[Row], dirty: &[Finding], summary: &str) {
    let mutants: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "mutant": r.mutant.name(),
                "what": r.mutant.what(),
                "expected": r.mutant.expected().id(),
                "caught": r.caught(),
                "caught_by": r.finding.as_ref().map(|f| f.check.id()),
                "cases_until_caught": r.finding.as_ref().map(|f| f.cases_until_caught),
                "millis": r.millis,
                "minimized_frame": r.finding.as_ref().map(frame_text),
                "violations": r.finding.as_ref().map(|f| f.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
            })
        })
        .collect();
    let reference: Vec<_> = dirty.iter().map(|f| json!({"policy": f.policy.as_str(), "check": f.check.id()})).collect();
    let doc = json!({"mutants": mutants, "reference_findings": reference, "summary": summary});
    out!("{}", serde_json::to_string_pretty(&doc).expect("JSON values serialize"));
}

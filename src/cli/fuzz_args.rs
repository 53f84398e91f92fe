//! The flags of `portcullis fuzz`, merged with `--profile`'s, and what
//! they ask for.

use super::setup::ChildFlags;
use crate::report::{self, Context, Outcome, Paths};
use crate::{CheckId, Level, Mix, Policy, Revision};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Flags of `portcullis fuzz`.
#[derive(clap::Args, Clone)]
pub struct Args {
    /// The tool to call; without it, the server's tools are listed and one
    /// whose arguments can carry a canary is picked.
    #[arg(long, value_name = "NAME")]
    pub(super) tool: Option<String>,
    /// The arguments of a valid call, as JSON: "{canary}" becomes a fresh
    /// sink URL per frame, "{token}" the bare token.
    #[arg(long, value_name = "JSON")]
    pub(super) args: Option<String>,
    /// What the server must do after a malformed or invalid frame: end the
    /// session (close), or answer with an error and go on (keep-open);
    /// auto holds it to whichever it shows on a probe session [default: auto].
    #[arg(long, value_parser = super::one_of(&Policy::CHOICES))]
    policy: Option<Policy>,
    /// What is judged: spec (the MUSTs of RFC 8259, JSON-RPC 2.0 and MCP)
    /// or hardening (also parser differentials: duplicate keys, lone
    /// surrogates, deep nesting, huge numbers, a byte-order mark) [default: hardening].
    #[arg(long, value_parser = super::one_of(&Level::JUDGED))]
    level: Option<Level>,
    /// A listed tool the client is not authorized to run: calls of it must
    /// have no effect. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub(super) forbidden_tool: Vec<String>,
    /// The call of a forbidden tool, as `--args` gives the called tool's:
    /// NAME=JSON, with "{canary}" where a fetch would show (a URL-like
    /// argument its schema does not mark) or "{token}". Forbids NAME too.
    /// Repeatable.
    #[arg(long, value_name = "NAME=JSON")]
    pub(super) forbidden_args: Vec<String>,
    /// A tool that acts only once the client confirms (MCP 2026-07-28: its
    /// call gets an `input_required` result): the `roundtrip` family aims
    /// at it in sessions of that revision. Its call is built from the
    /// schema its 2026-07-28 `tools/list` gives. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub(super) confirm_tool: Vec<String>,
    /// Sessions to run (at least 1) [default: 256, or no bound with --duration].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) cases: Option<u32>,
    /// Bound the whole run, drawing and shrinking, to this long (`90`,
    /// `90s`, `10m`, `8h`); a finding whose shrinking it stops is reported
    /// as its search session showed it, and a session still running 2 s
    /// past it has its server ended. With --cases too, whichever comes first.
    #[arg(long, value_name = "TIME", value_parser = duration)]
    pub(super) duration: Option<std::time::Duration>,
    /// RNG seed: the same seed draws the same scripts; their tokens are new to each run.
    #[arg(long, default_value_t = 0)]
    pub(super) seed: u64,
    /// Sessions run in parallel.
    #[arg(long, default_value_t = 1)]
    pub(super) jobs: usize,
    /// Hunt for this check only (default: every check).
    #[arg(long, value_name = "ID", value_parser = super::one_of(&CheckId::ALL))]
    pub(super) check: Option<CheckId>,
    /// Under keep-open, start a process for every session instead of
    /// running scripts one after another in a persistent process (faster;
    /// every finding there is run again in a process of its own).
    #[arg(long)]
    pub(super) no_share: bool,
    /// How often scripts that need a process of their own are drawn (a
    /// call before `initialize`, a frame cut at EOF): full, about one in
    /// seven; lean, 16 times fewer, for a server slow to start under
    /// keep-open. The same seed and mix draw the same scripts (with tokens new to each run).
    #[arg(long, default_value = "full", value_parser = super::one_of(&Mix::ALL))]
    pub(super) mix: Mix,
    /// Start each session's process only as the session begins, rather
    /// than keep one started ahead, and shrink findings inline rather than
    /// beside the search: for a server of which only one instance may run
    /// at a time.
    #[arg(long)]
    pub(super) no_ahead: bool,
    /// Stop after this many distinct findings (0: spend every case and
    /// report each distinct finding once); causes a `--baseline` knows
    /// do not count.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(super) max_findings: u32,
    /// Most time spent shrinking each finding before it is reported, in
    /// milliseconds; the Minimize command it prints cuts further.
    #[arg(long, default_value_t = 30_000, value_name = "N")]
    pub(super) shrink_ms: u32,
    /// Only this protocol revision (default: the four that open with
    /// `initialize`, and 2026-07-28 where `server/discover` names it).
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    pub(super) revision: Option<Revision>,
    /// Write the findings as JSON here.
    #[arg(long, value_name = "FILE.json")]
    pub(super) report: Option<PathBuf>,
    /// Write the findings as SARIF 2.1.0 here, for code-scanning dashboards.
    #[arg(long, value_name = "FILE.sarif")]
    pub(super) sarif: Option<PathBuf>,
    #[command(flatten)]
    pub(super) baselines: super::baseline::Flags,
    /// Write the findings as JUnit XML here.
    #[arg(long, value_name = "FILE.xml")]
    pub(super) junit: Option<PathBuf>,
    /// Where finding artifacts are saved.
    #[arg(long, default_value = "portcullis-findings", value_name = "DIR")]
    pub(super) artifacts: PathBuf,
    #[command(flatten)]
    pub(super) child: ChildFlags,
}

impl Args {
    /// These flags over `--profile`'s (see [`ChildFlags::with_profile`]).
    /// A `--tool` other than the profile's takes none of its `args`, which
    /// were written for its tool.
    pub(super) fn with_profile(&self) -> Result<Args> {
        let beside: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let (child, profile) = self.child.with_profile(&beside)?;
        let Some((p, places)) = profile else { return Ok(Args { child, ..self.clone() }) };
        let own_tool = self.tool.is_none() || self.tool == p.tool;
        let args = match &self.args {
            Some(a) => Some(places.fill_args(a)),
            None if own_tool => p.call_args(&places)?,
            None => None,
        };
        let forbidden_args = [p.forbidden_args(&places, &self.forbidden_args)?, self.forbidden_args.clone()].concat();
        Ok(Args {
            tool: self.tool.clone().or(p.tool),
            args,
            policy: self.policy.or(p.policy),
            level: self.level.or(p.level),
            forbidden_tool: [p.forbidden_tool.clone(), self.forbidden_tool.clone()].concat(),
            forbidden_args,
            confirm_tool: [p.confirm_tool.clone(), self.confirm_tool.clone()].concat(),
            baselines: self.baselines.or_profiles(p.baseline.as_ref().map(|b| places.fill(b).into())),
            child,
            ..self.clone()
        })
    }

    /// The session policy held to.
    pub(super) fn policy(&self) -> Policy {
        self.policy.unwrap_or(Policy::Auto)
    }

    /// What is judged.
    pub(super) fn level(&self) -> Level {
        self.level.unwrap_or(Level::Hardening)
    }

    /// Writes `--report`, `--junit` and `--sarif`, those asked for, with
    /// `outcome`.
    pub(super) fn write_reports(&self, outcome: &Outcome) -> Result<()> {
        let rerun = |subcommand: &str, artifact: &Path| self.child.command_line(subcommand, artifact);
        let context = Context { command: &self.child.command, focus: self.check, level: self.level(), rerun: &rerun };
        let paths = Paths { json: self.report.as_deref(), junit: self.junit.as_deref(), sarif: self.sarif.as_deref() };
        report::write(paths, outcome, &context)?;
        Ok(())
    }

    /// The sessions to run: --cases, else none fewer than --duration allows.
    pub(super) fn cases(&self) -> u32 {
        self.cases.unwrap_or(if self.duration.is_some() { u32::MAX } else { 256 })
    }
}

/// A --duration: whole seconds, or with an `s`, `m` or `h` suffix.
fn duration(text: &str) -> Result<std::time::Duration, String> {
    let (digits, unit) = match text.strip_suffix(['s', 'm', 'h']) {
        Some(d) => (d, &text[d.len()..]),
        None => (text, "s"),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a time such as 90, 90s, 10m or 8h"))?;
    let secs = match unit {
        "h" => n.saturating_mul(3600),
        "m" => n.saturating_mul(60),
        _ => n,
    };
    if secs == 0 {
        return Err("a duration must be at least one second".into());
    }
    Ok(std::time::Duration::from_secs(secs))
}

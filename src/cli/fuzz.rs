//! `portcullis fuzz -- COMMAND`: a positive control, then a campaign of
//! attack scripts against a real child process, findings minimized, saved as
//! replayable artifacts, and reported for a human, as JSON and as JUnit.

use super::hunting::{campaign, save};
use super::setup::{ChildFlags, Setup, choose_tools, parse_args};
use super::{interrupt, outputs};
use crate::attack::Step;
use crate::campaign::{Finding, HuntConfig, PolicySeen, fresh_salt, probe_policy};
use crate::catalogue::ToolSpec;
use crate::process::{Job, stderr_tail};
use crate::report::{self, counted};
use crate::token::tokens_in;
use crate::{CheckId, Level, Mix, Policy, Revision, ScriptSpec};
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Sessions to run (at least 1) [default: 256, or no bound with --duration].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) cases: Option<u32>,
    /// Bound the whole run, drawing and shrinking, to this long (`90`,
    /// `90s`, `10m`, `8h`); a finding whose shrinking it stops is reported
    /// as a fresh session showed it. With --cases too, whichever comes first.
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
    /// than keep one started ahead: for a server of which only one instance
    /// may run at a time.
    #[arg(long)]
    pub(super) no_ahead: bool,
    /// Stop after this many distinct findings (0: spend every case and
    /// report each distinct finding once).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub(super) max_findings: u32,
    /// Most time spent shrinking each finding before it is reported, in
    /// milliseconds; the Minimize command it prints cuts further.
    #[arg(long, default_value_t = 30_000, value_name = "N")]
    pub(super) shrink_ms: u32,
    /// Only this protocol revision (default: every one).
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    pub(super) revision: Option<Revision>,
    /// Write the findings as JSON here.
    #[arg(long, value_name = "FILE.json")]
    pub(super) report: Option<PathBuf>,
    /// Write the findings as SARIF 2.1.0 here, for code-scanning dashboards.
    #[arg(long, value_name = "FILE.sarif")]
    pub(super) sarif: Option<PathBuf>,
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
    fn with_profile(&self) -> Result<Args> {
        let beside: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let (child, profile) = self.child.with_profile(&beside)?;
        let Some((p, places)) = profile else { return Ok(Args { child, ..self.clone() }) };
        let own_tool = self.tool.is_none() || self.tool == p.tool;
        let args = match &self.args {
            Some(a) => Some(places.fill_args(a)),
            None if own_tool => p.call_args(&places)?,
            None => None,
        };
        Ok(Args {
            tool: self.tool.clone().or(p.tool),
            args,
            policy: self.policy.or(p.policy),
            level: self.level.or(p.level),
            forbidden_tool: [p.forbidden_tool, self.forbidden_tool.clone()].concat(),
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

    /// Where the reports go.
    pub(super) fn outputs(&self) -> outputs::Paths<'_> {
        outputs::Paths { json: self.report.as_deref(), junit: self.junit.as_deref(), sarif: self.sarif.as_deref() }
    }

    /// What the run judges, for the reports.
    pub(super) fn judged(&self) -> outputs::Judged {
        outputs::Judged { focus: self.check, level: self.level() }
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

/// What a campaign ended with.
pub struct Outcome {
    /// Each distinct finding, saved, in the order they were first seen.
    pub findings: Vec<(Finding, PathBuf)>,
    pub sessions: u32,
    /// HTTP sink requests left out by `--sink-ignore`.
    pub ignored_requests: usize,
    /// The mix scripts were drawn from.
    pub mix: Mix,
}

pub fn run(args: &Args) -> Result<ExitCode> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let args = &args.with_profile()?;
    if args.mix == Mix::Lean && (args.policy() == Policy::Close || args.no_share) {
        eprintln!(
            "portcullis: --mix lean saves process starts only when keep-open sessions share a process; \
             here every session has its own, and lean only draws fewer of the scripts that need one"
        );
    }
    let template = args.args.as_deref().map(parse_args).transpose()?;
    let revisions = args.revision.map(|r| vec![r]).unwrap_or_else(|| Revision::ALL.to_vec());
    let first = args.child.setup()?;
    let latest = revisions[revisions.len() - 1];
    let (tools, listed) = choose_tools(&first, args.tool.as_deref(), template, &args.forbidden_tool, latest)?;
    if args.tool.is_none() || args.args.is_none() {
        let t = serde_json::Value::Object(tools[0].template.clone().unwrap_or_default());
        eprintln!("portcullis: calling tool `{}` with --args '{t}'", tools[0].name);
    }
    let control = control(&first, &tools, &listed, args, latest)?;
    if let Some(hint) = control.as_ref().and_then(untokened_hint) {
        eprintln!("portcullis: {hint}");
    }
    // A control whose call acted as it should, with only stdout dirty (a
    // banner, say), leaves the campaign something to judge: its finding is
    // the run's first, and the hunt goes on. Any other stops the run.
    let dirty_only =
        |f: &Finding| !f.observation.effects.is_empty() && f.violations.iter().all(|v| v.check == CheckId::StdoutClean);
    let goes_on = control.as_ref().is_none_or(|f| dirty_only(f) && args.max_findings != 1);
    let seen = match (goes_on, args.policy()) {
        (true, Policy::Auto) => Some(seen_policy(&first, &tools, args, latest)?),
        _ => None,
    };
    let policy = seen.as_ref().map_or(args.policy(), |s| s.policy);
    match &seen {
        Some(s) if s.policy == Policy::Auto => eprintln!("portcullis: policy auto: {}", s.detail),
        Some(s) => eprintln!("portcullis: policy auto: {}; holding it to {}", s.detail, s.policy),
        None => {}
    }
    let outcome = match control {
        Some(finding) if !goes_on => Outcome {
            findings: vec![save(&finding, &tools, &first.probes.http_base(), None, args)?],
            sessions: 1,
            ignored_requests: first.probes.ignored(),
            mix: args.mix,
        },
        control => campaign(args, policy, first, &tools, &revisions, control)?,
    };
    let detail = seen.map(|s| s.detail);
    let findings = outcome.findings.into_iter().map(|(f, path)| (Finding { policy_seen: detail.clone(), ..f }, path));
    let outcome = Outcome { findings: findings.collect(), ..outcome };
    outputs::write(args.outputs(), &outcome, &args.child, args.judged())?;
    let sessions = counted(outcome.sessions as usize, "session");
    if !outcome.findings.is_empty() {
        for (f, path) in &outcome.findings {
            let replay = format!(
                "{}\n\nMinimize with:\n  {}",
                args.child.command_line("replay", path),
                args.child.command_line("minimize", path)
            );
            println!("{}", report::finding(f, Some(&replay)));
            println!("Saved: {}\n", path.display());
            if f.shrink_ran_out {
                eprintln!(
                    "portcullis: shrinking {} stopped before its end (at --shrink-ms {} ms, --duration or a \
                     stop); the script may cut down further with its Minimize command",
                    f.distinct(),
                    args.shrink_ms
                );
            }
            if let Some(hint) = keep_open_hint(f) {
                eprintln!("portcullis: {hint}");
            }
        }
        let (found, paths): (Vec<Finding>, Vec<PathBuf>) = outcome.findings.iter().cloned().unzip();
        print!("{}", report::distinct_table(&found, &paths));
        // Each check once, in the order first seen, with how many where more.
        let mut checks: Vec<(String, usize)> = Vec::new();
        for f in &found {
            match checks.iter_mut().find(|(c, _)| *c == f.check.to_string()) {
                Some((_, n)) => *n += 1,
                None => checks.push((f.check.to_string(), 1)),
            }
        }
        let checks: Vec<String> = checks.into_iter().map(|(c, n)| if n > 1 { format!("{n} {c}") } else { c }).collect();
        println!("{} ({}) in {sessions}", counted(found.len(), "finding"), checks.join(", "));
        return Ok(ExitCode::from(1));
    }
    match () {
        () if interrupt::stopped().is_some() => {
            println!("no finding in {sessions} before portcullis was stopped");
            Ok(ExitCode::SUCCESS)
        }
        () => {
            let aside = match outcome.ignored_requests {
                0 => String::new(),
                n => format!(" ({n} sink requests left out by --sink-ignore)"),
            };
            println!("no finding in {sessions} against `{}`{aside}", args.child.command.join(" "));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// When the positive control's own valid call made HTTP requests that carry
/// no token, the server most likely makes them by design beside each call
/// (a fetch server reading `/robots.txt`): `--sink-ignore` leaves them out.
fn untokened_hint(f: &Finding) -> Option<String> {
    let paths: Vec<&str> = f
        .observation
        .effects
        .iter()
        .filter(|e| e.tool == "probe:http")
        .filter(|e| tokens_in(&e.arguments_text()).next().is_none())
        .filter_map(|e| e.arguments.get("path").and_then(|p| p.as_str()))
        .collect();
    let first = paths.first()?.split(['?', '#']).next().unwrap_or_default();
    Some(format!(
        "the positive control's one valid call made {} sink request(s) that carry no token ({}); if the \
         server makes them by design beside its calls, `--sink-ignore {first}` leaves them out",
        paths.len(),
        paths.join(", ")
    ))
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

/// One valid call must cause exactly one observed effect before the
/// campaign means anything. A control that breaks a check is a finding.
fn control(
    setup: &Setup,
    tools: &[ToolSpec],
    listed: &[String],
    args: &Args,
    revision: Revision,
) -> Result<Option<Finding>> {
    let spec = ScriptSpec { level: args.level(), ..ScriptSpec::whole(revision, vec![Step::Control(0)]) };
    let target = setup.target(tools.to_vec());
    // Under auto nothing is known yet: the control's valid call ends no session either way.
    let mut job = Job::new(&target, args.policy(), false, args.seed);
    // Tokens no earlier run used: a server that remembers what it did (one
    // that refuses a second entity of the same name, say) acts on it again.
    let salt = fresh_salt();
    let (script, obs, violations) = job.fresh(&spec, salt)?;
    if obs.effects.is_empty() && obs.exit_before_eof.ended() {
        bail!(
            "positive control failed: the server {} before stdin closed, and a valid call of `{}` caused no \
             effect; {}",
            obs.exit_before_eof,
            tools[0].name,
            stderr_tail(&obs.stderr)
        );
    }
    // Output that is no protocol message is the finding, whatever else the
    // control showed: a client cannot read a banner or a flood as answers.
    let dirty = violations.iter().any(|v| v.check == CheckId::StdoutClean);
    if obs.effects.is_empty() && !dirty {
        bail!(
            "positive control failed: a valid call of `{}` caused no observed effect.\n  \
             Check that --tool names a tool that acts{}, that --args puts \"{{canary}}\" where the server \
             will fetch it (the sink is {}), or that --watch-dir/--watch-file point where it writes.{}\n  \
             stdout: {}\n  stderr: {}",
            tools[0].name,
            match listed.len() {
                0 => String::new(),
                _ => format!(" (the server lists {})", listed.join(", ")),
            },
            setup.probes.http_base(),
            match obs.exit.ended() {
                true => String::new(),
                false => format!(
                    "\n  The server was still running {} ms after its stdin closed, and was ended then: \
                     if it acts some time after it answers (it queues its calls, say), raise --exit-grace-ms.",
                    args.child.exit_grace_ms()
                ),
            },
            crate::escape::escape(&obs.stdout, 300),
            crate::escape::escape(&obs.stderr, 300)
        );
    }
    if violations.is_empty() {
        return Ok(None);
    }
    let check = if dirty { CheckId::StdoutClean } else { violations[0].check };
    let mut violations = violations;
    violations.sort_by_key(|v| v.check != check);
    Ok(Some(Finding {
        check,
        violations,
        spec,
        script,
        observation: obs,
        cases_until_caught: 1,
        seed: args.seed,
        policy: args.policy(),
        salt,
        shrink_ran_out: false,
        late: None,
        history: Vec::new(),
        confirmed: true,
        policy_seen: None,
        hits: 1,
        first_seen: None,
    }))
}

/// Under `--policy auto`: the policy a probe session shows, each try with
/// the flags' waits times the factor the probe asks for.
fn seen_policy(setup: &Setup, tools: &[ToolSpec], args: &Args, revision: Revision) -> Result<PolicySeen> {
    let cfg = HuntConfig::default().revisions(vec![revision]).level(args.level()).salt_base(fresh_salt());
    let run = |spec: &ScriptSpec, salt: u32, factor: u32| {
        let target = setup.target_waiting(tools.to_vec(), setup.waits.scaled(factor));
        Job::new(&target, Policy::Auto, false, args.seed).fresh(spec, salt)
    };
    Ok(probe_policy(&run, &cfg)?)
}

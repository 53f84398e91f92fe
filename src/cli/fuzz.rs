//! `portcullis fuzz -- COMMAND`: a positive control, then a campaign of
//! attack scripts against a real child process, findings minimized, saved as
//! replayable artifacts, and reported for a human, as JSON and as JUnit.

use super::jobs::revision_share;
use super::setup::{ChildFlags, Setup, choose_tools, parse_args};
use super::{interrupt, outputs};
use crate::artifact::Artifact;
use crate::attack::Step;
use crate::campaign::{Finding, HuntConfig, fresh_salt, hunt_by, strategy};
use crate::campaign::{PolicySeen, probe_policy};
use crate::catalogue::ToolSpec;
use crate::delta::minimize;
use crate::process::{ChildTarget, Job, Waits, stderr_tail};
use crate::report::{self, counted};
use crate::token::tokens_in;
use crate::{CheckId, Level, Mix, Policy, Revision, ScriptSpec};
use anyhow::{Result, bail};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// Flags of `portcullis fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// The tool to call; without it, the server's tools are listed and one
    /// whose arguments can carry a canary is picked.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The arguments of a valid call, as JSON: "{canary}" becomes a fresh
    /// sink URL per frame, "{token}" the bare token.
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// What the server must do after a malformed or invalid frame: end the
    /// session (close), or answer with an error and go on (keep-open);
    /// auto holds it to whichever it shows on a probe session.
    #[arg(long, default_value = "auto", value_parser = super::one_of(&Policy::CHOICES))]
    policy: Policy,
    /// What is judged: spec (the MUSTs of RFC 8259, JSON-RPC 2.0 and MCP)
    /// or hardening (also parser differentials: duplicate keys, lone
    /// surrogates, deep nesting, huge numbers, a byte-order mark).
    #[arg(long, default_value = "hardening", value_parser = super::one_of(&Level::JUDGED))]
    level: Level,
    /// A listed tool the client is not authorized to run: calls of it must
    /// have no effect. Repeatable.
    #[arg(long, value_name = "NAME")]
    forbidden_tool: Vec<String>,
    /// Sessions to run (at least 1).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    cases: u32,
    /// RNG seed: the same seed draws the same scripts; their tokens are new to each run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Sessions run in parallel.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Hunt for this check only (default: every check).
    #[arg(long, value_name = "ID", value_parser = super::one_of(&CheckId::ALL))]
    check: Option<CheckId>,
    /// Under keep-open, start a process for every session instead of
    /// running scripts one after another in a persistent process (faster;
    /// every finding there is run again in a process of its own).
    #[arg(long)]
    no_share: bool,
    /// How often scripts that need a process of their own are drawn (a
    /// call before `initialize`, a frame cut at EOF): full, about one in
    /// seven; lean, 16 times fewer, for a server slow to start under
    /// keep-open. The same seed and mix draw the same scripts (with tokens new to each run).
    #[arg(long, default_value = "full", value_parser = super::one_of(&Mix::ALL))]
    mix: Mix,
    /// Start each session's process only as the session begins, rather
    /// than keep one started ahead: for a server of which only one instance
    /// may run at a time.
    #[arg(long)]
    no_ahead: bool,
    /// Most time spent shrinking a finding before it is reported, in
    /// milliseconds; the Minimize command it prints cuts further.
    #[arg(long, default_value_t = 30_000, value_name = "N")]
    shrink_ms: u32,
    /// Only this protocol revision (default: every one).
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    revision: Option<Revision>,
    /// Write the findings as JSON here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Write the findings as SARIF 2.1.0 here, for code-scanning dashboards.
    #[arg(long, value_name = "FILE.sarif")]
    sarif: Option<PathBuf>,
    /// Write the findings as JUnit XML here.
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
    /// Where finding artifacts are saved.
    #[arg(long, default_value = "portcullis-findings", value_name = "DIR")]
    artifacts: PathBuf,
    #[command(flatten)]
    child: ChildFlags,
}

/// What a campaign ended with.
pub struct Outcome {
    pub finding: Option<(Finding, PathBuf)>,
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
    if args.mix == Mix::Lean && (args.policy == Policy::Close || args.no_share) {
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
    let seen = match (&control, args.policy) {
        (None, Policy::Auto) => Some(seen_policy(&first, &tools, args, latest)?),
        _ => None,
    };
    let policy = seen.as_ref().map_or(args.policy, |s| s.policy);
    if let Some(s) = &seen {
        eprintln!("portcullis: policy auto: {}; holding it to {}", s.detail, s.policy);
    }
    let outcome = match control {
        Some(finding) => {
            let base = first.probes.http_base();
            if let Some(hint) = untokened_hint(&finding) {
                eprintln!("portcullis: {hint}");
            }
            Outcome {
                finding: Some(save(&finding, &tools, &base, None, args)?),
                sessions: 1,
                ignored_requests: first.probes.ignored(),
                mix: args.mix,
            }
        }
        None => campaign(args, policy, first, &tools, &revisions)?,
    };
    let outcome = Outcome {
        finding: outcome.finding.map(|(f, path)| (Finding { policy_seen: seen.map(|s| s.detail), ..f }, path)),
        ..outcome
    };
    let paths =
        outputs::Paths { json: args.report.as_deref(), junit: args.junit.as_deref(), sarif: args.sarif.as_deref() };
    outputs::write(paths, &outcome, &args.child, args.check)?;
    match &outcome.finding {
        Some((f, path)) => {
            let replay = format!(
                "{}\n\nMinimize with:\n  {}",
                args.child.command_line("replay", path),
                args.child.command_line("minimize", path)
            );
            println!("{}", report::finding(f, Some(&replay)));
            println!("Saved: {}", path.display());
            println!("1 finding ({}) in {}", f.check, counted(outcome.sessions as usize, "session"));
            if f.shrink_ran_out {
                eprintln!(
                    "portcullis: shrinking stopped at --shrink-ms ({} ms); the script may cut down further \
                     with the Minimize command above",
                    args.shrink_ms
                );
            }
            if let Some(hint) = keep_open_hint(f) {
                eprintln!("portcullis: {hint}");
            }
            Ok(ExitCode::from(1))
        }
        None if interrupt::stopped().is_some() => {
            println!("no finding in {} before portcullis was stopped", counted(outcome.sessions as usize, "session"));
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let aside = match outcome.ignored_requests {
                0 => String::new(),
                n => format!(" ({n} sink requests left out by --sink-ignore)"),
            };
            let sessions = counted(outcome.sessions as usize, "session");
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
    let went_on = f.check == CheckId::Policy && f.policy == Policy::Close && !f.observation.exit_before_eof.ended();
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
    let spec = ScriptSpec { level: args.level, ..ScriptSpec::whole(revision, vec![Step::Control(0)]) };
    let target = setup.target(tools.to_vec());
    // Under auto nothing is known yet: the control's valid call ends no session either way.
    let mut job = Job::new(&target, args.policy, false, args.seed);
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
                    args.child.exit_grace_ms
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
        policy: args.policy,
        salt,
        shrink_ran_out: false,
        late: None,
        history: Vec::new(),
        confirmed: true,
        policy_seen: None,
    }))
}

/// Under `--policy auto`: the policy a probe session shows.
fn seen_policy(setup: &Setup, tools: &[ToolSpec], args: &Args, revision: Revision) -> Result<PolicySeen> {
    let target = setup.target(tools.to_vec());
    let job = RefCell::new(Job::new(&target, Policy::Auto, false, args.seed));
    let cfg = HuntConfig::default().revisions(vec![revision]).level(args.level).salt_base(fresh_salt());
    Ok(probe_policy(&|spec, salt| job.borrow_mut().fresh(spec, salt), &cfg)?)
}

fn campaign(args: &Args, policy: Policy, first: Setup, tools: &[ToolSpec], revisions: &[Revision]) -> Result<Outcome> {
    let stop = AtomicBool::new(false);
    let done = AtomicU32::new(0);
    let found: Mutex<Option<(Finding, String, Option<Waits>)>> = Mutex::new(None);
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let ignored = AtomicU32::new(0);
    let bar = progress(args.cases);
    // This run's tokens are its own; see `control`.
    let salt_base = fresh_salt();
    let jobs = args.jobs.min(args.cases.max(1) as usize);
    let mut setups = vec![Some(first)];
    for _ in 1..jobs {
        setups.push(Some(args.child.setup()?));
    }
    // After SIGINT or SIGTERM the servers are ended under the sessions
    // still running: what those show is no finding and no harness error,
    // except what was seen before (a finding being shrunk keeps its last
    // failing session).
    let fail = |e: String| {
        stop.store(true, Ordering::Relaxed);
        if interrupt::stopped().is_none() {
            errors.lock().unwrap_or_else(|e| e.into_inner()).push(e);
        }
    };
    let keep = |f: Finding, base: String, waits: Waits| {
        stop.store(true, Ordering::Relaxed);
        if interrupt::stopped().is_none() || f.check != CheckId::Liveness {
            found.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert((f, base, Some(waits)));
        }
    };
    std::thread::scope(|scope| {
        for (j, setup) in setups.into_iter().enumerate() {
            let (stop, done, fail, keep, bar, ignored) = (&stop, &done, &fail, &keep, &bar, &ignored);
            let cases = args.cases / jobs as u32 + u32::from((j as u32) < args.cases % jobs as u32);
            scope.spawn(move || {
                let Some(setup) = setup else { return };
                let target = setup.target(tools.to_vec()).started_ahead(!args.no_ahead);
                let cfg = HuntConfig {
                    cases,
                    seed: args.seed.wrapping_add(j as u64),
                    policy,
                    level: args.level,
                    revisions: revision_share(revisions, j, jobs),
                    max_shrink_iters: 200,
                    max_shrink_ms: args.shrink_ms.max(1),
                    focus: args.check,
                    mix: args.mix,
                    salt_base,
                    ..HuntConfig::default()
                };
                let job = RefCell::new(Job::new(&target, policy, !args.no_share, cfg.seed));
                let focused = |f: &Finding| args.check.is_none_or(|c| c == f.check);
                let tick = |_| {
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    bar(n);
                    // A late or state-dependent finding stops the job too.
                    let stopped = stop.load(Ordering::Relaxed) || interrupt::stopped().is_some();
                    !stopped && !job.borrow().found().iter().any(focused)
                };
                let run = |spec: &ScriptSpec, salt: u32, shrinking: Option<CheckId>| {
                    job.borrow_mut().session(spec, salt, shrinking.is_some())
                };
                let base = setup.probes.http_base();
                let hunted = hunt_by(&cfg, strategy(&cfg), &tick, &run);
                let mut apart = job.borrow_mut().take_found();
                match job.borrow_mut().finish() {
                    Ok(more) => apart.extend(more),
                    Err(e) => return fail(super::told(&e)),
                }
                match hunted {
                    Ok(Some(f)) => keep(f, base, target.waits()),
                    Ok(None) => {
                        if let Some(f) = apart.into_iter().find(focused) {
                            let f = shrink_apart(f, &target, args);
                            keep(f, base, target.waits());
                        }
                    }
                    Err(e) => fail(super::told(&e)),
                }
                ignored.fetch_add(setup.probes.ignored() as u32, Ordering::Relaxed);
            });
        }
    });
    if let Some(e) = errors.into_inner().unwrap_or_default().first() {
        bail!("harness error: {e}");
    }
    let finding = match found.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((f, base, waits)) => Some(save(&f, tools, &base, waits, args)?),
        None => None,
    };
    Ok(Outcome {
        finding,
        sessions: done.load(Ordering::Relaxed),
        ignored_requests: ignored.load(Ordering::Relaxed) as usize,
        mix: args.mix,
    })
}

/// A late finding that a fresh session repeated is cut down as a saved one
/// is, within --shrink-ms; a state-dependent one is reported whole, with
/// its history, for `portcullis minimize` to cut.
fn shrink_apart(f: Finding, target: &ChildTarget, args: &Args) -> Finding {
    if !f.confirmed {
        return f;
    }
    let budget = Duration::from_millis(u64::from(args.shrink_ms.max(1)));
    match minimize(target, f.policy, f.script.clone(), f.check, f.salt, budget) {
        Ok(m) => Finding {
            script: m.script,
            salt: m.salt,
            observation: m.observation,
            violations: m.violations,
            shrink_ran_out: m.out_of_time,
            ..f
        },
        Err(_) => f,
    }
}

/// Saves the artifact before anything is reported, so no finding is lost.
fn save(f: &Finding, tools: &[ToolSpec], base: &str, waits: Option<Waits>, args: &Args) -> Result<(Finding, PathBuf)> {
    let mut artifact = Artifact::new(f, tools.to_vec(), base, args.child.command.clone());
    if let Some(w) = waits {
        artifact = artifact.waited(w.answer, w.quiet, w.exit_grace);
    }
    let path = artifact.save(&args.artifacts).map_err(|e| anyhow::anyhow!("saving the finding failed: {e}"))?;
    Ok((f.clone(), path))
}

/// A progress bar on a terminal, a plain line per tenth otherwise.
fn progress(total: u32) -> Box<dyn Fn(u32) + Sync> {
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(u64::from(total));
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos}/{len} sessions {wide_bar} {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Box::new(move |n| {
            bar.set_position(u64::from(n));
            if n >= total {
                bar.finish_and_clear();
            }
        })
    } else {
        let step = (total / 10).max(1);
        Box::new(move |n| {
            if n % step == 0 || n == total {
                eprintln!("portcullis: {n}/{total} sessions");
            }
        })
    }
}

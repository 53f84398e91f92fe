//! `portcullis fuzz -- COMMAND`: a positive control, then a campaign of
//! attack scripts against a real child process, findings minimized, saved as
//! replayable artifacts, and reported for a human, as JSON and as JUnit.

use super::baseline::Seen;
use super::call_template::carries_canary;
use super::campaigning::campaign;
use super::fuzz_args::Args;
use super::profile::Effect;
use super::saving::save;
use super::setup::{Setup, choose_from, confirming, forbidden, parse_args};
use crate::attack::Step;
use crate::campaign::Job;
use crate::campaign::{Finding, HuntConfig, Lane, PolicySeen, confirmed_control, fresh_salt, probe_policy};
use crate::catalogue::ToolSpec;
use crate::process::{list_tools, speaks_stateless, stderr_tail};
use crate::report::Outcome;
use crate::token::tokens_in;
use crate::{CheckId, Mix, Policy, Revision, ScriptSpec};
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs `portcullis fuzz`.
pub fn run(args: &Args) -> Result<ExitCode> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let args = &args.with_profile()?;
    // Read before anything runs: a bad file is a one-line error, and the
    // reasons an update keeps are known good.
    let baselines = args.baselines.read(super::baseline::Finder::Fuzz)?;
    if args.mix == Mix::Lean && (args.policy() == Policy::Close || args.no_share) {
        say!(
            "portcullis: --mix lean saves process starts only when keep-open sessions share a process; \
             here every session has its own, and lean only draws fewer of the scripts that need one"
        );
    }
    let template = args.args.as_deref().map(parse_args).transpose()?;
    let first = args.child.setup()?;
    let forbidden = forbidden(&args.forbidden_tool, &args.forbidden_args)?;
    // Tools are listed, the control called and the policy probed in the
    // newest revision that opens with `initialize`, which every server
    // speaks, unless the run draws none (`--revision 2026-07-28`).
    let latest = args.revision.unwrap_or(Revision::LATEST_HANDSHAKEN);
    // Where the server may run twice at once, the revisions are asked for
    // while the tools are listed: each costs a start.
    let list = || list_tools(&first.target(vec![]), latest);
    let ((revisions, found), listing) = match (args.revision, args.no_ahead) {
        (Some(r), _) => ((vec![r], None), list()),
        (None, true) => (spoken(&first).map(|(r, said)| (r, Some(said)))?, list()),
        (None, false) => {
            let (asked, listing) = std::thread::scope(|scope| {
                let asking = scope.spawn(|| spoken(&first));
                let listing = list();
                (asking.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), listing)
            });
            (asked.map(|(r, said)| (r, Some(said)))?, listing)
        }
    };
    let (mut tools, listed) = choose_from(&listing, args.tool.as_deref(), template, &forbidden)?;
    match revisions.contains(&Revision::R2026_07_28) {
        true => tools.extend(confirming(&first, &args.confirm_tool)?),
        false if !args.confirm_tool.is_empty() => {
            bail!("--confirm-tool: a tool confirms only in 2026-07-28, which this run does not draw")
        }
        false => {}
    }
    // Told once the flags are known good: a bad one is a one-line error.
    if let Some(found) = found {
        say!("portcullis: revisions: {found}");
    }
    for hint in tools.iter().filter_map(|t| unseen_hint(t, args)) {
        say!("portcullis: {hint}");
    }
    if args.tool.is_none() || args.args.is_none() {
        let t = serde_json::Value::Object(tools[0].template.clone().unwrap_or_default());
        say!("portcullis: calling tool `{}` with --args '{t}'", tools[0].name);
    }
    let control = control(&first, &tools, &listed, args, latest)?;
    if let Some(hint) = control.as_ref().and_then(untokened_hint) {
        say!("portcullis: {hint}");
    }
    // A control whose call acted as it should, with only stdout dirty (a
    // banner, say), leaves the campaign something to judge: its finding is
    // the run's first, and the hunt goes on (unless it is all
    // `--max-findings 1` asks for, and no baseline accepts it). Any other
    // stops the run.
    let dirty_only =
        |f: &Finding| !f.observation.effects.is_empty() && f.violations.iter().all(|v| v.check == CheckId::StdoutClean);
    let accepted = baselines.accepted();
    let leaves_room = |f: &Finding| args.max_findings != 1 || f.distinct().listed_in(&accepted);
    let goes_on = control.as_ref().is_none_or(|f| dirty_only(f) && leaves_room(f));
    let seen = match (goes_on, args.policy()) {
        (true, Policy::Auto) => Some(seen_policy(&first, &tools, args, latest)?),
        _ => None,
    };
    let policy = seen.as_ref().map_or(args.policy(), |s| s.policy);
    match &seen {
        Some(s) if s.policy == Policy::Auto => say!("portcullis: policy auto: {}", s.detail),
        Some(s) => say!("portcullis: policy auto: {}; holding it to {}", s.detail, s.policy),
        None => {}
    }
    let outcome = match control {
        Some(finding) if !goes_on => {
            let saved = save(&finding, &tools, &first.probes.http_base(), None, args)?;
            Outcome::new(vec![saved], 1, first.probes.ignored(), args.mix)
        }
        control => campaign(args, (policy, accepted), first, &tools, &revisions, control)?,
    };
    let detail = seen.map(|s| s.detail);
    let findings = outcome.findings.into_iter().map(|(f, path)| (Finding { policy_seen: detail.clone(), ..f }, path));
    let findings: Vec<(Finding, PathBuf)> = findings.collect();
    let causes: Vec<Seen> = findings.iter().map(|(f, _)| Seen::of(&f.distinct(), &f.also)).collect();
    let standing = baselines.stand(&causes);
    let outcome = Outcome { findings, standing, ..outcome };
    args.write_reports(&outcome)?;
    let updated = baselines.update(&causes)?;
    Ok(super::fuzz_outcome::told(&outcome, args, updated))
}

/// The revisions a campaign draws when none is named: the four that open
/// with `initialize`, and 2026-07-28 where the server answers
/// `server/discover` with it; and what the run says it found.
fn spoken(setup: &Setup) -> Result<(Vec<Revision>, String)> {
    let asked = speaks_stateless(&setup.target(vec![]))?;
    let mut revisions = Revision::HANDSHAKEN.to_vec();
    let era = "2024-11-05 to 2025-11-25 (initialize)";
    let said = match (asked.spoken, &asked.answer) {
        (true, _) => {
            revisions.push(Revision::R2026_07_28);
            format!("{era} and 2026-07-28 (named by server/discover)")
        }
        (false, Some(a)) => format!("{era}; server/discover answered {a}"),
        (false, None) => format!("{era}; server/discover got no answer"),
    };
    Ok((revisions, said))
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

/// Where a forbidden tool's call carries its token only in arguments no
/// probe watches: no `{canary}` URL for the HTTP sink, no watched path,
/// and success results do not count (`--effect answer`). An effect of
/// such a call would go unseen, so the run says so before it starts.
fn unseen_hint(tool: &ToolSpec, args: &Args) -> Option<String> {
    let template = tool.template.as_ref().filter(|_| !tool.authorized)?;
    let watched = !args.child.watch_dir.is_empty() || !args.child.watch_file.is_empty();
    let answers = args.child.effect == Some(Effect::Answer);
    if carries_canary(template) || watched || answers {
        return None;
    }
    let carriers: Vec<&str> =
        template.iter().filter(|(_, v)| v.to_string().contains("{token}")).map(|(k, _)| k.as_str()).collect();
    let first = carriers.first().copied().unwrap_or("url");
    let carriers = match carriers.is_empty() {
        true => "a nested argument".to_owned(),
        false => carriers.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
    };
    Some(format!(
        "forbidden tool `{}` gets its token only in {carriers}, which no probe watches: an effect of it would go \
         unseen. If one of them is a URL, say so with --forbidden-args '{}={{\"{first}\":\"{{canary}}\"}}' \
         (and the other arguments); if it writes files, --watch-dir",
        tool.name, tool.name
    ))
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
            match (obs.stdout.is_empty(), obs.exit.ended()) {
                (true, false) => format!(
                    "\n  The server wrote nothing on stdout, not even its answer to the request that opens a session, within {} ms of \
                     its start: if it is slow to start (an interpreter loading its packages, `npx -y` or `uvx` \
                     downloading it), raise --start-ms.",
                    setup.waits.start.as_millis()
                ),
                (_, true) => String::new(),
                (false, false) => format!(
                    "\n  The server was still running {} ms after its stdin closed, and was ended then: \
                     if it acts some time after it answers (it queues its calls, say), raise --exit-grace-ms.",
                    args.child.exit_grace_ms()
                ),
            },
            crate::escape::escape(&obs.stdout, 300),
            crate::escape::escape(&obs.stderr, 300)
        );
    }
    let again = || {
        let salt = fresh_salt();
        Ok((job.session(&spec, salt, Lane::ConfirmTimed)?, salt))
    };
    let run = (args.seed, args.policy());
    match confirmed_control(spec.clone(), (script, obs, violations), salt, run, again)? {
        Ok(found) => Ok(found),
        Err(key) => {
            say!(
                "portcullis: the control showed {key} by time alone, and a session with every wait four \
                 times as long did not: not a finding (a server slow within those waits, or a loaded machine)"
            );
            Ok(None)
        }
    }
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

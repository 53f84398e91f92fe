//! `portcullis audit`: the runtime privilege audit. The server runs with a
//! scrubbed environment plus canary secrets, and canary credential files
//! in its temporary HOME; it is taken through its startup, the handshake
//! and the rejected frames of a short campaign, under strace when it can
//! trace. Two verdicts come out: protocol cleanliness and runtime
//! permissions, each on its own, with the smallest environment and paths
//! the server was seen to need.

mod area;
mod audit_output;
mod canary;
mod frames;
mod judge;
mod legs;
mod needs;
mod strace;

use super::conversation::Transcript;
use super::setup::{ChildFlags, parse_args};
use crate::process::Home;
use crate::protocol::Revision;
use anyhow::{Result, bail};
use area::{Area, Places};
use canary::Canaries;
use judge::{Evidence, Finding, Phase};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The tool the rejected frames call [default: the listed tool likeliest to act].
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The tool's arguments, as for `fuzz` (`{canary}` or `{token}` in a string).
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// How many rejected frames to send, one after another, each followed by a ping.
    #[arg(long, default_value_t = 40, value_name = "N")]
    frames: usize,
    /// The seed of the campaign the rejected frames come from.
    #[arg(long, default_value_t = 0, value_name = "N")]
    seed: u64,
    /// A path the server may open without the runtime verdict calling it
    /// out (a folder holds everything beneath it). Repeatable.
    #[arg(long, value_name = "PATH")]
    allow_path: Vec<PathBuf>,
    /// Do not trace with strace, even where it can.
    #[arg(long)]
    no_strace: bool,
    /// The protocol revision sessions open in [default: 2026-07-28 where
    /// the server's `server/discover` names it, else 2025-11-25].
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    revision: Option<Revision>,
    /// Write the audit as JSON here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Write a JUnit XML report here: one test case per check of each verdict.
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
    #[command(flatten)]
    baselines: super::baseline::Flags,
    #[command(flatten)]
    child: ChildFlags,
}

/// What an audit found, for the reports.
pub struct Audit {
    pub command: String,
    pub canaries: Canaries,
    pub strace: Result<(), String>,
    pub transcript: Transcript,
    pub frames_sent: usize,
    pub frames_planned: usize,
    /// The rules the frames sent break, sorted: what a clean protocol
    /// verdict covers.
    pub covered: Vec<&'static str>,
    /// Processes the frames took: a server that ends the session on a bad
    /// frame is started again for the rest.
    pub processes: usize,
    /// Why the rejected frames stopped early, if they did.
    pub stopped: Option<String>,
    pub findings: Vec<Finding>,
    pub phases: Vec<(Phase, Vec<strace::Event>)>,
    pub places: Places,
    pub needs: needs::Needs,
    /// Processes and threads whose trace strace could not finish.
    pub cut_short: usize,
    /// Each process after the first: its frames, stdout lines, exit and
    /// stderr, for the report.
    pub restarts: Vec<serde_json::Value>,
}

/// The newest revision the server speaks, asked as a client asks:
/// 2026-07-28 where its `server/discover` names it, else 2025-11-25.
fn newest_spoken(target: &crate::process::ChildTarget) -> Result<Revision> {
    let asked = crate::process::speaks_stateless(target).map_err(|e| anyhow::anyhow!("{}", super::told(&e)))?;
    Ok(if asked.spoken { Revision::R2026_07_28 } else { Revision::LATEST_HANDSHAKEN })
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let (child, profile) = args.child.with_profile(&[])?;
    let named = profile.and_then(|(p, places)| p.baseline.map(|b| places.fill(&b).into()));
    let baselines = args.baselines.or_profiles(named).read(super::baseline::Finder::Audit)?;
    let setup = child.setup()?;
    let template = args.args.as_deref().map(parse_args).transpose()?;
    let user_keys: Vec<String> = setup.command.env.iter().map(|(k, _)| k.clone()).collect();
    let canaries = Canaries::new(&user_keys);
    let tmpdir = Home::new()?;
    let traces = Home::new()?;
    let strace = if args.no_strace { Err("not asked for (--no-strace)".to_owned()) } else { strace::available() };
    let mut planted = setup.command.clone();
    planted.env.extend(canaries.env());
    if !user_keys.iter().any(|k| k == "TMPDIR") {
        planted.env.push(("TMPDIR".into(), Some(tmpdir.path().display().to_string())));
    }
    planted.home_files = canaries.home_files();
    // The canary files go into the fresh HOME: a HOME set by hand is where
    // the server looks instead, and they are not there.
    if let Some((_, home)) = setup.command.env.iter().rev().find(|(k, _)| k == "HOME") {
        let home = home.clone().or_else(|| std::env::var("HOME").ok()).unwrap_or_default();
        say!(
            "portcullis audit: warning: HOME is set to {home} (by --env or the profile), so the server looks \
             there, not in the fresh HOME where the canary files are: `canary-file-opened` cannot see it open \
             them, and its HOME's own files count as outside its area"
        );
    }
    // Under strace a program that is not there would be strace's failure,
    // told late and in its words: it is looked for first.
    // The child's PATH, which `--env PATH=...` may set, is where it looks.
    let program = &setup.command.program;
    let path = setup.command.env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone());
    let path = path.map_or_else(|| std::env::var("PATH").ok(), |given| given.or_else(|| std::env::var("PATH").ok()));
    let found = match program.contains('/') {
        true => std::path::Path::new(program).is_file(),
        false => path.is_some_and(|p| area::on_path_in(program, &p).is_some()),
    };
    if !found {
        bail!("could not start {program}: no such file, nor a program of that name on PATH");
    }
    let mut target = setup.target(vec![]);
    let shown = super::shell_line(&child.command);
    let revision = match args.revision {
        Some(r) => r,
        None => newest_spoken(&target)?,
    };
    say!("portcullis audit: `{shown}` in {revision}");
    let plan = legs::Plan {
        planted: &planted,
        traces: strace.is_ok().then(|| traces.path()),
        revision,
        salt: crate::campaign::fresh_salt(),
        args,
        template,
        sink: setup.probes.http_base(),
    };
    let legs::Runs { mut legs, frames, catalogue: called, stopped } = legs::run(&mut target, &plan)?;
    let next: usize = legs.iter().map(|l| l.sent).sum();
    let mut covered: Vec<&'static str> =
        frames[..next.min(frames.len())].iter().filter_map(|f| f.expect.rule().map(|r| r.id())).collect();
    covered.sort_unstable();
    covered.dedup();
    let opened = legs[0].opened;
    let cwd = std::env::current_dir()?;
    let sinks = [setup.probes.http_base().trim_start_matches("http://").to_owned()];
    let sinks: Vec<String> = sinks.into_iter().chain(setup.probes.tcp_addr()).collect();
    let first_home = legs[0].home.clone();
    let control: std::collections::BTreeSet<String> = legs
        .iter()
        .flat_map(|l| &l.events)
        .filter(|(p, _)| *p == Phase::Control)
        .filter_map(|(_, e)| judge::activity(&e.act))
        .collect();
    let mut findings = Vec::new();
    let mut at = 0;
    for leg in &mut legs {
        let places = Places {
            home: leg.home.clone(),
            cache: target.cache_dir(),
            tmpdir: tmpdir.path().to_owned(),
            cwd: cwd.clone(),
        };
        let mut area = Area::new(&child.command, &places, &args.allow_path);
        for (_, e) in &leg.events {
            if let strace::Act::Exec { program, .. } = &e.act {
                area.program(program);
            }
        }
        let evidence = Evidence {
            stdout: &leg.transcript.stdout,
            stderr: &leg.transcript.stderr,
            effects: &leg.transcript.effects,
            canaries: &canaries,
            frames: &frames[at..at + leg.sent],
            first_frame: at,
            revision,
            events: strace.is_ok().then_some(&leg.events[..]),
            area: &area,
            places: &places,
            sinks: &sinks,
            control: &control,
        };
        findings.extend(judge::judge(&evidence));
        at += leg.sent;
        // One HOME for the report: each restart's is shown as the first's.
        for (_, e) in &mut leg.events {
            if let strace::Act::Open { path, .. } | strace::Act::Tried { path } = &mut e.act
                && let Ok(rest) = path.strip_prefix(&leg.home)
            {
                *path = first_home.join(rest);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.kind, f.phase, f.detail.clone())));
    let places = Places { home: first_home, cache: target.cache_dir(), tmpdir: tmpdir.path().to_owned(), cwd };
    // The tool's valid call, in a process of its own, the effect seen by
    // the probes: what a variable may be needed for beyond the opening.
    let acts = |catalogue: &crate::catalogue::Catalogue, cmd: &crate::process::Command| {
        let mut one = target.clone();
        one.command = cmd.clone();
        one.catalogue = catalogue.clone();
        let spec = crate::ScriptSpec::whole(revision, vec![crate::attack::Step::Control(0)]);
        let mut job = crate::campaign::Job::new(&one, crate::Policy::Auto, false, args.seed);
        let (_, obs, _) = job.fresh(&spec, crate::campaign::fresh_salt()).map_err(|e| super::told(&e))?;
        Ok::<_, String>(!obs.effects.is_empty())
    };
    let with_called = called.as_ref().map(|c| move |cmd: &crate::process::Command| acts(c, cmd));
    let acts = with_called.as_ref().map(|f| f as needs::Acts);
    let needs = match opened {
        true => needs::find(&target, &setup.command, revision, acts),
        false => needs::Needs::default(),
    };
    let phases = Phase::ALL
        .iter()
        .map(|p| {
            let all = legs.iter().flat_map(|l| &l.events);
            (*p, all.filter(|(q, _)| q == p).map(|(_, e)| e.clone()).collect())
        })
        .collect();
    let processes = legs.len();
    let cut_short = legs.iter().map(|l| l.cut_short).sum();
    let restarts = legs[1..]
        .iter()
        .map(|l| {
            let t = &l.transcript;
            serde_json::json!({
                "frames": l.sent,
                "stdout_lines": super::stdout_lines::judge(&t.stdout, revision).0,
                "exit": t.exit.to_string(),
                "stderr": crate::escape::escape(&t.stderr, 16 << 10),
            })
        })
        .collect();
    let transcript = legs.swap_remove(0).transcript;
    let audit = Audit {
        command: shown,
        canaries,
        strace,
        frames_sent: next,
        covered,
        frames_planned: frames.len(),
        processes,
        stopped,
        findings,
        phases,
        places,
        needs,
        transcript,
        cut_short,
        restarts,
    };
    // The reports hold what was seen, even when it was not enough to judge.
    audit_output::write(args.report.as_deref(), args.junit.as_deref(), &audit)?;
    let dirty = !audit.findings.is_empty();
    if !opened && !dirty {
        bail!(
            "the server left {} unanswered within {} ms: the audit saw its startup only and found nothing there \
             ({})",
            audit.transcript.unanswered.unwrap_or("initialize"),
            target.waits().answer.as_millis(),
            crate::process::stderr_tail(&audit.transcript.stderr)
        );
    }
    // One cause per kind of finding and phase: the files of one kind
    // opened in one phase are one behaviour.
    let mut keys: Vec<String> = audit.findings.iter().map(|f| f.key()).collect();
    keys.sort();
    keys.dedup();
    let causes: Vec<super::baseline::Seen> = keys.into_iter().map(super::baseline::Seen::alone).collect();
    let standing = baselines.stand(&causes);
    // A run whose frames stopped short saw part of what it would have.
    let updated = match audit.stopped.is_none() && opened {
        true => baselines.update(&causes)?,
        false => false,
    };
    let known = |f: &judge::Finding| standing.as_ref().is_some_and(|s| s.known.iter().any(|(k, _)| *k == f.key()));
    audit_output::print(&audit, &known);
    if let Some(s) = &standing {
        out!();
        out_raw!("{}", super::baseline::standing_text(s));
    }
    let new = audit.findings.iter().any(|f| !known(f));
    Ok(if new && !updated { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

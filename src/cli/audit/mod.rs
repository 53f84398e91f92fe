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
mod needs;
mod strace;

use super::conversation::{Conversation, Transcript};
use super::setup::{ChildFlags, choose_from, parse_args};
use crate::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
use crate::frame::Frame;
use crate::process::Home;
use crate::protocol::Revision;
use anyhow::{Result, bail};
use area::{Area, Places};
use canary::Canaries;
use judge::{Clock, Evidence, Finding, Phase};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

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
    /// The protocol revision `initialize` asks for [default: the latest].
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    revision: Option<Revision>,
    /// Write the audit as JSON here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Write a JUnit XML report here: one test case per check of each verdict.
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
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
    /// Processes the frames took: a server that ends the session on a bad
    /// frame is started again for the rest.
    pub processes: usize,
    /// Why the rejected frames stopped early, if they did.
    pub stopped: Option<String>,
    pub findings: Vec<Finding>,
    pub phases: Vec<(Phase, Vec<strace::Event>)>,
    pub places: Places,
    pub needs: needs::Needs,
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let revision = args.revision.unwrap_or(Revision::ALL[Revision::ALL.len() - 1]);
    let (child, _) = args.child.with_profile(&[])?;
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
    let mut target = setup.target(vec![]);
    let shown = shlex::try_join(child.command.iter().map(String::as_str)).unwrap_or_else(|_| child.command.join(" "));
    eprintln!("portcullis audit: `{shown}`");
    let salt = crate::campaign::fresh_salt();
    let mut legs: Vec<Leg> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut next = 0;
    let stopped = loop {
        let prefix = traces.path().join(format!("trace-{}", legs.len()));
        target.command = match &strace {
            Ok(()) => strace::wrap(&planted, &prefix),
            Err(_) => planted.clone(),
        };
        let mut talk = match Conversation::start(&target, revision, salt) {
            Ok(talk) => talk,
            Err(e) if legs.is_empty() => bail!("{}", super::told(&e)),
            Err(e) => break Some(format!("it could not be started again: {}", super::told(&e))),
        };
        if strace.is_ok() {
            settle_startup(&prefix, target.waits().answer);
        }
        let handshake = epoch();
        let opened = talk.open();
        let home = area::real(&talk.home());
        let rejected = epoch();
        if legs.is_empty() && opened {
            let catalogue = catalogue_for(&talk, args, template.clone(), &setup.probes.http_base())?;
            frames = frames::rejected(&catalogue, revision, salt, args.seed, args.frames);
        }
        let (sent, ended) = match opened {
            true => send_rejected(&mut talk, &frames[next..], next),
            false => {
                (0, Some((false, format!("a restart left {} unanswered", talk.unanswered.unwrap_or("initialize")))))
            }
        };
        next += sent;
        let shutdown = epoch();
        let mut transcript = talk.finish();
        let salts: Vec<u32> =
            [salt].into_iter().chain(frames.iter().flat_map(|f| crate::token::salts_in(&f.bytes))).collect();
        transcript.effects.extend(target.late_effects(&salts));
        let clock = Clock { handshake, rejected, shutdown };
        let events = match &strace {
            Ok(()) => strace::read(&prefix).into_iter().map(|e| (clock.phase(e.at), e)).collect(),
            Err(_) => vec![],
        };
        legs.push(Leg { transcript, events, home, opened, sent });
        match ended {
            // A server that ends the session on a bad frame is started again
            // for the frames left, as a client would start it.
            Some((true, _)) if next < frames.len() && legs.len() <= frames.len() => continue,
            Some((_, why)) if next < frames.len() => break Some(why),
            _ => break None,
        }
    };
    let opened = legs[0].opened;
    let cwd = std::env::current_dir()?;
    let sinks = [setup.probes.http_base().trim_start_matches("http://").to_owned()];
    let sinks: Vec<String> = sinks.into_iter().chain(setup.probes.tcp_addr()).collect();
    let first_home = legs[0].home.clone();
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
        };
        findings.extend(judge::judge(&evidence));
        at += leg.sent;
        // One HOME for the report: each restart's is shown as the first's.
        for (_, e) in &mut leg.events {
            if let strace::Act::Open { path, .. } = &mut e.act
                && let Ok(rest) = path.strip_prefix(&leg.home)
            {
                *path = first_home.join(rest);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.kind, f.phase, f.detail.clone())));
    let places = Places { home: first_home, cache: target.cache_dir(), tmpdir: tmpdir.path().to_owned(), cwd };
    let needs = match opened {
        true => needs::find(&target, &setup.command, revision),
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
    let transcript = legs.swap_remove(0).transcript;
    let audit = Audit {
        command: shown,
        canaries,
        strace,
        frames_sent: next,
        frames_planned: frames.len(),
        processes,
        stopped,
        findings,
        phases,
        places,
        needs,
        transcript,
    };
    audit_output::print(&audit);
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
    Ok(if dirty { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Seconds since the epoch now: the clock strace stamps calls with.
fn epoch() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Waits, up to `bound`, until the trace has not grown for 300 ms: the
/// server has done what it does before it reads its first byte.
fn settle_startup(prefix: &std::path::Path, bound: Duration) {
    let size = || {
        let dir = prefix.parent().expect("the trace prefix is in a folder");
        std::fs::read_dir(dir).into_iter().flatten().flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()
    };
    let deadline = Instant::now() + bound;
    let (mut last, mut since) = (0u64, Instant::now());
    while Instant::now() < deadline && since.elapsed() < Duration::from_millis(300) {
        std::thread::sleep(Duration::from_millis(20));
        let now: u64 = size();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// The tool the rejected frames call: as `fuzz` chooses it from the
/// listing, or, when none can be (no listing, no tool that carries a
/// canary), a made-up one: the frames still test what the server reads.
fn catalogue_for(
    talk: &Conversation,
    args: &Args,
    template: Option<serde_json::Map<String, serde_json::Value>>,
    base: &str,
) -> Result<Catalogue> {
    let listing = talk.tools.clone().ok_or_else(|| crate::Fault::config("no tools/list answer"));
    let chosen = choose_from(&listing, args.tool.as_deref(), template, &[]);
    let tools = match chosen {
        Ok((tools, _)) => tools,
        Err(e) if args.tool.is_some() || args.args.is_some() => return Err(e),
        Err(_) => {
            let mut tool = ToolSpec::new("portcullis_audit", vec![ArgSpec::required("url", ArgKind::Url)]);
            tool.template = Some(serde_json::from_str(r#"{"url":"{canary}"}"#).expect("a JSON object"));
            vec![tool]
        }
    };
    Ok(Catalogue { tools, canary_base: base.to_owned() })
}

/// One process of an audit.
struct Leg {
    transcript: Transcript,
    events: Vec<(Phase, strace::Event)>,
    home: PathBuf,
    opened: bool,
    /// Rejected frames it was sent.
    sent: usize,
}

/// Sends each frame (the first numbered `first`), then a ping, waiting
/// for its answer: the number of frames sent, and, when they stopped
/// early, whether the server ended and why.
fn send_rejected(talk: &mut Conversation, frames: &[Frame], first: usize) -> (usize, Option<(bool, String)>) {
    for (n, frame) in frames.iter().enumerate() {
        let i = first + n;
        talk.send(&frame.bytes);
        let id = 900_000 + i as i64;
        let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        if talk.ping(id, ping.as_bytes()).is_none() {
            let running = talk.running();
            let why = match running {
                true => format!("it stopped answering pings after frame #{} ({} {})", i + 1, frame.family, frame.kind),
                false => format!("it ended after frame #{} ({} {})", i + 1, frame.family, frame.kind),
            };
            return (n + 1, Some((!running, why)));
        }
    }
    (frames.len(), None)
}

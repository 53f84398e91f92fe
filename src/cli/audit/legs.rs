//! Running the server for an audit: one process, or, for a server that
//! ends the session on a bad frame, one more for the frames left after
//! each end (as a client would start it again). Each is traced into its
//! own files when strace can, and its calls put in phases by when they
//! were made: startup, handshake, control pings, rejected frames, shutdown.

use super::judge::{Clock, Phase};
use super::strace::{self, Event};
use super::{Args, area};
use crate::catalogue::{ArgKind, ArgSpec, Catalogue, ToolSpec};
use crate::cli::conversation::{Conversation, Transcript};
use crate::cli::setup::choose_from;
use crate::frame::Frame;
use crate::process::{ChildTarget, Command};
use crate::protocol::Revision;
use anyhow::{Result, bail};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// One process of an audit.
pub struct Leg {
    pub transcript: Transcript,
    pub events: Vec<(Phase, Event)>,
    /// Its processes and threads whose trace was cut short.
    pub cut_short: usize,
    pub home: PathBuf,
    pub opened: bool,
    /// Rejected frames it was sent.
    pub sent: usize,
}

/// What the runs left: each process, the frames planned, and why they
/// stopped before the last, if they did.
pub struct Runs {
    pub legs: Vec<Leg>,
    pub frames: Vec<Frame>,
    /// The tools the frames call, where the first opening listed them.
    pub catalogue: Option<Catalogue>,
    pub stopped: Option<String>,
}

/// How to run: the command with its canaries, where traces go (`None`
/// when strace is not used), and the rest of what the audit was asked.
pub struct Plan<'a> {
    pub planted: &'a Command,
    pub traces: Option<&'a Path>,
    pub revision: Revision,
    pub salt: u32,
    pub args: &'a Args,
    pub template: Option<Map<String, Value>>,
    pub sink: String,
}

/// Runs `plan` through `target` (whose command it sets) until every frame
/// is sent, the server stops answering, or it cannot start again.
pub fn run(target: &mut ChildTarget, plan: &Plan) -> Result<Runs> {
    let mut legs: Vec<Leg> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut called = None;
    let mut next = 0;
    let bound = target.waits().answer;
    let stopped = loop {
        let prefix = plan.traces.map(|t| t.join(format!("trace-{}", legs.len())));
        target.command = match &prefix {
            Some(p) => strace::wrap(plan.planted, p),
            None => plan.planted.clone(),
        };
        let mut talk = match Conversation::start(target, plan.revision, plan.salt) {
            Ok(talk) => talk,
            Err(e) if legs.is_empty() => bail!("{}", crate::cli::told(&e)),
            Err(e) => break Some(format!("it could not be started again: {}", crate::cli::told(&e))),
        };
        let settle = |p: &Option<PathBuf>| p.as_deref().map(|p| settle_trace(p, bound));
        settle(&prefix);
        let handshake = epoch();
        let opened = talk.open();
        let home = area::real(&talk.home());
        if legs.is_empty() && opened {
            let catalogue = catalogue_for(&talk, plan)?;
            let args = plan.args;
            frames = super::frames::rejected(&catalogue, plan.revision, plan.salt, args.seed, args.frames);
            called = Some(catalogue);
        }
        settle(&prefix);
        let control = epoch();
        // As many pings as frames, before any frame: what the server does
        // on its own meanwhile (timers, lazy connections) is not the frames'.
        let calm = !(legs.is_empty() && opened) || control_pings(&mut talk, frames.len());
        if legs.is_empty() && opened {
            settle(&prefix);
        }
        let rejected = epoch();
        let (sent, ended) = match (opened, calm) {
            (true, true) => send_rejected(&mut talk, &frames[next..], next),
            (true, false) => {
                (0, Some((false, "it stopped answering during the control pings, before any frame".into())))
            }
            (false, _) => {
                (0, Some((false, format!("a restart left {} unanswered", talk.unanswered.unwrap_or("initialize")))))
            }
        };
        next += sent;
        // What the last frame set off is still the frames'.
        settle(&prefix);
        let shutdown = epoch();
        let mut transcript = talk.finish();
        let salts: Vec<u32> =
            [plan.salt].into_iter().chain(frames.iter().flat_map(|f| crate::token::salts_in(&f.bytes))).collect();
        transcript.effects.extend(target.late_effects(&salts));
        let clock = Clock { handshake, control, rejected, shutdown };
        let trace = prefix.as_deref().map(strace::read).unwrap_or_default();
        let events = trace.events.into_iter().map(|e| (clock.phase(e.at), e)).collect();
        legs.push(Leg { transcript, events, cut_short: trace.cut_short, home, opened, sent });
        match ended {
            Some((true, _)) if next < frames.len() && legs.len() <= frames.len() => continue,
            Some((_, why)) if next < frames.len() => break Some(why),
            _ => break None,
        }
    };
    Ok(Runs { legs, frames, catalogue: called, stopped })
}

/// Seconds since the epoch now: the clock strace stamps calls with.
fn epoch() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Waits, up to `bound`, until the trace files `prefix.*` have not grown
/// for 300 ms: the server has done what it was doing.
fn settle_trace(prefix: &Path, bound: Duration) {
    let size = || {
        let dir = prefix.parent().expect("the trace prefix is in a folder");
        std::fs::read_dir(dir).into_iter().flatten().flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum()
    };
    let deadline = Instant::now() + bound;
    let (mut last, mut since) = (size(), Instant::now());
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
fn catalogue_for(talk: &Conversation, plan: &Plan) -> Result<Catalogue> {
    let listing = talk.tools.clone().ok_or_else(|| crate::Fault::config("no tools/list answer"));
    let chosen = choose_from(&listing, plan.args.tool.as_deref(), plan.template.clone(), &[]);
    let tools = match chosen {
        Ok((tools, _)) => tools,
        Err(e) if plan.args.tool.is_some() || plan.args.args.is_some() => return Err(e),
        Err(_) => {
            let mut tool = ToolSpec::new("portcullis_audit", vec![ArgSpec::required("url", ArgKind::Url)]);
            tool.template = Some(serde_json::from_str(r#"{"url":"{canary}"}"#).expect("a JSON object"));
            vec![tool]
        }
    };
    Ok(Catalogue { tools, canary_base: plan.sink.clone() })
}

/// `count` pings, each awaited; they stop at the first left unanswered.
/// Whether every one was answered.
fn control_pings(talk: &mut Conversation, count: usize) -> bool {
    (0..count).all(|i| {
        let id = 800_000 + i as i64;
        talk.marker(id).is_some()
    })
}

/// Sends each frame (the first numbered `first`), then a ping, waiting
/// for its answer: the number of frames sent, and, when they stopped
/// early, whether the server ended and why.
fn send_rejected(talk: &mut Conversation, frames: &[Frame], first: usize) -> (usize, Option<(bool, String)>) {
    for (n, frame) in frames.iter().enumerate() {
        let i = first + n;
        talk.send(&frame.bytes);
        let id = 900_000 + i as i64;
        if talk.marker(id).is_none() {
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

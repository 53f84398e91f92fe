//! The audit's two verdicts from what it saw. Protocol: every stdout line a
//! protocol message, and no rejected frame acted. Runtime: no canary left
//! the process, no canary file was opened, nothing was opened outside the
//! server's area, and no rejected frame made it run a program, connect or
//! listen. The runtime verdict is a least-privilege judgement, stricter
//! than any protocol text: `--allow-path` widens the area.

use super::area::{Area, Places};
use super::canary::Canaries;
use super::strace::{Act, Event};
use crate::cli::stdout_lines::{self, shown};
use crate::frame::Frame;
use crate::protocol::Revision;
use crate::seam::Action;
use std::collections::BTreeSet;

/// The stretches of an audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// From the start until the first byte is sent.
    Startup,
    /// initialize, initialized, tools/list, ping.
    Handshake,
    /// As many pings as there are frames, before any: what the server does
    /// on its own meanwhile is not the frames' doing.
    Control,
    /// The rejected frames, each followed by a ping.
    Rejected,
    /// stdin closed, until the process group has ended.
    Shutdown,
}

impl Phase {
    pub const ALL: [Phase; 5] = [Phase::Startup, Phase::Handshake, Phase::Control, Phase::Rejected, Phase::Shutdown];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::Handshake => "handshake",
            Phase::Control => "control pings",
            Phase::Rejected => "rejected frames",
            Phase::Shutdown => "shutdown",
        }
    }
}

/// When each phase after startup began, in seconds since the epoch (the
/// clock strace stamps calls with).
pub struct Clock {
    pub handshake: f64,
    pub control: f64,
    pub rejected: f64,
    pub shutdown: f64,
}

impl Clock {
    pub fn phase(&self, at: f64) -> Phase {
        match at {
            t if t < self.handshake => Phase::Startup,
            t if t < self.control => Phase::Handshake,
            t if t < self.rejected => Phase::Control,
            t if t < self.shutdown => Phase::Rejected,
            _ => Phase::Shutdown,
        }
    }
}

/// Which verdict a finding weighs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Protocol,
    Runtime,
}

/// One thing the audit holds against the server.
#[derive(Clone, Debug)]
pub struct Finding {
    pub verdict: Verdict,
    /// A stable id: `stdout-clean`, `no-effect-on-reject`, `canary-leak`,
    /// `canary-file-opened`, `outside-area`, `rejected-frame-activity`.
    pub kind: &'static str,
    pub phase: Option<Phase>,
    pub detail: String,
    /// What kind of line a stdout finding is about (its problem, numbers
    /// left out): part of its cause. Empty for other findings.
    pub class: String,
}

impl Finding {
    /// Its cause, as a baseline lists it: its kind, and the phase it came
    /// in where it has one.
    pub fn key(&self) -> String {
        let within: Vec<&str> = self.phase.map(Phase::name).into_iter().chain(Some(self.class.as_str())).collect();
        match within.iter().filter(|w| !w.is_empty()).copied().collect::<Vec<_>>().join(", ") {
            w if w.is_empty() => format!("audit/{}", self.kind),
            w => format!("audit/{} ({w})", self.kind),
        }
    }
}

/// The check ids of each verdict, in the order they are reported.
pub const PROTOCOL_KINDS: [&str; 2] = ["stdout-clean", "no-effect-on-reject"];
pub const RUNTIME_KINDS: [&str; 4] = ["canary-leak", "canary-file-opened", "outside-area", "rejected-frame-activity"];

/// Everything the audit saw.
pub struct Evidence<'a> {
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    /// Effects the probes saw: with a token of the audit's frames, or none.
    pub effects: &'a [Action],
    pub canaries: &'a Canaries,
    pub frames: &'a [Frame],
    /// The number of the first of `frames` among all the audit sent.
    pub first_frame: usize,
    pub revision: Revision,
    /// The traced calls, when strace ran, each with its phase.
    pub events: Option<&'a [(Phase, Event)]>,
    pub area: &'a Area,
    pub places: &'a Places,
    /// The sinks' addresses: connecting to them is a probe's business.
    pub sinks: &'a [String],
    /// What the server did during the control pings (as [`activity`] says
    /// it), which a rejected frame is not blamed for doing too.
    pub control: &'a BTreeSet<String>,
}

/// A program run, a connection or a bind, said the same way for every
/// process: what the frames are and are not blamed for.
pub fn activity(act: &Act) -> Option<String> {
    match act {
        Act::Exec { program, argv } => Some(format!("ran {} ({})", program.display(), argv.join(" "))),
        Act::Connect { to } => Some(format!("connected to {to}")),
        Act::Bind { to } => Some(format!("listened on {to}")),
        Act::Open { .. } | Act::Tried { .. } => None,
    }
}

/// Most items of one kind listed in full.
const LISTED: usize = 12;

pub fn judge(e: &Evidence) -> Vec<Finding> {
    let mut out = Vec::new();
    let (_, dirty) = stdout_lines::judge(e.stdout, e.revision);
    for d in dirty.iter().take(LISTED) {
        let detail = format!("non-protocol stdout on line {}: {} ({})", d.line, shown(&d.bytes), d.problem);
        let class = d.problem.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
        out.push(Finding { verdict: Verdict::Protocol, kind: "stdout-clean", phase: None, detail, class });
    }
    let mut add =
        |verdict, kind, phase, detail: String| out.push(Finding { verdict, kind, phase, detail, class: String::new() });
    for effect in e.effects {
        let text = effect.arguments_text();
        let frame = crate::token::tokens_in(&text)
            .find_map(|t| e.frames.iter().position(|f| memchr::memmem::find(&f.bytes, t.as_bytes()).is_some()));
        let by = match frame {
            Some(i) => {
                format!("rejected frame #{} ({} {})", e.first_frame + i + 1, e.frames[i].family, e.frames[i].kind)
            }
            None => "no frame it was sent (it carries no token of one)".to_owned(),
        };
        let cut = if text.chars().count() > 160 { "..." } else { "" };
        let seen = format!("{}{cut}", text.chars().take(160).collect::<String>());
        add(Verdict::Protocol, "no-effect-on-reject", None, format!("{by} caused an effect: {} {seen}", effect.tool));
    }
    let channels = [("stdout", e.stdout), ("stderr", e.stderr)];
    for (channel, bytes) in channels {
        for (canary, at) in e.canaries.found_in(bytes) {
            let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
            let what =
                if canary.file { format!("the canary file {{home}}/{}", canary.name) } else { canary.name.clone() };
            add(Verdict::Runtime, "canary-leak", None, format!("{what} leaked through {channel}, line {line}"));
        }
    }
    for effect in e.effects {
        for (canary, _) in e.canaries.found_in(effect.arguments_text().as_bytes()) {
            add(Verdict::Runtime, "canary-leak", None, format!("{} reached the probe {}", canary.name, effect.tool));
        }
    }
    let Some(events) = e.events else { return out };
    let home = super::area::real(&e.places.home);
    let mut outside = BTreeSet::new();
    for (phase, event) in events {
        match &event.act {
            Act::Open { path, write, .. } => {
                if let Some(canary) = path.strip_prefix(&home).ok().and_then(|r| e.canaries.file_at(r)) {
                    let how = if *write { "written" } else { "read" };
                    let detail = format!("{{home}}/{} opened to be {how}", canary.name);
                    add(Verdict::Runtime, "canary-file-opened", Some(*phase), detail);
                } else if e.area.holds(path).is_none() && outside.insert(path.clone()) && outside.len() <= LISTED {
                    let how = if *write { "written" } else { "read" };
                    let detail = format!("{} opened to be {how}, outside its area", e.places.show(path));
                    add(Verdict::Runtime, "outside-area", Some(*phase), detail);
                }
            }
            Act::Connect { to } if e.sinks.contains(to) => {}
            act if *phase == Phase::Rejected => {
                let Some(detail) = activity(act).filter(|d| !e.control.contains(d)) else { continue };
                let detail = format!("while rejecting frames it {detail}, which it did not while answering pings");
                add(Verdict::Runtime, "rejected-frame-activity", Some(*phase), detail);
            }
            _ => {}
        }
    }
    if outside.len() > LISTED {
        let more = format!("and {} more paths outside its area", outside.len() - LISTED);
        add(Verdict::Runtime, "outside-area", None, more);
    }
    out
}

//! The campaign of `portcullis fuzz`: jobs hunting in parallel, each
//! distinct finding shrunk once (whichever job made it first), saved, and
//! counted; progress live while searching and while shrinking.

use super::fuzz_args::Args;
use super::interrupt;
use super::jobs::revision_share;
use super::saving::{Saved, save};
use super::setup::Setup;
use crate::campaign::{Distinct, Finding, Flight, HuntConfig, Known, Lane, Progress, fresh_salt, hunt_among, strategy};
use crate::catalogue::ToolSpec;
use crate::delta::minimize;
use crate::process::{ChildTarget, Job, Waits};
use crate::report;
use crate::report::Outcome;
use crate::{Policy, Revision, ScriptSpec};
use anyhow::{Result, bail};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A finding kept: what showed it, the sink base of its job, its waits.
type Kept = (Finding, String, Option<Waits>);

pub(super) fn campaign(
    args: &Args,
    policy: Policy,
    first: Setup,
    tools: &[ToolSpec],
    revisions: &[Revision],
    control: Option<Finding>,
) -> Result<Outcome> {
    let stop = AtomicBool::new(false);
    let done = AtomicU32::new(0);
    let known = Known::default();
    // The positive control's finding is the run's first, seen once more
    // than the campaign's sessions show it.
    let from_control = control.as_ref().map(Finding::distinct);
    let control = control.map(|f| {
        known.add(&f.distinct());
        let first_seen = Some(Duration::ZERO);
        (Finding { first_seen, policy, ..f }, first.probes.http_base(), None)
    });
    let found: Mutex<Vec<Kept>> = Mutex::new(control.into_iter().collect());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let ignored = AtomicU32::new(0);
    let cases = args.cases();
    let bar = Bar::new(cases, args.duration);
    let started = Instant::now();
    let out_of_time = || args.duration.is_some_and(|d| started.elapsed() >= d);
    // This run's tokens are its own; see `control`.
    let salt_base = fresh_salt();
    let jobs = args.jobs.min(cases.max(1) as usize);
    // The jobs watch the same files: each judges only its own records.
    let siblings = first.siblings.clone();
    let mut setups = vec![Some(first)];
    for _ in 1..jobs {
        setups.push(Some(Setup { siblings: siblings.clone(), ..args.child.setup()? }));
    }
    let enough = || args.max_findings > 0 && known.len() >= args.max_findings as usize;
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
    let saved = Saved::new(args, tools);
    for (f, base, waits) in found.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        saved.record(f, base, *waits, 0)?;
    }
    // Saved as it comes; after a signal the servers were ended under the
    // sessions still running, so nothing they show then is recorded.
    let record = |f: &Finding, base: &str, waits: Waits| {
        if interrupt::stopped().is_none()
            && let Err(e) = saved.record(f, base, Some(waits), done.load(Ordering::Relaxed))
        {
            fail(format!("{e:#}"));
        }
    };
    // After a signal, only what was saved before it: the sessions run since
    // had their servers ended under them.
    let kept = |f: Finding, base: String, waits: Waits| {
        if interrupt::stopped().is_none() || saved.path_of(&f.distinct()).is_some() {
            found.lock().unwrap_or_else(|e| e.into_inner()).push((f, base, Some(waits)));
        }
        if enough() {
            stop.store(true, Ordering::Relaxed);
        }
    };
    let keep = |f: Finding, base: String, waits: Waits| {
        record(&f, &base, waits);
        kept(f, base, waits);
    };
    std::thread::scope(|scope| {
        for (j, setup) in setups.into_iter().enumerate() {
            let (stop, done, fail, keep, bar, ignored, known) = (&stop, &done, &fail, &keep, &bar, &ignored, &known);
            let (record, kept) = (&record, &kept);
            let (enough, out_of_time) = (&enough, &out_of_time);
            let cases = cases / jobs as u32 + u32::from((j as u32) < cases % jobs as u32);
            scope.spawn(move || {
                let Some(setup) = setup else { return };
                let target = setup.target(tools.to_vec()).started_ahead(!args.no_ahead);
                let cfg = HuntConfig {
                    cases,
                    seed: args.seed.wrapping_add(j as u64),
                    policy,
                    level: args.level(),
                    revisions: revision_share(revisions, j, jobs),
                    max_shrink_iters: 200,
                    max_shrink_ms: args.shrink_ms.max(1),
                    focus: args.check,
                    mix: args.mix,
                    salt_base,
                    max_findings: args.max_findings,
                    ..HuntConfig::default()
                };
                let job = RefCell::new(Job::new(&target, policy, !args.no_share, cfg.seed).knowing(known));
                // A wait that grows is shown once, with what grew it.
                let shown_growth: RefCell<[Option<Duration>; 2]> = RefCell::new([None; 2]);
                let tick = |p: &Progress| {
                    let grown = [("quiet wait", target.grown_by()), ("answer wait", target.answer_grown_by())];
                    for (i, (what, grew)) in grown.into_iter().enumerate() {
                        if let Some((wait, why)) = grew
                            && shown_growth.borrow()[i].is_none_or(|w| w < wait)
                        {
                            shown_growth.borrow_mut()[i] = Some(wait);
                            bar.say(&format!("the {what} grew to {} ms: {why}", wait.as_millis()));
                        }
                    }
                    // --duration bounds the whole run: past it no session is
                    // drawn and no shrinking goes on (a finding is then
                    // reported as its search session showed it, with its
                    // shared process's history where it ran in one).
                    match p {
                        Progress::Searched(_) => bar.searched(done.fetch_add(1, Ordering::Relaxed) + 1),
                        Progress::Shrinking { finding, steps, elapsed } => bar.shrinking(finding, *steps, *elapsed),
                        Progress::Unconfirmed { finding } => bar.say(&unconfirmed(finding)),
                    }
                    // Enough findings stop the drawing; the one being shrunk
                    // is among them, and its shrinking goes on.
                    let drawing = matches!(p, Progress::Searched(_));
                    let halt = stop.load(Ordering::Relaxed) || interrupt::stopped().is_some() || out_of_time();
                    !(halt || (drawing && enough()))
                };
                let base = setup.probes.http_base();
                let focused = |f: &Finding| args.check.is_none_or(|c| c == f.check);
                // Late and state-dependent findings come apart from the hunt's;
                // each is saved as it comes, unless the run has that finding.
                let apart: RefCell<Vec<Finding>> = RefCell::default();
                let tell_unconfirmed = || {
                    for d in job.borrow_mut().take_unconfirmed() {
                        bar.say(&unconfirmed(&d));
                    }
                };
                let take_apart = || {
                    tell_unconfirmed();
                    for f in job.borrow_mut().take_found() {
                        if focused(&f) && !known.contains(&f.distinct()) {
                            record(&f, &base, target.waits());
                        }
                        apart.borrow_mut().push(f);
                    }
                };
                let run = |spec: &ScriptSpec, salt: u32, lane: Lane| {
                    let ran = job.borrow_mut().session(spec, salt, lane);
                    take_apart();
                    ran
                };
                let on_found = |f: &Finding| record(f, &base, target.waits());
                // The shrinking rounds of a finding that shows only at a
                // deadline run in flight, where the job can.
                let takes = |d: &Distinct, spec: &ScriptSpec| job.borrow().flies(d, spec);
                let together = |round: &[(ScriptSpec, u32)], d: &Distinct, until: Option<Instant>| {
                    let ran = job.borrow_mut().flight(round, d, until);
                    take_apart();
                    ran
                };
                let history = |salt: u32| job.borrow().history_of(salt);
                let written = |spec: &ScriptSpec| job.borrow().written(spec);
                let flight = Flight { takes: &takes, run: &together, history: &history, written: &written };
                let hunted = hunt_among(&cfg, strategy(&cfg), &tick, (&run, Some(&flight)), known, &on_found);
                let mut apart = apart.take();
                apart.extend(job.borrow_mut().take_found());
                // Once stopped, the servers are gone: no late evidence to wait for.
                if interrupt::stopped().is_none() {
                    match job.borrow_mut().finish() {
                        Ok(more) => apart.extend(more),
                        Err(e) => return fail(super::told(&e)),
                    }
                    tell_unconfirmed();
                }
                match hunted {
                    // Each saved as it came.
                    Ok(findings) => findings.into_iter().for_each(|f| kept(f, base.clone(), target.waits())),
                    Err(e) => return fail(super::told(&e)),
                }
                // Late and state-dependent findings, each new one once, cut
                // down unless stopped (then only those saved before the stop
                // are kept: the servers were ended under the sessions since).
                for f in apart.into_iter().filter(focused) {
                    if !enough() && known.add(&f.distinct()) {
                        // --duration bounds this shrinking too: past it, the
                        // finding is kept as the fresh session showed it.
                        let left = args.duration.map(|d| d.saturating_sub(started.elapsed()));
                        let shrink = interrupt::stopped().is_none() && left.is_none_or(|l| !l.is_zero());
                        let f = if shrink { shrink_apart(f, &target, args, left) } else { f };
                        keep(f, base.clone(), target.waits());
                    }
                }
                ignored.fetch_add(setup.probes.ignored() as u32, Ordering::Relaxed);
            });
        }
    });
    bar.finish();
    let mut kept = found.into_inner().unwrap_or_else(|e| e.into_inner());
    for (f, ..) in &mut kept {
        let d = f.distinct();
        f.hits = f.hits.max(known.hits(&d) + u32::from(from_control.as_ref() == Some(&d)));
    }
    kept.sort_by_key(|(f, ..)| (f.first_seen.is_none(), f.first_seen));
    let mut findings = Vec::new();
    for (f, base, waits) in kept {
        match saved.path_of(&f.distinct()) {
            Some(path) => findings.push((f, path)),
            None => findings.push(save(&f, tools, &base, waits, args)?),
        }
    }
    // A harness error ends the run, but not before what the other jobs
    // found is saved: no finding is lost.
    if let Some(e) = errors.into_inner().unwrap_or_default().first() {
        let saved = match findings.len() {
            0 => String::new(),
            n => format!(" ({} saved under {} first)", report::counted(n, "finding"), args.artifacts.display()),
        };
        bail!("harness error: {e}{saved}");
    }
    Ok(Outcome {
        findings,
        sessions: done.load(Ordering::Relaxed),
        ignored_requests: ignored.load(Ordering::Relaxed) as usize,
        mix: args.mix,
    })
}

/// The line that tells of a finding that rests on time alone and that no
/// fresh session with doubled waits repeated.
fn unconfirmed(d: &Distinct) -> String {
    format!("{d} rests on time alone and no fresh session with doubled waits repeated it; not reported")
}

/// A late finding that a fresh session repeated is cut down as a saved one
/// is, within --shrink-ms and the time `left` of --duration; a
/// state-dependent one is reported whole, with
/// its history, for `portcullis minimize` to cut.
fn shrink_apart(f: Finding, target: &ChildTarget, args: &Args, left: Option<Duration>) -> Finding {
    if !f.confirmed {
        return f;
    }
    let budget = Duration::from_millis(u64::from(args.shrink_ms.max(1)));
    let budget = left.map_or(budget, |l| budget.min(l));
    match minimize(target, f.policy, f.script.clone(), &f.distinct(), f.salt, budget) {
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

/// Progress: a bar on a terminal, with what is being shrunk as its
/// message; otherwise a plain line per tenth of the sessions, and one
/// every five seconds of shrinking.
struct Bar {
    /// Sessions to run; `u32::MAX` when only a duration bounds them.
    total: u32,
    duration: Option<Duration>,
    started: Instant,
    bar: Option<indicatif::ProgressBar>,
    last_line: Mutex<Instant>,
}

impl Bar {
    fn new(total: u32, duration: Option<Duration>) -> Bar {
        let timed = total == u32::MAX;
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, template) = match duration.filter(|_| timed) {
                Some(d) => (d.as_secs(), "{spinner} {msg:.dim} {wide_bar} {elapsed}/{len}s"),
                None => (u64::from(total), "{spinner} {pos}/{len} sessions {wide_bar} {elapsed} {msg}"),
            };
            let bar = indicatif::ProgressBar::new(len);
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Bar {
            total,
            duration: duration.filter(|_| timed),
            started: Instant::now(),
            bar,
            last_line: Mutex::new(Instant::now()),
        }
    }

    fn searched(&self, n: u32) {
        match (&self.bar, self.duration) {
            (Some(bar), Some(_)) => {
                bar.set_position(self.started.elapsed().as_secs());
                bar.set_message(format!("{n} sessions"));
            }
            (Some(bar), None) => {
                bar.set_position(u64::from(n));
                bar.set_message("");
            }
            (None, Some(d)) => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= (d / 10).max(Duration::from_secs(1)) {
                    *last = Instant::now();
                    say!("portcullis: {n} sessions, {}/{} s", self.started.elapsed().as_secs(), d.as_secs());
                }
            }
            (None, None) if n.is_multiple_of((self.total / 10).max(1)) || n == self.total => {
                say!("portcullis: {n}/{} sessions", self.total)
            }
            (None, None) => {}
        }
    }

    fn shrinking(&self, finding: &Distinct, steps: u32, elapsed: Duration) {
        let what = format!("shrinking {finding}: {steps} steps, {:.1} s", elapsed.as_secs_f64());
        match &self.bar {
            Some(bar) => bar.set_message(what),
            None => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= Duration::from_secs(5) {
                    *last = Instant::now();
                    say!("portcullis: {what}");
                }
            }
        }
    }

    /// A line of its own, above the bar when there is one.
    fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("portcullis: {line}")),
            None => say!("portcullis: {line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

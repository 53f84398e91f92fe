//! The campaign of `portcullis fuzz`: jobs hunting in parallel, each
//! distinct finding shrunk once (whichever job made it first), saved, and
//! counted; progress live while searching and while shrinking.

use super::bar::Bar;
use super::fuzz_args::Args;
use super::interrupt;
use super::jobs::revision_share;
use super::saving::{Saved, save};
use super::setup::Setup;
use super::worker::{Campaign, Worker};
use crate::campaign::{Finding, Handed, HuntConfig, Known, Progress, Shrinker, fresh_salt, hunt_among, strategy};
use crate::catalogue::ToolSpec;
use crate::delta::minimize;
use crate::process::{ChildTarget, Waits};
use crate::report;
use crate::report::Outcome;
use crate::{Policy, Revision};
use anyhow::{Result, bail};
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A finding kept: what showed it, the sink base of its job, its waits.
type Kept = (Finding, String, Option<Waits>);

/// What a worker's late findings are kept by: the keeping, whether the
/// run has enough, where a harness error goes, and whether the servers
/// are gone.
type Settling<'a> = (
    &'a (dyn Fn(Finding, String, Waits) + Sync),
    &'a (dyn Fn() -> bool + Sync),
    &'a (dyn Fn(String) + Sync),
    &'a (dyn Fn() -> bool + Sync),
);

/// How long past --duration the sessions still running may take to end
/// on their own before their servers are ended under them.
const OVERDUE: Duration = Duration::from_secs(2);

/// Counts a worker thread from before it starts until it ends, however it
/// ends.
struct Running<'a>(&'a AtomicUsize);

impl<'a> Running<'a> {
    fn start(count: &'a AtomicUsize) -> Running<'a> {
        count.fetch_add(1, Ordering::SeqCst);
        Running(count)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// --duration bounds the whole run: past `deadline` nothing is drawn or
/// shrunk, and where workers are still in a session [`OVERDUE`] later (an
/// answer awaited until its deadline, a server slow to exit), their
/// servers are ended under them, as after a signal, and `ended` is set:
/// what those sessions show is no finding.
fn end_overdue(deadline: Instant, running: &AtomicUsize, ended: &AtomicBool, bar: &Bar) {
    let overdue = deadline + OVERDUE;
    while running.load(Ordering::SeqCst) > 0 && Instant::now() < overdue {
        std::thread::sleep(Duration::from_millis(20));
    }
    if running.load(Ordering::SeqCst) == 0 || interrupt::stopped().is_some() {
        return;
    }
    ended.store(true, Ordering::SeqCst);
    let groups = crate::process::end_servers(Duration::from_millis(500));
    bar.say(&format!(
        "--duration: ended {} still running {} s past it; what their sessions showed since is no finding",
        report::counted(groups, "server process group"),
        OVERDUE.as_secs()
    ));
}

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
    // Set once the servers still running a moment past --duration have
    // been ended under their sessions (see `end_overdue`).
    let ended = AtomicBool::new(false);
    // Whether the servers are gone (a signal, or --duration): what the
    // sessions still running show since is no finding and no harness
    // error, except what was seen before (a finding being shrunk keeps
    // its last failing session).
    let gone = || interrupt::stopped().is_some() || ended.load(Ordering::Relaxed);
    // This run's tokens are its own; see `control`.
    let salt_base = fresh_salt();
    let jobs = args.jobs.min(cases.max(1) as usize);
    // The jobs watch the same files: each judges only its own records.
    let siblings = first.siblings.clone();
    let mut setups = vec![first];
    for _ in 1..jobs {
        setups.push(Setup { siblings: siblings.clone(), ..args.child.setup()? });
    }
    let enough = || args.max_findings > 0 && known.len() >= args.max_findings as usize;
    // A harness error stops the run, shrinking included.
    let failed = AtomicBool::new(false);
    let fail = |e: String| {
        stop.store(true, Ordering::Relaxed);
        failed.store(true, Ordering::Relaxed);
        if !gone() {
            errors.lock().unwrap_or_else(|e| e.into_inner()).push(e);
        }
    };
    let saved = Saved::new(args, tools);
    for (f, base, waits) in found.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        saved.record(f, base, *waits, 0)?;
    }
    // Saved as it comes; once the servers are gone, nothing the sessions
    // still running show is recorded.
    let record = |f: &Finding, base: &str, waits: Waits| {
        if !gone()
            && let Err(e) = saved.record(f, base, Some(waits), done.load(Ordering::Relaxed))
        {
            fail(format!("{e:#}"));
        }
    };
    // Once the servers are gone, only what was saved before: the sessions
    // run since had their servers ended under them.
    let kept = |f: Finding, base: String, waits: Waits| {
        if !gone() || saved.path_of(&f.distinct()).is_some() {
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
    let campaign = Campaign { bar: &bar, known: &known, record: &record, focus: args.check, gone: &gone };
    // Each job's search hands what it catches to a shrinker of its own, a
    // thread that shrinks and confirms it in other processes of the server
    // meanwhile; a server of which only one instance may run shrinks inline.
    let mut shrinkers = Vec::new();
    for _ in 0..jobs {
        shrinkers.push(match args.no_ahead {
            true => None,
            false => Some(Setup { siblings: siblings.clone(), ..args.child.setup()? }),
        });
    }
    let running = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for (j, (setup, shrinker)) in setups.into_iter().zip(shrinkers).enumerate() {
            let (stop, done, fail, bar, ignored, known) = (&stop, &done, &fail, &bar, &ignored, &known);
            let (keep, kept, enough, out_of_time, gone, failed) = (&keep, &kept, &enough, &out_of_time, &gone, &failed);
            let running = &running;
            let cases = cases / jobs as u32 + u32::from((j as u32) < cases % jobs as u32);
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
            // --duration bounds the whole run: past it no session is drawn
            // and no shrinking goes on (a finding is then reported as its
            // search session showed it, with its shared process's history
            // where it ran in one).
            let halt = move || stop.load(Ordering::Relaxed) || interrupt::stopped().is_some() || out_of_time();
            let target = setup.target(tools.to_vec()).started_ahead(!args.no_ahead);
            let search_base = setup.probes.http_base();
            let (handed, to_shrink) = std::sync::mpsc::channel::<(Handed, Duration)>();
            let shrinker = shrinker.map(|setup| {
                // Its waits grow with the search's, and the search's with its.
                let shrinking = setup.target(tools.to_vec()).started_ahead(true).waits_shared_with(&target);
                let (cfg, search_base) = (cfg.clone(), search_base.clone());
                let running = Running::start(running);
                scope.spawn(move || {
                    let _running = running;
                    let worker =
                        Worker::new(&shrinking, (policy, args.no_share, cfg.seed), setup.probes.http_base(), campaign);
                    // Enough findings stop the drawing, not the shrinking
                    // of those already caught. Its waits are the search's,
                    // whose progress tells their growth.
                    let tick = |p: &Progress| {
                        campaign.tell(p);
                        !(failed.load(Ordering::Relaxed) || interrupt::stopped().is_some() || out_of_time())
                    };
                    worker.hunting(None, |run, flight| {
                        let mut shrinker = Shrinker::new(&cfg, strategy(&cfg), &tick, (run, Some(flight)), known);
                        for (caught, cover) in to_shrink {
                            worker.covering(cover);
                            let shrunk = shrinker.shrink(caught);
                            bar.shrunk();
                            match shrunk {
                                Ok(Some(f)) => {
                                    let base = worker.base_of(&f, &search_base).to_owned();
                                    keep(f, base, worker.waits());
                                }
                                Ok(None) => {}
                                // The run ends; what is still handed is
                                // reported as the search caught it.
                                Err(e) => {
                                    fail(super::told(&e));
                                    shrinker.halt();
                                }
                            }
                        }
                    });
                    settle(&worker, args, campaign, (keep, enough, fail, gone), started);
                    ignored.fetch_add(setup.probes.ignored() as u32, Ordering::Relaxed);
                })
            });
            let inline = shrinker.is_none();
            let handed = shrinker.is_some().then_some(handed);
            let running = Running::start(running);
            scope.spawn(move || {
                let _running = running;
                let worker = Worker::new(&target, (policy, args.no_share, cfg.seed), search_base, campaign);
                let tick = |p: &Progress| {
                    worker.tell_growth();
                    match p {
                        Progress::Searched(_) => {
                            // A search that shrinks inline has done so by now.
                            if inline {
                                bar.shrunk();
                            }
                            bar.searched(done.fetch_add(1, Ordering::Relaxed) + 1)
                        }
                        _ => campaign.tell(p),
                    }
                    // Enough findings stop the drawing; the one being shrunk
                    // is among them, and its shrinking goes on.
                    let drawing = matches!(p, Progress::Searched(_));
                    !(halt() || (drawing && enough()))
                };
                let on_found = |f: &Finding| record(f, &worker.base, worker.waits());
                // Sent with the evidence its lane's confirmation must cover;
                // dropped once the search ends, so that the lane finishes.
                let handed = RefCell::new(handed);
                let hand = |caught: Handed| {
                    if let Some(to) = handed.borrow().as_ref() {
                        let _ = to.send((caught, worker.cover()));
                    }
                };
                let apart = handed.borrow().is_some().then_some(&hand as &dyn Fn(Handed));
                let hunted = worker.hunting(apart, |run, flight| {
                    hunt_among(&cfg, strategy(&cfg), &tick, (run, Some(flight)), known, &on_found)
                });
                handed.borrow_mut().take();
                match hunted {
                    // Each saved as it came.
                    Ok(findings) => findings.into_iter().for_each(|f| kept(f, worker.base.clone(), worker.waits())),
                    Err(e) => return fail(super::told(&e)),
                }
                settle(&worker, args, campaign, (keep, enough, fail, gone), started);
                ignored.fetch_add(setup.probes.ignored() as u32, Ordering::Relaxed);
            });
        }
        if let Some(d) = args.duration {
            let (running, ended, bar) = (&running, &ended, &bar);
            scope.spawn(move || end_overdue(started + d, running, ended, bar));
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

/// Keeps the late and state-dependent findings of `worker`'s job, each
/// new one once, cut down unless stopped (then only those saved before the
/// stop are kept: the servers were ended under the sessions since).
fn settle(worker: &Worker, args: &Args, campaign: Campaign, (keep, enough, fail, gone): Settling, started: Instant) {
    // Once the servers are gone, there is no late evidence to wait for.
    let apart = match worker.finish(gone()) {
        Ok(apart) => apart,
        Err(e) => return fail(super::told(&e)),
    };
    for f in apart {
        if !enough() && campaign.known.add(&f.distinct()) {
            // --duration bounds this shrinking too: past it, the
            // finding is kept as the fresh session showed it.
            let left = args.duration.map(|d| d.saturating_sub(started.elapsed()));
            let shrink = !gone() && left.is_none_or(|l| !l.is_zero());
            let f = if shrink { shrink_apart(f, worker.target(), args, left) } else { f };
            keep(f, worker.base.clone(), worker.waits());
        }
    }
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

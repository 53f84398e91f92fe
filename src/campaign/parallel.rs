//! A campaign against a server process: jobs hunting in parallel, each
//! distinct finding shrunk once (whichever job made it first), saved as it
//! comes, and counted. The command line turns its flags into a [`Plan`],
//! gives each job its targets, and watches through an [`Onlooker`]: it
//! prints and saves; everything judged is judged here.

use super::delta::minimize;
use super::scope::Scope;
use super::shares::revision_share;
use super::worker::{Campaign, Onlooker, Worker};
use super::{Finding, Handed, HuntConfig, Known, Progress, Shrinker, fresh_salt, hunt_among, strategy};
use crate::check::CheckId;
use crate::process::{ChildTarget, Waits};
use crate::protocol::{Level, Policy, Revision};
use crate::report;
use crate::script::{Mix, Part};
use crate::seam::told;
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What a campaign is to do: the flags of `portcullis fuzz`, as the engine
/// reads them.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Sessions to draw, shared out among the jobs.
    pub(crate) cases: u32,
    /// The seed of the first job; each next one's is one more.
    pub(crate) seed: u64,
    /// The policy the server is held to (settled before the campaign).
    pub(crate) policy: Policy,
    pub(crate) level: Level,
    /// The revisions drawn, shared out among the jobs.
    pub(crate) revisions: Vec<Revision>,
    /// Bounds the whole run: drawing, shrinking and confirming.
    pub(crate) duration: Option<Duration>,
    /// Most time shrinking one finding.
    pub(crate) shrink_ms: u32,
    /// The one check hunted for, if any.
    pub(crate) focus: Option<CheckId>,
    pub(crate) mix: Mix,
    /// Most distinct findings before drawing stops; 0 for no bound.
    pub(crate) max_findings: u32,
    /// The finding keys a baseline accepts: they do not count toward
    /// `max_findings`.
    pub(crate) accepted: Vec<String>,
    /// Whether every session runs in a process of its own.
    pub(crate) no_share: bool,
}

/// One job's targets: the one its search runs in, and the one its
/// findings are shrunk and confirmed in, beside the search, unless only
/// one instance of the server may run at a time (then inline).
pub(crate) struct Lanes {
    pub(crate) search: ChildTarget,
    pub(crate) shrink: Option<ChildTarget>,
    /// Where the scripts that need a process of their own are drawn, beside
    /// the search, when the plan [`splits`].
    pub(crate) own: Option<ChildTarget>,
}

/// Whether a job's search is split in two: under keep-open, sharing a
/// process, and the full mix, the scripts that need a process of their
/// own are drawn on a lane of their own.
pub(crate) fn splits(plan: &Plan) -> bool {
    plan.policy == Policy::KeepOpen && !plan.no_share && plan.mix == Mix::Full
}

/// What a campaign came to: its findings, each with the sink base of its
/// job and the waits it was seen with, in the order they were first
/// seen; the sessions drawn; the sink requests left out; and the first
/// harness error, which ended the run.
pub(crate) struct Ran {
    pub(crate) found: Vec<Kept>,
    pub(crate) sessions: u32,
    pub(crate) ignored: usize,
    /// The lines written to the servers, by every lane.
    pub(crate) lines: u64,
    pub(crate) error: Option<String>,
}

/// A finding kept: what showed it, the sink base of its job, its waits.
pub(crate) type Kept = (Finding, String, Option<Waits>);

/// What a worker's late findings are kept by: the keeping, whether the
/// run has enough, where a harness error goes, whether the servers are
/// gone, and where those wait whose finding another lane still claims by
/// time alone.
type Settling<'a> = (
    &'a (dyn Fn(Finding, String, Waits) + Sync),
    &'a (dyn Fn() -> bool + Sync),
    &'a (dyn Fn(String) + Sync),
    &'a (dyn Fn() -> bool + Sync),
    &'a (dyn Fn(Finding, String, Waits) + Sync),
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
fn end_overdue(deadline: Instant, running: &AtomicUsize, ended: &AtomicBool, onlooker: &dyn Onlooker) {
    let overdue = deadline + OVERDUE;
    while running.load(Ordering::SeqCst) > 0 && Instant::now() < overdue {
        std::thread::sleep(Duration::from_millis(20));
    }
    if running.load(Ordering::SeqCst) == 0 || onlooker.stopped() {
        return;
    }
    ended.store(true, Ordering::SeqCst);
    let groups = crate::process::end_servers(Duration::from_millis(500));
    onlooker.say(&format!(
        "--duration reached: stopped {} whose sessions were still running {} s later; \
         those unfinished sessions are not judged",
        report::counted(groups, "server process group"),
        OVERDUE.as_secs()
    ));
}

/// Runs the campaign `plan` with a job on each of `lanes`, watched by
/// `onlooker`. The positive control's finding, when it has one, is the
/// run's first (with its sink base).
pub(crate) fn run(plan: &Plan, lanes: Vec<Lanes>, onlooker: &dyn Onlooker, control: Option<(Finding, String)>) -> Ran {
    let policy = plan.policy;
    let stop = AtomicBool::new(false);
    let done = AtomicU32::new(0);
    let known = Known::default();
    known.accept(&plan.accepted);
    known.most(plan.max_findings);
    // The positive control's finding is the run's first, seen once more
    // than the campaign's sessions show it.
    let from_control = control.as_ref().map(|(f, _)| f.distinct());
    let control = control.map(|(f, base)| {
        known.add(&f.distinct());
        let first_seen = Some(Duration::ZERO);
        (Finding { first_seen, policy, ..f }, base, None)
    });
    let found: Mutex<Vec<Kept>> = Mutex::new(control.into_iter().collect());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let ignored = AtomicU32::new(0);
    let cases = plan.cases;
    let started = Instant::now();
    let out_of_time = || plan.duration.is_some_and(|d| started.elapsed() >= d);
    // Set once the servers still running a moment past --duration have
    // been ended under their sessions (see `end_overdue`).
    let ended = AtomicBool::new(false);
    // Whether the servers are gone (a signal, or --duration): what the
    // sessions still running show since is no finding and no harness
    // error, except what was seen before (a finding being shrunk keeps
    // its last failing session).
    let gone = || onlooker.stopped() || ended.load(Ordering::Relaxed);
    // This run's tokens are its own; see `control`.
    let salt_base = fresh_salt();
    let jobs = lanes.len().max(1);
    let enough = || plan.max_findings > 0 && known.len() >= plan.max_findings as usize;
    // A harness error stops the run, shrinking included.
    let failed = AtomicBool::new(false);
    let fail = |e: String| {
        stop.store(true, Ordering::Relaxed);
        failed.store(true, Ordering::Relaxed);
        if !gone() {
            errors.lock().unwrap_or_else(|e| e.into_inner()).push(e);
        }
    };
    for (f, base, waits) in found.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        if let Err(e) = onlooker.record(f, base, *waits, 0) {
            return Ran { found: Vec::new(), sessions: 0, ignored: 0, lines: 0, error: Some(e) };
        }
    }
    // Saved as it comes; once the servers are gone, nothing the sessions
    // still running show is recorded.
    let record = |f: &Finding, base: &str, waits: Waits| {
        if !gone()
            && let Err(e) = onlooker.record(f, base, Some(waits), done.load(Ordering::Relaxed))
        {
            fail(e);
        }
    };
    // Once the servers are gone, only what was saved before: the sessions
    // run since had their servers ended under them.
    let kept = |f: Finding, base: String, waits: Waits| {
        if !gone() || onlooker.saved(&f.distinct()) {
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
    let campaign = Campaign {
        onlooker,
        known: &known,
        record: &record,
        scope: Scope { focus: plan.focus, level: plan.level },
        gone: &gone,
    };
    // Late findings of a claim another lane held by time alone when their
    // own lane settled: kept at the end where that claim was let go.
    let deferred: Mutex<Vec<(Finding, String, Waits)>> = Mutex::new(Vec::new());
    let defer = |f: Finding, base: String, waits: Waits| {
        deferred.lock().unwrap_or_else(|e| e.into_inner()).push((f, base, waits));
    };
    let running = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for (j, Lanes { search, shrink, own }) in lanes.iter().enumerate() {
            let (stop, done, fail, ignored, known) = (&stop, &done, &fail, &ignored, &known);
            let (keep, kept, enough, out_of_time, gone, failed) = (&keep, &kept, &enough, &out_of_time, &gone, &failed);
            let defer = &defer;
            let running = &running;
            let cases = cases / jobs as u32 + u32::from((j as u32) < cases % jobs as u32);
            let cfg = HuntConfig {
                cases,
                seed: plan.seed.wrapping_add(j as u64),
                policy,
                level: plan.level,
                revisions: revision_share(&plan.revisions, j, jobs),
                max_shrink_iters: 200,
                max_shrink_ms: plan.shrink_ms.max(1),
                focus: plan.focus,
                mix: plan.mix,
                salt_base,
                max_findings: plan.max_findings,
                ..HuntConfig::default()
            };
            // --duration bounds the whole run: past it no session is drawn
            // and no shrinking goes on (a finding is then reported as its
            // search session showed it, with its shared process's history
            // where it ran in one).
            let halt = move || stop.load(Ordering::Relaxed) || onlooker.stopped() || out_of_time();
            let (handed, to_shrink) = std::sync::mpsc::channel::<(Handed, Duration, String)>();
            let shrinker = shrink.as_ref().map(|shrinking| {
                let cfg = cfg.clone();
                let running = Running::start(running);
                scope.spawn(move || {
                    let _running = running;
                    let base = shrinking.probes().http_base();
                    let worker = Worker::new(shrinking, (policy, plan.no_share, cfg.seed), base, campaign);
                    // Enough findings stop the drawing, not the shrinking
                    // of those already caught. Its waits are the search's,
                    // whose progress tells their growth.
                    let tick = |p: &Progress| {
                        campaign.tell(p);
                        !(failed.load(Ordering::Relaxed) || onlooker.stopped() || out_of_time())
                    };
                    worker.hunting(None, |run, flight| {
                        let mut shrinker = Shrinker::new(&cfg, &tick, (run, Some(flight)), known);
                        for (caught, cover, search_base) in to_shrink {
                            worker.covering(cover);
                            let shrunk = shrinker.shrink(caught);
                            onlooker.shrunk();
                            match shrunk {
                                Ok(Some(f)) => {
                                    let base = worker.base_of(&f, &search_base).to_owned();
                                    keep(f, base, worker.waits());
                                }
                                Ok(None) => {}
                                // The run ends; what is still handed is
                                // reported as the search caught it.
                                Err(e) => {
                                    fail(told(&e));
                                    shrinker.halt();
                                }
                            }
                        }
                    });
                    settle(&worker, plan, campaign, (keep, enough, fail, gone, defer), started);
                    ignored.fetch_add(shrinking.probes().ignored() as u32, Ordering::Relaxed);
                })
            });
            let inline = shrinker.is_none();
            let handed = shrinker.is_some().then_some(handed);
            // Where the search shares a process, the scripts that need one
            // of their own are drawn by a lane of their own beside it, with
            // its own server: a process start holds up neither.
            let parts = match own.as_ref().filter(|_| splits(plan) && !inline) {
                Some(own) => vec![(search, Part::Shared), (own, Part::Own)],
                None => vec![(search, Part::All)],
            };
            for (target, part) in parts {
                let cfg = HuntConfig { cases: part.share_of(cfg.cases, plan.mix), part, ..cfg.clone() };
                let handed = handed.clone();
                let running = Running::start(running);
                scope.spawn(move || {
                    let _running = running;
                    let base = target.probes().http_base();
                    let worker = match part {
                        // The search keeps the server's time: the
                        // own-process lane runs on what it leaves.
                        Part::Own => Worker::yielding(target, (policy, cfg.seed), base, campaign),
                        _ => Worker::new(target, (policy, plan.no_share, cfg.seed), base, campaign),
                    };
                    if part != Part::Own {
                        worker.warm(&cfg.revisions);
                    }
                    let tick = |p: &Progress| {
                        worker.tell_growth();
                        match p {
                            Progress::Searched(_) => {
                                // A search that shrinks inline has done so by now.
                                if inline {
                                    onlooker.shrunk();
                                }
                                onlooker.searched(done.fetch_add(1, Ordering::Relaxed) + 1)
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
                            let _ = to.send((caught, worker.cover(), worker.base.clone()));
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
                        Err(e) => return fail(told(&e)),
                    }
                    settle(&worker, plan, campaign, (keep, enough, fail, gone, defer), started);
                    ignored.fetch_add(target.probes().ignored() as u32, Ordering::Relaxed);
                });
            }
        }
        if let Some(d) = plan.duration {
            let (running, ended) = (&running, &ended);
            scope.spawn(move || end_overdue(started + d, running, ended, onlooker));
        }
    });
    for (f, base, waits) in deferred.into_inner().unwrap_or_else(|e| e.into_inner()) {
        if !enough() && known.add(&f.distinct()) {
            keep(f, base, waits);
        }
    }
    // An answer whose session had left the ledger was judged nowhere: the
    // run says how many came so.
    let targets = lanes.iter().flat_map(|l| [Some(&l.search), l.shrink.as_ref(), l.own.as_ref()]).flatten();
    let orphans: usize = targets.clone().map(|t| t.ledger().answers_past_horizon()).sum();
    let lines = targets.map(|t| t.ledger().lines_written()).sum();
    if orphans > 0 {
        onlooker.say(&format!(
            "{} by id came after their sessions had left the ledger (past their deadlines, the run going on), \
             judged in no session",
            crate::counted::counted(orphans, "answer")
        ));
    }
    let mut kept = found.into_inner().unwrap_or_else(|e| e.into_inner());
    for (f, ..) in &mut kept {
        let d = f.distinct();
        f.hits = f.hits.max(known.hits(&d) + u32::from(from_control.as_ref() == Some(&d)));
        f.rules = known.rules(f);
        f.witnesses = known.witnesses(f);
    }
    kept.sort_by_key(|(f, ..)| (f.first_seen.is_none(), f.first_seen));
    // A harness error ends the run, but what the jobs found is kept: no
    // finding is lost.
    let error = errors.into_inner().unwrap_or_default().into_iter().next();
    Ran {
        found: kept,
        sessions: done.load(Ordering::Relaxed),
        ignored: ignored.load(Ordering::Relaxed) as usize,
        lines,
        error,
    }
}

/// Keeps the late and state-dependent findings of `worker`'s job, each
/// new one once, cut down unless stopped (then only those saved before the
/// stop are kept: the servers were ended under the sessions since).
fn settle(worker: &Worker, plan: &Plan, campaign: Campaign, settling: Settling, started: Instant) {
    let (keep, enough, fail, gone, defer) = settling;
    // Once the servers are gone, there is no late evidence to wait for.
    let apart = match worker.finish(gone()) {
        Ok(apart) => apart,
        Err(e) => return fail(told(&e)),
    };
    for f in apart {
        let d = f.distinct();
        if enough() {
            continue;
        }
        if campaign.known.add(&d) {
            // --duration bounds this shrinking too: past it, the
            // finding is kept as the fresh session showed it.
            let left = plan.duration.map(|d| d.saturating_sub(started.elapsed()));
            let shrink = !gone() && left.is_none_or(|l| !l.is_zero());
            let f = if shrink { shrink_apart(f, worker.target(), plan, left) } else { f };
            keep(f, worker.base.clone(), worker.waits());
        } else if campaign.known.pending(&d) {
            // Another lane still claims it by time alone, and may let
            // it go: this evidence waits for the run's end.
            defer(f, worker.base.clone(), worker.waits());
        }
    }
}

/// A late finding that a fresh session repeated is cut down as a saved one
/// is, within --shrink-ms and the time `left` of --duration; a
/// state-dependent one is reported whole, with
/// its history, for `portcullis minimize` to cut.
fn shrink_apart(f: Finding, target: &ChildTarget, plan: &Plan, left: Option<Duration>) -> Finding {
    if !f.confirmed {
        return f;
    }
    let budget = Duration::from_millis(u64::from(plan.shrink_ms.max(1)));
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

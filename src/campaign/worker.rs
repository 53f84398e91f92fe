//! One worker of a campaign: a job against a server process of its own,
//! the findings that come apart from the hunt's sessions (late and
//! state-dependent ones), and the runner and flight the hunt (or the lane
//! that shrinks and confirms beside it) runs its sessions through.

use super::scope::Scope;
use super::{Finding, Flight, Handed, Job, Known, Lane, Progress, Runner};
use crate::finding::Distinct;
use crate::process::{ChildTarget, Waits};
use crate::seam::Fault;
use crate::{Policy, Revision, ScriptSpec};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Who watches a campaign: the command line's progress bar, its artifact
/// files, and its signal handler.
pub(crate) trait Onlooker: Sync {
    /// `n` search sessions have been drawn and judged.
    fn searched(&self, n: u32);
    /// A finding is being shrunk.
    fn shrinking(&self, finding: &Distinct, steps: u32, elapsed: Duration);
    /// A finding handed to be shrunk is done with.
    fn shrunk(&self);
    /// A line to show the user.
    fn say(&self, line: &str);
    /// Saves a finding as it comes, with the sink base its script's URLs
    /// were put under, the waits it was seen with, and the sessions drawn
    /// so far; an error stops the run.
    fn record(&self, f: &Finding, base: &str, waits: Option<Waits>, sessions: u32) -> Result<(), String>;
    /// Whether a finding with this key has been saved.
    fn saved(&self, key: &Distinct) -> bool;
    /// Whether the user stopped the run (a signal).
    fn stopped(&self) -> bool;
}

/// Saves a finding as it comes: what showed it, the sink base its script's
/// URLs were put under, and the waits it was seen with.
pub(super) type Record<'a> = dyn Fn(&Finding, &str, Waits) + Sync + 'a;

/// What the workers of a campaign share: who watches its progress, the
/// findings made, where they are saved, and the one check hunted for, if
/// any.
#[derive(Clone, Copy)]
pub(super) struct Campaign<'a> {
    pub(super) onlooker: &'a dyn Onlooker,
    pub(super) known: &'a Known,
    pub(super) record: &'a Record<'a>,
    pub(super) scope: Scope,
    /// Whether the servers are gone (a signal, or past --duration).
    pub(super) gone: &'a (dyn Fn() -> bool + Sync),
}

impl Campaign<'_> {
    /// The line that tells of a finding resting on time alone that no
    /// fresh session repeated: untried where its servers were ended under
    /// the sessions that would have.
    fn unconfirmed(&self, d: &Distinct) -> String {
        if (self.gone)() { untried(d) } else { unconfirmed(d) }
    }

    /// Shows what a hunt (a search or a shrinker) tells of its shrinking
    /// and of the findings it does not report; its search sessions are
    /// counted by the search alone.
    pub(super) fn tell(&self, p: &Progress) {
        match p {
            Progress::Shrinking { finding, steps, elapsed } => self.onlooker.shrinking(finding, *steps, *elapsed),
            Progress::Unconfirmed { finding } => self.onlooker.say(&self.unconfirmed(finding)),
            Progress::Untried { finding } => self.onlooker.say(&untried(finding)),
            Progress::PastBound { finding } => self.onlooker.say(&past_bound(finding)),
            Progress::Searched(_) => {}
        }
    }
}

/// A job, its target and what came apart from its hunt.
pub(super) struct Worker<'a> {
    target: &'a ChildTarget,
    job: RefCell<Job<'a>>,
    /// The canary base its scripts' URLs are put under.
    pub(super) base: String,
    apart: RefCell<Vec<Finding>>,
    /// Each wait's growth told so far.
    shown: RefCell<[Option<Duration>; 2]>,
    campaign: Campaign<'a>,
}

impl<'a> Worker<'a> {
    /// A worker on `target` under `policy`, sharing processes unless
    /// `no_share`, for the hunt seeded with `seed`.
    pub(super) fn new(
        target: &'a ChildTarget,
        (policy, no_share, seed): (Policy, bool, u64),
        base: String,
        campaign: Campaign<'a>,
    ) -> Worker<'a> {
        let job = Job::new(target, policy, !no_share, seed).knowing(campaign.known).judging(campaign.scope);
        Worker::with(target, job, base, campaign)
    }

    /// A worker whose search sessions in processes of their own run at a
    /// lower priority ([`ChildTarget::yielding`]): the own-process lane,
    /// beside a search that keeps the server's time. What it confirms, and
    /// cuts down when the run ends, runs at the usual priority.
    pub(super) fn yielding(
        target: &'a ChildTarget,
        (policy, seed): (Policy, u64),
        base: String,
        campaign: Campaign<'a>,
    ) -> Worker<'a> {
        let job = Job::new(target, policy, false, seed).knowing(campaign.known).judging(campaign.scope);
        Worker::with(target, job.searching_on(target.yielding()), base, campaign)
    }

    fn with(target: &'a ChildTarget, job: Job<'a>, base: String, campaign: Campaign<'a>) -> Worker<'a> {
        let (job, apart, shown) = (RefCell::new(job), RefCell::default(), RefCell::default());
        Worker { target, job, base, apart, shown, campaign }
    }

    /// Starts the shared processes of `revisions` at once, ahead of the
    /// search's first draws ([`Job::warm`]).
    pub(super) fn warm(&self, revisions: &[Revision]) {
        self.job.borrow_mut().warm(revisions);
    }

    /// Its target.
    pub(super) fn target(&self) -> &ChildTarget {
        self.target
    }

    /// The waits now.
    pub(super) fn waits(&self) -> Waits {
        self.target.waits()
    }

    /// Tells each wait that grew, once per growth, with what grew it.
    pub(super) fn tell_growth(&self) {
        let grown = [("quiet wait", self.target.grown_by()), ("answer wait", self.target.answer_grown_by())];
        for (i, (what, grew)) in grown.into_iter().enumerate() {
            if let Some((wait, why)) = grew
                && self.shown.borrow()[i].is_none_or(|w| w < wait)
            {
                self.shown.borrow_mut()[i] = Some(wait);
                self.campaign.onlooker.say(&format!("the {what} grew to {} ms: {why}", wait.as_millis()));
            }
        }
    }

    /// How long after its window evidence has come to this worker's
    /// sessions: a lane confirming the findings of its search covers it.
    pub(super) fn cover(&self) -> Duration {
        self.job.borrow().cover()
    }

    /// Covers, in every fresh session, evidence that came `late` after a
    /// window of the search whose findings this worker confirms.
    pub(super) fn covering(&self, late: Duration) {
        self.job.borrow_mut().covering(late);
    }

    /// Whether the run reports `f`: of its check, at its level.
    fn focused(&self, f: &Finding) -> bool {
        self.campaign.scope.admits(f.check, f.level())
    }

    fn tell_unconfirmed(&self) {
        for d in self.job.borrow_mut().take_unconfirmed() {
            self.campaign.onlooker.say(&self.campaign.unconfirmed(&d));
        }
    }

    /// Takes what came apart from the hunt's sessions so far, saving each
    /// new one as it comes.
    fn take_apart(&self) {
        self.tell_unconfirmed();
        for f in self.job.borrow_mut().take_found() {
            if self.focused(&f) && !self.campaign.known.contains(&f.distinct()) {
                (self.campaign.record)(&f, &self.base, self.waits());
            }
            self.apart.borrow_mut().push(f);
        }
    }

    /// Calls `hunt` with the runner and the flight of this worker's job;
    /// `apart` is where the search hands what it catches, if anywhere.
    pub(super) fn hunting<R>(&self, apart: Option<&dyn Fn(Handed)>, hunt: impl FnOnce(&Runner, &Flight) -> R) -> R {
        let job = &self.job;
        let run = |spec: &ScriptSpec, salt: u32, lane: Lane| {
            let ran = job.borrow_mut().session(spec, salt, lane);
            self.take_apart();
            ran
        };
        // The shrinking rounds of a finding that shows only at a deadline
        // run in flight, where the job can.
        let takes = |d: &Distinct, spec: &ScriptSpec| job.borrow().flies(d, spec);
        let together = |round: &[(ScriptSpec, u32)], d: &Distinct, until: Option<Instant>| {
            let ran = job.borrow_mut().flight(round, d, until);
            self.take_apart();
            ran
        };
        let history = |salt: u32| job.borrow().history_of(salt);
        let written = |spec: &ScriptSpec| job.borrow().written(spec);
        let flight = Flight { takes: &takes, run: &together, history: &history, written: &written, apart };
        hunt(&run, &flight)
    }

    /// The findings that came apart from the hunt, each focused one once:
    /// unless the run was stopped (its servers were then ended under the
    /// sessions still running), the job is finished first, its late
    /// evidence waited for.
    pub(super) fn finish(&self, stopped: bool) -> Result<Vec<Finding>, Fault> {
        let mut apart = self.apart.take();
        apart.extend(self.job.borrow_mut().take_found());
        if !stopped {
            apart.extend(self.job.borrow_mut().finish()?);
            self.tell_unconfirmed();
        }
        Ok(apart.into_iter().filter(|f| self.focused(f)).collect())
    }

    /// The base of the sink the script of `f` put its URLs under: this
    /// worker's where the script names it, else `other`'s (a lane's
    /// finding as its search's session showed it).
    pub(super) fn base_of<'b>(&'b self, f: &Finding, other: &'b str) -> &'b str {
        let stdin = f.script.stdin();
        let base = self.base.as_bytes();
        // Its port whole: not the start of a longer one.
        let at = |i: usize| stdin[i..].starts_with(base) && !stdin.get(i + base.len()).is_some_and(u8::is_ascii_digit);
        if (0..stdin.len()).any(at) { &self.base } else { other }
    }
}

/// The line that tells of a finding that rests on time alone and that the
/// run stopped before confirming.
fn untried(d: &Distinct) -> String {
    format!(
        "{d} rests on time alone in one session and the run stopped before a fresh session could confirm it: \
         that session is not reported (another that shows it may be)"
    )
}

/// The line that tells of a finding that rests on time alone, confirmed
/// once other jobs had made as many findings as `--max-findings` allows.
fn past_bound(d: &Distinct) -> String {
    format!(
        "{d} rests on time alone and was confirmed after the run had made as many findings as \
         --max-findings allows: it is not reported (raise --max-findings to keep it)"
    )
}

/// The line that tells of a finding that rests on time alone and that no
/// fresh session with waits four times as long repeated.
fn unconfirmed(d: &Distinct) -> String {
    format!(
        "{d} rests on time alone in one session and no fresh session with waits four times as long repeated it: \
         that session is not reported (another that shows it may be)"
    )
}

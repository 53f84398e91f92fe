//! Late findings confirmed on a thread of their own: a fresh session per
//! finding, while the job's search goes on in its persistent process. A
//! missing answer is confirmed by waiting twice its deadline, which the
//! search need not wait for.

use super::verdict::{record, run_of};
use super::{SessionRun, fresh_salt};
use crate::check::Violation;
use crate::finding::{Distinct, Finding};
use crate::process::{ChildTarget, Cover, Entry};
use crate::protocol::Policy;
use crate::seam::{Fault, Session};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

/// What a confirmed or unconfirmed late finding is told about its job.
#[derive(Clone, Copy)]
pub(crate) struct Teller {
    pub(crate) policy: Policy,
    pub(crate) seed: u64,
}

/// One late finding to confirm: the session that showed it and its
/// violations then, its key, how many times as long the fresh session
/// waits, and how many sessions the job had run when it was seen, and how
/// long into the job that was.
pub(crate) struct Task {
    pub(crate) entry: Entry,
    pub(crate) violations: Vec<Violation>,
    pub(crate) key: Distinct,
    pub(crate) patience: u32,
    pub(crate) seen: (u32, Duration),
}

/// Runs the confirming session of `task` against `target`: the finding
/// as that fresh session showed it where it repeats, else as it was seen,
/// unless it rests on time alone (no answer, effect or exit within a
/// wait): such a finding no session with every wait four times as long repeats is none
/// (`Err` with its key).
pub(crate) fn confirm(target: &ChildTarget, teller: Teller, task: Task) -> Result<Confirmed, Fault> {
    let Task { entry, violations, key, patience, seen } = task;
    let salt = fresh_salt();
    let script = entry.spec.render(&target.catalogue, salt);
    let session = Session { policy: teller.policy, revision: entry.spec.revision, salt };
    let late = entry.late.unwrap_or_default();
    let cover = Cover { running: late.max(entry.came_after.unwrap_or_default()), exited: late };
    let obs = target.run_patiently(&session, &script, patience, cover)?;
    let fresh = record(target.ledger(), Entry::new(session, &entry.spec, script, obs));
    if key.shown_beside_crash(&fresh.2, &fresh.0, &fresh.1) {
        let session = Session { salt, ..entry.session };
        let shown = Entry { session, history: Default::default(), ..entry };
        return Ok(Ok(finding(shown, fresh, &key, true, teller, seen)));
    }
    match key.rests_on_time(&violations, &entry.script, &entry.obs) {
        true => Ok(Err(key)),
        false => {
            let run = run_of(&entry, violations);
            Ok(Ok(finding(entry, run, &key, false, teller, seen)))
        }
    }
}

/// A late finding, confirmed or kept as seen; or the key of one that
/// rests on time alone and that no session with every wait four times as long repeated.
pub(crate) type Confirmed = Result<Finding, Distinct>;

/// The finding `key` as `run` shows it, a run of `entry`'s spec (`entry`
/// itself, or a fresh session of it).
pub(crate) fn finding(
    entry: Entry,
    run: SessionRun,
    key: &Distinct,
    confirmed: bool,
    teller: Teller,
    (sessions, after): (u32, Duration),
) -> Finding {
    let shown = Finding::shown(key, entry.spec, run, entry.session.salt, (teller.seed, teller.policy));
    let (late, history) = (entry.late, entry.history.scripts());
    Finding { cases_until_caught: sessions, first_seen: Some(after), late, history, confirmed, ..shown }
}

/// A thread confirming late findings one after another.
pub(crate) struct Confirmer {
    tasks: Option<Sender<Task>>,
    done: Receiver<Result<Confirmed, Fault>>,
    worker: Option<JoinHandle<()>>,
    /// Set when the job goes without finishing (an error, a signal): the
    /// tasks still queued are skipped.
    dropped: Arc<AtomicBool>,
}

impl Confirmer {
    /// A thread confirming against `target`, whose processes may run
    /// beside the job's.
    pub(crate) fn start(target: &ChildTarget, teller: Teller) -> Confirmer {
        let (tasks, todo) = channel::<Task>();
        let (tell, done) = channel();
        let target = target.clone();
        let dropped = Arc::new(AtomicBool::new(false));
        let skip = dropped.clone();
        let worker = std::thread::spawn(move || {
            for task in todo {
                if skip.load(Ordering::Relaxed) || tell.send(confirm(&target, teller, task)).is_err() {
                    break;
                }
            }
        });
        Confirmer { tasks: Some(tasks), done, worker: Some(worker), dropped }
    }

    /// Queues `task`.
    pub(crate) fn push(&self, task: Task) {
        if let Some(tasks) = &self.tasks {
            let _ = tasks.send(task);
        }
    }

    /// The findings confirmed (or not) so far.
    pub(crate) fn ready(&self) -> Vec<Result<Confirmed, Fault>> {
        self.done.try_iter().collect()
    }

    /// Waits for every task queued, and returns what they came to.
    pub(crate) fn finish(&mut self) -> Vec<Result<Confirmed, Fault>> {
        self.tasks = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
        self.done.try_iter().collect()
    }
}

impl Drop for Confirmer {
    /// Skips what is still queued, and waits for the session under way.
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
        self.tasks = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

//! Keeping each parallel job on a core of its own.
//!
//! A session is a chain of hand-offs: the harness writes, the child reads
//! and acts, the probe records, the child answers, the harness reads. Left
//! to the scheduler, two jobs' chains keep waking each other's threads on
//! the other core, each wake-up a cross-core interrupt, and cores sit idle
//! while both chains wait. A job whose threads and processes all keep to
//! one core hands off locally instead, as AFL++ binds each fuzzer instance
//! to a free core.
//!
//! Work off the chain is not pinned: a process started ahead of its use
//! (a spare, a replacement) starts on whichever core is free, so a server
//! slow to start does not crowd its job's core; it joins the job's core
//! when it is taken into use. The harness threads that serve it keep to
//! the job's core throughout.

use rustix::thread::{CpuSet, Pid, sched_getaffinity, sched_setaffinity};
use std::cell::Cell;

thread_local! {
    /// The cores the thread could run on before it was pinned.
    static BEFORE_PIN: Cell<Option<CpuSet>> = const { Cell::new(None) };
}

/// Pins the calling thread to one of the cores this process may run on:
/// the `job`-th, counting round. Threads and processes it starts from then
/// on inherit the pin. Returns the core; `None` (and nothing changed) when
/// the process may run on one core only, or the system refused.
pub fn pin_job(job: usize) -> Option<usize> {
    let allowed = sched_getaffinity(None).ok()?;
    let cores: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| allowed.is_set(c)).collect();
    if cores.len() < 2 {
        return None;
    }
    let core = cores[job % cores.len()];
    let mut one = CpuSet::new();
    one.set(core);
    sched_setaffinity(None, &one).ok()?;
    BEFORE_PIN.set(Some(allowed));
    Some(core)
}

/// The cores the calling thread's job may use when unpinned: what a thread
/// or process started for work off the chain should run on. `None` when the
/// thread is not pinned.
pub(crate) fn unpinned_cores() -> Option<CpuSet> {
    BEFORE_PIN.get()
}

/// How many cores the calling thread's job may use when unpinned (its
/// affinity, as for pinning; a pinned thread's own affinity is one core).
pub(crate) fn job_cores() -> usize {
    let cores = unpinned_cores().or_else(|| sched_getaffinity(None).ok());
    cores.map_or(1, |c| c.count() as usize)
}

/// In a thread started by a pinned job's thread (and so pinned too), takes
/// on the job's [`unpinned_cores`], so work off the chain started from it
/// is unpinned too.
pub(crate) fn adopt(cores: Option<CpuSet>) {
    BEFORE_PIN.set(cores);
}

/// Pins the process `pid` (its main thread, and so the threads it starts
/// from then on) to the calling thread's core, if the thread is pinned.
pub(crate) fn join_chain(pid: u32) {
    if unpinned_cores().is_none() {
        return;
    }
    let (Ok(mine), Some(pid)) = (sched_getaffinity(None), Pid::from_raw(pid as i32)) else { return };
    let _ = sched_setaffinity(Some(pid), &mine);
}

/// Lets the process `pid`, just started by the calling thread (and so
/// pinned with it), run on whichever of the job's cores is free, if the
/// thread is pinned. The harness thread keeps its core throughout: unpinning
/// it for the spawn instead would let the scheduler move it off its core and
/// back. Threads the process started before this call keep its first core.
pub(crate) fn leave_chain(pid: u32) {
    let (Some(all), Some(pid)) = (unpinned_cores(), Pid::from_raw(pid as i32)) else { return };
    let _ = sched_setaffinity(Some(pid), &all);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `Cpus_allowed_list` of a `/proc/PID/status` text.
    fn cores_of(status: &str) -> String {
        let line = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")).expect("a Linux status file");
        line.split_whitespace().nth(1).unwrap_or_default().to_owned()
    }

    #[test]
    fn a_pinned_thread_and_what_it_starts_keep_to_one_allowed_core() {
        let allowed = sched_getaffinity(None).expect("affinity");
        std::thread::spawn(move || {
            let Some(core) = pin_job(3) else {
                assert!(allowed.count() < 2, "pinning failed although several cores are allowed");
                return;
            };
            assert!(allowed.is_set(core));
            let mine = sched_getaffinity(None).expect("affinity");
            assert_eq!((mine.count(), mine.is_set(core)), (1, true));
            // The job still counts every core it could use unpinned.
            assert_eq!(job_cores(), allowed.count() as usize);
            // A thread it starts inherits the pin.
            let inherited = std::thread::spawn(|| sched_getaffinity(None).expect("affinity")).join().unwrap();
            assert_eq!((inherited.count(), inherited.is_set(core)), (1, true));
            // So does a process it starts.
            let status = std::process::Command::new("cat").arg("/proc/self/status").output().expect("cat runs");
            assert_eq!(cores_of(&String::from_utf8_lossy(&status.stdout)), core.to_string());
            // A process that leaves the chain runs on every allowed core,
            // the thread stays pinned, and the process joins the thread's
            // core when asked.
            let mut ahead = std::process::Command::new("sleep").arg("5").spawn().expect("sleep");
            leave_chain(ahead.id());
            assert_eq!(sched_getaffinity(None).expect("affinity").count(), 1);
            let status = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
            assert_ne!(cores_of(&status(ahead.id())), core.to_string());
            join_chain(ahead.id());
            assert_eq!(cores_of(&status(ahead.id())), core.to_string());
            let _ = ahead.kill();
            let _ = ahead.wait();
        })
        .join()
        .unwrap();
        // The calling thread of the test was left alone.
        assert_eq!(sched_getaffinity(None).expect("affinity").count(), allowed.count());
        assert_eq!(job_cores(), allowed.count() as usize);
    }
}

//! Keeping each parallel job on a core of its own.
//!
//! A session is a chain of hand-offs: the harness writes, the child reads
//! and acts, the probe records, the child answers, the harness reads. Left
//! to the scheduler, two jobs' chains keep waking each other's threads on
//! the other core, each wake-up a cross-core interrupt, and cores sit idle
//! while both chains wait. A job whose threads and processes all keep to
//! one core hands off locally instead, as AFL++ binds each fuzzer instance
//! to a free core.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

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
    Some(core)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            // A thread it starts inherits the pin.
            let inherited = std::thread::spawn(|| sched_getaffinity(None).expect("affinity")).join().unwrap();
            assert_eq!((inherited.count(), inherited.is_set(core)), (1, true));
            // So does a process it starts.
            let status = std::process::Command::new("cat").arg("/proc/self/status").output().expect("cat runs");
            let status = String::from_utf8_lossy(&status.stdout).into_owned();
            let line = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")).expect("a Linux status file");
            assert_eq!(line.split_whitespace().nth(1), Some(core.to_string().as_str()));
        })
        .join()
        .unwrap();
        // The calling thread of the test was left alone.
        assert_eq!(sched_getaffinity(None).expect("affinity").count(), allowed.count());
    }
}

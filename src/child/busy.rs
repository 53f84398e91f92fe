//! Whether a child is still at work on the CPU.
//!
//! The exit grace is how long a server may take to exit, but a server that
//! shares two cores with the harness's jobs and with processes starting for
//! them gets less of a core than it would alone: an interpreter tearing
//! itself down at EOF may then take twice its usual time. A server still
//! busy when its grace runs out is at work, not waiting for anything, so it
//! is waited for while it stays busy, up to the timeout. One that does not
//! exit is one that waits (blocked on a read, a lock, a thread), which uses
//! no CPU, or one that keeps busy past the timeout.

use std::time::{Duration, Instant};

/// How recently the child must have used CPU time to count as busy: the
/// kernel counts it in ticks of 10 ms, and a process sharing a core may
/// wait a few of them for its turn.
const RECENT: Duration = Duration::from_millis(100);

/// CPU time a process has used, sampled.
#[derive(Debug)]
pub(crate) struct Busy {
    pid: u32,
    ticks: Option<u64>,
    grew: Option<Instant>,
}

impl Busy {
    /// Starts watching `pid`, from its CPU time now.
    pub(crate) fn watch(pid: u32) -> Busy {
        Busy { pid, ticks: cpu_ticks(pid), grew: None }
    }

    /// Whether the process's CPU time has grown within [`RECENT`], as far
    /// as samples show (each call takes one). A process whose CPU time
    /// cannot be read (gone, or not Linux) is not busy.
    pub(crate) fn busy(&mut self) -> bool {
        let Some(now) = cpu_ticks(self.pid) else { return false };
        if self.ticks.is_some_and(|before| now > before) {
            self.grew = Some(Instant::now());
        }
        self.ticks = Some(now);
        self.grew.is_some_and(|at| at.elapsed() < RECENT)
    }
}

/// User and system CPU time of `pid` in clock ticks, from `/proc`.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from
    // after its closing one, where field 3 (the state) comes first.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    let (utime, stime) = (fields.get(11)?.parse::<u64>().ok()?, fields.get(12)?.parse::<u64>().ok()?);
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_spinning_is_busy_and_one_sleeping_is_not() {
        let mut me = Busy::watch(std::process::id());
        let spin_until = Instant::now() + Duration::from_millis(60);
        let mut x = 0u64;
        while Instant::now() < spin_until {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0 && me.busy(), "60 ms of work shows");
        let mut sleeper = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let mut idle = Busy::watch(sleeper.id());
        std::thread::sleep(Duration::from_millis(30));
        assert!(!idle.busy(), "a process asleep uses no CPU");
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert!(!Busy::watch(u32::MAX).busy(), "no such process");
    }
}

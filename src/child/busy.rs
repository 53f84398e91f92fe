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
//!
//! The CPU time counted is the whole process group's: a launcher (`npx`,
//! `uvx`, a shell) waits, idle, for the server it started, which does the
//! work of exiting.

use super::members::{member_of, members};
use std::time::{Duration, Instant};

/// How recently the child must have used CPU time to count as busy: the
/// kernel counts it in ticks of 10 ms, and a process sharing a core may
/// wait a few of them for its turn.
const RECENT: Duration = Duration::from_millis(100);

/// Samples closer together than this reuse the last: the kernel counts
/// CPU time in ticks of 10 ms, and each sample reads every process's stat.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// CPU time a process group has used, sampled from the first look on.
#[derive(Debug)]
pub(crate) struct Busy {
    pgid: u32,
    /// Only the leader's CPU time counts.
    leader: bool,
    ticks: Option<u64>,
    grew: Option<Instant>,
    sampled: Option<Instant>,
}

impl Busy {
    /// Watches the group led by `pgid`. Nothing is read until the first
    /// look ([`Busy::busy`]): most children exit within their grace, and a
    /// sample reads every process's stat.
    pub(crate) fn watch(pgid: u32) -> Busy {
        Busy { pgid, leader: false, ticks: None, grew: None, sampled: None }
    }

    /// Watches the leader of group `pgid` alone, from a sample taken now,
    /// which does not count as growth: it is busy only once its CPU time has
    /// grown since. For a wait that most often ends without a look, where
    /// reading one process's stat costs little and a scan of every one
    /// would cost each wait; a launcher that waits for its server shows
    /// no growth.
    pub(crate) fn watch_leader_from_now(pgid: u32) -> Busy {
        let ticks = leader_ticks(pgid);
        Busy { pgid, leader: true, ticks, grew: None, sampled: Some(Instant::now()) }
    }

    /// Whether the group's CPU time has grown within [`RECENT`], as far as
    /// samples show (a call takes one, unless the last was within
    /// [`SAMPLE_EVERY`]). From the first look, the group counts as busy
    /// until [`RECENT`] has passed without its CPU time growing. A group
    /// whose CPU time cannot be read (gone, or not Linux) is not busy.
    pub(crate) fn busy(&mut self) -> bool {
        if self.sampled.is_none_or(|at| at.elapsed() >= SAMPLE_EVERY) {
            let first = self.sampled.is_none();
            self.sampled = Some(Instant::now());
            let now = if self.leader { leader_ticks(self.pgid) } else { group_ticks(self.pgid) };
            // A member that exits takes its time out of the sum: only growth
            // counts, from whatever the sum is now.
            let grown = matches!((self.ticks, now), (Some(before), Some(now)) if now > before);
            if first || grown {
                self.grew = Some(Instant::now());
            }
            self.ticks = now;
        }
        self.ticks.is_some() && self.grew.is_some_and(|at| at.elapsed() < RECENT)
    }
}

/// User and system CPU time of the leader of group `pgid`, in clock ticks.
fn leader_ticks(pgid: u32) -> Option<u64> {
    member_of(pgid, pgid).map(|m| m.ticks)
}

/// User and system CPU time of every process in group `pgid`, in clock
/// ticks; `None` when it has none (or `/proc` cannot be read).
fn group_ticks(pgid: u32) -> Option<u64> {
    let members = members(pgid)?;
    (!members.is_empty()).then(|| members.iter().map(|m| m.ticks).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    /// `script` under `sh`, leading a process group of its own.
    fn group(script: &str) -> Child {
        Command::new("sh").args(["-c", script]).process_group(0).spawn().unwrap()
    }

    /// Whether the group counts as busy after 200 ms of looks, 20 ms apart.
    fn busy_after_a_while(child: &Child) -> bool {
        looked_at(Busy::watch(child.id()))
    }

    /// Whether `watch` counts its group as busy after 200 ms of looks.
    fn looked_at(mut watch: Busy) -> bool {
        std::thread::sleep(Duration::from_millis(50));
        for _ in 0..10 {
            watch.busy();
            std::thread::sleep(Duration::from_millis(20));
        }
        watch.busy()
    }

    #[test]
    fn a_group_at_work_is_busy_even_when_its_leader_waits_and_one_asleep_is_not() {
        // The second group's leader waits for a child of its own, as a
        // launcher waits for the server it started.
        let spin = "while :; do :; done";
        let mut groups = [group(spin), group(&format!("sh -c '{spin}'; true")), group("sleep 5")];
        let busy: Vec<bool> = groups.iter().map(busy_after_a_while).collect();
        for g in &mut groups {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(g.id() as i32), nix::sys::signal::SIGKILL);
            let _ = g.wait();
        }
        assert_eq!(busy, [true, true, false], "spinning, led by the spinner or by a shell waiting for it; asleep");
        assert!(!Busy::watch(u32::MAX).busy(), "no such group");
    }

    #[test]
    fn a_leader_watched_from_now_is_busy_only_once_its_own_time_grows() {
        let spin = "while :; do :; done";
        let mut groups = [group(spin), group(&format!("sh -c '{spin}'; true")), group("sleep 5")];
        let busy: Vec<bool> = groups.iter().map(|g| looked_at(Busy::watch_leader_from_now(g.id()))).collect();
        for g in &mut groups {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(g.id() as i32), nix::sys::signal::SIGKILL);
            let _ = g.wait();
        }
        assert_eq!(busy, [true, false, false], "a spinning leader; a shell waiting for a spinner; asleep");
        let mut idle = group("sleep 5");
        std::thread::sleep(Duration::from_millis(50));
        assert!(!Busy::watch_leader_from_now(idle.id()).busy(), "its first look is not growth");
        let _ = idle.kill();
        let _ = idle.wait();
    }
}

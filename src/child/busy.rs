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

use super::members::{Member, member_of, members};
use std::time::{Duration, Instant};

/// How recently the child must have used CPU time to count as busy: the
/// kernel counts it in ticks of 10 ms, and a process sharing a core may
/// wait a few of them for its turn.
const RECENT: Duration = Duration::from_millis(100);

/// Samples closer together than this reuse the last: the kernel counts
/// CPU time in ticks of 10 ms, and each sample reads every process's stat.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// How long a watch started from now counts its processes as busy without
/// seeing their CPU time grow: counted in ticks of 10 ms, it may take a
/// server that shares a core with others a few of them to show growth.
const FIRST_SHOW: Duration = Duration::from_millis(50);

/// CPU time a process group has used, sampled from the first look on.
#[derive(Debug)]
pub(crate) struct Busy {
    pgid: u32,
    /// Only these processes' CPU time counts, when set; else every member's.
    only: Option<Vec<u32>>,
    ticks: Option<u64>,
    grew: Option<Instant>,
    sampled: Option<Instant>,
    /// Until when a watch started from now counts as busy unseen.
    unseen_until: Option<Instant>,
}

impl Busy {
    /// Watches the group led by `pgid`. Nothing is read until the first
    /// look ([`Busy::busy`]): most children exit within their grace, and a
    /// sample reads every process's stat.
    pub(crate) fn watch(pgid: u32) -> Busy {
        Busy { pgid, only: None, ticks: None, grew: None, sampled: None, unseen_until: None }
    }

    /// Watches the processes `pids` of group `pgid` (the leader and those
    /// it started, [`super::members::subtree`]: a launcher's server too),
    /// from a sample taken now, which does not count as growth: it is busy
    /// for [`FIRST_SHOW`], then only once their CPU time has grown within
    /// [`RECENT`]. For a wait that most often ends without a look, where
    /// reading a few processes' stat costs little and a scan of every one
    /// on the machine would cost each wait.
    pub(crate) fn watch_from_now(pgid: u32, pids: &[u32]) -> Busy {
        let only = pids.to_vec();
        let ticks = ticks_of(&only, pgid);
        let now = Instant::now();
        Busy { pgid, only: Some(only), ticks, grew: None, sampled: Some(now), unseen_until: Some(now + FIRST_SHOW) }
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
            let now = match &self.only {
                Some(pids) => ticks_of(pids, self.pgid),
                None => group_ticks(self.pgid),
            };
            // A member that exits takes its time out of the sum: only growth
            // counts, from whatever the sum is now.
            let grown = matches!((self.ticks, now), (Some(before), Some(now)) if now > before);
            if first || grown {
                self.grew = Some(Instant::now());
            }
            self.ticks = now;
        }
        let unseen = self.unseen_until.is_some_and(|until| Instant::now() < until);
        self.ticks.is_some() && (unseen || self.grew.is_some_and(|at| at.elapsed() < RECENT))
    }
}

/// User and system CPU time of those of `pids` still in group `pgid`, in
/// clock ticks; `None` when none is.
fn ticks_of(pids: &[u32], pgid: u32) -> Option<u64> {
    total(pids.iter().filter_map(|&p| member_of(p, pgid)))
}

/// User and system CPU time of every process in group `pgid`, in clock
/// ticks; `None` when it has none (or `/proc` cannot be read).
fn group_ticks(pgid: u32) -> Option<u64> {
    total(members(pgid)?)
}

/// The CPU time of `members` together; `None` when there are none.
fn total(members: impl IntoIterator<Item = Member>) -> Option<u64> {
    members.into_iter().map(|m| m.ticks).reduce(|a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::members::subtree;
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
    fn a_server_watched_from_now_is_busy_only_once_its_time_grows_even_behind_a_launcher() {
        let spin = "while :; do :; done";
        // A shell waiting for a spinner it started, as `uvx` or `npx` waits
        // for the server.
        let launched = format!("sh -c '{spin}'; true");
        let mut groups = [group(spin), group(&launched), group("sleep 5")];
        // Time for each shell to start what it starts.
        std::thread::sleep(Duration::from_millis(100));
        let busy: Vec<bool> =
            groups.iter().map(|g| looked_at(Busy::watch_from_now(g.id(), &subtree(g.id(), g.id())))).collect();
        for g in &mut groups {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(g.id() as i32), nix::sys::signal::SIGKILL);
            let _ = g.wait();
        }
        assert_eq!(busy, [true, true, false], "a spinning leader; a shell waiting for a spinner; asleep");
        let mut idle = group("sleep 5");
        std::thread::sleep(Duration::from_millis(50));
        let mut watch = Busy::watch_from_now(idle.id(), &[idle.id()]);
        assert!(watch.busy(), "busy unseen at first");
        std::thread::sleep(FIRST_SHOW);
        assert!(!watch.busy(), "its first look is not growth");
        let _ = idle.kill();
        let _ = idle.wait();
    }
}

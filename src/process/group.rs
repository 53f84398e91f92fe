//! Ending a server's whole process group: SIGTERM, then SIGKILL, each with a
//! bounded wait, so that nothing a session started is left behind. Linux:
//! `/proc` tells a zombie from a live process, and a pidfd wakes a wait at
//! the exit.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{PidfdFlags, pidfd_open};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Waits for `child` to exit, up to `wait`, woken by the exit itself.
pub(crate) fn wait_for(child: &mut Child, wait: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + wait;
    // Until it is reaped, which only `child` does, the pid stays the child's.
    let pidfd =
        rustix::process::Pid::from_raw(child.id() as i32).and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        match &pidfd {
            Some(fd) => {
                let timeout = Timespec::try_from(left).unwrap_or(Timespec { tv_sec: 1, tv_nsec: 0 });
                let _ = poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&timeout));
            }
            None => std::thread::sleep(left.min(Duration::from_millis(2))),
        }
    }
}

/// The nice value a yielding server's process group is given (not added
/// to the harness's own): on a busy machine it runs on the time the
/// others leave.
const YIELDING: i32 = 10;

/// Lowers the priority of `child`'s process group (the child and all it
/// starts from now on) to [`YIELDING`]. Best effort: a group that cannot
/// be lowered runs as it is.
pub(crate) fn lower_priority(child: &Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::setpriority_pgrp(Some(pid), YIELDING);
    }
}

/// Whether process `pid` is in group `pgid` and has not exited: a zombie
/// waits for its parent (for an orphan, the machine's init, which in a
/// container may reap late or never) and does not count.
fn live_member(pid: u32, pgid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // The command name may hold spaces and parentheses: fields count from
    // after its closing one, the state (field 3) first, the group (5) third.
    let Some(rest) = stat.rfind(')').and_then(|at| stat.get(at + 1..)) else { return false };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
        && fields.first().is_some_and(|s| !matches!(*s, "Z" | "X"))
}

/// Whether any process of group `pgid` is alive.
pub(crate) fn group_alive(pgid: u32) -> bool {
    if killpg(Pid::from_raw(pgid as i32), None).is_err() {
        return false;
    }
    let Ok(procs) = std::fs::read_dir("/proc") else { return true };
    procs.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).any(|pid| live_member(pid, pgid))
}

/// Waits for group `pgid` to empty, up to `wait`.
fn group_gone(pgid: u32, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while group_alive(pgid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

/// Ends the group led by `child`, whose stdin is closed: waits `own` for
/// the leader to exit on its own, then sends SIGTERM to the group, waits
/// `grace`, then SIGKILL. Returns the leader's status when it was reaped.
pub(crate) fn end(child: &mut Child, own: Duration, grace: Duration) -> Option<ExitStatus> {
    let pgid = child.id();
    let mut status = wait_for(child, own);
    if status.is_none() || group_alive(pgid) {
        let _ = killpg(Pid::from_raw(pgid as i32), Signal::SIGTERM);
        status = status.or_else(|| wait_for(child, grace));
        if !group_gone(pgid, grace) || status.is_none() {
            let _ = killpg(Pid::from_raw(pgid as i32), Signal::SIGKILL);
            status = status.or_else(|| wait_for(child, Duration::from_secs(5)));
            group_gone(pgid, Duration::from_secs(5));
        }
    }
    status
}

/// Ends groups whose leaders are not ours to reap here: SIGTERM to each,
/// up to `grace` for them to go, then SIGKILL to those left.
pub(crate) fn end_groups(groups: &[u32], grace: Duration) {
    for g in groups {
        let _ = killpg(Pid::from_raw(*g as i32), Signal::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    for g in groups {
        if !group_gone(*g, deadline.saturating_duration_since(Instant::now())) {
            let _ = killpg(Pid::from_raw(*g as i32), Signal::SIGKILL);
        }
    }
    for g in groups {
        group_gone(*g, Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_group_of_zombies_is_not_alive_and_a_live_one_is_ended() {
        let mut child = std::process::Command::new("true").process_group(0).spawn().unwrap();
        let stat = format!("/proc/{}/stat", child.id());
        let exited = (0..500).any(|_| {
            std::thread::sleep(Duration::from_millis(2));
            std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z "))
        });
        assert!(exited, "the leader exits within a second");
        assert!(killpg(Pid::from_raw(child.id() as i32), None).is_ok(), "kill(0) still finds the zombie");
        assert!(!group_alive(child.id()), "but it is not alive");
        let _ = child.wait();
        let mut sleeper = std::process::Command::new("sleep").arg("5").process_group(0).spawn().unwrap();
        assert!(group_alive(sleeper.id()), "a sleeping group is");
        let grace = Duration::from_millis(50);
        assert!(end(&mut sleeper, grace, grace).is_some(), "and is ended");
        assert!(!group_alive(sleeper.id()));
    }
}

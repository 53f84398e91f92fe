//! Ending a child's whole process group: stdin is already closed; then
//! SIGTERM, then SIGKILL, each with a bounded wait, so nothing the session
//! started is left behind.

use super::members::{Member, members};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{PidfdFlags, pidfd_open};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Waits for `child` to exit, up to `wait`. Woken by the exit itself (a
/// pidfd) where the kernel has them; else looks every 2 ms.
pub fn wait_for(child: &mut Child, wait: Duration) -> Option<ExitStatus> {
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

/// Whether any process of group `pgid` is alive. A zombie is not: it has
/// exited, and an orphan one waits for the machine's init to reap it, which
/// in a container may come late or never.
fn group_alive(pgid: Pid) -> bool {
    let live = |members: Vec<Member>| members.iter().any(|m| !m.zombie);
    killpg(pgid, None).is_ok() && u32::try_from(pgid.as_raw()).ok().and_then(members).is_none_or(live)
}

/// Whether any process of `child`'s group is still alive (a reaped leader
/// no longer counts).
pub fn alive(child: &Child) -> bool {
    group_alive(Pid::from_raw(child.id() as i32))
}

/// Waits for the group to empty, up to `wait`.
fn group_gone(pgid: Pid, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while group_alive(pgid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

/// Ends the group led by `child`: waits `own` for the leader to exit on its
/// own (what is left of its grace since its stdin closed), then sends
/// SIGTERM to the group, waits `grace`, then SIGKILL. Returns the leader's
/// status when it could be reaped.
pub fn end(child: &mut Child, own: Duration, grace: Duration) -> Option<ExitStatus> {
    let pgid = Pid::from_raw(child.id() as i32);
    let mut status = wait_for(child, own);
    if status.is_none() || group_alive(pgid) {
        let _ = killpg(pgid, Signal::SIGTERM);
        status = status.or_else(|| wait_for(child, grace));
        if !group_gone(pgid, grace) || status.is_none() {
            let _ = killpg(pgid, Signal::SIGKILL);
            status = status.or_else(|| wait_for(child, Duration::from_secs(5)));
            group_gone(pgid, Duration::from_secs(5));
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_group_of_zombies_is_not_alive() {
        // A leader that has exited but is not reaped yet is a zombie, as an
        // orphan is until init reaps it.
        let mut child = std::process::Command::new("true").process_group(0).spawn().unwrap();
        let stat = format!("/proc/{}/stat", child.id());
        let exited = (0..500).any(|_| {
            std::thread::sleep(Duration::from_millis(2));
            std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z "))
        });
        assert!(exited, "the leader exits within a second");
        assert!(killpg(Pid::from_raw(child.id() as i32), None).is_ok(), "kill(0) still finds the zombie");
        assert!(!alive(&child), "but it is not alive");
        let _ = child.wait();
        let mut sleeper = std::process::Command::new("sleep").arg("5").process_group(0).spawn().unwrap();
        assert!(alive(&sleeper), "a sleeping group is");
        let grace = Duration::from_millis(50);
        assert!(end(&mut sleeper, grace, grace).is_some(), "and is ended");
        assert!(!alive(&sleeper));
    }
}

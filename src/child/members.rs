//! The processes of a process group, read from `/proc` (Linux): what the
//! exit wait and the group's end need to know of each member beyond what
//! `kill(0)` says, which also counts zombies.

/// One process of a group.
pub(crate) struct Member {
    /// Exited, waiting to be reaped by its parent. An orphan's parent is
    /// the machine's init, which in a container may reap late or never.
    pub(crate) zombie: bool,
    /// User and system CPU time so far, in clock ticks.
    pub(crate) ticks: u64,
}

/// Every process whose group is `pgid`; `None` when `/proc` cannot be read.
pub(crate) fn members(pgid: u32) -> Option<Vec<Member>> {
    let procs = std::fs::read_dir("/proc").ok()?;
    let pids = procs.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok());
    Some(pids.filter_map(|pid| member_of(pid, pgid)).collect())
}

/// Process `pid`, if it is still there and in group `pgid`.
pub(crate) fn member_of(pid: u32, pgid: u32) -> Option<Member> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from
    // after its closing one, where field 3 (the state) comes first.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    if field(5)? != u64::from(pgid) {
        return None;
    }
    let state = fields.first()?;
    Some(Member { zombie: matches!(*state, "Z" | "X"), ticks: field(14)? + field(15)? })
}

/// Most processes [`subtree`] follows: a server and the few it starts.
const SUBTREE_MOST: usize = 32;

/// Process `pid` and those it started, and they in turn, that are in group
/// `pgid`, as far as each thread's `children` file says (Linux; without
/// it, `pid` alone). A launcher's server, which does its work, is in it;
/// the rest of the machine's processes are not read.
pub(crate) fn subtree(pid: u32, pgid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() && found.len() < SUBTREE_MOST {
        let parent = found[next];
        next += 1;
        let Ok(threads) = std::fs::read_dir(format!("/proc/{parent}/task")) else { continue };
        for thread in threads.flatten() {
            let children = std::fs::read_to_string(thread.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                if found.len() < SUBTREE_MOST && !found.contains(&child) && member_of(child, pgid).is_some() {
                    found.push(child);
                }
            }
        }
    }
    found
}

//! Waiting for the answer to one request on a child's stdout.

use super::ChildGateway;
use super::busy::Busy;
use super::owed::{Possible, answered_ids, same_request};
use crate::protocol::Id;
use crate::seam::Gateway;
use serde_json::Value;
use std::time::{Duration, Instant};

/// What reading for an answer found.
pub(crate) struct Answer {
    /// Every byte read except the answer's line.
    pub stdout: Vec<u8>,
    /// The answer.
    pub value: Value,
    /// When the answer came.
    pub at: Instant,
    /// When every owed answer came: how long after this one the last did
    /// (zero when all came before it).
    pub owed_after: Option<Duration>,
}

/// The answers waited for after a reply, each for at most its own wait.
#[derive(Default)]
pub(crate) struct Waits {
    /// Owed answers.
    pub owed: Vec<(Id, Duration)>,
    /// Answers that come only if the server misread a must-reject frame as
    /// a call, each waited for until it comes, or until errors with a null
    /// id show that none was misread.
    pub misread: Possible<Duration>,
}

/// Reads stdout until the response with id `id` has arrived, the child
/// ends, or `bound` runs out; then, as a server that answers requests
/// concurrently may answer them after it, until the `waits` are over too,
/// each for at most its own wait from then, and an owed one longer while
/// the child stays busy (within `bound`). An answer whose id comes back
/// retyped counts (see [`same_request`]). Each line is parsed once, as it
/// completes. `None` if the response never came.
pub(crate) fn await_reply(child: &mut ChildGateway, id: &Value, waits: Waits, bound: Duration) -> Option<Answer> {
    let Waits { mut owed, mut misread } = waits;
    let deadline = Instant::now() + bound;
    let (mut out, mut scanned, mut reply) = (Vec::new(), 0, None::<(Value, Instant)>);
    let mut last_owed = None;
    let mut busy = None;
    loop {
        let ended = child.exit().ended();
        out.extend(child.take_stdout());
        while let Some(n) = memchr::memchr(b'\n', &out[scanned..]) {
            let line = scanned..scanned + n + 1;
            scanned = line.end;
            let Some(v) = crate::json_line::parse(&out[line.start..line.end - 1]) else { continue };
            if v.get("id") == Some(id) && reply.is_none() {
                scanned = line.start;
                out.drain(line);
                reply = Some((v, Instant::now()));
                // Only an answer still owed then is waited for past its
                // wait while the server keeps busy: from here on.
                if !owed.is_empty() {
                    busy = Some(Busy::watch_from_now(child.id(), child.server()));
                }
                continue;
            }
            let before = owed.len();
            misread.read(&v);
            for got in answered_ids(&v) {
                owed.retain(|(o, _)| !same_request(o, &got));
            }
            if owed.len() < before {
                last_owed = Some(Instant::now());
            }
        }
        let now = Instant::now();
        if let Some((_, at)) = &reply {
            let waits = owed.iter().map(|o| o.1).chain(misread.pending().iter().map(|o| o.1));
            let until = *at + waits.max().unwrap_or_default();
            // An answer still owed when its wait runs out, from a server at
            // work on the CPU since the reply (slowed by processes starting
            // beside it, say), is waited for while it stays busy, within the
            // bound. Only the CPU time of the leader and the processes it
            // started (a launcher's server) is read: most waits end without
            // a look, and each look at the group would read every process's
            // stat on the machine.
            let behind = !owed.is_empty() && now >= until && now < deadline;
            if behind && busy.as_mut().is_some_and(Busy::busy) {
                child.wait_stdout((now + Duration::from_millis(5)).min(deadline));
                continue;
            }
            if owed.is_empty() && misread.pending().is_empty() || ended || now >= until {
                let owed_after =
                    owed.is_empty().then(|| last_owed.map_or(Duration::ZERO, |l| l.saturating_duration_since(*at)));
                return reply.map(|(value, at)| Answer { stdout: out, value, at, owed_after });
            }
            child.wait_stdout(until);
            continue;
        }
        if ended || now >= deadline {
            return None;
        }
        // Woken by new output; the short bound keeps an eye on the exit too.
        child.wait_stdout((now + Duration::from_millis(5)).min(deadline));
    }
}

//! Waiting for the answer to one request on a child's stdout.

use super::ChildGateway;
use crate::protocol::Id;
use crate::seam::Gateway;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Reads stdout until the response with id `id` has arrived, and those to
/// the `owed` ids too (a server that answers requests concurrently may send
/// them after it), the child ends, or `bound` runs out. Each line is parsed
/// once, as it completes. Returns every byte read except the response's line,
/// and the response itself; `None` if it never came.
pub(crate) fn await_reply(
    child: &mut ChildGateway,
    id: &Value,
    mut owed: Vec<Id>,
    bound: Duration,
) -> Option<(Vec<u8>, Value)> {
    let deadline = Instant::now() + bound;
    let (mut out, mut scanned, mut reply) = (Vec::new(), 0, None);
    loop {
        let ended = child.exit().ended();
        out.extend(child.take_stdout());
        while let Some(n) = memchr::memchr(b'\n', &out[scanned..]) {
            let line = scanned..scanned + n + 1;
            scanned = line.end;
            let Ok(v) = serde_json::from_slice::<Value>(&out[line.start..line.end - 1]) else { continue };
            if v.get("id") == Some(id) && reply.is_none() {
                scanned = line.start;
                out.drain(line);
                reply = Some(v);
                continue;
            }
            // A batch's answers come as one array.
            for answer in v.as_array().map_or(std::slice::from_ref(&v), Vec::as_slice) {
                if let Some(got) = answer.get("id").and_then(Id::from_value) {
                    owed.retain(|o| *o != got);
                }
            }
        }
        if let Some(r) = reply.take_if(|_| owed.is_empty() || ended || Instant::now() >= deadline) {
            return Some((out, r));
        }
        if ended || Instant::now() >= deadline {
            return None;
        }
        // Woken by new output; the short bound keeps an eye on the exit too.
        child.wait_stdout((Instant::now() + Duration::from_millis(5)).min(deadline));
    }
}

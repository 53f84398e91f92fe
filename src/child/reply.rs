//! Waiting for the answer to one request on a child's stdout.

use super::ChildGateway;
use crate::seam::Gateway;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Reads stdout until the response with id `id` arrives, the child ends, or
/// `bound` runs out. Each line is parsed once, as it completes. Returns the
/// bytes before the response's line and the response itself.
pub(crate) fn await_reply(child: &mut ChildGateway, id: &Value, bound: Duration) -> Option<(Vec<u8>, Value)> {
    let deadline = Instant::now() + bound;
    let mut out = Vec::new();
    let mut line_start = 0;
    loop {
        let ended = child.exit().ended();
        out.extend(child.take_stdout());
        while let Some(n) = out[line_start..].iter().position(|b| *b == b'\n') {
            let line = &out[line_start..line_start + n];
            if let Ok(v) = serde_json::from_slice::<Value>(line)
                && v.get("id") == Some(id)
            {
                out.truncate(line_start);
                return Some((out, v));
            }
            line_start += n + 1;
        }
        if ended || Instant::now() >= deadline {
            return None;
        }
        // Woken by new output; the short bound keeps an eye on the exit too.
        child.wait_stdout((Instant::now() + Duration::from_millis(5)).min(deadline));
    }
}

//! Asking a server which tools it has: the session opened as its revision
//! opens one (`initialize`, or `server/discover`), then `tools/list`.

use super::ChildTarget;
use crate::protocol::{Id, Policy, Revision};
use crate::script::Script;
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The `tools` array of the server's `tools/list` result.
pub fn list_tools(target: &ChildTarget, revision: Revision) -> Result<Vec<Value>, Fault> {
    let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
    let mut child = target.start(&session, Recorder::new())?;
    let list = revision.request_line(Value::from(2), "tools/list");
    child.write_stdin(&[Script::handshake(revision).stdin(), list].concat())?;
    let bound = target.waits().answer;
    if let Some(v) = child.await_answer(Id::Int(2), bound) {
        return v.pointer("/result/tools").and_then(Value::as_array).cloned().ok_or_else(|| {
            Fault::config(format!("tools/list answered without a tools array: {v}; pass --tool and --args"))
        });
    }
    let (exit, wrote) = (child.exit(), child.wrote_anything());
    // Ended, its stderr is read to the end before it is quoted.
    let (_, stderr) = child.finish();
    let said = super::capture::stderr_tail(&stderr);
    match exit {
        Exit::Running if !wrote => Err(Fault::timeout(format!(
            "the server wrote nothing within {} ms of its start (--start-ms); {said}",
            target.waits().start.as_millis()
        ))),
        Exit::Running => {
            Err(Fault::timeout(format!("the server did not answer tools/list within {} ms; {said}", bound.as_millis())))
        }
        ended => Err(Fault::config(format!("the server {ended} before it answered tools/list; {said}"))),
    }
}

/// What asking the server which era it speaks showed: whether it answered
/// `server/discover` naming the stateless revision, and what it answered.
#[derive(Debug)]
pub(crate) struct Stateless {
    /// Whether it speaks 2026-07-28.
    pub(crate) spoken: bool,
    /// Its answer to `server/discover`, if it gave one.
    pub(crate) answer: Option<Value>,
}

/// Whether the server speaks the stateless revision, asked as a client
/// finds out: `server/discover` first, then `initialize`. The wait ends
/// on evidence: the answer to `server/discover`; or the answer (or error)
/// to `initialize`, which shows the server has read past the first, and
/// then as long again for a server that answers out of order. A
/// `server/discover` answered with 2026-07-28 among `supportedVersions`
/// says it does; one answered otherwise, or not at all, that it speaks
/// the handshake era alone.
pub(crate) fn speaks_stateless(target: &ChildTarget) -> Result<Stateless, Fault> {
    let stateless = Revision::R2026_07_28;
    let session = Session { policy: Policy::KeepOpen, revision: stateless, salt: 0 };
    let mut child = target.start(&session, Recorder::new())?;
    let mut init = crate::attack::lifecycle::initialize_text(2, Revision::LATEST_HANDSHAKEN).into_bytes();
    init.push(b'\n');
    child.write_stdin(&[stateless.marker_with(Value::from(1)), init].concat())?;
    let (asked, bound) = (Instant::now(), target.waits().answer);
    // While it has written nothing it may still be starting (slowly, on a
    // loaded machine, or beside the run's other starts): it is given the
    // start bound twice over, as a persistent process is.
    let starting = asked + target.waits().start * 2;
    let answer =
        |out: &[u8], id: i64| crate::json_line::values(out).find(|v| crate::json_line::answers(v, &Id::Int(id)));
    let mut out = Vec::new();
    let mut until = asked + bound;
    let mut spoke = None;
    let discovered = loop {
        // Whether it has ended is asked first: what it wrote before is read.
        let ended = child.exit().ended();
        out.extend(child.take_stdout());
        if let Some(found) = answer(&out, 1) {
            break Some(found);
        }
        if until == asked + bound && answer(&out, 2).is_some() {
            until = until.min(Instant::now() + asked.elapsed());
        }
        // Judged by what was taken and read above (output that came since,
        // the answer itself a moment late, is read on the next turn); once
        // it has written, the answer wait runs from then, as a session's.
        if spoke.is_none() && !out.is_empty() {
            spoke = Some(Instant::now());
        }
        let due = match spoke {
            None => until.max(starting),
            Some(at) => until.max(at + bound),
        };
        if ended || Instant::now() >= due {
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(Stateless { spoken: discovered.as_ref().is_some_and(|a| stateless.opened_by(a)), answer: discovered })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_slower_to_start_than_the_answer_wait_still_names_its_revision() {
        // It reads the first line a second after it began, twice the
        // answer wait, well within the start bound: it is still starting.
        // Its answer comes in two writes a tenth of a second apart: once
        // it has written, the answer wait runs from then.
        let probes = std::sync::Arc::new(crate::probe::Probes::start(&Default::default()).expect("probes"));
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}"#;
        let (head, tail) = answer.split_at(20);
        let write = format!("printf '%s' '{head}'; sleep 0.1; printf '%s\\n' '{tail}'");
        let body = format!("sleep 1; read line; {write}; exec cat >/dev/null");
        let server = crate::process::Command::new("sh", ["-c", body.as_str()]);
        let waits = crate::process::Waits::from_ms(500, 10, 200).starting_within(Duration::from_secs(2));
        let target = ChildTarget::new(server, waits, Vec::new(), probes);
        let asked = speaks_stateless(&target).expect("it starts");
        assert!(asked.spoken, "it named 2026-07-28: {:?}", asked.answer);
    }
}

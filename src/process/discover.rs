//! Asking a server which tools it has: the session opened as its revision
//! opens one (`initialize`, or `server/discover`), then `tools/list`.

use super::ChildTarget;
use crate::protocol::{Id, Policy, Revision};
use crate::script::Script;
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;

/// The `tools` array of the server's `tools/list` result.
pub fn list_tools(target: &ChildTarget, revision: Revision) -> Result<Vec<Value>, Fault> {
    let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
    let mut child = target.start(&session, Recorder::new())?;
    let list = revision.request_line(Value::from(2), "tools/list");
    child.write_stdin(&[Script::handshake(revision).stdin(), list].concat())?;
    let bound = target.waits().answer;
    if let Some(v) = child.await_answer(Id::Int(2), bound) {
        return v
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| Fault::config(format!("tools/list answered without a tools array: {v}")));
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

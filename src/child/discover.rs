//! Asking a server which tools it has: `initialize`, then `tools/list`,
//! over the same bounded child driver the campaign uses.

use super::ChildTarget;
use super::reply::{Waits, await_reply};
use crate::protocol::{Policy, Revision};
use crate::script::Script;
use crate::seam::{Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;

/// The `tools` array of the server's `tools/list` result.
pub fn list_tools(target: &ChildTarget, revision: Revision) -> Result<Vec<Value>, Fault> {
    let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
    let mut child = target.start(&session, Recorder::new())?;
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    child.write_stdin(&[Script::handshake(revision).stdin().as_slice(), list, b"\n"].concat())?;
    if let Some(v) = await_reply(&mut child, &Value::from(2), Waits::default(), target.limits.timeout).map(|a| a.value)
    {
        return v
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| Fault::Config(format!("tools/list answered without a tools array: {v}")));
    }
    let stderr = String::from_utf8_lossy(&child.take_stderr()).chars().take(400).collect::<String>();
    let ms = target.limits.timeout.as_millis();
    Err(Fault::Config(format!("the server did not answer tools/list within {ms} ms (stderr: {stderr:?})")))
}

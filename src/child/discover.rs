//! Asking a server which tools it has: `initialize`, then `tools/list`,
//! over the same bounded child driver the campaign uses.

use super::ChildTarget;
use crate::attack::lifecycle::initialize_text;
use crate::protocol::{Policy, Revision};
use crate::seam::{Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::time::Instant;

/// The `tools` array of the server's `tools/list` result.
pub fn list_tools(target: &ChildTarget, revision: Revision) -> Result<Vec<Value>, Fault> {
    let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
    let mut child = target.start(&session, Recorder::new())?;
    let hello = format!(
        "{}\n{}\n{}\n",
        initialize_text(1, revision),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
    );
    child.write_stdin(hello.as_bytes())?;
    let deadline = Instant::now() + target.limits.timeout;
    let mut out = Vec::new();
    while Instant::now() < deadline {
        out.extend(child.take_stdout());
        let listing = out
            .split(|b| *b == b'\n')
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .find(|v| v.get("id") == Some(&Value::from(2)));
        if let Some(v) = listing {
            return v
                .pointer("/result/tools")
                .and_then(Value::as_array)
                .cloned()
                .ok_or_else(|| Fault::Config(format!("tools/list answered without a tools array: {v}")));
        }
        if child.exit().ended() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let stderr = String::from_utf8_lossy(&child.take_stderr()).chars().take(400).collect::<String>();
    Err(Fault::Config(format!("the server did not answer tools/list in time (stderr: {stderr:?})")))
}

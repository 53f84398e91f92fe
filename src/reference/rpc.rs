//! JSON-RPC 2.0 envelopes: one JSON value in, a request, a notification or a
//! client response out — or the error it earns.

use super::Mutant;
use super::reply::Text;
use crate::protocol::code;
use serde_json::Value;

/// A message the client sent.
#[derive(Debug)]
#[non_exhaustive]
pub enum Msg {
    /// A request: an id and a method.
    Request {
        /// The id, to echo back as written.
        id: Value,
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// A notification: no id, no response.
    Notification,
    /// A response from the client; no request of ours is pending.
    Response,
}

/// A frame the gateway refuses, with the error it answers with.
#[derive(Debug)]
pub struct Refusal {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The message.
    pub message: Text,
    /// The id to answer with (`Null` when none could be read).
    pub id: Value,
    /// Whether the frame ends the session under the close policy.
    pub closes: bool,
    /// Whether the refusal goes back as a tool result with `isError: true`.
    pub as_tool_error: bool,
}

impl Refusal {
    /// A refusal that ends the session under `close`.
    pub fn closing(code: i64, message: Text, id: Value) -> Self {
        Refusal { code, message, id, closes: true, as_tool_error: false }
    }

    /// A refusal after which the session goes on under both policies.
    pub fn open(code: i64, message: Text, id: Value) -> Self {
        Refusal { code, message, id, closes: false, as_tool_error: false }
    }
}

/// Whether `id` is a request id this gateway accepts.
fn id_ok(id: &Value, mutant: Option<Mutant>) -> bool {
    match id {
        Value::String(_) => true,
        // An integer every reader echoes exactly: within 2^53 - 1.
        Value::Number(n) if n.is_i64() => {
            mutant == Some(Mutant::AnyIntegerId) || n.as_i64().is_some_and(|i| i.unsigned_abs() < 1 << 53)
        }
        Value::Number(n) if n.is_f64() => {
            mutant == Some(Mutant::FractionalId) && n.as_f64().is_some_and(f64::is_finite)
        }
        Value::Bool(_) => mutant == Some(Mutant::BoolId),
        Value::Null => mutant == Some(Mutant::NullId),
        _ => false,
    }
}

/// Reads one envelope.
pub fn envelope(value: Value, mutant: Option<Mutant>) -> Result<Msg, Refusal> {
    let Value::Object(o) = value else {
        return Err(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: not an object"), Value::Null));
    };
    let id = o.get("id");
    let echo = id.filter(|i| id_ok(i, mutant)).cloned().unwrap_or(Value::Null);
    if o.contains_key("result") || o.contains_key("error") {
        return Ok(Msg::Response);
    }
    let lax = mutant == Some(Mutant::LaxJsonrpc);
    if o.get("jsonrpc") != Some(&Value::from("2.0")) && !lax {
        return Err(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: jsonrpc must be 2.0"), echo));
    }
    if id.is_some_and(|i| !id_ok(i, mutant)) {
        return Err(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: bad id"), Value::Null));
    }
    let Some(Value::String(method)) = o.get("method") else {
        return Err(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: method must be a string"), echo));
    };
    let params = o.get("params").cloned();
    match id {
        Some(id) => {
            if let Some(p) = &params
                && !p.is_object()
            {
                return Err(Refusal::closing(code::INVALID_PARAMS, text!("Invalid params: not an object"), id.clone()));
            }
            Ok(Msg::Request { id: id.clone(), method: method.clone(), params })
        }
        None => Ok(Msg::Notification),
    }
}

//! What the reference writes back: typed responses written straight to
//! bytes. Keys and envelopes are fixed text; only ids, messages and results
//! go through the JSON serializer.

use serde_json::Value;

/// One response, or a batch of them.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reply {
    /// A result.
    Result {
        /// The id echoed back.
        id: Value,
        /// The result object.
        result: Value,
    },
    /// A tool result with `isError: true`, carrying one text.
    ToolError {
        /// The id echoed back.
        id: Value,
        /// The text.
        text: Text,
        /// Whether the result carries `resultType` (2026-07-28).
        typed: bool,
    },
    /// -32022: the request's revision is not one the gateway speaks.
    Unsupported {
        /// The id echoed back.
        id: Value,
        /// The revision the request asked for, as it was written.
        requested: Value,
    },
    /// -32021: the request needs the client's `elicitation` capability,
    /// which its envelope does not declare.
    MissingElicitation {
        /// The id echoed back.
        id: Value,
    },
    /// A JSON-RPC error.
    Error {
        /// The id echoed back (`Null` when none could be read).
        id: Value,
        /// The error code.
        code: i64,
        /// The message.
        message: Text,
    },
    /// The responses to a batch, in order.
    Batch(Vec<Reply>),
}

/// The parse error line, the commonest reply by far, as fixed bytes for
/// each code the reference can answer with (the strict one, and the one a
/// mutant uses); any other code goes through [`Reply::Error`].
pub fn parse_error_line(code: i64) -> Option<&'static [u8]> {
    match code {
        -32700 => Some(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"),
        -32603 => Some(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"Parse error\"}}\n"),
        _ => None,
    }
}

impl Reply {
    /// Appends the reply as one line, LF included.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        self.write(out);
        out.push(b'\n');
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Batch(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Reply::Result { id, result } => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(out, id);
                out.extend_from_slice(br#","result":"#);
                json(out, result);
                out.push(b'}');
            }
            Reply::ToolError { id, text, typed } => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(out, id);
                out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
                text.write(out);
                out.extend_from_slice(br#"}],"isError":true"#);
                if *typed {
                    out.extend_from_slice(br#","resultType":"complete""#);
                }
                out.extend_from_slice(b"}}");
            }
            Reply::Unsupported { id, requested } => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(out, id);
                out.extend_from_slice(br#","error":{"code":"#);
                json(out, &crate::protocol::code::UNSUPPORTED_VERSION);
                out.extend_from_slice(
                    br#","message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"#,
                );
                json(out, requested);
                out.extend_from_slice(b"}}}");
            }
            Reply::MissingElicitation { id } => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(out, id);
                out.extend_from_slice(br#","error":{"code":"#);
                json(out, &crate::protocol::code::MISSING_CAPABILITY);
                out.extend_from_slice(
                    br#","message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}"#,
                );
            }
            Reply::Error { id, code, message } => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(out, id);
                out.extend_from_slice(br#","error":{"code":"#);
                json(out, code);
                out.extend_from_slice(br#","message":"#);
                message.write(out);
                out.extend_from_slice(b"}}");
            }
        }
    }
}

/// A fixed message that needs no JSON escaping (no quote, backslash or
/// control character), checked when compiled through `text!`: replies
/// write it as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text(&'static str);

impl Text {
    /// Checks `s`; in a constant (as `text!` makes it) a bad one does not
    /// compile.
    pub const fn new(s: &'static str) -> Text {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            assert!(b >= 0x20 && b != b'"' && b != b'\\', "a message that needs JSON escaping");
            i += 1;
        }
        Text(s)
    }

    /// Appends the message as a JSON string.
    fn write(self, out: &mut Vec<u8>) {
        out.push(b'"');
        out.extend_from_slice(self.0.as_bytes());
        out.push(b'"');
    }
}

/// Appends an id; `null`, the id of every error to a line that could not be
/// read, without the serializer.
fn write_id(out: &mut Vec<u8>, id: &Value) {
    match id {
        Value::Null => out.extend_from_slice(b"null"),
        id => json(out, id),
    }
}

/// Appends `v` as JSON.
fn json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    serde_json::to_writer(out, v).expect("writing JSON to a Vec cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fixed_parse_error_lines_are_the_written_errors() {
        for code in [-32700, -32603] {
            let mut line = Vec::new();
            Reply::Error { id: Value::Null, code, message: text!("Parse error") }.write_line(&mut line);
            assert_eq!(parse_error_line(code), Some(line.as_slice()));
        }
        assert_eq!(parse_error_line(-1), None);
    }

    #[test]
    #[should_panic(expected = "needs JSON escaping")]
    fn a_message_that_needs_escaping_is_refused() {
        Text::new(std::hint::black_box("say \"hi\""));
    }

    #[test]
    fn writes_one_line_of_the_expected_json() {
        let cases = [
            (
                Reply::Error { id: Value::Null, code: -32700, message: text!("Parse error") },
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
            ),
            (
                Reply::Error { id: json!("x\"y"), code: -32600, message: Text::new("jsonrpc must be 2.0") },
                json!({"jsonrpc": "2.0", "id": "x\"y", "error": {"code": -32600, "message": "jsonrpc must be 2.0"}}),
            ),
            (
                Reply::ToolError { id: json!("a"), text: text!("no"), typed: false },
                json!({"jsonrpc": "2.0", "id": "a", "result": {"content": [{"type": "text", "text": "no"}], "isError": true}}),
            ),
            (
                Reply::ToolError { id: json!(3), text: text!("no"), typed: true },
                json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "no"}], "isError": true, "resultType": "complete"}}),
            ),
            (
                Reply::Unsupported { id: json!(4), requested: json!("1900-01-01") },
                json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}}),
            ),
            (
                Reply::MissingElicitation { id: json!(5) },
                json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": {"elicitation": {}}}}}),
            ),
            (
                Reply::Batch(vec![
                    Reply::Result { id: json!(1), result: json!({"k": [1, "\n"]}) },
                    Reply::Error { id: json!(2), code: -32601, message: text!("Method not found") },
                ]),
                json!([
                    {"jsonrpc": "2.0", "id": 1, "result": {"k": [1, "\n"]}},
                    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}},
                ]),
            ),
        ];
        for (reply, tree) in cases {
            let mut line = Vec::new();
            reply.write_line(&mut line);
            let (last, body) = line.split_last().unwrap();
            assert_eq!(*last, b'\n');
            assert!(!body.contains(&b'\n'));
            assert_eq!(serde_json::from_slice::<Value>(body).unwrap(), tree);
        }
    }
}

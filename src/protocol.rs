//! Protocol facts the generators, the reference gateway and the checks share:
//! MCP revisions, JSON-RPC ids and error codes, and session policies.

use std::fmt;
use std::str::FromStr;

/// An MCP protocol revision a session negotiates in `initialize`.
///
/// The checks depend on it: only 2025-03-26 has JSON-RPC batches, which a
/// receiver must then accept; every other revision forbids them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05, the first published revision.
    #[serde(rename = "2024-11-05")]
    R2024_11_05,
    /// 2025-03-26: adds JSON-RPC batches.
    #[serde(rename = "2025-03-26")]
    R2025_03_26,
    /// 2025-06-18: removes batches again.
    #[serde(rename = "2025-06-18")]
    R2025_06_18,
    /// 2025-11-25: tool argument failures may come back as `isError` results.
    #[serde(rename = "2025-11-25")]
    R2025_11_25,
}

impl Revision {
    /// Every revision the suite speaks, oldest first.
    pub const ALL: [Revision; 4] =
        [Revision::R2024_11_05, Revision::R2025_03_26, Revision::R2025_06_18, Revision::R2025_11_25];

    /// The newest revision the suite speaks.
    pub const LATEST: Revision = Revision::ALL[Revision::ALL.len() - 1];

    /// The `protocolVersion` string of this revision.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::R2024_11_05 => "2024-11-05",
            Revision::R2025_03_26 => "2025-03-26",
            Revision::R2025_06_18 => "2025-06-18",
            Revision::R2025_11_25 => "2025-11-25",
        }
    }

    /// Whether a JSON-RPC batch (a top-level array) is a valid message.
    pub fn has_batches(self) -> bool {
        self == Revision::R2025_03_26
    }

    /// Whether a tool may report bad argument values as a result with
    /// `isError: true` instead of a `-32602` protocol error.
    pub fn tool_errors_as_results(self) -> bool {
        self == Revision::R2025_11_25
    }

    /// A request with id `id` that this revision has, that acts on
    /// nothing, and that every server answers at once: written after a
    /// script, its answer shows the server has read past the script.
    /// `ping` in every revision that has it.
    pub fn marker(self, id: &str) -> Vec<u8> {
        let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let mut bytes = serde_json::to_vec(&line).expect("a marker serializes");
        bytes.push(b'\n');
        bytes
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Revision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Revision::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown revision {s:?} (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)"))
    }
}

/// What a gateway does after a malformed or invalid frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Policy {
    /// The session ends; nothing after the frame may act. A gateway may
    /// also end it after any other must-reject frame.
    Close,
    /// The session goes on: the frame gets an error response and the next
    /// valid request inherits nothing from it.
    KeepOpen,
    /// Whichever of the two the gateway shows on the first malformed frame
    /// of a probe session; a hunt then holds it to that one.
    Auto,
}

impl Policy {
    /// The two policies a gateway is held to.
    pub const ALL: [Policy; 2] = [Policy::Close, Policy::KeepOpen];

    /// What a user may choose: `auto` and the two policies.
    pub const CHOICES: [Policy; 3] = [Policy::Auto, Policy::Close, Policy::KeepOpen];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Close => "close",
            Policy::KeepOpen => "keep-open",
            Policy::Auto => "auto",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "close" => Ok(Policy::Close),
            "keep-open" => Ok(Policy::KeepOpen),
            "auto" => Ok(Policy::Auto),
            _ => Err(format!("unknown policy {s:?} (known: auto, close, keep-open)")),
        }
    }
}

/// How strictly frames are judged.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    arbitrary::Arbitrary,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Level {
    /// A rule of this level holds either way: a frame may be rejected with
    /// no effect, or act once with exactly its arguments. Never a finding.
    Tolerated,
    /// The frame breaks a MUST of RFC 8259, JSON-RPC 2.0 or the negotiated
    /// MCP revision.
    Spec,
    /// Stricter than the specifications: a frame parsers read differently
    /// (duplicate keys, lone surrogates, deep nesting, huge numbers, a BOM).
    #[default]
    Hardening,
}

impl Level {
    /// The levels a run may judge at, most lenient first.
    pub const JUDGED: [Level; 2] = [Level::Spec, Level::Hardening];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Tolerated => "tolerated",
            Level::Spec => "spec",
            Level::Hardening => "hardening",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JSON-RPC request id as the suite wrote it: a string or an integer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// An integer id.
    Int(i64),
    /// A string id.
    Str(String),
}

impl Id {
    /// The id as JSON text.
    pub fn to_json(&self) -> String {
        match self {
            Id::Int(n) => n.to_string(),
            Id::Str(s) => serde_json::Value::from(s.as_str()).to_string(),
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Id::Int(n) => serde_json::Value::from(*n),
            Id::Str(s) => serde_json::Value::from(s.as_str()),
        }
    }

    /// Reads a valid id out of a JSON value: a string, or an integer written
    /// without fraction or exponent that fits in an `i64`.
    pub fn from_value(v: &serde_json::Value) -> Option<Id> {
        match v {
            serde_json::Value::String(s) => Some(Id::Str(s.clone())),
            serde_json::Value::Number(n) => n.as_i64().map(Id::Int),
            _ => None,
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1).
pub(crate) mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Server-defined: the caller may not run this tool (the reference's choice).
    pub const NOT_AUTHORIZED: i64 = -32001;
}

#[cfg(test)]
mod marker_tests {
    use super::Revision;

    #[test]
    fn each_revision_has_a_marker_request_of_one_line() {
        for r in Revision::ALL {
            let line = r.marker("m-1");
            assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1, "{r}");
            assert!(line.ends_with(b"\n"), "{r}");
            let v: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
            assert_eq!((v["jsonrpc"].as_str(), v["id"].as_str()), (Some("2.0"), Some("m-1")), "{r}");
            assert_eq!(v["method"], "ping", "{r} has ping");
        }
    }
}

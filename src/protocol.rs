//! Protocol facts the generators, the reference gateway and the checks share:
//! MCP revisions, JSON-RPC ids and error codes, and session policies.

use std::fmt;
use std::str::FromStr;

/// An MCP protocol revision: the one a session negotiates in `initialize`,
/// or, from 2026-07-28 on, the one every request names in its envelope.
///
/// The checks depend on it: only 2025-03-26 has JSON-RPC batches, which a
/// receiver must then accept; every other revision forbids them. What a
/// revision changes is asked of it by predicate ([`Revision::has_handshake`],
/// [`Revision::has_envelope`], ...), never by comparing versions.
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
    /// 2026-07-28, stateless: no `initialize` and no `ping`; every request
    /// carries its revision and the client's capabilities in `params._meta`,
    /// and every result its `resultType`.
    #[serde(rename = "2026-07-28")]
    R2026_07_28,
}

impl Revision {
    /// Every revision the suite speaks, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::R2024_11_05,
        Revision::R2025_03_26,
        Revision::R2025_06_18,
        Revision::R2025_11_25,
        Revision::R2026_07_28,
    ];

    /// The revisions a session opens with `initialize`, which every server
    /// speaks one of: what a run draws unless it is asked for others.
    pub const HANDSHAKEN: [Revision; 4] =
        [Revision::R2024_11_05, Revision::R2025_03_26, Revision::R2025_06_18, Revision::R2025_11_25];

    /// The newest revision the suite speaks.
    pub const LATEST: Revision = Revision::ALL[Revision::ALL.len() - 1];

    /// The newest revision that opens with `initialize`.
    pub const LATEST_HANDSHAKEN: Revision = Revision::HANDSHAKEN[Revision::HANDSHAKEN.len() - 1];

    /// The `protocolVersion` string of this revision.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::R2024_11_05 => "2024-11-05",
            Revision::R2025_03_26 => "2025-03-26",
            Revision::R2025_06_18 => "2025-06-18",
            Revision::R2025_11_25 => "2025-11-25",
            Revision::R2026_07_28 => "2026-07-28",
        }
    }

    /// Whether a session opens with `initialize` (and
    /// `notifications/initialized`) and no request may come before it.
    pub fn has_handshake(self) -> bool {
        self != Revision::R2026_07_28
    }

    /// Whether `ping` is a method of this revision.
    pub fn has_ping(self) -> bool {
        self.has_handshake()
    }

    /// Whether every request carries the envelope: `params._meta` with the
    /// revision (`io.modelcontextprotocol/protocolVersion`) and the
    /// client's capabilities for this request
    /// (`io.modelcontextprotocol/clientCapabilities`), both required.
    pub fn has_envelope(self) -> bool {
        self == Revision::R2026_07_28
    }

    /// Whether every result carries `resultType`.
    pub fn has_result_type(self) -> bool {
        self == Revision::R2026_07_28
    }

    /// Whether a server may write requests of its own to stdout (sampling,
    /// elicitation, roots): none in a stateless revision, which asks its
    /// client through an `input_required` result instead.
    pub fn has_server_requests(self) -> bool {
        self.has_handshake()
    }

    /// Whether a JSON-RPC batch (a top-level array) is a valid message.
    pub fn has_batches(self) -> bool {
        self == Revision::R2025_03_26
    }

    /// Whether a tool may report bad argument values as a result with
    /// `isError: true` instead of a `-32602` protocol error.
    pub fn tool_errors_as_results(self) -> bool {
        matches!(self, Revision::R2025_11_25 | Revision::R2026_07_28)
    }

    /// The envelope's `_meta` object for a request of this revision, as
    /// JSON text, where the revision has one: the version, the client's
    /// capabilities (none) and who the client is.
    pub fn envelope(self) -> Option<String> {
        self.envelope_declaring("{}")
    }

    /// [`Revision::envelope`] declaring `capabilities` (a JSON object's
    /// text) for the one request it goes with.
    pub fn envelope_declaring(self, capabilities: &str) -> Option<String> {
        self.has_envelope().then(|| {
            format!(
                r#"{{"{VERSION_KEY}":"{self}","{CAPABILITIES_KEY}":{capabilities},"io.modelcontextprotocol/clientInfo":{{"name":"portcullis","version":"{}"}}}}"#,
                env!("CARGO_PKG_VERSION")
            )
        })
    }

    /// Whether `answer`, the answer to the request that opens a session
    /// (`initialize`, or `server/discover` where the revision has no
    /// handshake), opens one of this revision.
    pub fn opened_by(self, answer: &serde_json::Value) -> bool {
        let result = &answer["result"];
        match self.has_handshake() {
            true => result["protocolVersion"] == self.as_str(),
            false => result["supportedVersions"].as_array().is_some_and(|v| v.iter().any(|r| r == self.as_str())),
        }
    }

    /// The method of [`Revision::marker`]: `ping` where the revision has
    /// it, else `server/discover`, which every server of such a revision
    /// implements.
    pub fn marker_method(self) -> &'static str {
        if self.has_ping() { "ping" } else { "server/discover" }
    }

    /// A request with id `id` that this revision has, that acts on
    /// nothing, and that every server answers at once: written after a
    /// script, its answer shows the server has read past the script.
    pub fn marker(self, id: &str) -> Vec<u8> {
        self.marker_with(serde_json::Value::from(id))
    }

    /// [`Revision::marker`] with any id.
    pub(crate) fn marker_with(self, id: serde_json::Value) -> Vec<u8> {
        self.request_line(id, self.marker_method())
    }

    /// A request of `method` with id `id` and no params of its own, as a
    /// line: with the envelope where the revision has one.
    pub(crate) fn request_line(self, id: serde_json::Value, method: &str) -> Vec<u8> {
        let mut line = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(meta) = self.envelope() {
            let meta: serde_json::Value = serde_json::from_str(&meta).expect("the envelope is JSON");
            line["params"] = serde_json::json!({"_meta": meta});
        }
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
        Revision::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| {
            let known: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
            format!("unknown revision {s:?} (known: {})", known.join(", "))
        })
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
#[non_exhaustive]
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

/// The envelope's key for the revision a request is made in.
pub(crate) const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The envelope's key for the client's capabilities for one request.
pub(crate) const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1), and MCP's own.
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
    /// MCP 2026-07-28: the request's revision is not one the server speaks.
    pub const UNSUPPORTED_VERSION: i64 = -32022;
    /// MCP 2026-07-28: the request needs a client capability it did not
    /// declare.
    pub const MISSING_CAPABILITY: i64 = -32021;
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
            assert_eq!(v["method"], r.marker_method(), "{r}");
            match r.envelope() {
                Some(_) => assert_eq!(v["params"]["_meta"][super::VERSION_KEY], r.as_str(), "{r} names itself"),
                None => assert_eq!(v["method"], "ping", "{r} has ping"),
            }
        }
    }
}

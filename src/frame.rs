//! Frames: the exact bytes the client writes, and what the suite knows about
//! them by construction.

use crate::protocol::{Id, Level, code};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// One logical frame: usually one LF-terminated line, sometimes less (a
/// truncation) or more (a value broken across lines).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The exact bytes, terminator included (serialized escaped, as a
    /// Rust byte-string body).
    #[serde(with = "crate::escape::escaped")]
    pub bytes: Vec<u8>,
    /// What the frame must cause.
    pub expect: Expect,
    /// The valid request id the frame carries, if it carries one.
    pub id: Option<Id>,
    /// Every canary token inside the frame's would-be action arguments.
    pub tokens: Vec<String>,
    /// The attack family that made it (`"control"` for plain valid frames).
    pub family: Cow<'static, str>,
    /// The sub-kind within the family, stable and snake_case.
    pub kind: Cow<'static, str>,
    /// Where the bytes hold placeholders the driver fills from an earlier
    /// answer before it writes the frame (a multi round-trip retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Fill>,
}

/// What a frame's placeholders are filled from ([`crate::fill`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fill {
    /// The request whose `input_required` result hands out the state.
    pub from: Id,
    /// What is done to the state before it is sent back.
    pub state: Reuse,
}

/// What a retry does with the state it was handed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reuse {
    /// Sends it back as it came.
    Verbatim,
    /// Changes the character at this position (modulo its length) to
    /// another of its kind.
    Altered {
        /// Which character.
        at: u8,
    },
}

impl Fill {
    /// Where the `requestState` goes: a JSON string the fill replaces whole.
    pub const STATE: &str = r#""portcullis:fill:requestState""#;
    /// Where the answers go: a JSON string the fill replaces with an object.
    pub const ANSWERS: &str = r#""portcullis:fill:inputResponses""#;
}

/// What a frame must cause, known when it is built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Expect {
    /// Valid and causes no action: handshake, ping, tools/list, blank lines.
    /// `request` is true when it carries an id and so needs a success response.
    Inert {
        /// Whether a success response is owed.
        request: bool,
    },
    /// Valid: each call must reach the executor exactly once with exactly
    /// its arguments (several only for a batch).
    Act(Vec<Call>),
    /// Must never reach the executor, for the reason `Rule` names.
    Reject(Rule),
    /// Either reading is fine (the rule is a tolerated one): rejected with
    /// no effect, or each call acting once with exactly its arguments.
    Tolerate(Rule, Vec<Call>),
    /// Breaks a rule above the level the session is judged at: it may be
    /// rejected, or act at most once, and owes no particular reply.
    Unjudged(Rule),
}

impl Frame {
    /// The ids a response must carry: a valid request's, each call's, a
    /// refused request's, and a tolerated request's that every reader reads
    /// whole ([`Rule::read_whole`]: served or refused, its answer carries
    /// its id). These are what a client waits for, each by its deadline.
    pub fn owed_ids(&self) -> Vec<Id> {
        match &self.expect {
            Expect::Inert { request: true } => self.id.iter().cloned().collect(),
            Expect::Act(calls) => calls.iter().map(|c| c.id.clone()).collect(),
            Expect::Reject(rule) if matches!(rule.reply(), Reply::Error { .. }) && !rule.null_id_ok() => {
                self.id.iter().cloned().collect()
            }
            Expect::Tolerate(rule, _) if rule.read_whole() => self.id.iter().cloned().collect(),
            _ => vec![],
        }
    }

    /// Every id an answer to this frame may carry: its own, and each
    /// integer or plain string its bytes hold as an `"id"` member, as a
    /// reader that splits the line, or keeps another of its keys, reads
    /// them (two calls joined by a CR, a call hidden in a string, a
    /// duplicated id).
    pub fn named_ids(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self.id.iter().cloned().collect();
        for at in memchr::memmem::find_iter(&self.bytes, b"\"id\":") {
            let rest = &self.bytes[at + 5..];
            let named = match rest.first() {
                Some(b'"') => rest[1..].iter().position(|b| *b == b'"' || *b == b'\\').and_then(|end| {
                    (rest.get(end + 1) == Some(&b'"')).then(|| std::str::from_utf8(&rest[1..end + 1]).ok())?
                }),
                _ => {
                    let end = rest.iter().position(|b| !b"-0123456789".contains(b)).unwrap_or(rest.len());
                    std::str::from_utf8(&rest[..end]).ok().filter(|t| !t.is_empty())
                }
            };
            let id = match (rest.first(), named) {
                (Some(b'"'), Some(text)) => Some(Id::Str(text.to_owned())),
                (_, Some(text)) => text.parse().ok().map(Id::Int),
                _ => None,
            };
            ids.extend(id.filter(|id| !ids.contains(id)));
        }
        ids
    }

    /// Whether this frame owes a response that may come with its id or, as
    /// JSON-RPC allows where the id could not be read or the request was
    /// invalid, with a null id: a malformed or invalid must-reject frame
    /// owed an error, or a tolerated frame that carries an id and that a
    /// reader may not read whole (a CR before the LF, a number no double
    /// holds, a call past a line limit).
    pub fn owes_anonymous_error(&self) -> bool {
        match &self.expect {
            Expect::Reject(rule) => rule.null_id_ok(),
            Expect::Tolerate(rule, _) => self.id.is_some() && !rule.read_whole(),
            _ => false,
        }
    }
}

impl Expect {
    /// The rule when the frame is must-reject.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Expect::Reject(r) => Some(*r),
            _ => None,
        }
    }

    /// The rule the frame breaks, whatever it is held to: must-reject,
    /// tolerated either way, or above the level judged.
    pub fn rule_or_tolerated(&self) -> Option<Rule> {
        match self {
            Expect::Reject(r) | Expect::Tolerate(r, _) | Expect::Unjudged(r) => Some(*r),
            _ => None,
        }
    }
}

/// A valid `tools/call` as the executor must receive it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The request id.
    pub id: Id,
    /// The canary token inside the arguments.
    pub token: String,
    /// The tool name.
    pub tool: String,
    /// Exactly the arguments the request carried.
    pub arguments: Map<String, Value>,
}

/// How a must-reject frame is classed, which decides what the session policy
/// requires after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Class {
    /// Bytes that are not one strict JSON value on one line. Closes under `close`.
    Malformed,
    /// One JSON value that is not a valid request here. Closes under `close`.
    Invalid,
    /// A well-formed request the gateway must refuse; the session goes on
    /// under both policies.
    Refused,
}

/// The class of input a rule belongs to: what a finding's root cause is
/// about. One server behaviour (a line that is no JSON gets no answer)
/// shows under every rule of its class, and is one finding, with each rule
/// that showed it as evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Cause {
    /// Bytes that are no JSON text on one line.
    UnparseableLine,
    /// A line ending other than a lone LF.
    LineEnding,
    /// A line or a call larger than a reader may be built to hold.
    Oversize,
    /// JSON that readers read differently (duplicate keys, surrogates,
    /// numbers past doubles, a BOM, a request that is also a response).
    AmbiguousJson,
    /// Nesting deeper than any request needs.
    NestingDepth,
    /// JSON that is no valid JSON-RPC request, or a `tools/call` whose
    /// `name` or `arguments` are not of the schema's types.
    InvalidRequest,
    /// A request before the session was opened.
    BeforeOpening,
    /// A method of the handshake era where the session had its handshake,
    /// or has none.
    HandshakeAgain,
    /// A 2026-07-28 envelope missing, broken, or naming another revision.
    BadEnvelopeVersion,
    /// A request that needs a client capability its envelope does not
    /// declare.
    UndeclaredCapability,
    /// A retry of a call that must be confirmed, with a state or answers
    /// it was not handed.
    UnconfirmedRetry,
    /// A well-formed `tools/call` naming a tool the server does not offer,
    /// or with arguments its schema does not allow. (A name that is no
    /// string or arguments that are no object make an invalid request.)
    ToolCall,
    /// A method the server does not have.
    MethodNotFound,
    /// A tool the caller may not run.
    Authorization,
}

impl Cause {
    /// Every cause.
    pub const ALL: [Cause; 14] = [
        Cause::UnparseableLine,
        Cause::LineEnding,
        Cause::Oversize,
        Cause::AmbiguousJson,
        Cause::NestingDepth,
        Cause::InvalidRequest,
        Cause::BeforeOpening,
        Cause::HandshakeAgain,
        Cause::BadEnvelopeVersion,
        Cause::UndeclaredCapability,
        Cause::UnconfirmedRetry,
        Cause::ToolCall,
        Cause::MethodNotFound,
        Cause::Authorization,
    ];

    /// Its stable id.
    pub fn id(self) -> &'static str {
        match self {
            Cause::UnparseableLine => "unparseable_line",
            Cause::LineEnding => "line_ending",
            Cause::Oversize => "oversize",
            Cause::AmbiguousJson => "ambiguous_json",
            Cause::NestingDepth => "nesting_depth",
            Cause::InvalidRequest => "invalid_request",
            Cause::BeforeOpening => "before_opening",
            Cause::HandshakeAgain => "handshake_again",
            Cause::BadEnvelopeVersion => "bad_envelope_version",
            Cause::UndeclaredCapability => "undeclared_capability",
            Cause::UnconfirmedRetry => "unconfirmed_retry",
            Cause::ToolCall => "tool_call",
            Cause::MethodNotFound => "method_not_found",
            Cause::Authorization => "authorization",
        }
    }

    /// Looks a cause up by its id.
    pub fn from_id(id: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.id() == id)
    }

    /// What input it is about, as a noun phrase.
    pub fn what(self) -> &'static str {
        match self {
            Cause::UnparseableLine => "a line that is no JSON",
            Cause::LineEnding => "a line ending other than LF",
            Cause::Oversize => "a line or call larger than a reader may hold",
            Cause::AmbiguousJson => "JSON that readers read differently",
            Cause::NestingDepth => "nesting deeper than a request needs",
            Cause::InvalidRequest => "JSON that is no valid request",
            Cause::BeforeOpening => "a request before the session was opened",
            Cause::HandshakeAgain => "a handshake-era method where the session has had its handshake or has none",
            Cause::BadEnvelopeVersion => {
                "a request whose 2026-07-28 envelope is missing, broken or of another revision"
            }
            Cause::UndeclaredCapability => "a request needing a capability its own envelope does not declare",
            Cause::UnconfirmedRetry => "a retry of a call that must be confirmed, without what confirms it",
            Cause::ToolCall => "a tool call naming an unknown tool or breaking its schema",
            Cause::MethodNotFound => "a method the server does not have",
            Cause::Authorization => "a tool the caller may not run",
        }
    }
}

impl Rule {
    /// The class of input it belongs to. No class holds rules of both the
    /// spec and the hardening level, nor rules that differ in whether a
    /// tool result may refuse them, so the findings of one key share one
    /// level ([`Violation::level`](crate::check::Violation::level)).
    pub fn cause(self) -> Cause {
        use Rule::*;
        match self {
            StrayText | MultipleValues | Truncated | BrokenLine | RawControl | InvalidUtf8 | NulByte
            | NonFiniteNumber | NotStrictJson => Cause::UnparseableLine,
            ForeignTerminator | CrBeforeLf => Cause::LineEnding,
            LineTooLong | LargeMessage => Cause::Oversize,
            ByteOrderMark | LoneSurrogate | DuplicateKey | NumberOutOfRange | ImpreciseNumber | ImpreciseId
            | AmbiguousMessage => Cause::AmbiguousJson,
            TooDeep => Cause::NestingDepth,
            NotAnObject | BadJsonrpc | BadId | BadMethod | BadParams | PositionalParams | BatchNotAllowed
            | EmptyBatch | ClientResponse | NotificationCall | BadToolName | BadArguments => Cause::InvalidRequest,
            BeforeInitialize => Cause::BeforeOpening,
            RepeatedInitialize | LegacyMethod => Cause::HandshakeAgain,
            MissingEnvelope | BadEnvelope | UnsupportedVersion | HandshakeVersion | ModernEnvelope
            | ReservedMetaKey | MalformedMetaKey => Cause::BadEnvelopeVersion,
            MissingCapability => Cause::UndeclaredCapability,
            ForgedState | UnrequestedInput | ReplayedState | AlteredState | ForeignState => Cause::UnconfirmedRetry,
            UnknownArgument | MistypedArgument | MissingArgument | UnknownMember | UnknownTool => Cause::ToolCall,
            UnknownMethod => Cause::MethodNotFound,
            UnauthorizedTool => Cause::Authorization,
        }
    }
}

/// What reply a must-reject frame is owed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// None: notifications and client-sent responses get no answer.
    Silent,
    /// An error response (with the frame's id where it has a valid one,
    /// else `null`), its code one of `codes` (any code when empty).
    Error {
        /// Acceptable JSON-RPC error codes; empty means any.
        codes: &'static [i64],
        /// Whether a result with `isError: true` also answers it, in
        /// revisions that allow tool errors as results.
        tool_error_ok: bool,
    },
}

macro_rules! rules {
    ($($variant:ident => $id:literal, $class:ident, $level:ident, $codes:expr, $tool_err:literal, $cite:expr, $why:literal;)*) => {
        /// Why a frame must be rejected (or, for a tolerated rule, why it
        /// may be): a MUST of a specification, or a hardening rule against
        /// parser differentials. Ids are stable.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum Rule {
            $(#[doc = $why] #[serde(rename = $id)] $variant,)*
        }

        impl Rule {
            /// Every rule.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// Stable snake_case id.
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// The class, which decides what the policy requires.
            pub fn class(self) -> Class {
                match self { $(Rule::$variant => Class::$class,)* }
            }

            /// The level: `spec` (a MUST of a specification), `hardening`
            /// (stricter than them) or `tolerated` (either reading is fine).
            pub fn level(self) -> Level {
                match self { $(Rule::$variant => Level::$level,)* }
            }

            /// Where the rule comes from: the specification and section.
            pub fn citation(self) -> &'static str {
                match self { $(Rule::$variant => $cite,)* }
            }

            /// One sentence: why the frame must not act.
            pub fn why(self) -> &'static str {
                match self { $(Rule::$variant => $why,)* }
            }

            /// The reply the frame is owed when the session stays open.
            pub fn reply(self) -> Reply {
                match self {
                    $(Rule::$variant => match $codes {
                        None => Reply::Silent,
                        Some(codes) => Reply::Error { codes, tool_error_ok: $tool_err },
                    },)*
                }
            }
        }
    };
}

const PARSE: Option<&[i64]> = Some(&[code::PARSE_ERROR, code::INVALID_REQUEST]);
const INVALID: Option<&[i64]> = Some(&[code::INVALID_REQUEST]);
const PARAMS: Option<&[i64]> = Some(&[code::INVALID_PARAMS, code::INVALID_REQUEST]);
const ARGS: Option<&[i64]> = Some(&[code::INVALID_PARAMS]);
const ANY: Option<&[i64]> = Some(&[]);
const NONE: Option<&[i64]> = None;

const RFC_GRAMMAR: &str = "RFC 8259 §2 (JSON-text = ws value ws)";
const RFC_STRINGS: &str = "RFC 8259 §7 (control characters MUST be escaped)";
const RFC_LIMITS: &str = "RFC 8259 §9 (a parser may set limits; readers differ)";
const RPC_REQUEST: &str = "JSON-RPC 2.0 §4 (the Request object)";
const MCP_STDIO: &str = "MCP transports: stdio (newline-delimited, no embedded newlines)";
const MCP_TOOLS: &str = "MCP server/tools (servers MUST validate all tool inputs)";
const MCP_LIFECYCLE: &str = "MCP lifecycle (initialization MUST be the first interaction)";
const MCP_STATELESS: &str = "MCP 2026-07-28 schema (no `initialize`, `ping` or `logging/setLevel`; no MUST refuses them on a connection of both eras)";
const MCP_ENVELOPE: &str = "MCP 2026-07-28 schema (RequestParams `_meta` requires `protocolVersion`, a string, and `clientCapabilities`, an object)";
const UNSUPPORTED: Option<&[i64]> = Some(&[code::UNSUPPORTED_VERSION]);
const MCP_META_KEYS: &str = "MCP 2026-07-28 schema (MetaObject: key names and reserved prefixes; implementations MUST NOT make assumptions about values at reserved keys)";
const MCP_ROUND_TRIP: &str = "MCP 2026-07-28 multi round-trip (a retry carries the answers and the `requestState` an `input_required` result asked for; no MUST obliges a server to check them, and one that hands out no `requestState` cannot tell answers asked for from others)";

rules! {
    StrayText => "stray_text", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "text that is not JSON on the line (a banner, debug line, prompt or page)";
    MultipleValues => "multiple_values", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "more than one JSON value on one line";
    Truncated => "truncated", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "a JSON value cut short";
    BrokenLine => "broken_line", Malformed, Spec, PARSE, false, MCP_STDIO, "one value broken across lines by an LF";
    RawControl => "raw_control", Malformed, Spec, PARSE, false, RFC_STRINGS, "a raw control character (LF, CR, TAB) inside a string";
    ForeignTerminator => "foreign_terminator", Malformed, Spec, PARSE, false, MCP_STDIO, "a line terminator other than LF";
    CrBeforeLf => "cr_before_lf", Malformed, Tolerated, PARSE, false, "RFC 8259 §2 (CR is whitespace)", "a CR right before the LF, which JSON reads as whitespace";
    InvalidUtf8 => "invalid_utf8", Malformed, Spec, PARSE, false, "RFC 8259 §8.1 (UTF-8 MUST be used)", "bytes that are not UTF-8";
    ByteOrderMark => "byte_order_mark", Malformed, Hardening, ANY, true, "RFC 8259 §8.1 (a BOM MUST NOT be added; a reader MAY ignore it)", "a byte-order mark before the value";
    NulByte => "nul_byte", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "a NUL byte on the line";
    LoneSurrogate => "lone_surrogate", Malformed, Hardening, ANY, true, "RFC 8259 §8.2 (readers of lone surrogates differ)", "an escaped lone UTF-16 surrogate";
    DuplicateKey => "duplicate_key", Malformed, Hardening, ANY, true, "RFC 8259 §4 (names SHOULD be unique; readers differ)", "the same key twice in one object (after unescaping)";
    NonFiniteNumber => "non_finite_number", Malformed, Spec, PARSE, false, "RFC 8259 §6 (NaN and Infinity are not permitted)", "NaN or Infinity, which JSON has not";
    NumberOutOfRange => "number_out_of_range", Malformed, Hardening, ANY, true, "RFC 8259 §6 (past IEEE 754 doubles, readers differ)", "a number no IEEE double holds";
    ImpreciseNumber => "imprecise_number", Invalid, Tolerated, ANY, true, "RFC 8259 §6 (interoperable readers expect no more precision than IEEE doubles)", "a number no double holds exactly, where no field reads it: a reader may round it or refuse it";
    ImpreciseId => "imprecise_id", Invalid, Hardening, ANY, false, "RFC 8259 §6 (integers past 2^53 are read differently)", "an integer id past 2^53, which many readers cannot echo exactly";
    TooDeep => "too_deep", Malformed, Hardening, ANY, true, RFC_LIMITS, "nesting deeper than any request needs";
    NotStrictJson => "not_strict_json", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "comments, trailing commas or single quotes";
    UnknownMember => "unknown_member", Refused, Tolerated, ANY, true, "MCP schema (request params may carry other members; no MUST obliges a server to accept one)", "a member beside `arguments` that the schema names nowhere: a server may refuse the call, or act on it once";
    LargeMessage => "large_message", Refused, Tolerated, ANY, true, "RFC 8259 §9 (a reader may limit the size of texts it accepts)", "a valid call larger than a server may be built to hold: it may refuse it, but not act on a cut one";
    LineTooLong => "line_too_long", Malformed, Spec, PARSE, false, RFC_GRAMMAR, "a line longer than the gateway's bound";
    NotAnObject => "not_an_object", Invalid, Spec, INVALID, false, RPC_REQUEST, "a JSON value that is not a request object";
    BadJsonrpc => "bad_jsonrpc", Invalid, Spec, INVALID, false, "JSON-RPC 2.0 §4 (`jsonrpc` MUST be exactly \"2.0\")", "`jsonrpc` missing or not exactly \"2.0\"";
    BadId => "bad_id", Invalid, Spec, INVALID, false, "MCP basic (request ids MUST be a string or integer, not null)", "an id that is not a string or an integer";
    BadMethod => "bad_method", Invalid, Spec, INVALID, false, "JSON-RPC 2.0 §4 (`method` is a String)", "`method` that is not a string";
    BadParams => "bad_params", Invalid, Spec, PARAMS, false, "JSON-RPC 2.0 §4.2 and the MCP schema (params is an object)", "`params` that is not an object";
    PositionalParams => "positional_params", Refused, Spec, PARAMS, false, "MCP schema (params is an object; JSON-RPC 2.0 §4.2 also allows an array)", "`params` given by position, as an array";
    BatchNotAllowed => "batch_not_allowed", Invalid, Spec, INVALID, false, "MCP schema (only 2025-03-26 has JSON-RPC batches)", "a batch in a revision without batches";
    EmptyBatch => "empty_batch", Invalid, Spec, INVALID, false, "JSON-RPC 2.0 §6 (an empty batch is an invalid request)", "an empty batch";
    ClientResponse => "client_response", Refused, Spec, NONE, false, "JSON-RPC 2.0 §5 (a response answers a request the receiver sent)", "a response the client sent to no request";
    AmbiguousMessage => "ambiguous_message", Invalid, Hardening, NONE, false, "JSON-RPC 2.0 §4 and §5 (no member tells a request from a response; readers differ)", "both `method` and `result`: a request to one reader, a response to another";
    BadToolName => "bad_tool_name", Refused, Spec, PARAMS, false, "MCP schema (CallToolRequest `name` is a string)", "tools/call `name` missing or not a string";
    BadArguments => "bad_arguments", Refused, Spec, PARAMS, false, "MCP schema (CallToolRequest `arguments` is an object)", "tools/call `arguments` not an object";
    BeforeInitialize => "before_initialize", Invalid, Spec, ANY, false, MCP_LIFECYCLE, "a request before `initialize`";
    RepeatedInitialize => "repeated_initialize", Invalid, Hardening, ANY, false, "MCP lifecycle (one initialization per session; no MUST refuses a second)", "a second `initialize`";
    MissingEnvelope => "missing_envelope", Refused, Spec, PARAMS, false, MCP_ENVELOPE, "a request of the stateless revision without its envelope";
    BadEnvelope => "bad_envelope", Refused, Spec, PARAMS, false, MCP_ENVELOPE, "an envelope half built, or with a key of the wrong type";
    UnsupportedVersion => "unsupported_version", Refused, Spec, UNSUPPORTED, false, "MCP 2026-07-28 schema (a server that does not support the requested version MUST return -32022)", "an envelope naming a revision no server speaks";
    HandshakeVersion => "handshake_version", Refused, Spec, ANY, false, "MCP lifecycle (a revision of the handshake era is served only after `initialize`)", "an envelope naming a revision of the handshake era, on a connection no `initialize` opened";
    ModernEnvelope => "modern_envelope", Refused, Tolerated, ANY, true, "MCP schema (`_meta` keys under `io.modelcontextprotocol/` are MCP's; the handshake era defines none of these)", "a call with a 2026-07-28 envelope in a session of the handshake era: it may be served, or refused";
    LegacyMethod => "legacy_method", Refused, Hardening, ANY, false, MCP_STATELESS, "a method of the handshake era (`initialize`, `ping`, `logging/setLevel`) in a session of a revision without one, which a server of both eras may still answer";
    MissingCapability => "missing_capability", Refused, Spec, ANY, true, "MCP 2026-07-28 schema (capabilities are declared per request; servers MUST NOT infer capabilities from prior requests; a missing one is signalled by -32021)", "a request that needs a client capability its own envelope does not declare, though an earlier request did";
    ForgedState => "forged_state", Refused, Hardening, ANY, true, MCP_ROUND_TRIP, "a retry of a call that must be confirmed, carrying a `requestState` no `input_required` result handed out (asking again answers it)";
    UnrequestedInput => "unrequested_input", Refused, Hardening, ANY, true, MCP_ROUND_TRIP, "a call that must be confirmed, carrying answers (`inputResponses`) to input no `input_required` result asked for (asking again answers it)";
    ReplayedState => "replayed_state", Refused, Hardening, ANY, true, MCP_ROUND_TRIP, "a retry carrying a `requestState` another retry of the same call already redeemed (asking again answers it)";
    AlteredState => "altered_state", Refused, Hardening, ANY, true, MCP_ROUND_TRIP, "a retry carrying the `requestState` it was handed with one character changed (asking again answers it)";
    ForeignState => "foreign_state", Refused, Hardening, ANY, true, MCP_ROUND_TRIP, "a call carrying the `requestState` and answers handed out for a call with other arguments (asking again answers it)";
    ReservedMetaKey => "reserved_meta_key", Refused, Tolerated, ANY, true, MCP_META_KEYS, "a `_meta` key under a prefix MCP reserves that no revision defines: a server may ignore it or refuse the call, and must not act twice";
    MalformedMetaKey => "malformed_meta_key", Refused, Tolerated, ANY, true, MCP_META_KEYS, "a `_meta` key whose name breaks the schema's naming rules: a server may ignore it or refuse the call";
    UnknownMethod => "unknown_method", Refused, Spec, Some(&[code::METHOD_NOT_FOUND]), false, "JSON-RPC 2.0 §5.1 (-32601 Method not found)", "a method the server does not have";
    UnknownTool => "unknown_tool", Refused, Spec, ARGS, true, "MCP server/tools (error handling: unknown tools)", "a tool the gateway does not offer";
    UnauthorizedTool => "unauthorized_tool", Refused, Spec, ANY, true, "the gateway's own policy (--forbidden-tool)", "a tool the caller may not run";
    UnknownArgument => "unknown_argument", Refused, Spec, ARGS, true, MCP_TOOLS, "an argument the tool's schema does not allow";
    MistypedArgument => "mistyped_argument", Refused, Spec, ARGS, true, MCP_TOOLS, "an argument of the wrong type";
    MissingArgument => "missing_argument", Refused, Spec, ARGS, true, MCP_TOOLS, "a required argument left out";
    NotificationCall => "notification_call", Refused, Spec, NONE, false, "MCP basic (requests MUST include an id)", "a request method sent as a notification";
}

impl Class {
    /// Whether this class ends the session under the `close` policy.
    pub fn closes(self) -> bool {
        !matches!(self, Class::Refused)
    }
}

impl Rule {
    /// Whether a frame breaking this rule must end the session under
    /// `close`: a malformed or invalid frame at the spec level. After any
    /// other must-reject frame the gateway may end it, or go on.
    pub fn must_close(self) -> bool {
        self.class().closes() && self.level() == Level::Spec
    }

    /// Whether every reader reads a frame that breaks this tolerated rule
    /// as a whole request, its id included: a well-formed request of
    /// ordinary size with a member or `_meta` key some servers refuse. A
    /// call past a line limit, a CR before the LF or a number no double
    /// holds may instead be refused as a line, with a null id.
    pub fn read_whole(self) -> bool {
        matches!(self, Rule::UnknownMember | Rule::ModernEnvelope | Rule::ReservedMetaKey | Rule::MalformedMetaKey)
    }

    /// Whether a server may answer a frame breaking this rule by asking for
    /// the input again (an `input_required` result), which acts on nothing.
    pub fn may_ask_again(self) -> bool {
        matches!(
            self,
            Rule::ForgedState | Rule::UnrequestedInput | Rule::ReplayedState | Rule::AlteredState | Rule::ForeignState
        )
    }

    /// Whether a tool may refuse a frame breaking this rule with an
    /// `isError` result, in revisions that allow tool errors as results.
    pub fn tool_error_ok(self) -> bool {
        matches!(self.reply(), Reply::Error { tool_error_ok: true, .. })
    }

    /// Whether the error a frame breaking this rule is owed may come with a
    /// null id: JSON-RPC gives one to a request it could not read or found
    /// invalid, so to every rule an Invalid Request (-32600) answers.
    pub fn null_id_ok(self) -> bool {
        match self.reply() {
            Reply::Error { codes, .. } => self.class() != Class::Refused || codes.contains(&code::INVALID_REQUEST),
            Reply::Silent => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_a_frame_names_are_its_own_and_each_id_member_its_bytes_hold() {
        let frame = |bytes: &str, id: Option<Id>| Frame {
            bytes: bytes.as_bytes().to_vec(),
            expect: Expect::Reject(Rule::ForeignTerminator),
            id,
            tokens: vec![],
            family: "terminator".into(),
            kind: "cr_separated".into(),
            fill: None,
        };
        // Two calls joined by a CR: a reader that splits the line answers both.
        let joined = frame(
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r{\"id\":8,\"method\":\"ping\"}\n",
            Some(Id::Int(7)),
        );
        assert_eq!(joined.named_ids(), [Id::Int(7), Id::Int(8)]);
        let strings = frame("{\"id\":\"a\",\"x\":{\"id\":\"b\\\"c\"},\"id\":-3}\n", None);
        assert_eq!(strings.named_ids(), [Id::Str("a".into()), Id::Int(-3)], "an escaped string is left out");
        assert!(frame("{\"id\":null,\"id\":true}\n", None).named_ids().is_empty());
    }
}

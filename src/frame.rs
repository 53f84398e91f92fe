//! Frames: the exact bytes the client writes, and what the suite knows about
//! them by construction.

use crate::protocol::{Id, code};
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
}

/// What a frame must cause, known when it is built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
}

impl Frame {
    /// The ids a response must carry: a valid request's, each call's, and a
    /// rejected request's whose id is readable. A frame whose error cannot
    /// carry its id (a malformed one) owes an error with a null id instead.
    pub fn owed_ids(&self) -> Vec<Id> {
        match &self.expect {
            Expect::Inert { request: true } => self.id.iter().cloned().collect(),
            Expect::Act(calls) => calls.iter().map(|c| c.id.clone()).collect(),
            Expect::Reject(rule) if matches!(rule.reply(), Reply::Error { .. }) && rule.class() != Class::Malformed => {
                self.id.iter().cloned().collect()
            }
            _ => vec![],
        }
    }

    /// Whether this must-reject frame owes an error that cannot carry its id
    /// (none is readable, or the frame is malformed): one with a null id.
    pub fn owes_anonymous_error(&self) -> bool {
        let Expect::Reject(rule) = &self.expect else { return false };
        matches!(rule.reply(), Reply::Error { .. }) && (self.id.is_none() || rule.class() == Class::Malformed)
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
pub enum Class {
    /// Bytes that are not one strict JSON value on one line. Closes under `close`.
    Malformed,
    /// One JSON value that is not a valid request here. Closes under `close`.
    Invalid,
    /// A well-formed request the gateway must refuse; the session goes on
    /// under both policies.
    Refused,
}

/// What reply a must-reject frame is owed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    ($($variant:ident => $id:literal, $class:ident, $codes:expr, $tool_err:literal, $why:literal;)*) => {
        /// Why a frame must be rejected: a MUST of the spec, or an ambiguity
        /// rule. Ids are stable.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

rules! {
    StrayText => "stray_text", Malformed, PARSE, false, "text that is not JSON on the line (a banner, debug line, prompt or page)";
    MultipleValues => "multiple_values", Malformed, PARSE, false, "more than one JSON value on one line";
    Truncated => "truncated", Malformed, PARSE, false, "a JSON value cut short";
    BrokenLine => "broken_line", Malformed, PARSE, false, "one value broken across lines by an LF";
    RawControl => "raw_control", Malformed, PARSE, false, "a raw control character (LF, CR, TAB) inside a string";
    ForeignTerminator => "foreign_terminator", Malformed, PARSE, false, "a line terminator other than LF";
    InvalidUtf8 => "invalid_utf8", Malformed, PARSE, false, "bytes that are not UTF-8";
    ByteOrderMark => "byte_order_mark", Malformed, PARSE, false, "a byte-order mark before the value";
    NulByte => "nul_byte", Malformed, PARSE, false, "a NUL byte on the line";
    LoneSurrogate => "lone_surrogate", Malformed, PARSE, false, "an escaped lone UTF-16 surrogate";
    DuplicateKey => "duplicate_key", Malformed, PARSE, false, "the same key twice in one object (after unescaping)";
    NonFiniteNumber => "non_finite_number", Malformed, PARSE, false, "NaN or Infinity, which JSON has not";
    NumberOutOfRange => "number_out_of_range", Malformed, PARSE, false, "a number no IEEE double holds";
    TooDeep => "too_deep", Malformed, PARSE, false, "nesting deeper than any request needs";
    NotStrictJson => "not_strict_json", Malformed, PARSE, false, "comments, trailing commas or single quotes";
    LineTooLong => "line_too_long", Malformed, PARSE, false, "a line longer than the gateway's bound";
    NotAnObject => "not_an_object", Invalid, INVALID, false, "a JSON value that is not a request object";
    BadJsonrpc => "bad_jsonrpc", Invalid, INVALID, false, "`jsonrpc` missing or not exactly \"2.0\"";
    BadId => "bad_id", Invalid, INVALID, false, "an id that is not a string or an integer";
    BadMethod => "bad_method", Invalid, INVALID, false, "`method` that is not a string";
    BadParams => "bad_params", Invalid, PARAMS, false, "`params` that is not an object";
    BatchNotAllowed => "batch_not_allowed", Invalid, INVALID, false, "a batch in a revision without batches";
    EmptyBatch => "empty_batch", Invalid, INVALID, false, "an empty batch";
    ClientResponse => "client_response", Invalid, NONE, false, "a response the client sent to no request";
    BadToolName => "bad_tool_name", Invalid, PARAMS, false, "tools/call `name` missing or not a string";
    BadArguments => "bad_arguments", Invalid, PARAMS, false, "tools/call `arguments` not an object";
    BeforeInitialize => "before_initialize", Invalid, ANY, false, "a request before `initialize`";
    RepeatedInitialize => "repeated_initialize", Invalid, ANY, false, "a second `initialize`";
    UnknownMethod => "unknown_method", Refused, Some(&[code::METHOD_NOT_FOUND]), false, "a method the server does not have";
    UnknownTool => "unknown_tool", Refused, ARGS, true, "a tool the gateway does not offer";
    UnauthorizedTool => "unauthorized_tool", Refused, ANY, true, "a tool the caller may not run";
    UnknownArgument => "unknown_argument", Refused, ARGS, true, "an argument the tool's schema does not allow";
    MistypedArgument => "mistyped_argument", Refused, ARGS, true, "an argument of the wrong type";
    MissingArgument => "missing_argument", Refused, ARGS, true, "a required argument left out";
    NotificationCall => "notification_call", Refused, NONE, false, "a request method sent as a notification";
}

impl Class {
    /// Whether this class ends the session under the `close` policy.
    pub fn closes(self) -> bool {
        !matches!(self, Class::Refused)
    }
}

//! JSON ambiguity: duplicate keys (in the envelope and inside params, plain or
//! escaped), NaN and Infinity, numbers no double holds or no id may be, deep
//! nesting, and the lenient-parser dialects (comments, trailing commas,
//! single quotes). The valid look-alike is an escaped key name.

use super::{Ctx, json_str, kinds, line};
use crate::catalogue::map_strings;
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;
use serde_json::Value;

kinds! {
    /// Which ambiguity.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: the token-carrying argument's key written with an escape.
        EscapedKey => "escaped_key",
        /// `method` twice: "ping" first, "tools/call" last.
        DupMethod => "duplicate_method",
        /// `id` twice.
        DupId => "duplicate_id",
        /// `name` twice: an unknown tool first, the real one last.
        DupName => "duplicate_name",
        /// The token-carrying argument twice.
        DupArgument => "duplicate_argument",
        /// The token-carrying argument twice, the second key escaped.
        EscapedDupArgument => "escaped_duplicate_argument",
        /// `params` twice.
        DupParams => "duplicate_params",
        /// `NaN` as the id.
        NanId => "nan_id",
        /// `Infinity` as the id.
        InfinityId => "infinity_id",
        /// `1e400` as the id.
        HugeExponentId => "huge_exponent_id",
        /// 2^64 as the id: JSON, but no integer id a peer can echo exactly.
        BeyondU64Id => "beyond_u64_id",
        /// The token-carrying argument nested from 129 to 100,000 deep.
        DeepNesting => "deep_nesting",
        /// A comment inside the envelope.
        Comment => "comment",
        /// A trailing comma inside the arguments.
        TrailingComma => "trailing_comma",
        /// Single-quoted strings in the arguments.
        SingleQuotes => "single_quotes",
    }
}

/// An ambiguity attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Ambiguity {
    /// Which ambiguity.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
    /// Picks the nesting depth for `DeepNesting`.
    pub depth: u8,
}

const FAMILY: &str = "ambiguity";

use super::placed::DEPTHS;

/// `{"u` + `\u0072` + `l"...`: the key with its first letter escaped.
fn escaped(key: &str) -> String {
    let mut chars = key.chars();
    let first = chars.next().map(|c| format!("\\u{:04x}", c as u32)).unwrap_or_default();
    format!("\"{first}{}\"", chars.as_str())
}

/// `v` as JSON5-style text with single-quoted strings and keys.
fn single_quoted(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Array(items) => format!("[{}]", items.iter().map(single_quoted).collect::<Vec<_>>().join(",")),
        Value::Object(m) => {
            format!(
                "{{{}}}",
                m.iter().map(|(k, x)| format!("'{k}':{}", single_quoted(x))).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

impl Ambiguity {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>(), any::<u8>()).prop_map(|(kind, tool, depth)| Ambiguity { kind, tool, depth }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let parts = ctx.parts(self.tool);
        let args = parts.args_json();
        let params = parts.params_with(&args);
        let key = parts.token_key();
        let value = parts.arguments[&key].to_string();
        // The arguments without the token-carrying one, as `"k":v,` pairs.
        let others: String =
            parts.arguments.iter().filter(|(k, _)| **k != key).map(|(k, v)| format!("{}:{v},", json_str(k))).collect();
        let id = parts.id;
        let env = |id_raw: &str, rest: &str| format!(r#"{{"jsonrpc":"2.0","id":{id_raw},{rest}}}"#);
        let call = |params: &str| format!(r#""method":"tools/call","params":{params}"#);
        let with_args = |a: String| parts.params_with(&a);
        let (text, rule, keep_id) = match self.kind {
            Kind::Valid => return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, kind)],
            Kind::EscapedKey => {
                let text = parts.request_with(&with_args(format!("{{{others}{}:{value}}}", escaped(&key))));
                return vec![ctx.acting(line(text), vec![parts.call()], FAMILY, kind)];
            }
            // The decoy is the marker's method: `ping` where the revision has it.
            Kind::DupMethod => {
                let decoy = ctx.revision.marker_method();
                (env(&id.to_string(), &format!(r#""method":"{decoy}",{}"#, call(&params))), Rule::DuplicateKey, true)
            }
            Kind::DupId => {
                (format!(r#"{{"jsonrpc":"2.0","id":{id},"id":"{id}",{}}}"#, call(&params)), Rule::DuplicateKey, false)
            }
            Kind::DupName => {
                let (open, name) = (parts.params_open(), json_str(&parts.tool.name));
                let p = format!(r#"{open}"name":"no_such_tool","name":{name},"arguments":{args}}}"#);
                (parts.request_with(&p), Rule::DuplicateKey, true)
            }
            Kind::DupArgument | Kind::EscapedDupArgument => {
                let second = if self.kind == Kind::DupArgument { json_str(&key) } else { escaped(&key) };
                let shadow = map_strings(&parts.arguments[&key], &|s| format!("{s}-shadow"));
                let a = format!("{{{others}{}:{shadow},{second}:{value}}}", json_str(&key));
                (parts.request_with(&with_args(a)), Rule::DuplicateKey, true)
            }
            Kind::DupParams => {
                let decoy = parts.params_with("{}");
                (
                    env(&id.to_string(), &format!(r#""method":"tools/call","params":{decoy},"params":{params}"#)),
                    Rule::DuplicateKey,
                    true,
                )
            }
            Kind::NanId => (env("NaN", &call(&params)), Rule::NonFiniteNumber, false),
            Kind::InfinityId => (env("Infinity", &call(&params)), Rule::NonFiniteNumber, false),
            Kind::HugeExponentId => (env("1e400", &call(&params)), Rule::NumberOutOfRange, false),
            Kind::BeyondU64Id => (env("18446744073709551616", &call(&params)), Rule::ImpreciseId, false),
            Kind::DeepNesting => {
                let depth = DEPTHS[self.depth as usize % DEPTHS.len()];
                let nested = format!("{}{value}{}", "[".repeat(depth), "]".repeat(depth));
                (
                    parts.request_with(&with_args(format!("{{{others}{}:{nested}}}", json_str(&key)))),
                    Rule::TooDeep,
                    true,
                )
            }
            Kind::Comment => {
                (env(&id.to_string(), &format!("/* tool call */ {}", call(&params))), Rule::NotStrictJson, true)
            }
            Kind::TrailingComma => (
                parts.request_with(&with_args(format!("{{{others}{}:{value},}}", json_str(&key)))),
                Rule::NotStrictJson,
                true,
            ),
            Kind::SingleQuotes => {
                let quoted = single_quoted(&parts.arguments[&key]);
                (parts.request_with(&with_args(format!("{{{others}'{key}':{quoted}}}"))), Rule::NotStrictJson, true)
            }
        };
        let id = keep_id.then_some(Id::Int(id));
        vec![ctx.rejected(line(text), rule, id, vec![parts.token.clone()], FAMILY, kind)]
    }
}

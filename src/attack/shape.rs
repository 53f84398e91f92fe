//! MCP shape errors in tools/call: `name` and `arguments` of the wrong type,
//! unknown, mistyped and missing arguments, a tool the gateway does not offer
//! and one the caller may not run. The valid look-alike sets an optional
//! argument.

use super::{Ctx, json_str, kinds, line};
use crate::catalogue::ArgKind;
use crate::frame::{Frame, Rule};
use proptest::prelude::*;
use serde_json::Value;

kinds! {
    /// Which shape error.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: every optional enum argument set to its last allowed value.
        WithOptional => "with_optional",
        /// `name: 7`.
        NameNumber => "name_number",
        /// `name: null`.
        NameNull => "name_null",
        /// `name: ["fetch"]`.
        NameArray => "name_array",
        /// No `name`.
        NameMissing => "name_missing",
        /// `arguments` as a string holding the real arguments.
        ArgumentsString => "arguments_string",
        /// `arguments` as an array.
        ArgumentsArray => "arguments_array",
        /// `arguments: null`.
        ArgumentsNull => "arguments_null",
        /// An extra argument the schema does not allow.
        UnknownArgument => "unknown_argument",
        /// The token-carrying argument inside an array.
        MistypedArray => "mistyped_array",
        /// The token-carrying argument inside an object.
        MistypedObject => "mistyped_object",
        /// An enum argument set to a value it does not allow.
        BadEnumValue => "bad_enum_value",
        /// A required argument left out.
        MissingArgument => "missing_argument",
        /// A tool the gateway does not offer.
        UnknownTool => "unknown_tool",
        /// The tool name in another case.
        ToolWrongCase => "tool_wrong_case",
        /// A tool the caller may not run.
        Unauthorized => "unauthorized_tool",
    }
}

/// A tools/call shape attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// Which error.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "shape";

impl Shape {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>()).prop_map(|(kind, tool)| Shape { kind, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let mut parts = match self.kind {
            Kind::Unauthorized => match ctx.forbidden_tool() {
                Some(tool) => ctx.parts_for(tool),
                None => ctx.parts(self.tool),
            },
            _ => ctx.parts(self.tool),
        };
        let args = parts.args_json();
        let name = json_str(&parts.tool.name);
        let open = parts.params_open();
        let token_key = parts.token_key();
        let replace = |parts: &super::CallParts, key: &str, raw: String| {
            let mut a = parts.arguments.clone();
            a.remove(key);
            let mut text = Value::Object(a).to_string();
            text.pop();
            let sep = if text.len() > 1 { "," } else { "" };
            parts.params_with(&format!("{text}{sep}{}:{raw}}}", json_str(key)))
        };
        let enum_arg = parts.tool.args.iter().find(|a| matches!(a.kind, ArgKind::Enum(_))).cloned();
        // A token carried in an argument an open schema does not declare
        // (see UnknownArgument) may be of any type there.
        let typed = parts.tool.closed || parts.tool.args.iter().any(|a| a.name == token_key);
        let mistyped = matches!(self.kind, Kind::MistypedArray | Kind::MistypedObject)
            || (self.kind == Kind::BadEnumValue && enum_arg.is_none());
        if mistyped && !typed {
            return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, Kind::Valid.name())];
        }
        let (params, rule) = match self.kind {
            Kind::Valid => return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, kind)],
            Kind::WithOptional => {
                for a in &parts.tool.args.clone() {
                    if let ArgKind::Enum(values) = &a.kind {
                        parts.arguments.insert(a.name.clone(), Value::from(values.last().cloned().unwrap_or_default()));
                    }
                }
                return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, kind)];
            }
            // After the envelope, where the revision has one.
            Kind::NameNumber => (format!(r#"{open}"name":7,"arguments":{args}}}"#), Rule::BadToolName),
            Kind::NameNull => (format!(r#"{open}"name":null,"arguments":{args}}}"#), Rule::BadToolName),
            Kind::NameArray => (format!(r#"{open}"name":[{name}],"arguments":{args}}}"#), Rule::BadToolName),
            Kind::NameMissing => (format!(r#"{open}"arguments":{args}}}"#), Rule::BadToolName),
            Kind::ArgumentsString => (parts.params_with(&json_str(&args)), Rule::BadArguments),
            Kind::ArgumentsArray => (parts.params_with(&format!("[{args}]")), Rule::BadArguments),
            Kind::ArgumentsNull => (parts.params_with("null"), Rule::BadArguments),
            // An extra argument is refused only where the schema forbids it;
            // elsewhere the call is a valid one.
            Kind::UnknownArgument if !parts.tool.closed => {
                return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, Kind::Valid.name())];
            }
            Kind::UnknownArgument => (replace(&parts, "x_extra", json_str(&parts.token)), Rule::UnknownArgument),
            Kind::MistypedArray => {
                let v = parts.arguments[&token_key].to_string();
                (replace(&parts, &token_key, format!("[{v}]")), Rule::MistypedArgument)
            }
            Kind::MistypedObject => {
                let v = parts.arguments[&token_key].to_string();
                (replace(&parts, &token_key, format!(r#"{{"value":{v}}}"#)), Rule::MistypedArgument)
            }
            Kind::BadEnumValue => match enum_arg {
                Some(a) => (replace(&parts, &a.name, json_str("DELETE")), Rule::MistypedArgument),
                None => (replace(&parts, &token_key, "7".into()), Rule::MistypedArgument),
            },
            Kind::MissingArgument => {
                // Only a required argument the call carries can go missing:
                // without one the call stays a valid one.
                let required = parts.tool.args.iter().rev().filter(|a| a.required);
                let mut a = parts.arguments.clone();
                if !required.into_iter().any(|r| a.remove(&r.name).is_some()) {
                    return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, Kind::Valid.name())];
                }
                (parts.params_with(&Value::Object(a).to_string()), Rule::MissingArgument)
            }
            Kind::UnknownTool => (parts.params_naming(&format!("{}_v2", parts.tool.name), &args), Rule::UnknownTool),
            Kind::ToolWrongCase => {
                let mut other = parts.tool.name.to_uppercase();
                if other == parts.tool.name {
                    other = parts.tool.name.to_lowercase();
                }
                if other == parts.tool.name {
                    other.push_str("_X");
                }
                (parts.params_naming(&other, &args), Rule::UnknownTool)
            }
            Kind::Unauthorized => {
                let rule = if parts.tool.authorized { Rule::UnknownTool } else { Rule::UnauthorizedTool };
                let name =
                    if parts.tool.authorized { format!("{}_admin", parts.tool.name) } else { parts.tool.name.clone() };
                (parts.params_naming(&name, &args), rule)
            }
        };
        vec![ctx.rejected_call(parts.request_with(&params), rule, &parts, FAMILY, kind)]
    }
}

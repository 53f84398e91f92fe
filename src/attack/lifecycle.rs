//! Lifecycle abuse: a call before `initialize` (the script moves it ahead of
//! the handshake), a second `initialize`, and a rejected call followed by a
//! valid one of the same tool, which must inherit nothing from it. The valid
//! look-alikes are `ping` and `tools/list`.

use super::{Ctx, kinds, line};
use crate::frame::{Expect, Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// Which abuse.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: `ping`.
        Ping => "ping",
        /// Valid: `tools/list`.
        ToolsList => "tools_list",
        /// A call sent before `initialize`.
        EarlyCall => "early_call",
        /// A second `initialize`.
        RepeatedInitialize => "repeated_initialize",
        /// A call with an extra argument, then a valid call of the same
        /// tool; where the schema allows extra arguments, the first call
        /// names a tool that is not listed instead.
        RejectedThenValid => "rejected_then_valid",
        /// A call of an unknown tool, then a valid call.
        UnknownToolThenValid => "unknown_tool_then_valid",
    }
}

/// A lifecycle attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Lifecycle {
    /// Which abuse.
    pub kind: Kind,
    /// Which runnable tool the calls use.
    pub tool: u8,
}

const FAMILY: &str = "lifecycle";

/// The `notifications/initialized` text that completes the handshake.
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The `initialize` request text for `revision` with request id `id`.
pub(crate) fn initialize_text(id: i64, revision: crate::protocol::Revision) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"portcullis","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

impl Lifecycle {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>()).prop_map(|(kind, tool)| Lifecycle { kind, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let request = |ctx: &mut Ctx, method: &str| {
            let id = ctx.id();
            // With the envelope where the revision has one.
            let params = match ctx.revision.has_envelope() {
                true => format!(r#","params":{}"#, ctx.params_bare()),
                false => String::new(),
            };
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#);
            Frame {
                bytes: line(text),
                expect: Expect::Inert { request: true },
                id: Some(Id::Int(id)),
                tokens: vec![],
                family: FAMILY.into(),
                kind: kind.into(),
                fill: None,
            }
        };
        match self.kind {
            Kind::Valid => vec![ctx.valid_call(self.tool, FAMILY)],
            // The marker's method where the revision has no `ping`.
            Kind::Ping => vec![request(ctx, ctx.revision.marker_method())],
            Kind::ToolsList => vec![request(ctx, "tools/list")],
            Kind::EarlyCall => {
                let parts = ctx.parts(self.tool);
                vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, kind)]
            }
            // Where the revision has no handshake, `initialize` is a method
            // of the other era, asked in a session this one's requests opened.
            Kind::RepeatedInitialize => {
                let id = ctx.id();
                let text = initialize_text(id, ctx.revision);
                let rule = if ctx.revision.has_handshake() { Rule::RepeatedInitialize } else { Rule::LegacyMethod };
                vec![ctx.rejected(line(text), rule, Some(Id::Int(id)), vec![], FAMILY, kind)]
            }
            Kind::RejectedThenValid | Kind::UnknownToolThenValid => {
                let first = ctx.parts(self.tool);
                let mut args = first.arguments.clone();
                // An extra argument is refused only where the schema forbids
                // it; elsewhere the first call names a tool that is not listed.
                let (name, rule) = if self.kind == Kind::RejectedThenValid && first.tool.closed {
                    args.insert("x_extra".into(), serde_json::Value::from(first.token.clone()));
                    (first.tool.name.clone(), Rule::UnknownArgument)
                } else {
                    (format!("{}_v2", first.tool.name), Rule::UnknownTool)
                };
                let params = first.params_naming(&name, &serde_json::Value::Object(args).to_string());
                let rejected = ctx.rejected_call(first.request_with(&params), rule, &first, FAMILY, kind);
                let valid = ctx.valid_call(self.tool, FAMILY);
                vec![rejected, valid]
            }
        }
    }
}

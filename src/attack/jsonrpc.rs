//! JSON-RPC type confusion: ids, `jsonrpc`, `method` and `params` of the wrong
//! type or spelling, a request method sent as a notification, responses sent
//! by the client, non-objects, and batches (valid only in 2025-03-26).

use super::{Ctx, kinds, line};
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// Which confusion.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Valid: a string id that looks like a number.
        NumericStringId => "numeric_string_id",
        /// Valid in 2025-03-26 only: a batch of two calls.
        Batch => "batch",
        /// `id: true`.
        IdBool => "id_bool",
        /// `id: 1.5`.
        IdFloat => "id_float",
        /// `id: null`.
        IdNull => "id_null",
        /// `id: {}`.
        IdObject => "id_object",
        /// `id: [n]`.
        IdArray => "id_array",
        /// No `jsonrpc`.
        JsonrpcMissing => "jsonrpc_missing",
        /// `jsonrpc: "1.0"`.
        Jsonrpc10 => "jsonrpc_1_0",
        /// `jsonrpc: 2.0`, a number.
        JsonrpcNumber => "jsonrpc_number",
        /// `jsonrpc: "2.0 "`.
        JsonrpcPadded => "jsonrpc_padded",
        /// `method: 7`.
        MethodNumber => "method_number",
        /// `method: null`.
        MethodNull => "method_null",
        /// `method: "Tools/Call"`.
        MethodWrongCase => "method_wrong_case",
        /// `method: " tools/call"`.
        MethodPadded => "method_padded",
        /// `params` as a string holding the real params.
        ParamsString => "params_string",
        /// `params` as an array.
        ParamsArray => "params_array",
        /// `params: null`.
        ParamsNull => "params_null",
        /// tools/call without an id.
        AsNotification => "as_notification",
        /// A response from the client, the token in its result.
        ClientResponse => "client_response",
        /// A response that also carries method and params.
        HybridResponse => "hybrid_response",
        /// A scalar where a message belongs.
        Scalar => "scalar",
        /// `[]`.
        EmptyBatch => "empty_batch",
    }
}

/// A JSON-RPC confusion attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct JsonRpc {
    /// Which confusion.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "jsonrpc";

impl JsonRpc {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>()).prop_map(|(kind, tool)| JsonRpc { kind, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let kind = self.kind.name();
        let parts = ctx.parts(self.tool);
        let params = parts.params_with(&parts.args_json());
        let n = parts.id;
        let tokens = vec![parts.token.clone()];
        // The envelope with each member given as raw text (None leaves it out).
        let env = |jsonrpc: Option<&str>, id: Option<&str>, method: &str, params: &str| {
            let mut members = vec![];
            members.extend(jsonrpc.map(|j| format!(r#""jsonrpc":{j}"#)));
            members.extend(id.map(|i| format!(r#""id":{i}"#)));
            members.push(format!(r#""method":{method}"#));
            members.push(format!(r#""params":{params}"#));
            format!("{{{}}}", members.join(","))
        };
        let v2 = Some(r#""2.0""#);
        let num = n.to_string();
        let call = r#""tools/call""#;
        let (text, rule, id) = match self.kind {
            Kind::Valid => return vec![ctx.acting(line(parts.request()), vec![parts.call()], FAMILY, kind)],
            Kind::NumericStringId => {
                let mut c = parts.call();
                c.id = Id::Str(num.clone());
                let text = env(v2, Some(&format!("\"{n}\"")), call, &params);
                return vec![ctx.acting(line(text), vec![c], FAMILY, kind)];
            }
            Kind::Batch => {
                let b = ctx.parts(self.tool.wrapping_add(1));
                let text = format!("[{},{}]", parts.request(), b.request());
                if ctx.revision.has_batches() {
                    return vec![ctx.acting(line(text), vec![parts.call(), b.call()], FAMILY, kind)];
                }
                let tokens = vec![parts.token.clone(), b.token.clone()];
                return vec![ctx.rejected(line(text), Rule::BatchNotAllowed, None, tokens, FAMILY, kind)];
            }
            Kind::IdBool => (env(v2, Some("true"), call, &params), Rule::BadId, None),
            Kind::IdFloat => (env(v2, Some(&format!("{n}.5")), call, &params), Rule::BadId, None),
            Kind::IdNull => (env(v2, Some("null"), call, &params), Rule::BadId, None),
            Kind::IdObject => (env(v2, Some(&format!(r#"{{"n":{n}}}"#)), call, &params), Rule::BadId, None),
            Kind::IdArray => (env(v2, Some(&format!("[{n}]")), call, &params), Rule::BadId, None),
            Kind::JsonrpcMissing => (env(None, Some(&num), call, &params), Rule::BadJsonrpc, Some(n)),
            Kind::Jsonrpc10 => (env(Some(r#""1.0""#), Some(&num), call, &params), Rule::BadJsonrpc, Some(n)),
            Kind::JsonrpcNumber => (env(Some("2.0"), Some(&num), call, &params), Rule::BadJsonrpc, Some(n)),
            Kind::JsonrpcPadded => (env(Some(r#""2.0 ""#), Some(&num), call, &params), Rule::BadJsonrpc, Some(n)),
            Kind::MethodNumber => (env(v2, Some(&num), "7", &params), Rule::BadMethod, Some(n)),
            Kind::MethodNull => (env(v2, Some(&num), "null", &params), Rule::BadMethod, Some(n)),
            Kind::MethodWrongCase => (env(v2, Some(&num), r#""Tools/Call""#, &params), Rule::UnknownMethod, Some(n)),
            Kind::MethodPadded => (env(v2, Some(&num), r#"" tools/call""#, &params), Rule::UnknownMethod, Some(n)),
            Kind::ParamsString => {
                let p = serde_json::Value::from(params.as_str()).to_string();
                (env(v2, Some(&num), call, &p), Rule::BadParams, Some(n))
            }
            Kind::ParamsArray => (env(v2, Some(&num), call, &format!("[{params}]")), Rule::PositionalParams, Some(n)),
            Kind::ParamsNull => (env(v2, Some(&num), call, "null"), Rule::BadParams, Some(n)),
            Kind::AsNotification => (env(v2, None, call, &params), Rule::NotificationCall, None),
            Kind::ClientResponse => {
                let text = format!(
                    r#"{{"jsonrpc":"2.0","id":{n},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                    parts.token
                );
                (text, Rule::ClientResponse, None)
            }
            Kind::HybridResponse => {
                let text =
                    format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}},"method":"tools/call","params":{params}}}"#);
                (text, Rule::AmbiguousMessage, Some(n))
            }
            Kind::Scalar => (serde_json::Value::from(parts.request()).to_string(), Rule::NotAnObject, None),
            Kind::EmptyBatch => {
                let rule = if ctx.revision.has_batches() { Rule::EmptyBatch } else { Rule::BatchNotAllowed };
                return vec![ctx.rejected(line("[]"), rule, None, vec![], FAMILY, kind)];
            }
        };
        vec![ctx.rejected(line(text), rule, id.map(Id::Int), tokens, FAMILY, kind)]
    }
}

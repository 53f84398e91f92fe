//! From JSON values to replies: batches, envelopes, the lifecycle, methods,
//! and tools/call through schema, authorization and the executor.

use super::confirm::{self, Lax, Step};
use super::reply::Reply;
use super::rpc::{self, Msg, Refusal};
use super::stateless::{self, Envelope};
use super::tools::{self, Authorized};
use super::{Mutant, ReferenceGateway, Stage};
use crate::protocol::{Revision, code};
use serde_json::{Value, json};

/// A reply to send (if any) and whether the frame closes the session.
type Outcome = (Option<Reply>, bool);

impl ReferenceGateway {
    /// Handles one JSON value read from a line.
    pub(super) fn message(&mut self, v: Value) {
        let (reply, closes) = match v {
            Value::Array(items) => self.batch(items),
            other => self.one(other),
        };
        if let Some(r) = reply {
            self.send(&r);
        }
        if closes {
            self.close_if_policy();
        }
    }

    fn batch(&mut self, items: Vec<Value>) -> Outcome {
        let allowed = matches!(self.stage, Stage::Ready(r) if r.has_batches()) || self.is(Mutant::BatchAnyRevision);
        if !allowed || items.is_empty() {
            let message = if allowed {
                text!("Invalid Request: empty batch")
            } else {
                text!("Invalid Request: no batches in this revision")
            };
            return self.refuse(Refusal::closing(code::INVALID_REQUEST, message, Value::Null));
        }
        let mut replies = Vec::new();
        let mut closes = false;
        for item in items {
            let (r, c) = self.one(item);
            replies.extend(r);
            closes |= c;
        }
        ((!replies.is_empty()).then_some(Reply::Batch(replies)), closes)
    }

    fn one(&mut self, v: Value) -> Outcome {
        match rpc::envelope(v, self.mutant) {
            Err(r) => self.refuse(r),
            // No request of ours is pending: a response from the client is
            // a peer that lost track. Nothing to answer.
            Ok(Msg::Response) => (None, true),
            // Notifications get no answer; unknown ones are ignored.
            Ok(Msg::Notification) => (None, false),
            Ok(Msg::Request { id, method, params }) => self.request(id, &method, params),
        }
    }

    fn request(&mut self, id: Value, method: &str, params: Option<Value>) -> Outcome {
        // The first request fixes the era: a whole envelope on anything but
        // `initialize` opens a stateless session.
        let envelope = stateless::envelope(params.as_ref());
        if self.stage == Stage::Uninitialized && method != "initialize" && envelope == Envelope::Whole {
            self.stage = Stage::Stateless;
        }
        if self.stage == Stage::Stateless {
            return self.stateless(id, method, params, envelope);
        }
        match (self.stage, method) {
            (_, "ping") => self.ok(id, json!({})),
            (Stage::Uninitialized, "initialize") => {
                let asked = params.as_ref().and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
                let revision = asked.and_then(|a| a.parse().ok()).unwrap_or(Revision::R2025_11_25);
                self.stage = Stage::Ready(revision);
                let result = json!({
                    "protocolVersion": revision.as_str(),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "portcullis-reference", "version": env!("CARGO_PKG_VERSION")},
                });
                self.ok(id, result)
            }
            (Stage::Ready(_), "initialize") => {
                self.refuse(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: already initialized"), id))
            }
            (Stage::Uninitialized, "tools/call") if self.is(Mutant::CallBeforeInitialize) => {
                self.call(id, params, Revision::R2025_11_25)
            }
            (Stage::Uninitialized, _) => {
                self.refuse(Refusal::closing(code::INVALID_REQUEST, text!("Invalid Request: not initialized"), id))
            }
            (Stage::Ready(_), "tools/list") => self.ok(id, json!({"tools": self.listed()})),
            (Stage::Ready(revision), "tools/call") => self.call(id, params, revision),
            (Stage::Ready(_), _) | (Stage::Stateless, _) => {
                self.refuse(Refusal::open(code::METHOD_NOT_FOUND, text!("Method not found"), id))
            }
        }
    }

    /// A request in a stateless session: the handshake era's methods are
    /// not found; anything else runs only with a whole envelope naming the
    /// session's revision.
    fn stateless(&mut self, id: Value, method: &str, params: Option<Value>, envelope: Envelope) -> Outcome {
        if matches!(method, "initialize" | "ping") {
            return self.refuse(Refusal::open(code::METHOD_NOT_FOUND, text!("Method not found"), id));
        }
        // The planted bugs take a call's envelope for a whole one.
        let lax = match envelope {
            Envelope::Absent | Envelope::Broken(_) => self.is(Mutant::ServeWithoutEnvelope),
            Envelope::Unsupported(_) => self.is(Mutant::AnyVersion),
            Envelope::Whole => false,
        };
        match envelope {
            Envelope::Whole => {}
            _ if lax && method == "tools/call" => {}
            Envelope::Absent => {
                let missing = text!("Invalid params: every request needs _meta with its protocol version");
                return self.refuse(Refusal::open(code::INVALID_PARAMS, missing, id));
            }
            Envelope::Broken(message) => return self.refuse(Refusal::open(code::INVALID_PARAMS, message, id)),
            Envelope::Unsupported(requested) => {
                return (Some(Reply::Unsupported { id: self.echo(id), requested }), false);
            }
        }
        match method {
            "server/discover" => self.ok(id, stateless::discovered()),
            "tools/list" => self.ok(id, json!({"tools": self.listed()})),
            "tools/call" => self.call(id, params, stateless::STATELESS),
            _ => self.refuse(Refusal::open(code::METHOD_NOT_FOUND, text!("Method not found"), id)),
        }
    }

    /// The tools as `tools/list` lists them: a tool that asks the client to
    /// confirm only where the session can ask (a stateless one).
    fn listed(&self) -> Vec<Value> {
        let tool = |t: &crate::catalogue::ToolSpec| json!({"name": t.name, "description": format!("{} (reference)", t.name), "inputSchema": t.input_schema()});
        self.catalogue.tools.iter().filter(|t| self.offers(t)).map(tool).collect()
    }

    /// Whether this session offers `tool`.
    fn offers(&self, tool: &crate::catalogue::ToolSpec) -> bool {
        !tool.confirms || self.stage == Stage::Stateless
    }

    fn call(&mut self, id: Value, params: Option<Value>, revision: Revision) -> Outcome {
        let (name, arguments) = match tools::shape(params.as_ref(), &id) {
            Ok(call) => call,
            Err(r) => return self.refuse(r),
        };
        let confirms = self.catalogue.tool(&name).filter(|t| t.confirms).cloned();
        if let Some(tool) = &confirms
            && !self.offers(tool)
        {
            return self.refuse(Refusal::open(code::INVALID_PARAMS, text!("Unknown tool"), id));
        }
        // Capabilities are the request's own; the planted bug also counts
        // those an earlier request of the connection declared.
        let declared = confirm::declares_elicitation(params.as_ref());
        let elicits = declared || (self.is(Mutant::InheritCapability) && self.elicited);
        self.elicited |= declared;
        let early = self.is(Mutant::ExecuteBeforeSchema);
        if early && let Some(a) = Authorized::bypass_unchecked(&self.catalogue, &name, arguments.clone()) {
            tools::execute(a, &self.recorder);
        }
        let checked = tools::check(&self.catalogue, &name, arguments, &id, revision.tool_errors_as_results());
        let mut checked = match checked {
            Ok(c) => c,
            Err(rejection) => {
                if self.is(Mutant::CarryRejectedArguments) {
                    self.leftover = rejection.arguments;
                }
                return self.refuse(rejection.refusal);
            }
        };
        if let Some(left) = self.leftover.take() {
            checked.merge_missing(left);
        }
        let built_early = self.is(Mutant::AuthorizeAfterBuild);
        if built_early {
            tools::execute(Authorized::bypass(checked.clone()), &self.recorder);
        }
        let retry = (self.is(Mutant::RetryFetch) && name == "fetch").then(|| checked.clone());
        let authorized = match tools::authorize(checked, &id) {
            Ok(a) => a,
            Err(r) => return self.refuse(r),
        };
        if confirms.is_some() {
            if !elicits {
                return (Some(Reply::MissingElicitation { id: self.echo(id) }), false);
            }
            let params = params.as_ref().and_then(Value::as_object).expect("tools::shape read an object");
            let arguments = authorized.arguments();
            let lax = Lax {
                trusting: self.is(Mutant::TrustRequestState),
                replaying: self.is(Mutant::ReplayRequestState),
                unbound: self.is(Mutant::UnboundRequestState),
            };
            match self.handed.step(&name, arguments, params, lax) {
                Step::Ask(result) => return self.ok(id, result),
                Step::Declined => return self.ok(id, json!({"content": [{"type": "text", "text": "declined"}]})),
                Step::Refused(message) => return self.refuse(Refusal::open(code::INVALID_PARAMS, message, id)),
                Step::Confirmed => {}
            }
        }
        let result = if early || built_early {
            json!({"content": [{"type": "text", "text": format!("{} done", authorized.tool())}]})
        } else {
            tools::execute(authorized, &self.recorder)
        };
        if let Some(again) = retry {
            tools::execute(Authorized::bypass(again), &self.recorder);
        }
        if self.is(Mutant::LateDiagnostic) {
            self.out.extend_from_slice(b"debug: tools/call done\n");
        }
        self.ok(id, result)
    }

    fn echo(&self, id: Value) -> Value {
        match &id {
            Value::String(s) if self.is(Mutant::CoerceStringId) => s.parse::<i64>().map(Value::from).unwrap_or(id),
            _ => id,
        }
    }

    /// Whether results carry `resultType`: in a stateless session.
    fn typed(&self) -> bool {
        self.stage == Stage::Stateless && !self.is(Mutant::UntypedResult)
    }

    /// A success result; in a stateless session it says it is complete,
    /// unless it says otherwise.
    fn ok(&self, id: Value, mut result: Value) -> Outcome {
        if let (true, Some(object)) = (self.typed(), result.as_object_mut()) {
            object.entry("resultType").or_insert(json!("complete"));
        }
        (Some(Reply::Result { id: self.echo(id), result }), false)
    }

    fn refuse(&self, r: Refusal) -> Outcome {
        let id = self.echo(r.id);
        let reply = if r.as_tool_error {
            Reply::ToolError { id, text: r.message, typed: self.typed() }
        } else {
            Reply::Error { id, code: r.code, message: r.message }
        };
        (Some(reply), r.closes)
    }
}

//! The envelope of the stateless revision (2026-07-28): every request names
//! its revision and the client's capabilities for it in `params._meta`, and
//! a server serves none whose envelope is missing, half built, of the wrong
//! types, or names a revision it does not speak; nor a method of the
//! handshake era. In the handshake era's revisions the family sends a call
//! that carries a 2026-07-28 envelope, which such a session may serve or
//! refuse.

use super::{CallParts, Ctx, json_str, kinds, line};
use crate::frame::{Frame, Rule};
use crate::protocol::{CAPABILITIES_KEY, Id, Revision, VERSION_KEY};
use proptest::prelude::*;
use serde_json::{Value, json};

kinds! {
    /// Which envelope.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// A call with no `_meta` at all.
        Missing => "missing_envelope",
        /// The revision without the client's capabilities.
        VersionOnly => "version_only",
        /// The client's capabilities without the revision.
        CapabilitiesOnly => "capabilities_only",
        /// The revision as a number.
        VersionNumber => "version_number",
        /// The capabilities as an array.
        CapabilitiesArray => "capabilities_array",
        /// A revision no server speaks.
        UnknownVersion => "unknown_version",
        /// A revision written almost right.
        MalformedVersion => "malformed_version",
        /// A revision of the handshake era, which needs `initialize` first.
        HandshakeVersion => "handshake_version",
        /// `ping`, which the stateless revision has not.
        Ping => "ping",
        /// `logging/setLevel`, which the stateless revision replaced.
        SetLevel => "set_level",
        /// In a handshake-era session: a call with a 2026-07-28 envelope.
        ModernEnvelope => "modern_envelope",
        /// A whole envelope, and a key under a prefix MCP reserves that no
        /// revision defines, written like one that matters.
        ReservedPrefix => "reserved_prefix",
        /// A whole envelope, and a key whose name breaks the naming rules.
        MalformedKey => "malformed_key",
        /// The revision's key twice: a revision no server speaks, and this
        /// one, in either order.
        DuplicateVersion => "duplicate_version",
    }
}

/// Members under prefixes MCP reserves (the second label
/// `modelcontextprotocol` or `mcp`) that no revision defines.
const RESERVED: [&str; 3] = [
    r#""dev.mcp/protocolVersion":"1900-01-01""#,
    r#""org.modelcontextprotocol.api/authorized":true"#,
    r#""io.modelcontextprotocol/clientCapabilitiesOverride":{"elicitation":{}}"#,
];

/// Members whose key breaks the schema's naming rules: a label that does
/// not start with a letter, an empty label, a name that ends in a hyphen
/// or holds a space, two slashes.
const MALFORMED: [&str; 5] = [
    r#""1com.example/x":1"#,
    r#""com..example/x":1"#,
    r#""com.example/x-":1"#,
    r#""com.example/x y":1"#,
    r#""a/b/c":1"#,
];

/// An envelope attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Envelope {
    /// Which envelope.
    pub kind: Kind,
    /// Which runnable tool the call uses.
    pub tool: u8,
    /// Picks the key or the order.
    #[serde(default)]
    pub pick: u8,
}

const FAMILY: &str = "envelope";

/// The envelope's `_meta` with `version` (raw JSON) and `capabilities`
/// (raw JSON), each left out when `None`.
fn meta(version: Option<&str>, capabilities: Option<&str>) -> String {
    let version = version.map(|v| format!(r#""{VERSION_KEY}":{v}"#));
    let capabilities = capabilities.map(|c| format!(r#""{CAPABILITIES_KEY}":{c}"#));
    format!("{{{}}}", [version, capabilities].into_iter().flatten().collect::<Vec<_>>().join(","))
}

impl Envelope {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), any::<u8>(), any::<u8>()).prop_map(|(kind, tool, pick)| Envelope { kind, tool, pick }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        if self.kind == Kind::Valid {
            return vec![ctx.valid_call(self.tool, FAMILY)];
        }
        if ctx.revision.has_handshake() {
            return vec![self.modern_in_handshake_era(ctx)];
        }
        let kind = self.kind.name();
        let parts = ctx.parts(self.tool);
        // The call's params with `_meta` `m` (none, or the envelope
        // `meta` builds) in place of its own envelope.
        let with_meta = |m: Option<String>| CallParts { meta: m, ..parts.clone() }.params_with(&parts.args_json());
        let enveloped = |version: &str, capabilities: &str| with_meta(Some(meta(Some(version), Some(capabilities))));
        let stateless = json_str(Revision::R2026_07_28.as_str());
        let (params, rule) = match self.kind {
            Kind::Missing => (with_meta(None), Rule::MissingEnvelope),
            Kind::VersionOnly => (with_meta(Some(meta(Some(&stateless), None))), Rule::BadEnvelope),
            Kind::CapabilitiesOnly => (with_meta(Some(meta(None, Some("{}")))), Rule::BadEnvelope),
            Kind::VersionNumber => (enveloped("20260728", "{}"), Rule::BadEnvelope),
            Kind::CapabilitiesArray => (enveloped(&stateless, "[]"), Rule::BadEnvelope),
            Kind::UnknownVersion => (enveloped(&json_str("1900-01-01"), "{}"), Rule::UnsupportedVersion),
            Kind::MalformedVersion => (enveloped(&json_str("2026-7-28"), "{}"), Rule::UnsupportedVersion),
            Kind::HandshakeVersion => {
                (enveloped(&json_str(Revision::LATEST_HANDSHAKEN.as_str()), "{}"), Rule::HandshakeVersion)
            }
            // Methods of the handshake era, each with a whole envelope.
            Kind::Ping | Kind::SetLevel => {
                let id = ctx.id();
                let bytes = match self.kind {
                    Kind::Ping => ctx.revision.request_line(id.into(), "ping"),
                    _ => {
                        let envelope = ctx.revision.envelope().unwrap_or_else(|| "{}".to_owned());
                        let meta: Value = serde_json::from_str(&envelope).expect("the envelope is JSON");
                        let params = json!({"_meta": meta, "level": "debug"});
                        line(
                            json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel", "params": params})
                                .to_string(),
                        )
                    }
                };
                return vec![ctx.rejected(bytes, Rule::LegacyMethod, Some(Id::Int(id)), vec![], FAMILY, kind)];
            }
            Kind::ReservedPrefix | Kind::MalformedKey => {
                let (members, rule) = match self.kind {
                    Kind::ReservedPrefix => (&RESERVED[..], Rule::ReservedMetaKey),
                    _ => (&MALFORMED[..], Rule::MalformedMetaKey),
                };
                let member = members[self.pick as usize % members.len()];
                let text = parts.request_with(&parts.params_meta_adding(member));
                return vec![ctx.tolerated(line(text), rule, vec![parts.call()], FAMILY, kind)];
            }
            Kind::DuplicateVersion => {
                let versions = [json_str("1900-01-01"), stateless.clone()];
                let (first, last) = match self.pick % 2 {
                    0 => (&versions[0], &versions[1]),
                    _ => (&versions[1], &versions[0]),
                };
                let meta = format!(r#"{{"{VERSION_KEY}":{first},"{CAPABILITIES_KEY}":{{}},"{VERSION_KEY}":{last}}}"#);
                (with_meta(Some(meta)), Rule::DuplicateKey)
            }
            Kind::Valid | Kind::ModernEnvelope => return vec![ctx.valid_call(self.tool, FAMILY)],
        };
        vec![ctx.rejected_call(parts.request_with(&params), rule, &parts, FAMILY, kind)]
    }

    /// A call that carries a whole 2026-07-28 envelope, in a session of the
    /// handshake era: `_meta` keys under `io.modelcontextprotocol/` are
    /// MCP's, and no earlier revision defines these, so the session may
    /// serve the call or refuse it, and must not act on it twice.
    fn modern_in_handshake_era(&self, ctx: &mut Ctx) -> Frame {
        let parts = CallParts { meta: Revision::R2026_07_28.envelope(), ..ctx.parts(self.tool) };
        let text = parts.request();
        ctx.tolerated(line(text), Rule::ModernEnvelope, vec![parts.call()], FAMILY, Kind::ModernEnvelope.name())
    }
}

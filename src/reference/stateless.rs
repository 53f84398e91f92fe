//! The stateless era (MCP 2026-07-28): no handshake; every request names
//! its revision and the client's capabilities for it in `params._meta`,
//! and the reference checks that envelope before anything else runs. A
//! connection's first request fixes its era: one whose envelope is whole
//! opens a stateless session; `initialize` opens one of the handshake era.

use super::reply::Text;
use crate::protocol::{CAPABILITIES_KEY, Revision, VERSION_KEY};
use serde_json::Value;

/// The revision a stateless session speaks.
pub(super) const STATELESS: Revision = Revision::R2026_07_28;

/// What a request's envelope holds.
#[derive(Debug, PartialEq)]
pub(super) enum Envelope {
    /// No envelope: no `_meta`, or one that names neither key.
    Absent,
    /// A whole envelope naming the stateless revision.
    Whole,
    /// An envelope that is not whole: a key missing or of the wrong type.
    Broken(Text),
    /// A whole envelope naming another revision (as it was written).
    Unsupported(Value),
}

/// Reads the envelope of a request with `params`.
pub(super) fn envelope(params: Option<&Value>) -> Envelope {
    let Some(meta) = params.and_then(Value::as_object).and_then(|p| p.get("_meta")) else {
        return Envelope::Absent;
    };
    let Some(meta) = meta.as_object() else {
        return Envelope::Broken(text!("Invalid params: _meta must be an object"));
    };
    match (meta.get(VERSION_KEY), meta.get(CAPABILITIES_KEY)) {
        (None, None) => Envelope::Absent,
        (Some(Value::String(v)), Some(Value::Object(_))) if v == STATELESS.as_str() => Envelope::Whole,
        (Some(Value::String(v)), Some(Value::Object(_))) => Envelope::Unsupported(Value::from(v.as_str())),
        (Some(Value::String(_)), _) => {
            Envelope::Broken(text!("Invalid params: _meta needs io.modelcontextprotocol/clientCapabilities, an object"))
        }
        _ => Envelope::Broken(text!("Invalid params: _meta needs io.modelcontextprotocol/protocolVersion, a string")),
    }
}

/// The result of `server/discover`.
pub(super) fn discovered() -> Value {
    serde_json::json!({
        "supportedVersions": [STATELESS.as_str()],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "portcullis-reference", "version": env!("CARGO_PKG_VERSION")}},
        "ttlMs": 0,
        "cacheScope": "private",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_envelope_is_whole_only_with_both_keys_of_their_types() {
        let meta = |m: Value| json!({"_meta": m});
        let caps = json!({});
        assert_eq!(envelope(None), Envelope::Absent);
        assert_eq!(envelope(Some(&meta(json!({"note": "x"})))), Envelope::Absent);
        let whole = meta(json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: caps}));
        assert_eq!(envelope(Some(&whole)), Envelope::Whole);
        let other = meta(json!({VERSION_KEY: "2025-11-25", CAPABILITIES_KEY: caps}));
        assert_eq!(envelope(Some(&other)), Envelope::Unsupported(json!("2025-11-25")));
        for broken in [
            meta(json!({VERSION_KEY: "2026-07-28"})),
            meta(json!({CAPABILITIES_KEY: caps})),
            meta(json!({VERSION_KEY: 20260728, CAPABILITIES_KEY: caps})),
            meta(json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: []})),
            meta(json!("2026-07-28")),
        ] {
            assert!(matches!(envelope(Some(&broken)), Envelope::Broken(_)), "{broken}");
        }
    }
}

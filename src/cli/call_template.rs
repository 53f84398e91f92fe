//! A valid call built from a listed tool's input schema, for when the user
//! names no tool or gives no `--args`: every required property gets a value
//! of its type, at any depth, strings carrying `{canary}` (URLs) or
//! `{token}`; and which listed tool is likeliest to act, by its annotations.

use crate::catalogue::{is_url, template_carries_token};
use serde_json::{Map, Value};

/// Deeper than any tool schema seen in the wild; a schema that recurses
/// (through `$ref`, which is not followed) stops here.
const DEPTH: usize = 8;

/// The arguments of a call of a tool with this `inputSchema`, carrying a
/// token; `None` when a required property cannot be given a value (a `$ref`,
/// say) or no string can carry a token. A tool that requires nothing but
/// takes a URL gets the canary there, where a fetch would take it.
pub fn template(schema: &Value) -> Option<Map<String, Value>> {
    let mut t = object(schema, 0)?;
    if t.is_empty() {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some((k, _)) = props.into_iter().flatten().find(|(k, p)| is_url(k, p)) {
            t.insert(k.clone(), Value::from("{canary}"));
        }
    }
    template_carries_token(&t).then_some(t)
}

/// How likely a listed tool is to act where a probe sees it, best first:
/// one whose call carries a canary URL (any fetch of it reaches the sink),
/// then one not marked read-only, then one not marked destructive (deleting
/// what does not exist does nothing).
pub fn rank(tool: &Value, template: &Map<String, Value>) -> (bool, bool, bool) {
    let hint = |h: &str| tool.pointer(&format!("/annotations/{h}")) == Some(&Value::Bool(true));
    (!carries_canary(template), hint("readOnlyHint"), hint("destructiveHint"))
}

/// Whether a call template puts `{canary}` (a URL on the HTTP sink) in
/// any of its arguments.
pub fn carries_canary(template: &Map<String, Value>) -> bool {
    template.values().any(|v| v.to_string().contains("{canary}"))
}

/// The required properties of an object schema, each with a value.
fn object(schema: &Value, depth: usize) -> Option<Map<String, Value>> {
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    let empty = Value::Object(Map::new());
    required
        .map(|k| Some((k.to_owned(), value(k, props.and_then(|p| p.get(k)).unwrap_or(&empty), depth + 1)?)))
        .collect()
}

/// A value that `schema` accepts, for the property named `key`.
fn value(key: &str, schema: &Value, depth: usize) -> Option<Value> {
    if depth > DEPTH {
        return None;
    }
    if let Some(v) = schema.get("const") {
        return Some(v.clone());
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return Some(first.clone());
    }
    for alternatives in ["anyOf", "oneOf"] {
        if let Some(alts) = schema.get(alternatives).and_then(Value::as_array) {
            let not_null = alts.iter().filter(|a| a.get("type") != Some(&Value::from("null")));
            return not_null.filter_map(|a| value(key, a, depth + 1)).next();
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    };
    let given = || schema.get("default").or_else(|| schema.get("minimum")).cloned();
    match kind {
        Some("string") if is_url(key, schema) => Some(Value::from("{canary}")),
        Some("string") => Some(Value::from("{token}")),
        // No schema at all: anything goes, a string too.
        None if schema.as_object().is_some_and(Map::is_empty) => Some(Value::from("{token}")),
        Some("integer" | "number") => Some(given().unwrap_or(Value::from(1))),
        Some("boolean") => Some(given().unwrap_or(Value::Bool(false))),
        Some("array") => {
            let items = schema.get("items").cloned().unwrap_or_else(|| Value::Object(Map::new()));
            Some(Value::Array(vec![value(key, &items, depth + 1)?]))
        }
        Some("object") => object(schema, depth).map(Value::Object),
        None if schema.get("properties").is_some() => object(schema, depth).map(Value::Object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_required_properties_get_values_of_their_types() {
        // `create_entities` of the reference memory server.
        let schema = json!({"type": "object", "required": ["entities"], "properties": {"entities": {
            "type": "array",
            "items": {"type": "object", "required": ["name", "entityType", "observations"], "properties": {
                "name": {"type": "string"},
                "entityType": {"type": "string"},
                "observations": {"type": "array", "items": {"type": "string"}},
            }},
        }}});
        let t = Value::Object(template(&schema).expect("a template"));
        let entity = json!({"name": "{token}", "entityType": "{token}", "observations": ["{token}"]});
        assert_eq!(t, json!({"entities": [entity]}));
    }

    #[test]
    fn urls_get_the_canary_and_other_types_a_value_they_allow() {
        let schema = json!({"type": "object", "required": ["url", "max_length", "raw", "mode", "base"], "properties": {
            "url": {"type": "string", "format": "uri"},
            "max_length": {"type": "integer", "default": 5000, "exclusiveMinimum": 0},
            "raw": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "base": {"anyOf": [{"type": "null"}, {"type": "string"}]},
        }});
        let t = Value::Object(template(&schema).unwrap());
        assert_eq!(t, json!({"url": "{canary}", "max_length": 5000, "raw": false, "mode": "fast", "base": "{token}"}));
        // An optional URL takes the canary when nothing is required.
        let optional = json!({"type": "object", "properties": {"webhook_url": {"type": "string"}}});
        assert_eq!(Value::Object(template(&optional).unwrap()), json!({"webhook_url": "{canary}"}));
    }

    #[test]
    fn no_template_without_a_string_or_past_what_it_can_follow() {
        assert!(template(&json!({"type": "object", "properties": {}})).is_none());
        let counted = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        assert!(template(&counted).is_none(), "nothing carries a token");
        let referenced = json!({"type": "object", "required": ["q", "r"], "properties": {
            "q": {"type": "string"}, "r": {"$ref": "#/$defs/R"},
        }});
        assert!(template(&referenced).is_none(), "a $ref is not followed");
    }

    #[test]
    fn tools_likeliest_to_act_rank_first() {
        let t = |v: Value| v.as_object().cloned().unwrap();
        let read_only = json!({"annotations": {"readOnlyHint": true}});
        let destructive = json!({"annotations": {"readOnlyHint": false, "destructiveHint": true}});
        let plain = json!({"name": "create"});
        let token = t(json!({"q": "{token}"}));
        let canary = t(json!({"url": "{canary}"}));
        assert!(rank(&read_only, &canary) < rank(&plain, &token), "a canary URL reaches the sink");
        assert!(rank(&plain, &token) < rank(&destructive, &token));
        assert!(rank(&destructive, &token) < rank(&read_only, &token));
    }
}

//! The tools a target offers, as far as the generators need to know them:
//! names, argument schemas, and which the test client may run.

use serde_json::{Map, Value, json};

/// What kind of string an argument holds, which decides where a canary token
/// goes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum ArgKind {
    /// A URL: the token goes in its path, under the canary base.
    Url,
    /// A relative file path: the token is the file name.
    Path,
    /// Free text: the token is a word of it.
    Text,
    /// One of a fixed set of strings; never carries a token.
    Enum(Vec<String>),
    /// Not a string (a number, a boolean, an object); never carries a token.
    Other,
}

/// One argument of a tool's input schema. Every argument is a string.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArgSpec {
    /// The property name.
    pub name: String,
    /// What it holds.
    pub kind: ArgKind,
    /// Whether the schema requires it.
    pub required: bool,
}

/// One tool: its name, its arguments (no others are allowed) and whether the
/// test client is authorized to run it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolSpec {
    /// The tool name.
    pub name: String,
    /// The arguments the schema names.
    pub args: Vec<ArgSpec>,
    /// Whether the schema allows no other property
    /// (`"additionalProperties": false`): only then must a call with an
    /// extra argument be refused. A tool read from a listing is closed
    /// only when its schema says so.
    #[serde(default)]
    pub closed: bool,
    /// Whether the test client may run it.
    pub authorized: bool,
    /// Whether it acts only once the client has confirmed: in MCP
    /// 2026-07-28 its call gets an `input_required` result, and only a
    /// retry with the answers and the `requestState` that result handed
    /// out may act. No valid call of it acts on its own, so it is never
    /// picked as a runnable tool.
    #[serde(default)]
    pub confirms: bool,
    /// The arguments of a valid call, when the user gave them: every
    /// `{canary}` in a string becomes the canary URL and every `{token}` the
    /// bare token. Without one, each required argument gets a value by kind.
    pub template: Option<Map<String, Value>>,
}

impl ToolSpec {
    /// A tool with the given arguments and no other (its schema closed),
    /// authorized.
    pub fn new(name: &str, args: Vec<ArgSpec>) -> Self {
        ToolSpec { name: name.to_owned(), args, closed: true, authorized: true, confirms: false, template: None }
    }

    /// Reads one entry of a `tools/list` result: its name and the
    /// properties of its `inputSchema`.
    pub fn from_listing(tool: &Value) -> Option<ToolSpec> {
        let name = tool.get("name")?.as_str()?;
        let schema = tool.get("inputSchema");
        let required: Vec<&str> = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let props = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
        let args = props
            .into_iter()
            .flatten()
            .map(|(key, p)| {
                let kind = match (p.get("type").and_then(Value::as_str), p.get("enum").and_then(Value::as_array)) {
                    (Some("string"), Some(values)) => {
                        ArgKind::Enum(values.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    }
                    (Some("string"), None) if is_url(key, p) => ArgKind::Url,
                    (Some("string"), None) => ArgKind::Text,
                    _ => ArgKind::Other,
                };
                ArgSpec { name: key.clone(), kind, required: required.contains(&key.as_str()) }
            })
            .collect();
        let closed = schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false));
        Some(ToolSpec { closed, ..ToolSpec::new(name, args) })
    }

    /// The arguments of a valid call that carries `token`.
    pub fn arguments_for(&self, token: &str, canary_base: &str) -> Map<String, Value> {
        match &self.template {
            Some(template) => {
                let fill = |s: &str| s.replace("{canary}", &format!("{canary_base}/{token}")).replace("{token}", token);
                template.iter().map(|(k, v)| (k.clone(), map_strings(v, &fill))).collect()
            }
            None => self
                .args
                .iter()
                .filter(|a| a.required)
                .map(|a| (a.name.clone(), Value::from(a.value_for(token, canary_base))))
                .collect(),
        }
    }

    /// The argument named `name`.
    pub fn arg(&self, name: &str) -> Option<&ArgSpec> {
        self.args.iter().find(|a| a.name == name)
    }

    /// Whether a valid call of this tool carries a token somewhere.
    pub fn carries_token(&self) -> bool {
        match &self.template {
            Some(t) => template_carries_token(t),
            None => {
                self.args.iter().any(|a| a.required && matches!(a.kind, ArgKind::Url | ArgKind::Path | ArgKind::Text))
            }
        }
    }

    /// The JSON Schema of the tool's input, as tools/list shows it.
    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        for a in &self.args {
            let schema = match &a.kind {
                ArgKind::Enum(values) => json!({"type": "string", "enum": values}),
                ArgKind::Other => json!({}),
                ArgKind::Url => json!({"type": "string", "format": "uri"}),
                _ => json!({"type": "string"}),
            };
            props.insert(a.name.clone(), schema);
        }
        let required: Vec<&str> = self.args.iter().filter(|a| a.required).map(|a| a.name.as_str()).collect();
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }
}

impl ArgSpec {
    /// A required argument.
    pub fn required(name: &str, kind: ArgKind) -> Self {
        ArgSpec { name: name.to_owned(), kind, required: true }
    }

    /// An optional argument.
    pub fn optional(name: &str, kind: ArgKind) -> Self {
        ArgSpec { name: name.to_owned(), kind, required: false }
    }

    /// The value this argument takes in a call that carries `token`.
    pub fn value_for(&self, token: &str, canary_base: &str) -> String {
        match &self.kind {
            ArgKind::Url => format!("{canary_base}/{token}"),
            ArgKind::Path => format!("notes/{token}.txt"),
            ArgKind::Text => format!("note {token}"),
            ArgKind::Enum(values) => values.first().cloned().unwrap_or_default(),
            ArgKind::Other => String::new(),
        }
    }
}

/// Whether the string property `key`, with JSON Schema `p`, holds a URL: its
/// format says so (`uri`, `url`, `iri`) or its name does (`…url…`, `…uri`).
pub(crate) fn is_url(key: &str, p: &Value) -> bool {
    let format = p.get("format").and_then(Value::as_str);
    let key = key.to_lowercase();
    matches!(format, Some("uri" | "url" | "iri")) || key.contains("url") || key.ends_with("uri")
}

/// Whether a call template puts `{canary}` or `{token}` in a string, at
/// any depth (`{"entities":[{"name":"{token}"}]}` does).
pub(crate) fn template_carries_token(template: &Map<String, Value>) -> bool {
    template.values().any(|v| any_string(v, &|s| s.contains("{canary}") || s.contains("{token}")))
}

/// Whether a string in `v`, at any depth, passes `test`; object keys are
/// not values and are not looked at.
pub(crate) fn any_string(v: &Value, test: &impl Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => test(s),
        Value::Array(items) => items.iter().any(|x| any_string(x, test)),
        Value::Object(m) => m.values().any(|x| any_string(x, test)),
        _ => false,
    }
}

/// `v` with every string in it, at any depth, passed through `f`.
pub(crate) fn map_strings(v: &Value, f: &impl Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::from(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), map_strings(x, f))).collect()),
        other => other.clone(),
    }
}

/// Replaces the first `from` in a string of `v`, in the order its JSON text
/// shows them; whether there was one.
pub(crate) fn replace_first(v: &mut Value, from: &str, to: &str) -> bool {
    match v {
        Value::String(s) if s.contains(from) => {
            *s = s.replacen(from, to, 1);
            true
        }
        Value::Array(items) => items.iter_mut().any(|x| replace_first(x, from, to)),
        Value::Object(m) => m.values_mut().any(|x| replace_first(x, from, to)),
        _ => false,
    }
}

/// The tools of a target, plus the canary base URL tokens are put under.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Catalogue {
    /// The tools, in the order tools/list shows them.
    pub tools: Vec<ToolSpec>,
    /// Base URL for `ArgKind::Url` arguments, without a trailing slash.
    pub canary_base: String,
}

impl Catalogue {
    /// The tools of an in-process gateway: URL arguments carry canaries
    /// under a port nothing listens on, since its recorder, not a sink,
    /// sees what it does.
    ///
    /// ```
    /// use portcullis::{ArgKind, ArgSpec, Catalogue, ToolSpec};
    /// let tools = Catalogue::new(vec![ToolSpec::new("fetch", vec![ArgSpec::required("url", ArgKind::Url)])]);
    /// assert_eq!(tools.tools[0].name, "fetch");
    /// ```
    pub fn new(tools: Vec<ToolSpec>) -> Self {
        Catalogue { tools, canary_base: "http://127.0.0.1:9".to_owned() }
    }

    /// The reference gateway's tools: `fetch` (HTTP GET of a URL),
    /// `write_note` (a file write), `rotate_keys` (a POST to its
    /// `webhook`), which it lists but the test client may not run, and
    /// `purge_cache` (a purge of a URL), which acts only once the client
    /// has confirmed, and which only its 2026-07-28 sessions offer.
    pub fn reference() -> Self {
        let method = ArgKind::Enum(vec!["GET".into(), "HEAD".into()]);
        Catalogue::new(vec![
            ToolSpec::new("fetch", vec![ArgSpec::required("url", ArgKind::Url), ArgSpec::optional("method", method)]),
            ToolSpec::new(
                "write_note",
                vec![ArgSpec::required("path", ArgKind::Path), ArgSpec::required("text", ArgKind::Text)],
            ),
            ToolSpec {
                authorized: false,
                ..ToolSpec::new("rotate_keys", vec![ArgSpec::required("webhook", ArgKind::Url)])
            },
            ToolSpec { confirms: true, ..ToolSpec::new("purge_cache", vec![ArgSpec::required("url", ArgKind::Url)]) },
        ])
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The tools the test client may run at once and that can carry a
    /// token.
    pub fn runnable(&self) -> Vec<&ToolSpec> {
        self.tools.iter().filter(|t| t.authorized && !t.confirms && t.carries_token()).collect()
    }

    /// The tools listed but not authorized, that can carry a token.
    pub fn forbidden(&self) -> Vec<&ToolSpec> {
        self.tools.iter().filter(|t| !t.authorized && t.carries_token()).collect()
    }

    /// The tools the test client may run once it has confirmed, that can
    /// carry a token.
    pub fn confirming(&self) -> Vec<&ToolSpec> {
        self.tools.iter().filter(|t| t.authorized && t.confirms && t.carries_token()).collect()
    }
}

//! tools/call: params shape, tool lookup, the argument schema, authorization,
//! and the executor, which accepts only an [`Authorized`] call.

use super::reply::Text;
use super::rpc::Refusal;
use crate::catalogue::{ArgKind, Catalogue, ToolSpec};
use crate::protocol::code;
use crate::seam::{Action, Recorder};
use serde_json::{Map, Value, json};

/// A call whose params have the right shape and whose arguments passed the
/// tool's schema.
#[derive(Clone, Debug)]
pub struct Checked {
    tool: ToolSpec,
    arguments: Map<String, Value>,
}

/// A checked call the caller may run: the only thing the executor takes.
/// Its field is private, so nothing outside this module can make one
/// without [`authorize`].
#[derive(Debug)]
pub struct Authorized(Checked);

/// A tools/call the schema rejected, with its arguments (for the one mutant
/// that carries them over).
pub struct SchemaRejection {
    /// The refusal to answer with.
    pub refusal: Refusal,
    /// The arguments the rejected call carried, if it carried an object.
    pub arguments: Option<Map<String, Value>>,
}

/// Reads `params` as a tools/call: `name` a string, `arguments` an object.
pub fn shape(params: Option<&Value>, id: &Value) -> Result<(String, Map<String, Value>), Refusal> {
    let params = params.and_then(Value::as_object).ok_or_else(|| {
        Refusal::closing(code::INVALID_PARAMS, text!("Invalid params: tools/call needs params"), id.clone())
    })?;
    let Some(Value::String(name)) = params.get("name") else {
        return Err(Refusal::closing(code::INVALID_PARAMS, text!("Invalid params: name must be a string"), id.clone()));
    };
    let arguments = match params.get("arguments") {
        None => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => {
            return Err(Refusal::closing(
                code::INVALID_PARAMS,
                text!("Invalid params: arguments must be an object"),
                id.clone(),
            ));
        }
    };
    Ok((name.clone(), arguments))
}

/// Looks the tool up and checks the arguments against its schema. Bad
/// argument values come back as tool errors where the revision allows.
pub fn check(
    catalogue: &Catalogue,
    name: &str,
    arguments: Map<String, Value>,
    id: &Value,
    as_tool_error: bool,
) -> Result<Checked, SchemaRejection> {
    let Some(tool) = catalogue.tool(name) else {
        let refusal = Refusal::open(code::INVALID_PARAMS, text!("Unknown tool"), id.clone());
        return Err(SchemaRejection { refusal, arguments: Some(arguments) });
    };
    if let Err(message) = schema(tool, &arguments) {
        let mut refusal = Refusal::open(code::INVALID_PARAMS, message, id.clone());
        refusal.as_tool_error = as_tool_error;
        return Err(SchemaRejection { refusal, arguments: Some(arguments) });
    }
    Ok(Checked { tool: tool.clone(), arguments })
}

fn schema(tool: &ToolSpec, arguments: &Map<String, Value>) -> Result<(), Text> {
    for (key, value) in arguments {
        let spec = tool.arg(key).ok_or(text!("Invalid params: unknown argument"))?;
        if spec.kind == ArgKind::Other {
            continue; // not a string: the listing said no more about it
        }
        let text = value.as_str().ok_or(text!("Invalid params: argument must be a string"))?;
        if let ArgKind::Enum(allowed) = &spec.kind
            && !allowed.iter().any(|a| a == text)
        {
            return Err(text!("Invalid params: argument value not allowed"));
        }
    }
    if tool.args.iter().any(|a| a.required && !arguments.contains_key(&a.name)) {
        return Err(text!("Invalid params: missing required argument"));
    }
    Ok(())
}

/// Decides whether the test client may run the call.
pub fn authorize(call: Checked, id: &Value) -> Result<Authorized, Refusal> {
    if call.tool.authorized {
        Ok(Authorized(call))
    } else {
        Err(Refusal::open(code::NOT_AUTHORIZED, text!("Not authorized to run this tool"), id.clone()))
    }
}

impl Checked {
    /// Adds arguments the call does not carry itself (the carry-over mutant).
    pub fn merge_missing(&mut self, from: Map<String, Value>) {
        for (k, v) in from {
            self.arguments.entry(k).or_insert(v);
        }
    }
}

impl Authorized {
    /// Skips authorization: only mutants call this.
    pub fn bypass(call: Checked) -> Self {
        Authorized(call)
    }

    /// Skips the schema as well: only mutants call this.
    pub fn bypass_unchecked(catalogue: &Catalogue, name: &str, arguments: Map<String, Value>) -> Option<Self> {
        let tool = catalogue.tool(name)?.clone();
        Some(Authorized(Checked { tool, arguments }))
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.0.tool.name
    }

    /// The arguments it runs with.
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.0.arguments
    }
}

/// The executor: hands the action to the recorder and returns the result.
pub fn execute(call: Authorized, recorder: &Recorder) -> Value {
    let Checked { tool, arguments } = call.0;
    recorder.record(Action { tool: tool.name.clone(), arguments });
    json!({"content": [{"type": "text", "text": format!("{} done", tool.name)}]})
}

//! What `check-stdout` launches: the command and environment given, or a
//! profile's, the baseline it names, and the tool call made once the
//! opening is answered.

use super::Args;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::PathBuf;

/// The gate's launch, read from its flags and profile.
pub struct Launch {
    pub command: Vec<String>,
    pub env: Vec<String>,
    /// The baseline the profile names.
    pub baseline: Option<PathBuf>,
    /// The tool to call after the opening, and its arguments as JSON text.
    tool: Option<(String, String)>,
    /// The profile's `{tmp}`, held while the gate runs.
    _tmp: Option<tempfile::TempDir>,
}

/// The launch `args` ask for, `--profile`'s filled in where one is given.
pub fn launched(args: &Args) -> Result<Launch> {
    let no_tool = "--args needs --tool (or a profile's `tool`), the tool they are for";
    if args.args.is_some() && args.tool.is_none() && args.profile.is_none() {
        bail!("{no_tool}");
    }
    let given = args.tool.clone().map(|t| (t, args.args.clone().unwrap_or_else(|| "{}".to_owned())));
    let Some(path) = &args.profile else {
        return Ok(Launch {
            command: args.command.clone(),
            env: args.env.clone(),
            baseline: None,
            tool: given,
            _tmp: None,
        });
    };
    let beside = args.command.iter().chain(&args.env).chain(&args.args);
    let mentioned: Vec<&str> = beside.map(String::as_str).collect();
    let super::super::profile::Loaded { profile, places, tmp } = super::super::profile::load(path, &mentioned)?;
    let fill = |words: &[String]| words.iter().map(|w| places.fill(w)).collect::<Vec<_>>();
    let command = match args.command.is_empty() {
        true => fill(profile.command.as_deref().unwrap_or_default()),
        false => fill(&args.command),
    };
    if command.is_empty() {
        bail!("--profile {} names no command, and none follows --", path.display());
    }
    // A tool other than the profile's takes none of its arguments.
    let own_tool = args.tool.is_none() || args.tool == profile.tool;
    let tool = match (args.tool.clone().or(profile.tool.clone()), &args.args) {
        (Some(t), Some(a)) => Some((t, places.fill_args(a))),
        (Some(t), None) if own_tool => Some((t, profile.call_args(&places)?.unwrap_or_else(|| "{}".to_owned()))),
        (Some(t), None) => Some((t, "{}".to_owned())),
        (None, Some(_)) => bail!("{no_tool}"),
        (None, None) => None,
    };
    let baseline = profile.baseline.as_ref().map(|b| places.fill(b).into());
    let env = fill(&[profile.env.clone(), args.env.clone()].concat());
    Ok(Launch { command, env, baseline, tool, _tmp: tmp })
}

impl Launch {
    /// The call to make, its arguments' `{canary}` a URL of the sink at
    /// `sink` and `{token}` a marker of the gate's.
    pub fn call(&self, sink: &str) -> Result<Option<(String, Value)>> {
        let Some((tool, text)) = &self.tool else { return Ok(None) };
        let text = text
            .replace("{canary}", &format!("{sink}/portcullis-check-stdout"))
            .replace("{token}", "portcullis-check-stdout");
        let arguments: Value = serde_json::from_str(&text).with_context(|| format!("--args is not JSON: {text}"))?;
        if !arguments.is_object() {
            bail!("--args must be a JSON object, got {text}");
        }
        Ok(Some((tool.clone(), arguments)))
    }
}

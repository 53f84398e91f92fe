//! `--profile FILE`: a target's launch command, the call to make and how
//! its effects are observed, in a small TOML file whose keys are the flags
//! of `portcullis fuzz` (docs/profiles.md). Flags given on the command line
//! win over it; repeatable ones add to its lists.

use crate::{Level, Policy};
use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The longest a profile's `prepare` command may run.
const PREPARE_LIMIT: Duration = Duration::from_secs(120);

/// A profile as written: every key optional, none unknown.
#[derive(Deserialize, Default, Debug)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Profile {
    /// The server and its arguments, as after `--`.
    pub command: Option<Vec<String>>,
    /// A shell command run once before the server starts, in `{tmp}`: it
    /// makes what the server needs (a repository, a folder of files).
    pub prepare: Option<String>,
    pub env: Vec<String>,
    pub tool: Option<String>,
    /// `--args`: a JSON text, or a TOML table of the same shape.
    pub args: Option<CallArgs>,
    pub forbidden_tool: Vec<String>,
    /// `--forbidden-args`: each forbidden tool's call, by name, as `args`.
    pub forbidden_args: BTreeMap<String, CallArgs>,
    /// `--confirm-tool`: tools that act only once the client confirms.
    pub confirm_tool: Vec<String>,
    pub policy: Option<Policy>,
    pub level: Option<Level>,
    pub effect: Option<Effect>,
    pub watch_dir: Vec<String>,
    pub watch_file: Vec<String>,
    pub sink_ignore: Vec<String>,
    pub tcp_sink: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub start_ms: Option<u64>,
    pub quiet_ms: Option<u64>,
    pub exit_grace_ms: Option<u64>,
    /// `--baseline`: the file of known causes; `{here}` names the
    /// profile's folder.
    pub baseline: Option<String>,
}

/// A call's arguments: `args = '{"url":"{canary}"}'` or `args = { url = "{canary}" }`.
#[derive(Deserialize, Debug)]
#[serde(untagged, expecting = "a JSON object as text, or a table")]
pub enum CallArgs {
    Json(String),
    Table(toml::Table),
}

impl CallArgs {
    /// The arguments as JSON text, placeholders filled in.
    fn text(&self, places: &Places) -> Result<String> {
        let text = match self {
            CallArgs::Json(text) => text.clone(),
            CallArgs::Table(t) => serde_json::to_string(t)?,
        };
        Ok(places.fill_args(&text))
    }
}

/// `--effect` and a profile's `effect`: what counts as a call's action.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    Probe,
    Answer,
}

impl Effect {
    /// Its name on the command line and in a profile.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Probe => "probe",
            Effect::Answer => "answer",
        }
    }
}

/// The placeholders a profile's strings, and the flags given beside it,
/// may hold: `{here}`, the profile's folder; `{tmp}`, the run's temporary
/// folder, while it is held.
#[derive(Clone, Debug)]
pub struct Places {
    here: String,
    tmp: Option<String>,
}

impl Places {
    /// `text` with its placeholders filled in.
    pub fn fill(&self, text: &str) -> String {
        let text = text.replace("{here}", &self.here);
        match &self.tmp {
            Some(t) => text.replace("{tmp}", t),
            None => text,
        }
    }

    /// A call's arguments (JSON text) with the placeholders filled in in
    /// its strings, so a path that needs escaping in JSON stays one string;
    /// text that is not JSON is left to `--args` to refuse.
    pub fn fill_args(&self, json: &str) -> String {
        match serde_json::from_str::<Value>(json) {
            Ok(mut v) => {
                self.fill_strings(&mut v);
                v.to_string()
            }
            Err(_) => json.to_owned(),
        }
    }

    fn fill_strings(&self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.fill(s),
            Value::Array(items) => items.iter_mut().for_each(|x| self.fill_strings(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.fill_strings(x)),
            _ => {}
        }
    }
}

/// A profile read and made ready: its `prepare` run, and the temporary
/// folder `{tmp}` held until the run ends.
pub struct Loaded {
    pub profile: Profile,
    pub places: Places,
    pub tmp: Option<tempfile::TempDir>,
}

/// Reads the profile at `path`, checks it, makes `{tmp}` when the profile
/// or `beside` (the flags given with it) names it or the profile has a
/// `prepare`, and runs `prepare` there. Placeholders are filled in by the
/// caller, through [`Loaded::places`].
pub fn load(path: &Path, beside: &[&str]) -> Result<Loaded> {
    let named = |what: &str| format!("--profile {}{what}", path.display());
    let text = std::fs::read_to_string(path).with_context(|| named(""))?;
    let profile: Profile = parse_toml(&text, &named(""))?;
    if profile.level == Some(Level::Tolerated) {
        bail!("{}: level \"tolerated\" is judged by neither; use spec or hardening", named(""));
    }
    let here = std::path::absolute(path)?.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let wanted = text.contains("{tmp}") || beside.iter().any(|s| s.contains("{tmp}")) || profile.prepare.is_some();
    let tmp = match wanted {
        true => Some(tempfile::Builder::new().prefix("portcullis-profile-").tempdir()?),
        false => None,
    };
    let places = Places { here: here.display().to_string(), tmp: tmp.as_ref().map(|t| t.path().display().to_string()) };
    if let (Some(script), Some(dir)) = (&profile.prepare, &tmp) {
        prepare(&places.fill(script), dir.path()).map_err(|e| anyhow!("{}: {e}", named(": prepare")))?;
    }
    Ok(Loaded { profile, places, tmp })
}

/// The TOML file at `path` as a `T`, what goes wrong said in one line
/// that starts with `named` (and the line of the file at fault).
pub fn read_toml<T: serde::de::DeserializeOwned>(path: &Path, named: &str) -> Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| named.to_owned())?;
    parse_toml(&text, named)
}

/// `text`, a TOML file's, as a `T`, as [`read_toml`] reads it.
fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, named: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| format!(" line {}", text[..s.start].matches('\n').count() + 1));
        anyhow!("{named}{}: {}", line.unwrap_or_default(), e.message().trim_end().replace('\n', " "))
    })
}

impl Profile {
    /// Its `args` as the JSON text `--args` takes, the placeholders filled in.
    pub fn call_args(&self, places: &Places) -> Result<Option<String>> {
        self.args.as_ref().map(|a| a.text(places)).transpose()
    }

    /// Its `forbidden-args` as `--forbidden-args` gives them (NAME=JSON),
    /// its placeholders filled in, but for the tools `given` names: a flag
    /// wins over the profile.
    pub fn forbidden_args(&self, places: &Places, given: &[String]) -> Result<Vec<String>> {
        let named = |n: &str| given.iter().any(|g| g.split_once('=').is_some_and(|(name, _)| name == n));
        let kept = self.forbidden_args.iter().filter(|(name, _)| !named(name));
        kept.map(|(name, call)| Ok(format!("{name}={}", call.text(places)?))).collect()
    }
}

/// Runs `script` with `sh -c` in `cwd`, in a process group of its own,
/// bounded (the whole group is ended past the bound); its output goes to a
/// log beside `cwd`, whose last line a failure quotes.
fn prepare(script: &str, cwd: &Path) -> Result<()> {
    let log = tempfile::NamedTempFile::new()?;
    let mut command = std::process::Command::new("sh");
    command.args(["-c", script]).current_dir(cwd).stdin(Stdio::null());
    command.stdout(log.reopen()?).stderr(log.reopen()?);
    let status = crate::process::run_bounded(command, PREPARE_LIMIT).context("could not start sh")?;
    let first = script.lines().next().unwrap_or_default();
    let shown = if first.len() < script.trim_end().len() { format!("{first} ...") } else { first.to_owned() };
    match status {
        None => bail!("`{shown}` still ran after {} s", PREPARE_LIMIT.as_secs()),
        Some(status) if !status.success() => {
            let said = std::fs::read_to_string(log.path()).unwrap_or_default();
            let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
            bail!("`{shown}` failed ({status}): {last}")
        }
        Some(_) => Ok(()),
    }
}

//! `--profile FILE`: a target's launch command, the call to make and how
//! its effects are observed, in a small TOML file whose keys are the flags
//! of `portcullis fuzz` (docs/profiles.md). Flags given on the command line
//! win over it; repeatable ones add to its lists.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

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
    pub policy: Option<String>,
    pub level: Option<String>,
    pub effect: Option<String>,
    pub watch_dir: Vec<String>,
    pub watch_file: Vec<String>,
    pub sink_ignore: Vec<String>,
    pub tcp_sink: Option<bool>,
    pub timeout_ms: Option<u64>,
    pub quiet_ms: Option<u64>,
    pub exit_grace_ms: Option<u64>,
}

/// A call's arguments: `args = '{"url":"{canary}"}'` or `args = { url = "{canary}" }`.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum CallArgs {
    Json(String),
    Table(toml::Table),
}

impl CallArgs {
    /// The arguments as the JSON text `--args` takes.
    pub fn json(&self) -> Result<String> {
        match self {
            CallArgs::Json(text) => Ok(text.clone()),
            CallArgs::Table(t) => Ok(serde_json::to_string(t)?),
        }
    }
}

/// A profile read and made ready: its placeholders expanded, its `prepare`
/// run, and the temporary folder `{tmp}` held until the run ends.
pub struct Loaded {
    pub profile: Profile,
    pub tmp: Option<tempfile::TempDir>,
}

/// Reads the profile at `path`. `{here}` becomes the profile's folder and
/// `{tmp}` a fresh temporary folder (made only when the profile names it),
/// in every string but `tool`; then `prepare` runs there.
pub fn load(path: &Path) -> Result<Loaded> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--profile {}", path.display()))?;
    let mut profile: Profile = toml::from_str(&text).map_err(|e| {
        let at = match e.span().filter(|s| s.start > 0) {
            Some(s) => format!(" line {}", text[..s.start].lines().count().max(1)),
            None => String::new(),
        };
        anyhow::anyhow!("--profile {}{at}: {}", path.display(), e.message().trim_end())
    })?;
    let here = std::path::absolute(path)?.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let tmp = match text.contains("{tmp}") || profile.prepare.is_some() {
        true => Some(tempfile::Builder::new().prefix("portcullis-profile-").tempdir()?),
        false => None,
    };
    let tmp_text = tmp.as_ref().map(|t| t.path().display().to_string());
    let expand = |s: &mut String| {
        *s = s.replace("{here}", &here.display().to_string());
        if let Some(t) = &tmp_text {
            *s = s.replace("{tmp}", t);
        }
    };
    profile.strings().for_each(expand);
    if let Some(CallArgs::Table(t)) = &mut profile.args {
        let mut json = serde_json::to_string(t)?;
        expand(&mut json);
        profile.args = Some(CallArgs::Json(json));
    }
    if let Some(script) = &profile.prepare {
        let cwd = tmp.as_ref().map_or(here.as_path(), |t| t.path());
        prepare(script, cwd).with_context(|| format!("--profile {}: prepare", path.display()))?;
    }
    Ok(Loaded { profile, tmp })
}

impl Profile {
    /// Every string a placeholder may stand in, but the tool's name.
    fn strings(&mut self) -> impl Iterator<Item = &mut String> {
        let args = match &mut self.args {
            Some(CallArgs::Json(text)) => Some(text),
            _ => None,
        };
        self.command
            .iter_mut()
            .flatten()
            .chain(&mut self.prepare)
            .chain(&mut self.env)
            .chain(args)
            .chain(&mut self.watch_dir)
            .chain(&mut self.watch_file)
    }
}

/// Runs `script` with `sh -c` in `cwd`, bounded; its output goes to a log
/// in `cwd`, whose last line a failure quotes.
fn prepare(script: &str, cwd: &Path) -> Result<()> {
    let log_path = cwd.join("prepare.log");
    let log = std::fs::File::create(&log_path)?;
    let mut child = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .context("could not start sh")?;
    let deadline = Instant::now() + PREPARE_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            // Ours, by its id: started above and not yet reaped.
            let _ = child.kill();
            let _ = child.wait();
            bail!("`{script}` still ran after {} s", PREPARE_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let said = std::fs::read_to_string(&log_path).unwrap_or_default();
        let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        bail!("`{script}` failed ({status}): {last}");
    }
    Ok(())
}

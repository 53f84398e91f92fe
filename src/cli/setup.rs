//! Turning command-line flags into a child target: probes, templates, the
//! scrubbed environment, and the tool to call (given, or found by
//! tools/list).

use super::call_template;
use super::profile::{self, Effect, Places, Profile};
use crate::catalogue::{ArgKind, ArgSpec, ToolSpec, template_carries_token};
use crate::probe::{ProbeConfig, Probes};
use crate::process::{ChildTarget, Command, Siblings, Waits, list_tools};
use crate::{Fault, Revision};
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT_MS: u64 = 5000;
const QUIET_MS: u64 = 10;
const EXIT_GRACE_MS: u64 = 1000;

/// Milliseconds, as a number (`5000`) or with a unit (`500ms`, `5s`, `2m`),
/// at most a day.
fn millis(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a time such as 5000 (milliseconds), 500ms, 5s or 2m, up to a day");
    let (digits, per) = match text {
        t if t.ends_with("ms") => (&t[..t.len() - 2], 1),
        t if t.ends_with('s') => (&t[..t.len() - 1], 1_000),
        t if t.ends_with('m') => (&t[..t.len() - 1], 60_000),
        t => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let ms = digits.parse::<u64>().ok().and_then(|n| n.checked_mul(per));
    ms.filter(|ms| *ms <= 86_400_000).ok_or_else(bad)
}

/// The flags every command that runs a child shares.
#[derive(clap::Args, Clone)]
pub struct ChildFlags {
    /// The longest a session waits for an answer it is owed, or for a
    /// valid call to act, once the server runs; the bound of every wait.
    /// In milliseconds, or with a unit (500ms, 5s) [default: 5000].
    #[arg(long, value_name = "N", value_parser = millis)]
    pub timeout_ms: Option<u64>,
    /// The longest a new server process may take to write its first byte
    /// (its answer to `initialize`, say); from then on --timeout-ms
    /// applies. In milliseconds; raised to --timeout-ms if lower [default:
    /// as --timeout-ms].
    #[arg(long, value_name = "N", value_parser = millis)]
    pub start_ms: Option<u64>,
    /// How long output and effects must stay quiet before a session in a
    /// process of its own goes on (closes stdin, or is judged); it grows
    /// when the server shows it acts later. In milliseconds [default: 10].
    #[arg(long, value_name = "N", value_parser = millis)]
    pub quiet_ms: Option<u64>,
    /// How long the server may take to exit when it should (stdin closed,
    /// or a frame that closes the session), counted from when it has read
    /// what it was sent. In milliseconds [default: 1000].
    #[arg(long, value_name = "N", value_parser = millis)]
    pub exit_grace_ms: Option<u64>,
    /// Watch a directory for files whose name or content holds a token.
    #[arg(long, value_name = "DIR")]
    pub watch_dir: Vec<PathBuf>,
    /// Watch a file for a token appearing in its content.
    #[arg(long, value_name = "FILE")]
    pub watch_file: Vec<PathBuf>,
    /// Pass a variable to the child: KEY takes the harness's value, KEY=VALUE sets it ({sink} expands).
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,
    /// Answer HTTP sink requests for PATH without counting them as effects:
    /// requests a server makes by design beside its calls (a fetch server's
    /// /robots.txt, say), which carry no token. PATH is exact, or a prefix
    /// ending in `*`; the query is not matched. Repeatable.
    #[arg(long, value_name = "PATH", value_parser = parse_sink_path)]
    pub sink_ignore: Vec<String>,
    /// Also run a raw TCP sink; its address replaces {tcp-sink}.
    #[arg(long)]
    pub tcp_sink: bool,
    /// What counts as a call's action: what a probe sees (probe), or also a
    /// success result, for a tool with no effect a probe can see, such as a
    /// clock (answer) [default: probe].
    #[arg(long, value_enum, value_name = "EFFECT")]
    pub effect: Option<Effect>,
    /// A target profile (TOML, docs/profiles.md): how to launch the server,
    /// what to call, how its effects are seen. Flags given here win over
    /// it; repeatable ones add to it.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// The server to fuzz and its arguments ({sink} expands to the HTTP
    /// sink's URL); without it, the profile's command.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// The flags as given, before a profile filled them in.
    #[arg(skip)]
    asked: Option<Box<ChildFlags>>,
    /// The profile's `{tmp}`, removed when the last copy of these flags is.
    #[arg(skip)]
    tmp: Option<Arc<tempfile::TempDir>>,
}

/// Everything one job needs to start sessions.
pub struct Setup {
    pub probes: Arc<Probes>,
    pub command: Command,
    pub waits: Waits,
    /// Whether a success result counts as the action (`--effect answer`).
    pub answers: bool,
    /// Shared by every target of one run, whichever job's setup made it:
    /// each judges only its own sessions' records in watched files.
    pub siblings: Siblings,
}

impl ChildFlags {
    /// These flags over `--profile`'s, and the profile for the flags of the
    /// subcommand, with the places its placeholders stand for: a flag given
    /// wins, a repeatable one adds to the profile's list, and the command
    /// after `--` replaces the profile's. `{here}` and `{tmp}` are filled in
    /// in both; `beside` names the subcommand's own flags that may hold them.
    pub fn with_profile(&self, beside: &[&str]) -> Result<(ChildFlags, Option<(Profile, Places)>)> {
        let Some(path) = &self.profile else {
            if self.command.is_empty() {
                bail!("no COMMAND after -- (and no --profile)");
            }
            return Ok((self.clone(), None));
        };
        let paths = |ps: &[PathBuf]| ps.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
        let mine = [self.command.clone(), self.env.clone(), paths(&self.watch_dir), paths(&self.watch_file)].concat();
        let mentioned: Vec<&str> = mine.iter().map(String::as_str).chain(beside.iter().copied()).collect();
        let profile::Loaded { profile: p, places, tmp } = profile::load(path, &mentioned)?;
        let fill = |words: Vec<String>| words.iter().map(|w| places.fill(w)).collect::<Vec<_>>();
        let fill_paths = |theirs: &[String], mine: &[PathBuf]| {
            fill([theirs.to_vec(), paths(mine)].concat()).into_iter().map(PathBuf::from).collect()
        };
        let merged = ChildFlags {
            timeout_ms: self.timeout_ms.or(p.timeout_ms),
            start_ms: self.start_ms.or(p.start_ms),
            quiet_ms: self.quiet_ms.or(p.quiet_ms),
            exit_grace_ms: self.exit_grace_ms.or(p.exit_grace_ms),
            watch_dir: fill_paths(&p.watch_dir, &self.watch_dir),
            watch_file: fill_paths(&p.watch_file, &self.watch_file),
            env: fill([p.env.clone(), self.env.clone()].concat()),
            sink_ignore: [p.sink_ignore.clone(), self.sink_ignore.clone()].concat(),
            tcp_sink: self.tcp_sink || p.tcp_sink == Some(true),
            effect: self.effect.or(p.effect),
            profile: self.profile.clone(),
            command: match self.command.is_empty() {
                true => fill(p.command.clone().unwrap_or_default()),
                false => fill(self.command.clone()),
            },
            asked: Some(Box::new(self.clone())),
            tmp: tmp.map(Arc::new),
        };
        if let Some(bad) = merged.sink_ignore.iter().find_map(|p| parse_sink_path(p).err()) {
            bail!("--profile {}: sink-ignore {bad}", path.display());
        }
        if merged.command.is_empty() {
            bail!("--profile {} names no command, and none follows --", path.display());
        }
        Ok((merged, Some((p, places))))
    }

    /// The profile's `{tmp}`, while these flags hold it.
    pub fn tmp_path(&self) -> Option<String> {
        self.tmp.as_ref().map(|t| t.path().display().to_string())
    }

    fn waits(&self) -> Waits {
        let waits = Waits::from_ms(
            self.timeout_ms.unwrap_or(TIMEOUT_MS),
            self.quiet_ms.unwrap_or(QUIET_MS),
            self.exit_grace_ms(),
        );
        match self.start_ms {
            Some(ms) => waits.starting_within(Duration::from_millis(ms)),
            None => waits,
        }
    }

    /// How long the server may take to exit when it should, in milliseconds.
    pub fn exit_grace_ms(&self) -> u64 {
        self.exit_grace_ms.unwrap_or(EXIT_GRACE_MS)
    }

    /// `portcullis SUBCOMMAND ARTIFACT`, then these flags where they differ
    /// from the defaults, then `-- COMMAND`: a line a user can paste into a
    /// shell, from any folder, to run the same child with the same probes.
    /// Paths are absolute: the artifact, this program, watched paths, and
    /// each word of the command that names a file here.
    pub fn command_line(&self, subcommand: &str, artifact: &std::path::Path) -> String {
        let me = super::me();
        let me = if me.contains('/') { absolute(&me) } else { me };
        let mut words = vec![me, subcommand.to_owned(), absolute(&artifact.display().to_string())];
        let mut flag = |name: &str, value: String| words.extend([format!("--{name}"), value]);
        // A profile makes its `{tmp}` afresh: the flags it filled in are its own.
        let given = self.asked.as_deref().unwrap_or(self);
        if let Some(p) = &self.profile {
            flag("profile", absolute(&p.display().to_string()));
        }
        let ms = [
            ("timeout-ms", given.timeout_ms),
            ("start-ms", given.start_ms),
            ("quiet-ms", given.quiet_ms),
            ("exit-grace-ms", given.exit_grace_ms),
        ];
        for (name, value) in ms {
            if let Some(v) = value {
                flag(name, v.to_string());
            }
        }
        given.watch_dir.iter().for_each(|d| flag("watch-dir", absolute(&d.display().to_string())));
        given.watch_file.iter().for_each(|f| flag("watch-file", absolute(&f.display().to_string())));
        given.env.iter().for_each(|e| flag("env", e.clone()));
        given.sink_ignore.iter().for_each(|p| flag("sink-ignore", p.clone()));
        if let Some(effect) = given.effect {
            flag("effect", effect.as_str().to_owned());
        }
        if given.tcp_sink {
            words.push("--tcp-sink".into());
        }
        if !given.command.is_empty() {
            words.push("--".into());
            let here = |w: &String| !w.starts_with('-') && std::path::Path::new(w).exists();
            words.extend(given.command.iter().map(|w| if here(w) { absolute(w) } else { w.clone() }));
        }
        super::shell_line(&words)
    }

    /// Starts a job's probes and expands the templates of its command.
    pub fn setup(&self) -> Result<Setup> {
        for d in &self.watch_dir {
            if !d.is_dir() {
                bail!("--watch-dir {}: not a directory", d.display());
            }
        }
        let cfg = ProbeConfig {
            tcp: self.tcp_sink,
            watch_dirs: self.watch_dir.clone(),
            watch_files: self.watch_file.clone(),
            http_ignore: self.sink_ignore.clone(),
        };
        let probes = Arc::new(Probes::start(&cfg)?);
        let sink = probes.http_base();
        let tcp = probes.tcp_addr().unwrap_or_default();
        let expand = |s: &str| s.replace("{sink}", &sink).replace("{tcp-sink}", &tcp);
        let (program, args) = self.command.split_first().context("no COMMAND after --")?;
        let env =
            self.env.iter().map(|e| env_var(e).map(|(k, v)| (k, v.map(|v| expand(&v))))).collect::<Result<_>>()?;
        let command = Command::new(expand(program), args.iter().map(|a| expand(a))).with_env(env);
        let answers = self.effect == Some(Effect::Answer);
        Ok(Setup { probes, command, waits: self.waits(), answers, siblings: Siblings::default() })
    }
}

impl Setup {
    /// A target calling `tools`, its canary URLs on this job's sink.
    pub fn target(&self, tools: Vec<ToolSpec>) -> ChildTarget {
        self.target_waiting(tools, self.waits)
    }

    /// [`Setup::target`] with other waits.
    pub fn target_waiting(&self, tools: Vec<ToolSpec>, waits: Waits) -> ChildTarget {
        let target = ChildTarget::new(self.command.clone(), waits, tools, self.probes.clone());
        target.effects_from_answers(self.answers).among(&self.siblings)
    }
}

/// Reads an `--env`: `KEY` (the harness's value passed through) or
/// `KEY=VALUE`; a key must be a name.
pub fn env_var(given: &str) -> Result<(String, Option<String>)> {
    let (key, value) = match given.split_once('=') {
        Some((k, v)) => (k, Some(v.to_owned())),
        None => (given, None),
    };
    if key.is_empty() || key.contains(char::is_whitespace) || key.contains('\0') {
        bail!("--env {given:?}: {key:?} is not a variable's name (KEY or KEY=VALUE)");
    }
    Ok((key.to_owned(), value))
}

/// `path` made absolute against the current folder, as given otherwise.
fn absolute(path: &str) -> String {
    std::path::absolute(path).map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}

/// Reads a `--sink-ignore` path: it names what follows the sink's host.
fn parse_sink_path(path: &str) -> Result<String, String> {
    match path.starts_with('/') {
        true => Ok(path.to_owned()),
        false => Err(format!("{path:?} is not a path on the sink (it starts with /, as in /robots.txt)")),
    }
}

/// Reads `--args`: a JSON object with `{canary}` or `{token}` in a string.
pub fn parse_args(text: &str) -> Result<Map<String, Value>> {
    parse_call("--args", text)
}

/// A call's arguments given by `flag`: a JSON object that puts a token in
/// a string.
fn parse_call(flag: &str, text: &str) -> Result<Map<String, Value>> {
    let v: Value = serde_json::from_str(text).with_context(|| format!("{flag} is not JSON: {text}"))?;
    let Value::Object(map) = v else { bail!("{flag} must be a JSON object, got {text}") };
    if !template_carries_token(&map) {
        bail!("{flag} must put \"{{canary}}\" or \"{{token}}\" in a string value, so effects can be traced to frames");
    }
    Ok(map)
}

/// A forbidden tool, and the arguments `--forbidden-args NAME=JSON` gives
/// its calls, if any.
pub type Forbidden = (String, Option<Map<String, Value>>);

/// Each `--forbidden-tool`, and each tool `--forbidden-args` names (which
/// it forbids too), with the arguments given for it.
pub fn forbidden(tools: &[String], args: &[String]) -> Result<Vec<Forbidden>> {
    let mut out: Vec<Forbidden> = Vec::new();
    for given in args {
        let Some((name, json)) = given.split_once('=').filter(|(name, _)| !name.is_empty()) else {
            bail!("--forbidden-args {given:?}: give it as NAME=JSON, such as 'send={{\"to\":\"{{canary}}\"}}'")
        };
        let call = parse_call(&format!("--forbidden-args {name}"), json)?;
        if out.iter().any(|(n, _)| n == name) {
            bail!("--forbidden-args {name:?} is given twice");
        }
        out.push((name.to_owned(), Some(call)));
    }
    for name in tools {
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.clone(), None));
        }
    }
    Ok(out)
}

/// The tools to call, from a listing already asked for: first `--tool`
/// (with `--args` or a call built from its schema), or the listed tool
/// likeliest to act whose call can carry a canary ([`call_template::rank`]);
/// then each forbidden tool, which the client may not run, called with the
/// arguments given for it or a call built from its schema. Also the names
/// of every listed tool.
pub fn choose_from(
    listing: &Result<Vec<Value>, Fault>,
    name: Option<&str>,
    args: Option<Map<String, Value>>,
    forbidden: &[Forbidden],
) -> Result<(Vec<ToolSpec>, Vec<String>)> {
    let listed: Vec<Listed> = match listing {
        Ok(tools) => tools
            .iter()
            .filter_map(|raw| {
                let spec = ToolSpec::from_listing(raw)?;
                Some(Listed { spec, raw, call: raw.get("inputSchema").and_then(call_template::template) })
            })
            .collect(),
        Err(_) => vec![],
    };
    let specs: Vec<ToolSpec> = listed.iter().map(|l| l.spec.clone()).collect();
    let (mut tool, built) = match name {
        Some(n) => match listed.iter().find(|l| l.spec.name == n) {
            Some(l) => (l.spec.clone(), l.call.clone()),
            None if args.is_some() => {
                // Not listed (or no listing): the arguments are the schema.
                let keys = args.iter().flat_map(|a| a.keys());
                // Its schema unknown, nothing says it refuses other arguments.
                let args = keys.map(|k| ArgSpec::required(k, ArgKind::Text)).collect();
                (ToolSpec { closed: false, ..ToolSpec::new(n, args) }, None)
            }
            None => match listing {
                Ok(_) => bail!("the server lists no tool {n:?}; it has: {}", names_of(&specs)),
                Err(e @ Fault::Spawn { .. }) => bail!("{}", super::told(e)),
                Err(e @ Fault::Timeout { .. }) => bail!(
                    "could not list the server's tools ({}); raise --start-ms if it is slow to start, or pass \
                     --args for {n:?}",
                    super::told(e)
                ),
                // It exited before it answered: --args would not help.
                Err(Fault::Config { what }) => bail!("{what}"),
                Err(e) => bail!("could not list the server's tools ({}); pass --args for {n:?}", super::told(e)),
            },
        },
        None => {
            match listing {
                Err(e @ Fault::Spawn { .. }) => bail!("{}", super::told(e)),
                Err(Fault::Config { what }) => bail!("{what}"),
                Err(Fault::Timeout { what }) => bail!(
                    "{what}; if it is slow to start the first time (npx -y and uvx download it then), raise \
                     --start-ms; else pass --tool and --args"
                ),
                Err(e) => bail!("could not list the server's tools ({})", super::told(e)),
                Ok(_) => {}
            }
            let ranked = listed.iter().filter_map(|l| Some((call_template::rank(l.raw, l.call.as_ref()?), l)));
            match ranked.min_by_key(|(rank, _)| *rank) {
                Some((_, l)) => (l.spec.clone(), l.call.clone()),
                None => bail!(
                    "no listed tool has a string argument to carry a canary; pass --tool and --args (tools: {})",
                    names_of(&specs)
                ),
            }
        }
    };
    tool.template = match args.or(built) {
        Some(a) => Some(a),
        None => bail!("cannot build a call of {:?} that carries a canary; pass --args", tool.name),
    };
    let mut tools = vec![tool];
    for (f, given) in forbidden {
        let Some(l) = listed.iter().find(|l| &l.spec.name == f) else {
            bail!("forbidden tool {f:?}: the server lists no such tool; it has: {}", names_of(&specs));
        };
        let Some(call) = given.as_ref().or(l.call.as_ref()) else {
            bail!("forbidden tool {f:?}: no string argument can carry a canary; give its call with --forbidden-args")
        };
        tools.push(ToolSpec { template: Some(call.clone()), authorized: false, ..l.spec.clone() });
    }
    Ok((tools, specs.into_iter().map(|t| t.name).collect()))
}

/// The tools `names` that act only once the client confirms, as a
/// 2026-07-28 `tools/list` lists them, each with a call built from its
/// schema.
pub fn confirming(setup: &Setup, names: &[String]) -> Result<Vec<ToolSpec>> {
    if names.is_empty() {
        return Ok(vec![]);
    }
    let listing = list_tools(&setup.target(vec![]), Revision::R2026_07_28).map_err(|e| {
        anyhow::anyhow!("--confirm-tool: could not list the server's tools in 2026-07-28 ({})", super::told(&e))
    })?;
    let specs: Vec<ToolSpec> = listing.iter().filter_map(ToolSpec::from_listing).collect();
    names
        .iter()
        .map(|name| {
            let Some(raw) = listing.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name)) else {
                bail!(
                    "--confirm-tool {name:?}: the server lists no such tool in 2026-07-28; it has: {}",
                    names_of(&specs)
                );
            };
            let spec = ToolSpec::from_listing(raw).expect("a listed tool with a name");
            let Some(call) = raw.get("inputSchema").and_then(call_template::template) else {
                bail!("--confirm-tool {name:?}: no string argument of its schema can carry a canary");
            };
            Ok(ToolSpec { template: Some(call), confirms: true, ..spec })
        })
        .collect()
}

/// One listed tool: what the generators know of it, its `tools/list`
/// entry, and the call its schema allows if one can carry a token.
struct Listed<'a> {
    spec: ToolSpec,
    raw: &'a Value,
    call: Option<Map<String, Value>>,
}

fn names_of(tools: &[ToolSpec]) -> String {
    tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
}

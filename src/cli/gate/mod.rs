//! `portcullis check-stdout`: the release gate of a stdio server's stdout.
//! The command is launched as released, then under each variant that makes
//! runtimes talk; each runs the opening (initialize, initialized,
//! tools/list, ping; or in 2026-07-28 server/discover, tools/list,
//! server/discover) and closes stdin, and every stdout byte it wrote, also
//! when it failed, must belong to a protocol message. Each variant runs in
//! every era the server speaks.

mod gate_output;
mod variants;

use super::conversation::{Conversation, Transcript};
use super::stdout_lines::{self, Dirty};
use crate::probe::{ProbeConfig, Probes};
use crate::process::{ChildTarget, Command, Home, Waits};
use crate::protocol::Revision;
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use variants::Variant;

#[derive(clap::Args)]
pub struct Args {
    /// Pass a variable to the server in every variant: KEY takes the
    /// harness's value, KEY=VALUE sets it. Repeatable.
    #[arg(long, value_name = "KEY[=VALUE]")]
    env: Vec<String>,
    /// An argument that makes the server fail early (a bad flag, a missing
    /// configuration file): adds the variant `early-failure`, the command
    /// with it appended. Repeatable, for a flag and its value.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    fail_flag: Vec<String>,
    /// The longest wait for each answer of the opening, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// How long the server may take to exit once stdin is closed before
    /// its process group is ended, in milliseconds.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    exit_grace_ms: u64,
    /// The one protocol revision to open sessions in [default: 2025-11-25,
    /// and 2026-07-28 too where the server's `server/discover` names it].
    #[arg(long, value_parser = super::one_of(&Revision::ALL))]
    revision: Option<Revision>,
    /// Write the verdict of each variant as JSON here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Write a JUnit XML report here: one test case per variant, its
    /// stderr attached.
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
    #[command(flatten)]
    baselines: super::baseline::Flags,
    /// A profile (docs/profiles.md): its command, `env` and `prepare`
    /// (run once, in `{tmp}`); the command and `--env` given win over it.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// The server exactly as it is released, and its arguments.
    #[arg(last = true, required_unless_present = "profile", value_name = "COMMAND")]
    command: Vec<String>,
}

/// One variant's run and its verdict.
pub struct Checked {
    pub variant: Variant,
    pub revision: Revision,
    pub launch: String,
    pub transcript: Transcript,
    pub lines: usize,
    pub dirty: Vec<Dirty>,
}

/// What a profile gives the gate.
type Launch = (Vec<String>, Vec<String>, Option<PathBuf>, Option<tempfile::TempDir>);

/// The command and the environment to launch, with `--profile`'s filled
/// in, the baseline it names, and its `{tmp}`, held while the gate runs.
fn launched(args: &Args) -> Result<Launch> {
    let Some(path) = &args.profile else { return Ok((args.command.clone(), args.env.clone(), None, None)) };
    let mentioned: Vec<&str> = args.command.iter().chain(&args.env).map(String::as_str).collect();
    let super::profile::Loaded { profile, places, tmp } = super::profile::load(path, &mentioned)?;
    let fill = |words: &[String]| words.iter().map(|w| places.fill(w)).collect::<Vec<_>>();
    let command = match args.command.is_empty() {
        true => fill(&profile.command.unwrap_or_default()),
        false => fill(&args.command),
    };
    if command.is_empty() {
        bail!("--profile {} names no command, and none follows --", path.display());
    }
    let baseline = profile.baseline.as_ref().map(|b| places.fill(b).into());
    Ok((command, fill(&[profile.env, args.env.clone()].concat()), baseline, tmp))
}

impl Checked {
    /// Its cause, as a baseline lists it: the variant and the revision.
    pub fn key(&self) -> String {
        format!("check-stdout/{} ({})", self.variant.name, self.revision)
    }
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let (command, env, named, _tmp) = launched(args)?;
    let (program, words) = command.split_first().expect("a command, given or from the profile");
    let env = env.iter().map(|e| super::setup::env_var(e)).collect::<Result<_>>()?;
    let baselines = args.baselines.or_profiles(named).read(super::baseline::Tool::CheckStdout)?;
    let base = Command::new(program.clone(), words.iter().cloned()).with_env(env);
    // No call is made: the probes are there because every target has them.
    let probes = Arc::new(Probes::start(&ProbeConfig::default())?);
    let waits = Waits::from_ms(args.timeout_ms, 10, args.exit_grace_ms);
    let target = ChildTarget::new(base.clone(), waits, vec![], probes);
    let shown = super::shell_line(&command);
    let (revisions, said) = match args.revision {
        Some(r) => (vec![r], r.to_string()),
        None => eras(&target)?,
    };
    let all = variants::all(&args.fail_flag);
    say!("portcullis check-stdout: `{shown}`: {} variants, in {said}", all.len());
    let mut checked = Vec::new();
    for revision in revisions {
        for variant in all.iter().cloned() {
            let one = check(&target, &base, variant, revision)?;
            gate_output::line(&one);
            checked.push(one);
        }
    }
    let outputs = gate_output::Outputs { json: args.report.as_deref(), junit: args.junit.as_deref() };
    gate_output::write(outputs, &shown, &checked)?;
    let dirty: Vec<&Checked> = checked.iter().filter(|c| !c.dirty.is_empty()).collect();
    let causes: Vec<Vec<String>> = dirty.iter().map(|c| vec![c.key()]).collect();
    let standing = baselines.stand(&causes);
    let updated = baselines.update(&causes)?;
    let known = |c: &Checked| standing.as_ref().and_then(|s| s.known.iter().find(|(k, _)| *k == c.key()).cloned());
    for c in &dirty {
        match known(c) {
            Some((key, reason)) => out!("Known: {key} ({})", super::baseline::reason_text(&reason)),
            None => gate_output::failure(c),
        }
    }
    if let Some(s) = &standing {
        out_raw!("{}", super::baseline::standing_text(s));
    }
    // The released run of each era must have been gated to its end.
    let released = checked.iter().filter(|c| c.variant.name == "released");
    let unanswered = released.filter_map(|c| c.transcript.unanswered.map(|m| (m, c.revision, &c.transcript.stderr)));
    if let Some((method, revision, stderr)) = unanswered.into_iter().next().filter(|_| dirty.is_empty()) {
        bail!(
            "the server as released left {method} unanswered within {} ms in {revision}, so its stdout was not \
             gated past that ({}; raise --timeout-ms if it is slow to start)",
            args.timeout_ms,
            crate::process::stderr_tail(stderr)
        );
    }
    let new = dirty.iter().filter(|c| known(c).is_none()).count();
    let aside = match dirty.len() - new {
        0 => String::new(),
        n => format!(" ({} more the baseline knows)", crate::report::counted(n, "dirty run")),
    };
    match (new, dirty.len()) {
        (0, 0) => {
            out!("clean: every stdout line in {} runs was a protocol message", checked.len());
            Ok(ExitCode::SUCCESS)
        }
        (0, n) => {
            out!("no new dirty run: {n} of {} runs wrote stdout the baseline knows of", checked.len());
            Ok(ExitCode::SUCCESS)
        }
        (n, _) => {
            out!("dirty: {n} of {} runs wrote stdout that is not a protocol message{aside}", checked.len());
            Ok(if updated { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

/// The eras to gate in, asked as a client asks: 2025-11-25, and 2026-07-28
/// where the server's `server/discover` names it; and how to say so.
fn eras(target: &ChildTarget) -> Result<(Vec<Revision>, String)> {
    let asked = crate::process::speaks_stateless(target).map_err(|e| anyhow::anyhow!("{}", super::told(&e)))?;
    let handshake = Revision::LATEST_HANDSHAKEN;
    Ok(match asked.spoken {
        true => {
            (vec![handshake, Revision::R2026_07_28], format!("{handshake} and 2026-07-28 (named by server/discover)"))
        }
        false => (vec![handshake], format!("{handshake} (server/discover names no 2026-07-28)")),
    })
}

/// Runs `variant` of `base` to its end and judges its stdout.
fn check(target: &ChildTarget, base: &Command, variant: Variant, revision: Revision) -> Result<Checked> {
    let folder = if variant.empty_cwd { Some(Home::new()?) } else { None };
    let cmd = variants::command(base, &variant, folder.as_ref().map(Home::path));
    let launch = variants::launch_line(&cmd, &variant);
    let mut one = target.clone();
    one.command = cmd;
    let mut talk = Conversation::start(&one, revision, 0)
        .map_err(|e| anyhow::anyhow!("variant {}: {}", variant.name, super::told(&e)))?;
    if !variant.stdin_closed {
        talk.open();
    }
    let transcript = talk.finish();
    let (lines, dirty) = stdout_lines::judge(&transcript.stdout, revision);
    Ok(Checked { variant, revision, launch, transcript, lines, dirty })
}

//! `portcullis check-stdout`: the release gate of a stdio server's stdout.
//! The command is launched as released, then under each variant that makes
//! runtimes talk; each runs the opening (initialize, initialized,
//! tools/list, ping; or in 2026-07-28 server/discover, tools/list,
//! server/discover), with a tool call after tools/list where one is asked
//! for, and closes stdin, and every stdout byte it wrote, also
//! when it failed, must belong to a protocol message. Each variant runs in
//! every era the server speaks.

mod gate_output;
mod launch;
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
    /// A tool to call once the opening is answered (the first call after
    /// an idle start, where a debug line often shows), with `--args`.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The call's arguments, as JSON: "{canary}" becomes a URL of the
    /// harness's sink, "{token}" a marker [default: {}].
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// A profile (docs/profiles.md): its command, `env`, `prepare` (run
    /// once, in `{tmp}`), `tool`, `args` and `baseline`; what is given on
    /// the command line wins over it.
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

impl Checked {
    /// Its cause, as a baseline lists it: the variant and the revision.
    pub fn key(&self) -> String {
        format!("check-stdout/{} ({})", self.variant.name, self.revision)
    }
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let launch = launch::launched(args)?;
    let (program, words) = launch.command.split_first().expect("a command, given or from the profile");
    let env = launch.env.iter().map(|e| super::setup::env_var(e)).collect::<Result<_>>()?;
    let baselines = args.baselines.or_profiles(launch.baseline.clone()).read(super::baseline::Finder::CheckStdout)?;
    let base = Command::new(program.clone(), words.iter().cloned()).with_env(env);
    // The sink takes what a `{canary}` in the call's arguments fetches; no
    // effect is judged.
    let probes = Arc::new(Probes::start(&ProbeConfig::default())?);
    let call = launch.call(&probes.http_base())?;
    let waits = Waits::from_ms(args.timeout_ms, 10, args.exit_grace_ms);
    let target = ChildTarget::new(base.clone(), waits, vec![], probes);
    let shown = super::shell_line(&launch.command);
    let (revisions, said) = match args.revision {
        Some(r) => (vec![r], r.to_string()),
        None => eras(&target)?,
    };
    let all = variants::all(&args.fail_flag);
    say!("portcullis check-stdout: `{shown}`: {} variants, in {said}", all.len());
    let mut checked = Vec::new();
    for revision in revisions {
        for variant in all.iter().cloned() {
            let one = check(&target, &base, variant, revision, call.as_ref())?;
            gate_output::line(&one);
            checked.push(one);
        }
    }
    let outputs = gate_output::Outputs { json: args.report.as_deref(), junit: args.junit.as_deref() };
    gate_output::write(outputs, &shown, &checked)?;
    let dirty: Vec<&Checked> = checked.iter().filter(|c| !c.dirty.is_empty()).collect();
    let causes: Vec<super::baseline::Seen> = dirty.iter().map(|c| super::baseline::Seen::alone(c.key())).collect();
    let standing = baselines.stand(&causes);
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
        let slow = if method == "tools/call" { "its call is slow" } else { "it is slow to start" };
        bail!(
            "the server as released left {method} unanswered within {} ms in {revision}, so its stdout was not \
             gated past that ({}; raise --timeout-ms if {slow})",
            args.timeout_ms,
            crate::process::stderr_tail(stderr)
        );
    }
    // Written once the gate is known to have run to its end.
    let updated = baselines.update(&causes)?;
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
fn check(
    target: &ChildTarget,
    base: &Command,
    variant: Variant,
    revision: Revision,
    call: Option<&(String, serde_json::Value)>,
) -> Result<Checked> {
    let folder = if variant.empty_cwd { Some(Home::new()?) } else { None };
    let cmd = variants::command(base, &variant, folder.as_ref().map(Home::path));
    let launch = variants::launch_line(&cmd, &variant);
    let mut one = target.clone();
    one.command = cmd;
    let mut talk = Conversation::start(&one, revision, 0)
        .map_err(|e| anyhow::anyhow!("variant {}: {}", variant.name, super::told(&e)))?;
    if !variant.stdin_closed {
        talk.open_calling(call);
    }
    let transcript = talk.finish();
    let (lines, dirty) = stdout_lines::judge(&transcript.stdout, revision);
    Ok(Checked { variant, revision, launch, transcript, lines, dirty })
}

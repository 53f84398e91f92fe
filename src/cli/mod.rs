//! The `portcullis` command line: its subcommands, one module each.

/// `println!` that leaves a closed stdout alone (`portcullis … | head`):
/// what a run finds is saved whether or not anyone still reads it.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that leaves a closed stdout alone.
macro_rules! out_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that leaves a closed stderr alone.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod audit;
mod bar;
mod baseline;
mod call_template;
mod campaigning;
mod conversation;
mod corpus;
mod fuzz;
mod fuzz_args;
mod fuzz_outcome;
mod gate;
mod interrupt;
mod minimize;
mod mutants;
mod profile;
mod promote;
mod reference_gateway;
mod replay;
mod saving;
mod setup;
mod stdout_lines;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Property-based fuzzing of the stdio boundary of MCP servers and gateways.
#[derive(Parser)]
#[command(name = "portcullis", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a seed corpus for the raw-bytes fuzz target: `portcullis corpus --out DIR`.
    Corpus(corpus::Args),
    /// Fuzz a stdio MCP server: `portcullis fuzz [FLAGS] -- COMMAND [ARG]...`.
    #[command(after_help = FUZZ_EXAMPLES)]
    Fuzz(fuzz_args::Args),
    /// Run a saved finding again: `portcullis replay FILE -- COMMAND`.
    #[command(
        after_help = "Example:\n  portcullis replay portcullis-findings/finding-policy-seed0-1a2b3c4d.json -- python3 server.py"
    )]
    Replay(replay::Args),
    /// Cut a saved finding down to its smallest failing script: `portcullis minimize FILE -- COMMAND`.
    #[command(
        after_help = "Example:\n  portcullis minimize --budget-ms 20000 portcullis-findings/finding-policy-seed0-1a2b3c4d.json \
                      -- python3 server.py"
    )]
    Minimize(minimize::Args),
    /// Turn a fuzz crash or a saved finding into a regression test under tests/regression/.
    Promote(promote::Args),
    /// Hunt every built-in planted bug and check the reference stays clean.
    Mutants(mutants::Args),
    /// Release gate: every stdout byte a protocol message, under variants that make runtimes talk.
    #[command(after_help = CHECK_STDOUT_EXAMPLES)]
    CheckStdout(gate::Args),
    /// Runtime privilege audit: canary secrets, what it opens, connects to and runs, per phase.
    #[command(after_help = AUDIT_EXAMPLES)]
    Audit(audit::Args),
    /// Serve the reference gateway (or a mutant) on stdio; `fetch` makes a real HTTP GET.
    ReferenceGateway(reference_gateway::Args),
}

const EXAMPLES: &str = "Examples:
  portcullis fuzz --tool fetch --args '{\"url\":\"{canary}\"}' -- python3 server.py
  portcullis fuzz --policy keep-open --jobs 2 -- npx -y @scope/some-mcp-server
  portcullis replay portcullis-findings/FINDING.json -- python3 server.py
  portcullis mutants";

const CHECK_STDOUT_EXAMPLES: &str = "Examples:
  portcullis check-stdout -- uvx mcp-server-fetch
  portcullis check-stdout --env API_URL=http://127.0.0.1:9 --fail-flag --config=/nonexistent -- ./my-server
  portcullis check-stdout --junit stdout.xml --report stdout.json -- node dist/index.js

Exit codes: 0 clean, 1 a variant wrote a line that is not a protocol message, 2 a usage or harness error
(or the server as released left initialize unanswered, so nothing past its startup was gated).";

const AUDIT_EXAMPLES: &str = "Examples:
  portcullis audit -- uvx mcp-server-fetch
  portcullis audit --allow-path /srv/data --report audit.json --junit audit.xml -- node dist/index.js
  portcullis audit --profile profiles/mcp-server-git.toml

Exit codes: 0 both verdicts clean, 1 a finding in either, 2 a usage or harness error
(or the server left initialize unanswered and nothing was found in its startup).";

const FUZZ_EXAMPLES: &str = "Examples:
  Let portcullis list the tools and pick one that can carry a canary:
    portcullis fuzz -- python3 server.py
  A server described by a profile (docs/profiles.md):
    portcullis fuzz --profile profiles/mcp-server-fetch.toml
  Name the tool, and where its argument must carry the canary URL:
    portcullis fuzz --tool fetch --args '{\"url\":\"{canary}\"}' -- python3 server.py
  An SDK-built server that answers bad frames with errors and goes on:
    portcullis fuzz --policy keep-open --cases 2000 --jobs 2 -- uvx some-mcp-server
  A tool that writes files instead of fetching URLs:
    portcullis fuzz --tool write --args '{\"path\":\"/tmp/out/{token}\"}' --watch-dir /tmp/out -- node server.js
  Overnight, on two cores, every distinct finding listed at the end:
    portcullis fuzz --duration 8h --jobs 2 -- ./my-server
  For CI, with reports:
    portcullis fuzz --report findings.json --junit junit.xml -- ./my-server";

/// A flag's parser over `values`, each named as it displays, so that
/// `--help` lists them and a wrong one is told what would do.
pub(crate) fn one_of<T: ToString + Clone + Send + Sync + 'static>(
    values: &[T],
) -> impl clap::builder::TypedValueParser<Value = T> {
    let values = values.to_vec();
    let names: Vec<String> = values.iter().map(T::to_string).collect();
    clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(names.clone()),
        move |chosen: String| {
            let at = names.iter().position(|n| *n == chosen).expect("clap accepts only these names");
            values[at].clone()
        },
    )
}

pub(crate) use crate::seam::told;

/// `words` as one line a shell reads back as the same words.
pub(crate) fn shell_line(words: &[String]) -> String {
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
}

/// This program as it was invoked, for commands a user can paste.
pub(crate) fn me() -> String {
    std::env::args().next().unwrap_or_else(|| "portcullis".to_owned())
}

/// Runs the command line: parses the arguments, runs the subcommand, and
/// says how it ended as the exit code.
pub fn main() -> ExitCode {
    let cli = parse();
    interrupt::watch();
    let outcome = match cli.command {
        Command::Corpus(args) => corpus::run(&args),
        Command::Fuzz(args) => fuzz::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Minimize(args) => minimize::run(&args),
        Command::Mutants(args) => mutants::run(&args),
        Command::Promote(args) => promote::run(&args),
        Command::ReferenceGateway(args) => reference_gateway::run(&args),
        Command::CheckStdout(args) => gate::run(&args),
        Command::Audit(args) => audit::run(&args),
    };
    if let Some(signal) = interrupt::stopped() {
        // What the command saved and printed is all there is: a session it
        // ran after the signal saw its server ended, not a finding.
        if let Err(e) = &outcome {
            say!("portcullis: stopped ({e:#})");
        }
        end_everything_and_exit(signal);
    }
    match outcome {
        Ok(code) => code,
        Err(e) => {
            say!("portcullis: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The command line, or the process ends: help and the version print as
/// clap prints them; a usage error is one line (with clap's suggestion or
/// the values it takes), exit 2.
fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        Err(e) => {
            say!("portcullis: {}", one_line(&e.render().to_string()));
            std::process::exit(2)
        }
    }
}

/// Clap's usage error as one line: its message, suggestion and values,
/// without the usage and the pointer to --help (or the tip for a value
/// that starts with a dash, which a misspelled flag never is).
fn one_line(text: &str) -> String {
    let mut line = String::new();
    let noise =
        |l: &str| l.starts_with("Usage:") || l.starts_with("For more information") || l.starts_with("tip: to pass");
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !noise(l)) {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(l);
    }
    line
}

/// Ends what is left and exits with the signal's code.
fn end_everything_and_exit(signal: i32) -> ! {
    crate::process::end_everything(std::time::Duration::from_millis(100));
    std::process::exit(interrupt::code(signal))
}

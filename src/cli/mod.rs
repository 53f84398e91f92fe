//! The `portcullis` command line: its subcommands, one module each.

mod corpus;
mod fuzz;
mod interrupt;
mod minimize;
mod mutants;
mod outputs;
mod promote;
mod reference_gateway;
mod replay;
mod setup;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Property-based fuzzing of the stdio boundary of MCP servers and gateways.
#[derive(Parser)]
#[command(name = "portcullis", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a seed corpus for the raw-bytes fuzz target: `portcullis corpus --out DIR`.
    Corpus(corpus::Args),
    /// Fuzz a stdio MCP server: `portcullis fuzz [FLAGS] -- COMMAND [ARG]...`.
    Fuzz(fuzz::Args),
    /// Run a saved finding again: `portcullis replay FILE -- COMMAND`.
    Replay(replay::Args),
    /// Cut a saved finding down to its smallest failing script: `portcullis minimize FILE -- COMMAND`.
    Minimize(minimize::Args),
    /// Turn a fuzz crash or a saved finding into a regression test under tests/regression/.
    Promote(promote::Args),
    /// Hunt every built-in planted bug and check the reference stays clean.
    Mutants(mutants::Args),
    /// Serve the reference gateway (or a mutant) on stdio; `fetch` makes a real HTTP GET.
    ReferenceGateway(reference_gateway::Args),
}

/// An error and every error beneath it, on one line.
pub(crate) fn told(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut below = e.source();
    while let Some(cause) = below {
        text.push_str(&format!(": {cause}"));
        below = cause.source();
    }
    text
}

/// This program as it was invoked, for commands a user can paste.
pub(crate) fn me() -> String {
    std::env::args().next().unwrap_or_else(|| "portcullis".to_owned())
}

/// Runs the command line: parses the arguments, runs the subcommand, and
/// says how it ended as the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    interrupt::watch();
    let outcome = match cli.command {
        Command::Corpus(args) => corpus::run(&args),
        Command::Fuzz(args) => fuzz::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Minimize(args) => minimize::run(&args),
        Command::Mutants(args) => mutants::run(&args),
        Command::Promote(args) => promote::run(&args),
        Command::ReferenceGateway(args) => reference_gateway::run(&args),
    };
    if let Some(signal) = interrupt::stopped() {
        // What the command saved and printed is all there is: a session it
        // ran after the signal saw its server ended, not a finding.
        if let Err(e) = &outcome {
            eprintln!("portcullis: stopped ({e:#})");
        }
        end_everything_and_exit(signal);
    }
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("portcullis: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Ends what is left and exits with the signal's code.
fn end_everything_and_exit(signal: i32) -> ! {
    crate::process::end_everything(std::time::Duration::from_millis(100));
    std::process::exit(interrupt::code(signal))
}

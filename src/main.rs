//! The `portcullis` command line.

mod mutants;

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
    /// Hunt every built-in planted bug and check the reference stays clean.
    Mutants(mutants::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Mutants(args) => mutants::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("portcullis: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

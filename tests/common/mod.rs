//! What several test binaries share.

use crate::cli::python3;
use portcullis::catalogue::Catalogue;
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::process::{ChildTarget, Command, Waits};
use std::sync::Arc;

/// The Python test server `tests/servers/NAME` with `args`, under `limits`,
/// calling its `fetch` (the reference's) with canaries on fresh probes.
pub fn python_server(name: &str, args: &[&str], waits: Waits) -> ChildTarget {
    launched(&[], name, args, waits)
}

/// [`python_server`] started by a launcher that waits for it, as `uvx` or
/// `npx` waits for the server it starts: a shell that does not `exec` it.
#[allow(dead_code)] // Not every test binary uses it.
pub fn python_server_launched(name: &str, args: &[&str], waits: Waits) -> ChildTarget {
    launched(&["sh", "-c", r#"python3 "$@"; true"#, "sh"], name, args, waits)
}

/// [`python_server`] started by a shell that first appends a line to
/// `log`: a line for each process started.
#[allow(dead_code)] // Not every test binary uses it.
pub fn python_server_logging_starts(name: &str, log: &std::path::Path, waits: Waits) -> ChildTarget {
    let log = log.to_str().expect("a UTF-8 path");
    launched(&["sh", "-c", r#"echo started >> "$0"; exec "$@""#, log, python3()], name, &[], waits)
}

/// `tests/servers/NAME` with `args` under `python3`, or under `launcher`
/// (its program and first arguments) when it names one.
fn launched(launcher: &[&str], name: &str, args: &[&str], waits: Waits) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let server = format!("{}/tests/servers/{name}", env!("CARGO_MANIFEST_DIR"));
    let python = python3();
    let (program, before) = launcher.split_first().unwrap_or((&python, &[]));
    let args = before.iter().map(|a| a.to_string()).chain([server]).chain(args.iter().map(|a| a.to_string()));
    let command = Command::new(program.to_string(), args);
    let fetch = Catalogue::reference().tools.into_iter().filter(|t| t.name == "fetch").collect();
    ChildTarget::new(command, waits, fetch, probes)
}

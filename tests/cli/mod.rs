//! What the test binaries that run `portcullis` itself share; each uses
//! some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// `portcullis ARGS` run in `dir`.
pub fn portcullis(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN).args(args).current_dir(dir).output().expect("portcullis runs")
}

/// Its exit status, stdout and stderr, for a failed assertion to show.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The artifact a run saved, from its `Saved: FILE` line.
pub fn saved(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    out.lines().find_map(|l| l.strip_prefix("Saved: ")).expect("a saved artifact").to_owned()
}

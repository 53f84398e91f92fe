//! What the test binaries that run `portcullis` itself share; each uses
//! some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// The Python interpreter `python3` names, resolved once: a version
/// manager's shim in front of it (a shell script) would double the cost of
/// every server process a campaign starts.
pub fn python3() -> &'static str {
    static RESOLVED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RESOLVED.get_or_init(|| {
        let asked = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
        let named =
            asked.ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        named.filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".to_owned())
    })
}

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

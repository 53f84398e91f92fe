//! The launches `check-stdout` tries: the command as released, then under
//! settings that make runtimes and their dependencies talk, from an empty
//! folder, with stdin closed before any input, and failing early.

use crate::process::Command;
use std::path::Path;

/// One way of launching the server.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: &'static str,
    /// What it changes, for a reader.
    pub what: &'static str,
    /// Variables it sets over the user's (`NODE_OPTIONS` is added to).
    pub env: Vec<(&'static str, &'static str)>,
    /// Whether the server starts in an empty folder of its own.
    pub empty_cwd: bool,
    /// Whether stdin is closed before anything is written.
    pub stdin_closed: bool,
    /// Arguments added at the end of the command.
    pub extra_args: Vec<String>,
}

impl Variant {
    fn plain(name: &'static str, what: &'static str) -> Variant {
        Variant { name, what, env: vec![], empty_cwd: false, stdin_closed: false, extra_args: vec![] }
    }

    fn with_env(name: &'static str, what: &'static str, env: &[(&'static str, &'static str)]) -> Variant {
        Variant { env: env.to_vec(), ..Variant::plain(name, what) }
    }
}

/// Every variant, the forced failure last when `fail_args` names one.
pub fn all(fail_args: &[String]) -> Vec<Variant> {
    let mut variants = vec![
        Variant::plain("released", "the command as given"),
        Variant::with_env(
            "verbose",
            "verbose settings of Python, Node, npm, Rust and common libraries",
            &[
                ("VERBOSE", "1"),
                ("PYTHONVERBOSE", "1"),
                ("NODE_DEBUG", "*"),
                ("npm_config_loglevel", "verbose"),
                ("RUST_LOG", "info"),
            ],
        ),
        Variant::with_env(
            "debug",
            "debug settings of Python, Node, Rust and common libraries",
            &[
                ("DEBUG", "*"),
                ("LOG_LEVEL", "debug"),
                ("LOGLEVEL", "DEBUG"),
                ("PYTHONDEVMODE", "1"),
                ("PYTHONASYNCIODEBUG", "1"),
                ("NODE_ENV", "development"),
                ("RUST_LOG", "trace"),
                ("RUST_BACKTRACE", "full"),
            ],
        ),
        Variant::with_env(
            "deprecation",
            "deprecation and other warnings of Python, Node and Rust's log",
            &[
                ("PYTHONWARNINGS", "always"),
                ("NODE_OPTIONS", "--trace-deprecation --trace-warnings --pending-deprecation"),
                ("NODE_PENDING_DEPRECATION", "1"),
                ("RUST_LOG", "warn"),
            ],
        ),
        Variant { empty_cwd: true, ..Variant::plain("empty-cwd", "started in an empty folder with no configuration") },
        Variant { stdin_closed: true, ..Variant::plain("stdin-closed", "stdin closed before any input") },
    ];
    if !fail_args.is_empty() {
        variants.push(Variant {
            extra_args: fail_args.to_vec(),
            ..Variant::plain("early-failure", "forced to fail early by --fail-flag")
        });
    }
    variants
}

/// `base` launched as `variant` says, from `cwd` when it starts in an
/// empty folder: there, each word that names a path here is made
/// absolute, so the program is found and only its folder differs.
pub fn command(base: &Command, variant: &Variant, cwd: Option<&Path>) -> Command {
    let mut cmd = base.clone();
    cmd.args.extend(variant.extra_args.iter().cloned());
    for (key, value) in &variant.env {
        let joined = match *key {
            "NODE_OPTIONS" => given(base, key).map(|mine| format!("{mine} {value}")),
            _ => None,
        };
        cmd.env.push((key.to_string(), Some(joined.unwrap_or_else(|| value.to_string()))));
    }
    if let Some(dir) = cwd {
        let here = |w: &String| {
            let p = Path::new(w);
            !w.starts_with('-') && p.is_relative() && p.exists() && (w.contains('/') || p.is_file())
        };
        let absolute = |w: &String| std::path::absolute(w).map_or_else(|_| w.clone(), |p| p.display().to_string());
        if cmd.program.contains('/') && here(&cmd.program) {
            cmd.program = absolute(&cmd.program);
        }
        cmd.args = cmd.args.iter().map(|a| if here(a) { absolute(a) } else { a.clone() }).collect();
        cmd.cwd = Some(dir.to_owned());
    }
    cmd
}

/// The value the user gives `key`, or passes through from here.
fn given(base: &Command, key: &str) -> Option<String> {
    let (_, value) = base.env.iter().rev().find(|(k, _)| k == key)?;
    value.clone().or_else(|| std::env::var(key).ok())
}

/// The launch as a line to paste into a shell: the variables the user and
/// the variant set, the command, and where and how it ran.
pub fn launch_line(cmd: &Command, variant: &Variant) -> String {
    let quote = |w: &str| shlex::try_quote(w).map_or_else(|_| w.to_owned(), |q| q.into_owned());
    let mut words: Vec<String> = cmd
        .env
        .iter()
        .filter_map(|(k, v)| Some(format!("{k}={}", quote(&v.clone().or_else(|| std::env::var(k).ok())?))))
        .collect();
    words.push(quote(&cmd.program));
    words.extend(cmd.args.iter().map(|a| quote(a)));
    let mut line = words.join(" ");
    if variant.stdin_closed {
        line.push_str(" </dev/null");
    }
    // The empty folder is gone once the variant ends: a new one will do.
    if cmd.cwd.is_some() {
        line = format!("(cd \"$(mktemp -d)\" && {line})");
    }
    line
}

//! `portcullis promote ARTIFACT`: turns a cargo fuzz crash input, or a
//! finding saved by `portcullis fuzz`, into a readable regression test under
//! tests/regression/ (exact bytes, the check, how it was found) that runs in
//! `cargo test` from then on and fails if the bug comes back.

use crate::artifact::Artifact;
use crate::reference::Mutant;
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `portcullis promote`.
#[derive(clap::Args)]
pub struct Args {
    /// A crash input under fuzz/artifacts/TARGET/, or a finding artifact (.json).
    artifact: PathBuf,
    /// The fuzz target a crash input came from (default: its folder's name).
    #[arg(long)]
    target: Option<String>,
    /// The test's name (default: from the input file's name).
    #[arg(long)]
    name: Option<String>,
    /// The regression folder, with its main.rs.
    #[arg(long, default_value = "tests/regression", value_name = "DIR")]
    dir: PathBuf,
    /// The planted bug the fuzz target ran with (its PORTCULLIS_FUZZ_MUTANT;
    /// taken from the environment when not given): the test runs the same.
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// The fuzz targets' folder, where a `my_gateway`-style target names the
    /// gateway the test must run.
    #[arg(long, default_value = "fuzz/fuzz_targets", value_name = "DIR")]
    targets: PathBuf,
}

/// The target a crash came from, as a Rust expression: the gateway a
/// template target names in `fuzz_gateway!(...)`, the planted mutant of a
/// mutant run, else the strict reference.
fn crash_target(args: &Args, target: &str) -> Result<String> {
    let source = args.targets.join(format!("{target}.rs"));
    if let Ok(text) = std::fs::read_to_string(&source)
        && let Some(at) = text.find("fuzz_gateway!(")
    {
        // The macro's argument: up to the parenthesis that closes it.
        let rest = &text[at + "fuzz_gateway!(".len()..];
        let mut depth = 1;
        let end = rest.find(|c| {
            depth += match c {
                '(' | '[' | '{' => 1,
                ')' | ']' | '}' => -1,
                _ => 0,
            };
            depth == 0
        });
        let end = end.with_context(|| format!("an unclosed fuzz_gateway! in {}", source.display()))?;
        return Ok(rest[..end].trim().to_owned());
    }
    let mutant = args.mutant.clone().or_else(|| std::env::var("PORTCULLIS_FUZZ_MUTANT").ok());
    match mutant {
        Some(name) => {
            let m = Mutant::from_name(&name).with_context(|| format!("no built-in mutant {name:?}"))?;
            Ok(format!("Reference::mutant(portcullis::reference::Mutant::from_name({:?}).unwrap())", m.name()))
        }
        None => Ok("Reference::strict()".to_owned()),
    }
}

/// A Rust identifier from any file name.
fn ident(raw: &str) -> String {
    let mut s: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    s.truncate(48);
    let s = s.trim_matches('_').to_owned();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) { format!("case_{s}") } else { s }
}

/// `bytes` as a Rust byte-string literal, split over lines with `\`
/// continuations (a line never starts with a raw space, which they eat).
fn literal(bytes: &[u8]) -> String {
    let mut out = String::from("b\"\\\n");
    let mut width = 0;
    for b in bytes {
        let mut piece = crate::escape::escape(std::slice::from_ref(b), 4);
        if width == 0 && piece == " " {
            piece = "\\x20".to_owned();
        }
        out.push_str(&piece);
        width += piece.len();
        if width >= 90 {
            out.push_str("\\\n");
            width = 0;
        }
    }
    out.push('"');
    out
}

fn crash_test(name: &str, target: &str, gateway: &str, source: &Path, bytes: &[u8]) -> Result<String> {
    let call = match target {
        "raw_stdin" => format!("portcullis::libfuzzer::check_raw_stdin(&{gateway}, INPUT)"),
        "script" | "my_gateway" => format!("portcullis::libfuzzer::check_script(&{gateway}, INPUT)"),
        "oracle" => "portcullis::libfuzzer::check_oracle(INPUT)".to_owned(),
        other => {
            bail!("no regression template for fuzz target {other:?} (known: raw_stdin, script, oracle, my_gateway)")
        }
    };
    let mut t = String::new();
    let _ = writeln!(t, "//! Regression: the `{target}` fuzz target crashed on this input ({} bytes).", bytes.len());
    let _ = writeln!(t, "//! Found by cargo fuzz; promoted from {} by `portcullis promote`.", source.display());
    let _ = writeln!(t, "\n#[allow(unused_imports)]\nuse portcullis::reference::Reference;\n");
    let _ = writeln!(t, "/// The exact input.\nconst INPUT: &[u8] = {};\n", literal(bytes));
    let _ = writeln!(t, "#[test]\nfn {name}() {{\n    {call};\n}}");
    Ok(t)
}

fn finding_test(name: &str, artifact: &Artifact, source: &Path) -> String {
    let script = serde_json::to_string_pretty(&artifact.script).expect("scripts serialize");
    let tools = serde_json::to_string_pretty(&artifact.tools).expect("tools serialize");
    let mut t = String::new();
    let _ = writeln!(t, "//! Regression: `{}` under the {} policy.", artifact.check, artifact.policy);
    let _ = writeln!(t, "//! Found by `portcullis fuzz` (seed {}), promoted from {}.", artifact.seed, source.display());
    for v in &artifact.violations {
        let _ = writeln!(t, "//!   {}", v.replace('\n', " "));
    }
    let _ =
        writeln!(t, "//! The test runs the same script against the same command and fails if the check breaks again.");
    let _ = writeln!(t, "\nuse portcullis::campaign::run_script;");
    let _ = writeln!(t, "use portcullis::catalogue::ToolSpec;");
    let _ = writeln!(t, "use portcullis::process::{{ChildTarget, Command, Waits}};");
    let _ = writeln!(t, "use portcullis::probe::{{ProbeConfig, Probes}};");
    let _ = writeln!(t, "use portcullis::{{Policy, Script}};\nuse std::sync::Arc;\n");
    let _ =
        writeln!(t, "/// The exact script: bytes (escaped) and labels.\nconst SCRIPT: &str = r####\"{script}\"####;\n");
    let _ = writeln!(t, "const TOOLS: &str = r####\"{tools}\"####;\n");
    let _ = writeln!(t, "/// The command, as `portcullis fuzz` ran it; `portcullis` itself is this build.");
    let _ = writeln!(t, "const COMMAND: &[&str] = &{:?};\n", artifact.command);
    let _ = writeln!(t, "#[test]\nfn {name}() {{");
    let _ = writeln!(t, "    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());");
    let _ = writeln!(t, "    let mut script: Script = serde_json::from_str(SCRIPT).unwrap();");
    let _ = writeln!(t, "    script.rebase({:?}, &probes.http_base());", artifact.canary_base);
    let _ = writeln!(t, "    let tools: Vec<ToolSpec> = serde_json::from_str(TOOLS).unwrap();");
    let _ = writeln!(t, "    let mut program = COMMAND[0].to_owned();");
    let _ = writeln!(t, "    if program.ends_with(\"/portcullis\") || program == \"portcullis\" {{");
    let _ = writeln!(t, "        program = env!(\"CARGO_BIN_EXE_portcullis\").to_owned();\n    }}");
    let _ = writeln!(t, "    let args = COMMAND[1..].iter().map(|a| a.to_string());");
    let _ = writeln!(t, "    let command = Command::new(program, args);");
    let waits = match (artifact.waits_ms, artifact.start_ms) {
        (Some([answer, quiet, exit_grace]), Some(start)) => format!(
            "Waits::from_ms({answer}, {quiet}, {exit_grace}).starting_within(std::time::Duration::from_millis({start}))"
        ),
        (Some([answer, quiet, exit_grace]), None) => format!("Waits::from_ms({answer}, {quiet}, {exit_grace})"),
        (None, _) => "Waits::default()".to_owned(),
    };
    let _ = writeln!(t, "    // As long as the campaign that found it waited.");
    let _ = writeln!(t, "    let target = ChildTarget::new(command, {waits}, tools, probes);");
    let _ = writeln!(t, "    // Tokens of its own, so a server that remembers earlier runs meets them as new.");
    let _ = writeln!(t, "    let mut salt = std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().subsec_nanos();");
    let _ = writeln!(t, "    for old in script.salts() {{");
    let _ = writeln!(t, "        salt = salt.wrapping_mul(0x9e37_79b9).wrapping_add(1);");
    let _ = writeln!(t, "        script.resalt(old, salt);\n    }}");
    let policy = if artifact.policy == crate::Policy::Close { "Policy::Close" } else { "Policy::KeepOpen" };
    let _ = writeln!(t, "    let (_, violations) = run_script(&target, {policy}, &script, salt).unwrap();");
    let _ = writeln!(
        t,
        "    let back: Vec<_> = violations.iter().filter(|v| v.check.id() == {:?}).collect();",
        artifact.check
    );
    let _ = writeln!(t, "    assert!(back.is_empty(), \"{{back:#?}}\");\n}}");
    t
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let stem = args.artifact.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = ident(args.name.as_deref().unwrap_or(&stem));
    let json = args.artifact.extension().is_some_and(|e| e == "json");
    let text = if json {
        let artifact = Artifact::load(&args.artifact)?;
        if !artifact.script.has_handshake() {
            bail!(
                "{} is a finding a shared process showed after earlier scripts: run `portcullis minimize` on it \
                 and promote the artifact it saves, whose one session holds them",
                args.artifact.display()
            );
        }
        finding_test(&name, &artifact, &args.artifact)
    } else {
        let from_dir = args.artifact.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
        let target = args.target.clone().or(from_dir).context("say which fuzz target with --target")?;
        let bytes = std::fs::read(&args.artifact).with_context(|| format!("reading {}", args.artifact.display()))?;
        crash_test(&name, &target, &crash_target(args, &target)?, &args.artifact, &bytes)?
    };
    let main = args.dir.join("main.rs");
    if !main.is_file() {
        bail!("{} is missing: promote writes into an existing regression suite", main.display());
    }
    let file = args.dir.join(format!("{name}.rs"));
    if file.exists() {
        bail!("{} already exists; pick another --name", file.display());
    }
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    let mut listing = std::fs::read_to_string(&main).with_context(|| format!("reading {}", main.display()))?;
    listing.push_str(&format!("mod {name};\n"));
    std::fs::write(&main, listing).with_context(|| format!("writing {}", main.display()))?;
    out!("wrote {} and listed it in {}; `cargo test` runs it from now on", file.display(), main.display());
    Ok(ExitCode::SUCCESS)
}

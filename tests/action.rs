//! The GitHub Action's steps (`scripts/portcullis-ci`, which `action.yml`
//! runs) against `portcullis reference-gateway`: the reference passes
//! every step, a planted bug fails the job, a baseline written from that
//! run passes it again, and bad inputs are one line and exit 2. The
//! action passes each of its inputs to the script, which reads each one;
//! the pre-commit hook runs the gate.

use crate::cli::{BIN, text};
use std::path::Path;
use std::process::{Command, Output};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/portcullis-ci");
const ACTION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml");

/// The script in `dir`, its inputs `env`, against the reference gateway
/// with `mutant` planted where one is named.
fn steps(dir: &Path, mutant: Option<&str>, env: &[(&str, &str)]) -> Output {
    let server = match mutant {
        Some(m) => format!("{BIN} reference-gateway --policy keep-open --mutant {m}"),
        None => format!("{BIN} reference-gateway --policy keep-open"),
    };
    let mut c = Command::new("bash");
    c.arg(SCRIPT).current_dir(dir).env("PORTCULLIS", BIN).env("PORTCULLIS_COMMAND", server);
    c.env("PORTCULLIS_FUZZ_FLAGS", r#"--tool fetch --args '{"url":"{canary}"}' --policy keep-open --shrink-ms 2000"#);
    c.env("PORTCULLIS_CASES", "48").env("GITHUB_STEP_SUMMARY", dir.join("summary.md"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("bash runs")
}

fn summary(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("summary.md")).unwrap_or_default()
}

#[test]
fn the_actions_steps_pass_the_reference_and_fail_a_planted_bug_until_a_baseline_knows_it() {
    let dir = tempfile::tempdir().unwrap();
    let all = [("PORTCULLIS_CHECK_STDOUT", "true"), ("PORTCULLIS_AUDIT", "true")];
    let o = steps(dir.path(), None, &all);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for step in ["fuzz", "check-stdout", "audit"] {
        assert!(summary(dir.path()).contains(&format!("- `{step}`: no new cause")), "{}", summary(dir.path()));
    }
    for report in ["fuzz.sarif", "fuzz.json", "fuzz.xml", "check-stdout.json", "audit.json"] {
        assert!(dir.path().join("portcullis-results").join(report).is_file(), "{report}: {}", text(&o));
    }

    // A planted bug fails the job; its artifact is kept with the reports.
    let dir = tempfile::tempdir().unwrap();
    let o = steps(dir.path(), Some("lax-jsonrpc"), &[("PORTCULLIS_CHECK_STDOUT", "true")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let said = summary(dir.path());
    assert!(said.contains("- `fuzz`: new causes") && said.contains("- `check-stdout`: no new cause"), "{said}");
    let findings = std::fs::read_dir(dir.path().join("portcullis-results/findings")).unwrap().count();
    assert!(findings >= 1, "{}", text(&o));

    // A baseline written from that run passes the same run.
    let baseline = dir.path().join("portcullis-baseline.toml");
    let b = baseline.to_str().unwrap();
    let write = [("PORTCULLIS_BASELINE", b), ("PORTCULLIS_UPDATE_BASELINE", "true")];
    let o = steps(dir.path(), Some("lax-jsonrpc"), &write);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = steps(dir.path(), Some("lax-jsonrpc"), &[("PORTCULLIS_BASELINE", b)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Known: no-effect-on-reject/"), "{}", text(&o));
}

#[test]
fn bad_inputs_to_the_actions_steps_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (env, said) in [
        (vec![("PORTCULLIS_COMMAND", "")], "give a command"),
        (vec![("PORTCULLIS_COMMAND", "   ")], "give a command"),
        (vec![("PORTCULLIS_COMMAND", "python3 'unclosed")], "is not a list of words"),
        (vec![("PORTCULLIS_BASELINE", "none.toml")], "no file at none.toml"),
        (vec![("PORTCULLIS", "/nonexistent/portcullis")], "no portcullis binary"),
    ] {
        let o = steps(dir.path(), None, &env);
        assert_eq!(o.status.code(), Some(2), "{env:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.trim().lines().count() == 1 && err.contains(said), "{env:?}: {err}");
    }
    // A step that cannot run makes the job's exit 2, after the others ran.
    let o = steps(dir.path(), None, &[("PORTCULLIS_CHECK_STDOUT", "true"), ("PORTCULLIS_LEVEL", "tolerated")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(summary(dir.path()).contains("- `check-stdout`: no new cause"), "{}", summary(dir.path()));
}

#[test]
fn the_action_hands_each_input_to_the_script_which_reads_it() {
    let action = std::fs::read_to_string(ACTION).unwrap();
    let script = std::fs::read_to_string(SCRIPT).unwrap();
    assert!(action.contains("bash \"$GITHUB_ACTION_PATH/scripts/portcullis-ci\""), "{action}");
    // `  NAME:` lines under `inputs:`, up to `outputs:`.
    let inputs = &action[action.find("\ninputs:\n").unwrap()..action.find("\noutputs:\n").unwrap()];
    let names: Vec<&str> = inputs
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':'))
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let passed = action.lines().find(|l| l.contains(&format!("inputs.{name} ")));
        let Some(line) = passed else { panic!("input {name} is used nowhere") };
        if let Some(var) = line.trim().split(':').next().filter(|v| v.starts_with("PORTCULLIS_")) {
            assert!(script.contains(&format!("${{{var}")), "the script reads {var}");
        }
    }
    let hooks = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.pre-commit-hooks.yaml")).unwrap();
    assert!(hooks.contains("entry: portcullis check-stdout") && hooks.contains("language: rust"), "{hooks}");
}

//! `portcullis fuzz --profile FILE`: one command fuzzes the server a
//! profile describes; flags and a command given on the command line win
//! over it; its `prepare` runs in a `{tmp}` that is gone when the run ends;
//! a finding's reproduce line names the profile and replays; a bad profile is
//! a one-line error.

use crate::cli::{BIN, portcullis, text};
use std::path::Path;

/// A profile calling `write_note` of the reference gateway, with `lines`
/// after it, written as `name` in `dir`.
fn profile(dir: &Path, name: &str, lines: &str) -> String {
    let path = dir.join(name);
    let text = format!(
        "tool = \"write_note\"\nargs = {{ path = \"{{token}}.txt\", text = \"hello {{token}}\" }}\npolicy = \"keep-open\"\n{lines}"
    );
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The server a run names on its last line: ``... against `COMMAND` ``.
fn against(out: &str) -> String {
    let last = out.lines().last().unwrap_or_default();
    last.split_once("against `").map(|(_, c)| c.trim_end_matches('`').to_owned()).unwrap_or_default()
}

#[test]
fn a_profile_is_one_command_its_finding_replays_from_it_and_a_command_given_wins() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    let command = format!(
        "command = [\"{BIN}\", \"reference-gateway\", \"--policy\", \"keep-open\", \"--mutant\", \"bool-id\", \
         \"--notes-dir\", \"{{here}}/notes\"]\nwatch-dir = [\"{{here}}/notes\"]\n"
    );
    let p = profile(dir.path(), "bool-id.toml", &command);
    let args =
        ["fuzz", "--profile", &p, "--check", "no-effect-on-reject", "--shrink-ms", "3000", "--report", "report.json"];
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let reproduce = json["findings"][0]["reproduce"].as_str().unwrap();
    assert!(reproduce.contains(&format!("--profile {p}")) && !reproduce.contains(" -- "), "{reproduce}");
    let words = shlex::split(reproduce).expect("a shell line");
    let again = std::process::Command::new(&words[0]).args(&words[1..]).current_dir(dir.path()).output().unwrap();
    assert_eq!(again.status.code(), Some(1), "{reproduce}: {}", text(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("FAILED"), "{}", text(&again));
    // The command after -- replaces the profile's: the reference, no mutant.
    let notes = dir.path().join("notes").display().to_string();
    let reference = [BIN, "reference-gateway", "--policy", "keep-open", "--notes-dir", &notes];
    let o = portcullis(&[&["fuzz", "--profile", &p, "--cases", "24", "--"], &reference[..]].concat(), dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // A flag given wins over the profile's key.
    let o = portcullis(&["fuzz", "--profile", &p, "--args", r#"{"path":"fixed.txt"}"#], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--args must put"), "{}", text(&o));
}

#[test]
fn a_profiles_prepare_runs_in_its_tmp_which_is_gone_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let lines = format!(
        "command = [\"{BIN}\", \"reference-gateway\", \"--policy\", \"keep-open\", \"--notes-dir\", \"{{tmp}}/notes\"]\n\
         prepare = \"mkdir notes\"\nwatch-dir = [\"{{tmp}}/notes\"]\n"
    );
    let p = profile(dir.path(), "tmp.toml", &lines);
    let o = portcullis(&["fuzz", "--profile", &p, "--cases", "8"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let server = against(&String::from_utf8_lossy(&o.stdout));
    let notes = server.rsplit(' ').next().unwrap_or_default();
    assert!(notes.ends_with("/notes") && !notes.contains("{tmp}"), "{}", text(&o));
    assert!(!Path::new(notes).exists(), "{notes} outlived the run");
}

#[test]
fn a_replay_moves_the_scripts_paths_into_its_own_tmp() {
    let dir = tempfile::tempdir().unwrap();
    let lines = format!(
        "command = [\"{BIN}\", \"reference-gateway\", \"--policy\", \"keep-open\", \"--mutant\", \"bool-id\", \
         \"--notes-dir\", \"{{tmp}}/notes\"]\nprepare = \"mkdir notes\"\nwatch-dir = [\"{{tmp}}/notes\"]\n"
    );
    // The call's path points into `{tmp}`, as a filesystem server's must.
    let p = profile(dir.path(), "tmp-args.toml", &lines);
    let text_in_tmp = std::fs::read_to_string(&p).unwrap().replace("\"{token}.txt\"", "\"{tmp}/notes/{token}.txt\"");
    std::fs::write(&p, text_in_tmp).unwrap();
    let args = ["fuzz", "--profile", &p, "--check", "no-effect-on-reject", "--shrink-ms", "3000", "--report", "r.json"];
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let artifact = report["findings"][0]["artifact"].as_str().unwrap();
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join(artifact)).unwrap()).unwrap();
    let old = saved["profile_tmp"].as_str().expect("the artifact names the run's {tmp}").to_owned();
    assert!(saved["frames"].to_string().contains(&old), "the script's paths point into it");
    let words = shlex::split(report["findings"][0]["reproduce"].as_str().unwrap()).unwrap();
    let again = std::process::Command::new(&words[0]).args(&words[1..]).current_dir(dir.path()).output().unwrap();
    let out = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.code() == Some(1) && out.contains("FAILED"), "{}", text(&again));
    assert!(!out.contains(&old) && out.contains("/notes/pc"), "the replay writes into its own tmp: {out}");
}

#[test]
fn a_bad_profile_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = |lines: &str| {
        let p = profile(dir.path(), "bad.toml", lines);
        let o = portcullis(&["fuzz", "--profile", &p], dir.path());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        stderr
    };
    let reference = format!("command = [\"{BIN}\", \"reference-gateway\"]\n");
    // The helper writes three lines first: the typo is on the fourth.
    let typo = error("wach-dir = [\"x\"]\n");
    assert!(typo.contains("line 4: unknown field `wach-dir`"), "{typo}");
    assert!(error("").contains("names no command, and none follows --"));
    // A bad value is told before `prepare` runs.
    let slow = "prepare = \"sleep 30\"\n";
    assert!(error(&format!("{reference}{slow}effect = \"smell\"\n")).contains("unknown variant `smell`"));
    assert!(error(&format!("{reference}{slow}level = \"lax\"\n")).contains("unknown variant `lax`"));
    let failing = error(&format!("{reference}prepare = \"\"\"\necho one\necho no git here >&2; exit 3\n\"\"\"\n"));
    assert!(failing.contains("prepare") && failing.contains("no git here"), "{failing}");
    let missing = portcullis(&["fuzz", "--profile", "/nonexistent/p.toml"], dir.path());
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
}

//! A forbidden tool whose URL-like argument its schema does not mark: the
//! run says, before it starts, that an effect of it would go unseen, and
//! `--forbidden-args` (or a profile's `forbidden-args`) puts the canary
//! where the server fetches it, so the gateway that runs the tool for
//! anyone is caught.

use crate::cli::{portcullis, python3, text};
use std::path::Path;

fn server() -> String {
    format!("{}/tests/servers/posts_webhook.py", env!("CARGO_MANIFEST_DIR"))
}

const HINT: &str = "forbidden tool `notify` gets its token only in `webhook`, which no probe watches";

fn fuzz(extra: &[&str], dir: &Path) -> std::process::Output {
    let server = server();
    let mut args = vec!["fuzz", "--tool", "fetch", "--check", "no-effect-on-reject", "--max-findings", "1"];
    args.extend(["--level", "spec", "--policy", "keep-open", "--timeout-ms", "3000"]);
    args.extend(extra);
    args.extend(["--", python3(), &server]);
    portcullis(&args, dir)
}

#[test]
fn an_unseen_forbidden_tool_is_named_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = fuzz(&["--forbidden-tool", "notify", "--cases", "1"], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(HINT), "{}", text(&o));
    assert!(err.contains(r#"--forbidden-args 'notify={"webhook":"{canary}"}'"#), "{}", text(&o));
}

#[test]
fn forbidden_args_put_the_canary_where_the_server_fetches_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = fuzz(&["--cases", "256", "--forbidden-args", r#"notify={"webhook":"{canary}"}"#], dir.path());
    assert!(!String::from_utf8_lossy(&o.stderr).contains(HINT), "{}", text(&o));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("(unauthorized_tool)"), "{}", text(&o));
}

#[test]
fn a_profile_gives_forbidden_args_too() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, "forbidden-args = { notify = { webhook = \"{canary}\" } }\n").unwrap();
    let o = fuzz(&["--cases", "256", "--profile", profile.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(unauthorized_tool)"), "{}", text(&o));
}

#[test]
fn bad_forbidden_args_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (given, says) in [
        ("notify", "give it as NAME=JSON"),
        ("={\"x\":\"{token}\"}", "give it as NAME=JSON"),
        ("notify={}", "--forbidden-args notify must put"),
        ("nothere={\"x\":\"{token}\"}", "the server lists no such tool"),
    ] {
        let o = fuzz(&["--cases", "1", "--forbidden-args", given], dir.path());
        assert_eq!(o.status.code(), Some(2), "{given}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{given}: {}", text(&o));
    }
}

//! What a child process gets in its environment: PATH and LANG, a HOME of
//! its own, a package cache its target's processes share (so `npx -y PKG`
//! or `uvx PKG` downloads the server once per run, not at every start), and
//! what the user passes; nothing else of the harness's.

use crate::cli::python3;
use portcullis::campaign::run_script;
use portcullis::probe::{ProbeConfig, Probes};
use portcullis::process::{ChildTarget, Command, Waits};
use portcullis::{Catalogue, Policy, Revision, Script};
use serde_json::Value;
use std::sync::Arc;

/// Prints its environment as one JSON line, counts its starts in a file
/// under its cache folder, then answers every request with an empty result
/// until stdin ends.
const SHOW_ENV: &str = r#"
import json, os, sys
cache = os.environ.get("XDG_CACHE_HOME", "")
starts = 0
if cache:
    path = os.path.join(cache, "starts")
    starts = int(open(path).read()) if os.path.exists(path) else 0
    starts += 1
    open(path, "w").write(str(starts))
print(json.dumps({"env": dict(os.environ), "starts": starts}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}), flush=True)
"#;

fn target(env: Vec<(String, Option<String>)>) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let command = Command::new(python3().to_owned(), ["-c", SHOW_ENV]).with_env(env);
    ChildTarget::new(command, Waits::default(), Catalogue::reference().tools, probes)
}

/// The environment one session's process saw, and how many processes of
/// its target had started before it with the same cache.
fn seen(target: &ChildTarget) -> (serde_json::Map<String, Value>, u64) {
    let script = Script::handshake(Revision::R2025_06_18);
    let (obs, _) = run_script(target, Policy::KeepOpen, &script, 1).expect("the session runs");
    let line = obs.stdout.split(|b| *b == b'\n').next().expect("a line");
    let v: Value = serde_json::from_slice(line).expect("the environment as JSON");
    (v["env"].as_object().cloned().unwrap(), v["starts"].as_u64().unwrap())
}

#[test]
fn a_child_gets_a_home_of_its_own_and_a_package_cache_its_target_shares() {
    // The harness runs with many variables of its own (cargo's, the
    // shell's); the child sees exactly these.
    let t = target(vec![("PASSED".into(), Some("yes".into()))]);
    let (first, n1) = seen(&t);
    let (second, n2) = seen(&t);
    let mut keys: Vec<&str> = first.keys().map(String::as_str).filter(|k| *k != "LC_CTYPE").collect();
    keys.sort_unstable();
    assert_eq!(keys, ["HOME", "LANG", "PASSED", "PATH", "XDG_CACHE_HOME", "npm_config_cache"], "{first:?}");
    assert_ne!(first["HOME"], second["HOME"], "a fresh HOME per process");
    assert_eq!(first["XDG_CACHE_HOME"], second["XDG_CACHE_HOME"], "one cache per target");
    let cache = first["XDG_CACHE_HOME"].as_str().unwrap();
    assert_eq!(first["npm_config_cache"], Value::from(format!("{cache}/npm")));
    assert_eq!((n1, n2), (1, 2), "the second process found what the first left in the cache");
    // Another target (another job, another run) starts from an empty cache,
    // and the cache is gone with its target.
    let (other, n) = seen(&target(vec![]));
    assert_ne!(other["XDG_CACHE_HOME"], first["XDG_CACHE_HOME"]);
    assert_eq!(n, 1);
    drop(t);
    assert!(!std::path::Path::new(cache).exists(), "the cache outlived its target");
}

#[test]
fn the_user_may_point_the_cache_elsewhere() {
    let mine = tempfile::tempdir().unwrap();
    let dir = mine.path().display().to_string();
    let (env, starts) = seen(&target(vec![("XDG_CACHE_HOME".into(), Some(dir.clone()))]));
    assert_eq!(env["XDG_CACHE_HOME"], Value::from(dir));
    assert_eq!(starts, 1);
    assert!(mine.path().join("starts").exists());
}

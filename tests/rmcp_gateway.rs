//! `examples/rmcp-gateway`, a gateway on the official Rust SDK, fuzzed
//! through `portcullis fuzz --profile profiles/rmcp-gateway.toml` as a user
//! would: the gateway as the SDK ships it is clean at the spec level for
//! effects of rejected frames; with its planted bug (a line reader that
//! "repairs" what is not JSON) it is caught.

use crate::cli::{portcullis, text};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Building it fresh takes a minute or two on two cores.
const BUILD_LIMIT: Duration = Duration::from_secs(900);

/// The gateway, built once where the profile and scripts/real-servers look.
fn gateway() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let manifest = root.join("examples/rmcp-gateway/Cargo.toml");
        let target = root.join("target/rmcp-gateway");
        let mut build = std::process::Command::new(cargo)
            .args(["build", "--quiet", "--release", "--locked", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .spawn()
            .expect("cargo starts");
        let deadline = Instant::now() + BUILD_LIMIT;
        let status = loop {
            if let Some(status) = build.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                build.kill().ok();
                build.wait().ok();
                panic!("building the rmcp gateway took over {BUILD_LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "building examples/rmcp-gateway failed: {status}");
        target.join("release/rmcp-gateway")
    })
}

/// `portcullis fuzz --profile profiles/rmcp-gateway.toml FLAGS [-- COMMAND]`.
fn fuzz(flags: &[&str], command: &[&str]) -> Output {
    gateway();
    let dir = tempfile::tempdir().unwrap();
    let profile = format!("{}/profiles/rmcp-gateway.toml", env!("CARGO_MANIFEST_DIR"));
    let mut args = vec!["fuzz", "--profile", &profile, "--level", "spec", "--check", "no-effect-on-reject"];
    // At 2025-03-26 the SDK, which takes no batch, shows a batch of calls
    // never acting (exactly-once); each such session waits out the timeout.
    args.extend(["--revision", "2025-11-25", "--jobs", "2", "--shrink-ms", "3000"]);
    args.extend(flags);
    if !command.is_empty() {
        args.push("--");
        args.extend(command);
    }
    portcullis(&args, dir.path())
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn the_rmcp_gateway_as_shipped_has_no_effect_from_a_rejected_frame() {
    let o = fuzz(&["--cases", "300"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.code() == Some(0) && out.contains("no finding in 300 sessions"), "{}", text(&o));
}

#[test]
#[ignore = "a long campaign: .ci/run runs it with `cargo test -- --ignored`"]
fn the_rmcp_gateways_planted_bug_is_caught() {
    // The profile's command with one more flag; the profile watches {tmp}/append.log.
    let bin = gateway().display().to_string();
    let o = fuzz(&["--cases", "300", "--max-findings", "1"], &[&bin, "--log", "{tmp}/append.log", "--planted-bug"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("portcullis finding: no-effect-on-reject") && out.contains("level: spec"), "{}", text(&o));
}

//! The probe behind `--policy auto` judges what a gateway does, not how
//! fast: a server that keeps its session open, answers each call on a
//! thread of its own after a delay (as a loaded machine delays it) and drops
//! the calls still in flight at EOF without a word (as the Python SDK does)
//! is held to keep-open, never to close for want of an answer in time.

use crate::cli::{portcullis, python3, text};

#[test]
fn a_slow_keep_open_server_is_held_to_keep_open() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/cancels_on_eof.py", env!("CARGO_MANIFEST_DIR"));
    let args = [
        "fuzz",
        "--tool",
        "fetch",
        "--args",
        r#"{"url":"{canary}"}"#,
        "--cases",
        "1",
        "--shrink-ms",
        "200",
        "--level",
        "spec",
        "--check",
        "no-effect-on-reject",
        "--",
        python3(),
        &server,
        "0.4",
        "0:0",
        "silent",
    ];
    let o = portcullis(&args, dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("holding it to keep-open"), "{}", text(&o));
}

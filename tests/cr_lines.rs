//! A server that reads stdin as the Python SDK's stdio transport does
//! (universal newlines: a lone CR ends a line) runs a call hidden between
//! two raw CRs inside a `ping`'s string, and two calls joined by a CR: both
//! are found, each under its own rule, by one default-length campaign.

use crate::cli::{portcullis, text};

#[test]
fn a_call_hidden_between_two_crs_and_calls_joined_by_a_cr_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("{}/tests/servers/reads_cr_lines.py", env!("CARGO_MANIFEST_DIR"));
    let report = dir.path().join("report.json");
    let mut args = vec!["fuzz", "--tool", "fetch", "--check", "no-effect-on-reject", "--level", "spec"];
    args.extend(["--policy", "keep-open", "--cases", "160", "--shrink-ms", "2000", "--timeout-ms", "2000"]);
    args.extend(["--report", report.to_str().unwrap(), "--", "python3", &server]);
    let o = portcullis(&args, dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let keys: Vec<&str> = findings.iter().filter_map(|f| f["distinct"].as_str()).collect();
    for (rule, kind) in [("(raw_control)", "cr_hidden_call"), ("(foreign_terminator)", "cr_separated")] {
        let f = findings.iter().find(|f| f["distinct"].as_str().is_some_and(|k| k.ends_with(rule)));
        let f = f.unwrap_or_else(|| panic!("{rule} among {keys:?}\n{}", text(&o)));
        let frames = f["frames"].as_array().unwrap();
        assert!(frames.iter().any(|fr| fr["kind"] == kind), "{rule} shown by {kind}: {f}");
    }
}

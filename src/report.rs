//! Reports for a human, in a fixed order: seed, minimized script, the raw
//! bytes of the first offending frame or line (escaped, bounded), the check
//! and its violations, stderr apart, then commands to reproduce.

use crate::campaign::Finding;
use crate::check::Stream;
use crate::frame::Expect;
use std::fmt::Write as _;

/// Bytes shown of any one frame or line before the middle is cut.
pub const SHOWN: usize = 240;

/// `bytes` escaped as a Rust byte-string body, cut in the middle to about
/// `max` bytes with the number of omitted bytes in between.
pub fn escape(bytes: &[u8], max: usize) -> String {
    let one = |out: &mut String, b: u8| match b {
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        b'\\' => out.push_str("\\\\"),
        b'"' => out.push_str("\\\""),
        0x20..=0x7e => out.push(b as char),
        _ => {
            let _ = write!(out, "\\x{b:02x}");
        }
    };
    let mut out = String::new();
    if bytes.len() <= max {
        bytes.iter().for_each(|b| one(&mut out, *b));
    } else {
        let half = max / 2;
        bytes[..half].iter().for_each(|b| one(&mut out, *b));
        let _ = write!(out, "<{} bytes omitted>", bytes.len() - 2 * half);
        bytes[bytes.len() - half..].iter().for_each(|b| one(&mut out, *b));
    }
    out
}

/// The label of a frame in one word or two.
pub fn label(expect: &Expect) -> String {
    match expect {
        Expect::Inert { .. } => "valid (no action)".to_owned(),
        Expect::Act(calls) => format!("valid ({} call{})", calls.len(), if calls.len() == 1 { "" } else { "s" }),
        Expect::Reject(rule) => format!("must-reject: {} ({:?})", rule.id(), rule.class()),
    }
}

/// The bytes a finding points at first: the span of its first violation.
pub fn offending(f: &Finding) -> Option<(Stream, &[u8])> {
    let span = f.violations.iter().find_map(|v| v.span.as_ref())?;
    let source: &[u8] = match span.stream {
        Stream::Stdin => {
            let frame = f.violations.iter().find_map(|v| v.frame)?;
            &f.script.frames[frame].bytes
        }
        Stream::Stdout => &f.observation.stdout[span.range.clone()],
    };
    Some((span.stream, source))
}

/// The full human report of a finding. `reproduce` is the command that
/// reruns it, when there is one.
pub fn finding(f: &Finding, reproduce: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "──── portcullis finding: {} ────", f.check);
    let _ = writeln!(out, "seed: {}  policy: {}  revision: {}  cases until caught: {}", f.seed, f.policy, f.script.revision, f.cases_until_caught);
    let _ = writeln!(out, "\nMinimized script ({} frames, {} writes{}):", f.script.frames.len(), f.script.write_ends.len(), if f.script.eof { ", then EOF" } else { "" });
    for (i, frame) in f.script.frames.iter().enumerate() {
        let _ = writeln!(out, "  #{i:<2} {}/{}  {}", frame.family, frame.kind, label(&frame.expect));
        let _ = writeln!(out, "      b\"{}\"", escape(&frame.bytes, SHOWN));
    }
    if let Some((stream, bytes)) = offending(f) {
        let which = if stream == Stream::Stdin { "stdin frame" } else { "stdout line" };
        let _ = writeln!(out, "\nFirst offending {which}:\n  b\"{}\"", escape(bytes, SHOWN));
    }
    let _ = writeln!(out, "\nCheck {}: {}", f.check, f.check.failure());
    for v in &f.violations {
        let _ = writeln!(out, "  {v}");
    }
    let _ = writeln!(out, "\nstdout ({} bytes):\n  b\"{}\"", f.observation.stdout.len(), escape(&f.observation.stdout, SHOWN * 2));
    let _ = writeln!(out, "stderr ({} bytes):\n  b\"{}\"", f.observation.stderr.len(), escape(&f.observation.stderr, SHOWN));
    let _ = writeln!(out, "exit: {:?}", f.observation.exit);
    if let Some(cmd) = reproduce {
        let _ = writeln!(out, "\nReproduce with:\n  {cmd}");
    }
    out
}

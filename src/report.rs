//! Reports for a human, in a fixed order: seed, minimized script, the raw
//! bytes of the first offending frame or line (escaped, bounded), the check
//! and its violations, stderr apart, then commands to reproduce.

use crate::campaign::Finding;
use crate::check::{Stream, Violation};
use crate::frame::Expect;
use crate::run::Observation;
use crate::script::Script;
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

/// The inverse of [`escape`] on text it produced without cutting.
pub fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => out.push(b'\n'),
            Some('r') => out.push(b'\r'),
            Some('t') => out.push(b'\t'),
            Some('\\') => out.push(b'\\'),
            Some('"') => out.push(b'"'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).map_err(|_| format!("bad escape \\x{hex}"))?);
            }
            other => return Err(format!("bad escape \\{}", other.map(String::from).unwrap_or_default())),
        }
    }
    Ok(out)
}

/// Serde for exact bytes as escaped text: readable in an artifact, and
/// exact both ways.
pub mod escaped {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the bytes escaped, whole.
    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::escape(bytes, usize::MAX))
    }

    /// Reads escaped bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        super::unescape(&text).map_err(serde::de::Error::custom)
    }
}

/// The label of a frame in one word or two.
pub fn label(expect: &Expect) -> String {
    match expect {
        Expect::Inert { .. } => "valid (no action)".to_owned(),
        Expect::Act(calls) => format!("valid ({} call{})", calls.len(), if calls.len() == 1 { "" } else { "s" }),
        Expect::Reject(rule) => format!("must-reject: {} ({:?})", rule.id(), rule.class()),
    }
}

/// The bytes a session's first violation points at: the whole frame for
/// stdin, the line for stdout.
pub fn offending<'a>(script: &'a Script, obs: &'a Observation, violations: &[Violation]) -> Option<(Stream, &'a [u8])> {
    let v = violations.iter().find(|v| v.span.is_some())?;
    let span = v.span.as_ref()?;
    match span.stream {
        Stream::Stdin => Some((Stream::Stdin, &script.frames[v.frame?].bytes[..])),
        Stream::Stdout => Some((Stream::Stdout, &obs.stdout[span.range.clone()])),
    }
}

/// The full human report of a finding. `reproduce` is the command that
/// reruns it, when there is one.
pub fn finding(f: &Finding, reproduce: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "──── portcullis finding: {} ────", f.check);
    let _ = writeln!(
        out,
        "seed: {}  policy: {}  revision: {}  cases until caught: {}",
        f.seed, f.policy, f.script.revision, f.cases_until_caught
    );
    if let Some(late) = f.late {
        let _ = writeln!(
            out,
            "late: the evidence came {} ms after the session was judged{}",
            late.as_millis(),
            match f.confirmed {
                true => "; a fresh session with waits grown to cover it repeated it",
                false => "; a fresh session did not repeat it",
            }
        );
    }
    if !f.history.is_empty() {
        let _ = writeln!(
            out,
            "state-dependent: a process shared between sessions showed it after {} earlier scripts              (saved with the finding), and a fresh session did not repeat it",
            f.history.len()
        );
    }
    out.push_str(&session(&f.script, &f.observation, &f.violations));
    if let Some(cmd) = reproduce {
        let _ = writeln!(out, "\nReproduce with:\n  {cmd}");
    }
    out
}

/// One session for a human: the script, the first offending bytes, the
/// violations, stdout, stderr apart, and how the gateway ended.
pub fn session(script: &Script, obs: &Observation, violations: &[Violation]) -> String {
    let mut out = String::new();
    let eof = if script.eof { ", then EOF" } else { "" };
    let _ =
        writeln!(out, "\nMinimized script ({} frames, {} writes{eof}):", script.frames.len(), script.write_ends.len());
    for (i, frame) in script.frames.iter().enumerate() {
        let _ = writeln!(out, "  #{i:<2} {}/{}  {}", frame.family, frame.kind, label(&frame.expect));
        let _ = writeln!(out, "      b\"{}\"", escape(&frame.bytes, SHOWN));
    }
    if let Some((stream, bytes)) = offending(script, obs, violations) {
        let which = if stream == Stream::Stdin { "stdin frame" } else { "stdout line" };
        let _ = writeln!(out, "\nFirst offending {which}:\n  b\"{}\"", escape(bytes, SHOWN));
    }
    if let Some(first) = violations.first() {
        let _ = writeln!(out, "\nCheck {}: {}", first.check, first.check.failure());
    }
    for v in violations {
        let _ = writeln!(out, "  {v}");
    }
    let _ = writeln!(out, "\nstdout ({} bytes):\n  b\"{}\"", obs.stdout.len(), escape(&obs.stdout, SHOWN * 2));
    let _ = writeln!(out, "stderr ({} bytes):\n  b\"{}\"", obs.stderr.len(), escape(&obs.stderr, SHOWN));
    if obs.cut != (0, 0) {
        let _ = writeln!(out, "cut: {} stdout and {} stderr bytes beyond the capture bound", obs.cut.0, obs.cut.1);
    }
    let _ = writeln!(out, "exit: {:?}", obs.exit);
    out
}

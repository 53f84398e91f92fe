//! From bytes to JSON values: line framing with a length bound, the line
//! screen (CR, BOM, NUL, UTF-8), strict JSON, and what happens at EOF.

use super::json::{self, JsonError};
use super::reply::{self, Reply};
use super::{MAX_LINE, Mutant, ReferenceGateway};
use crate::protocol::code;
use serde_json::Value;
use std::borrow::Cow;

impl ReferenceGateway {
    /// Adds bytes of the current line, never holding more than the bound.
    pub(super) fn take_bytes(&mut self, bytes: &[u8]) {
        if self.discarding {
            return;
        }
        let room = (MAX_LINE + 1).saturating_sub(self.buf.len());
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if self.buf.len() > MAX_LINE {
            self.buf = Vec::new();
            self.discarding = true;
            self.malformed();
        }
    }

    /// The `chunked-read` mutant: stdin read 4 KiB at a time, and a chunk
    /// that holds no LF taken for a whole line.
    pub(super) fn read_chunks(&mut self, bytes: &[u8]) {
        const CHUNK: usize = 4096;
        self.buf.extend_from_slice(bytes);
        // Read up to `at`, cut from the buffer once: a 32 MiB frame is
        // not moved down a chunk at a time.
        let mut at = 0;
        while self.running() {
            let rest = &self.buf[at..];
            let window = &rest[..rest.len().min(CHUNK)];
            let (line, used) = match memchr::memchr(b'\n', window) {
                Some(n) => (window[..n].to_vec(), n + 1),
                None if rest.len() >= CHUNK => (window.to_vec(), CHUNK),
                None => break,
            };
            at += used;
            self.line(&line);
        }
        self.buf.drain(..at.min(self.buf.len()));
    }

    /// Handles one complete line (LF removed).
    pub(super) fn line(&mut self, line: &[u8]) {
        let joined;
        let line = match self.pending.take() {
            Some(mut first) => {
                first.push(b'\n');
                first.extend_from_slice(line);
                joined = first;
                &joined
            }
            None => line,
        };
        if line.iter().all(|b| *b == b' ' || *b == b'\t') {
            return; // blank lines carry nothing; skipping them loses nothing
        }
        let Some(text) = self.screen(line) else {
            return self.malformed();
        };
        match json::parse(&text, self.is(Mutant::LastWinsDuplicates)) {
            Ok(v) => self.message(v),
            Err(JsonError::Syntax { eof: true }) if self.is(Mutant::JoinBrokenLines) => {
                self.pending = Some(line.to_vec())
            }
            Err(JsonError::Trailing) if self.is(Mutant::ExecuteConcatenated) => {
                let values = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
                for v in values.map_while(Result::ok).collect::<Vec<_>>() {
                    self.message(v);
                }
            }
            Err(_) => self.malformed(),
        }
    }

    /// The line as text, if it may be parsed at all: no CR (the only
    /// terminator is LF), no BOM, no NUL, valid UTF-8.
    fn screen<'a>(&self, line: &'a [u8]) -> Option<Cow<'a, str>> {
        if memchr::memchr2(b'\r', 0, line).is_some() || line.starts_with(b"\xEF\xBB\xBF") {
            return None;
        }
        match std::str::from_utf8(line) {
            Ok(s) => Some(Cow::Borrowed(s)),
            Err(_) if self.is(Mutant::ReplaceInvalidUtf8) => Some(String::from_utf8_lossy(line)),
            Err(_) => None,
        }
    }

    /// Answers a frame that is not one strict JSON value, then closes if the
    /// policy says so.
    pub(super) fn malformed(&mut self) {
        if self.is(Mutant::SkipNonJson) {
            return;
        }
        let code = if self.is(Mutant::WrongParseErrorCode) { -32603 } else { code::PARSE_ERROR };
        match reply::parse_error_line(code) {
            Some(line) => self.out.extend_from_slice(line),
            None => self.send(&Reply::Error { id: Value::Null, code, message: text!("Parse error") }),
        }
        self.close_if_policy();
    }

    /// stdin closed with a partial line: it was cut short.
    pub(super) fn at_eof(&mut self, partial: Vec<u8>) {
        if self.is(Mutant::RepairTruncatedAtEof) {
            return self.line(&repair(partial));
        }
        self.malformed();
    }
}

/// Closes an open string and every open bracket: what a "helpful" gateway
/// does to a frame cut short.
fn repair(mut bytes: Vec<u8>) -> Vec<u8> {
    let (mut in_string, mut escaped, mut open) = (false, false, Vec::new());
    for &b in &bytes {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'{') => open.push(b'}'),
            (false, _, b'[') => open.push(b']'),
            (false, _, b'}' | b']') => {
                open.pop();
            }
            _ => {}
        }
    }
    if in_string {
        bytes.push(b'"');
    }
    bytes.extend(open.iter().rev());
    bytes
}

//! Exact bytes as readable text: escaped like a Rust byte-string body,
//! bounded for a human, and read back exactly (for artifacts).

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn escaping_is_exact_both_ways(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            prop_assert_eq!(unescape(&escape(&bytes, usize::MAX)).unwrap(), bytes);
        }
    }

    #[test]
    fn a_long_run_is_cut_in_the_middle_with_the_count() {
        let text = escape(&[b'a'; 100], 10);
        assert_eq!(text, "aaaaa<90 bytes omitted>aaaaa");
    }
}

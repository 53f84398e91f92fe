//! The canary-token format, owned here alone: `pc`, the session's salt as
//! 8 hex digits, `t`, a 5-digit serial. Fixed width, so no token is a
//! prefix of another and re-salting a script moves no byte offset.

/// The length of every canary token.
pub const TOKEN_LEN: usize = 16;

/// Token number `n` of a session salted `salt`.
pub fn token(salt: u32, n: u32) -> String {
    format!("{}{n:05}", salt_prefix(salt))
}

/// What every token of salt `salt` starts with.
pub fn salt_prefix(salt: u32) -> String {
    format!("pc{salt:08x}t")
}

/// The salt of a token.
pub fn salt_of(token: &str) -> Option<u32> {
    u32::from_str_radix(token.get(2..10)?, 16).ok()
}

/// Every canary-token-shaped substring of `s`, in order.
pub fn tokens_in(s: &str) -> impl Iterator<Item = &str> {
    // Safe to slice: a token is all ASCII.
    starts(s.as_bytes()).map(move |i| &s[i..i + TOKEN_LEN])
}

/// The salt of every canary token in `bytes`, in order (bytes need not be
/// UTF-8: a token is ASCII).
#[cfg(any(test, all(feature = "process", target_os = "linux")))]
pub(crate) fn salts_in(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    starts(bytes).filter_map(|i| std::str::from_utf8(&bytes[i..i + TOKEN_LEN]).ok().and_then(salt_of))
}

/// Where each token-shaped run of `b` starts: looked for only where `pc`
/// is, so a megabyte line costs one memchr pass, not a check per byte.
fn starts(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memmem::find_iter(b, b"pc").filter(move |&i| {
        b.get(i..i + TOKEN_LEN).is_some_and(|t| {
            t[2..10].iter().all(u8::is_ascii_hexdigit) && t[10] == b't' && t[11..].iter().all(u8::is_ascii_digit)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_its_salt_and_nothing_else_is_a_token() {
        let t = token(0xdead_beef, 7);
        assert_eq!(t.len(), TOKEN_LEN);
        assert_eq!(salt_of(&t), Some(0xdead_beef));
        let text = format!("x{t}y pc0000000zt00001 pcdeadbeeft1234 pc{t}");
        assert_eq!(tokens_in(&text).collect::<Vec<_>>(), [t.as_str(), t.as_str()]);
        assert_eq!(salts_in(text.as_bytes()).collect::<Vec<_>>(), [0xdead_beef, 0xdead_beef]);
    }
}

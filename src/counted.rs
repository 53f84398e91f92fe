//! Counts in words: "1 frame", "3 frames".

/// `n` and the noun, in the plural unless `n` is one: "1 frame", "3 frames".
pub(crate) fn counted(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

//! Every byte a server wrote on stdout, judged line by line: each line one
//! server-to-client JSON-RPC message (the `stdout-clean` check's rule), and
//! nothing after the last LF.

use crate::check::line_problem;
use crate::protocol::Revision;

/// A stdout line that is not a protocol message.
#[derive(Clone, Debug)]
pub struct Dirty {
    /// Its number, from 1.
    pub line: usize,
    /// Its bytes, the LF included when it had one.
    pub bytes: Vec<u8>,
    /// What is wrong with it.
    pub problem: String,
}

/// How many lines `stdout` holds (a last one without an LF counted), and
/// each that is not a protocol message under `revision`.
pub fn judge(stdout: &[u8], revision: Revision) -> (usize, Vec<Dirty>) {
    let mut dirty = Vec::new();
    let mut lines = 0;
    let mut start = 0;
    while start < stdout.len() {
        lines += 1;
        let Some(len) = stdout[start..].iter().position(|b| *b == b'\n') else {
            let problem = format!("{} bytes after the last LF: no line end", stdout.len() - start);
            dirty.push(Dirty { line: lines, bytes: stdout[start..].to_vec(), problem });
            break;
        };
        let body = &stdout[start..start + len];
        if let Some(problem) = line_problem(body, crate::json_line::parse(body).as_ref(), revision) {
            dirty.push(Dirty { line: lines, bytes: stdout[start..=start + len].to_vec(), problem });
        }
        start += len + 1;
    }
    (lines, dirty)
}

/// `bytes` as the article's release gate shows them: `b'...'`, escaped.
pub fn shown(bytes: &[u8]) -> String {
    let body = crate::escape::escape(bytes, crate::escape::SHOWN).replace("\\\"", "\"").replace('\'', "\\'");
    format!("b'{body}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_judged_and_a_tail_is_dirty() {
        let out = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nloading optional extension\n\n{\"jsonrpc\":\"2.0\"";
        let (lines, dirty) = judge(out, Revision::R2025_11_25);
        assert_eq!(lines, 4);
        let numbers: Vec<usize> = dirty.iter().map(|d| d.line).collect();
        assert_eq!(numbers, [2, 3, 4]);
        assert_eq!(shown(&dirty[0].bytes), "b'loading optional extension\\n'");
        assert!(dirty[2].problem.contains("after the last LF"), "{}", dirty[2].problem);
        assert_eq!(judge(b"", Revision::R2024_11_05).0, 0);
    }
}

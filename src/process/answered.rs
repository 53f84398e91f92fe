//! `--effect answer`: for a tool with no effect a probe can see (a clock, a
//! calculator), a success result counts as the action. The requests a
//! session was sent are read for their ids and tokens; each success result
//! on stdout then becomes an observed effect that carries the tokens of
//! the request it answers, unless an effect with those tokens was seen.

use crate::json_line;
use crate::seam::Action;
use crate::token::tokens_in;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The requests written so far, by the JSON text of their id, and the
/// stdin and stdout read up to where.
#[derive(Debug, Default)]
pub(crate) struct Answered {
    tokens_by_id: HashMap<String, Vec<String>>,
    stdin: Vec<u8>,
    stdout_read: usize,
}

impl Answered {
    /// Reads the whole lines of what was written for request ids and the
    /// tokens each line carries. A line that does not parse is read as a
    /// reader that also ends lines at CR reads it, piece by piece: a call
    /// hidden between two CRs is a request such a reader answers.
    pub(crate) fn written(&mut self, bytes: &[u8]) {
        self.stdin.extend_from_slice(bytes);
        let used = json_line::whole(&self.stdin);
        let lines = self.stdin[..used].split(|b| *b == b'\n');
        let read = |line: &[u8]| match json_line::parse(line) {
            Some(v) => vec![v],
            None => line.split(|b| *b == b'\r').filter_map(json_line::parse).collect(),
        };
        let values: Vec<Value> = lines.flat_map(read).collect();
        for v in values {
            for r in json_line::messages(&v) {
                let tokens: Vec<String> = tokens_in(&r.to_string()).map(str::to_owned).collect();
                if let Some(id) = r.get("id").filter(|_| !tokens.is_empty()) {
                    self.tokens_by_id.insert(id.to_string(), tokens);
                }
            }
        }
        self.stdin.drain(..used);
    }

    /// Where the stdout not read yet begins.
    pub(crate) fn read_from(&self) -> usize {
        self.stdout_read
    }

    /// The effects the success results among the whole lines of `new` (the
    /// stdout from [`Answered::read_from`] on) stand for, leaving out those
    /// whose tokens `seen` holds.
    pub(crate) fn effects(&mut self, new: &[u8], seen: &[Action]) -> Vec<Action> {
        let used = json_line::whole(new);
        self.stdout_read += used;
        let seen: Vec<String> = seen.iter().map(Action::arguments_text).collect();
        let mut out = Vec::new();
        for v in json_line::values(&new[..used]) {
            for r in json_line::messages(&v) {
                // A result asking for input (`input_required`) acts on nothing yet.
                let success = r.get("result").is_some_and(|res| {
                    res.get("isError") != Some(&Value::Bool(true)) && !crate::json_line::asks_input(res)
                });
                let Some(tokens) =
                    r.get("id").filter(|_| success).and_then(|id| self.tokens_by_id.get(&id.to_string()))
                else {
                    continue;
                };
                if tokens.iter().any(|t| seen.iter().any(|s| s.contains(t.as_str()))) {
                    continue;
                }
                let mut what = Map::new();
                what.insert("id".into(), r["id"].clone());
                what.insert("tokens".into(), Value::from(tokens.clone()));
                out.push(Action::observed("answer", what));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_hidden_between_two_crs_is_a_request_its_answer_acts_for() {
        let hidden =
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"note":"pc00000001t00001"}}}"#;
        let ping =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{{\"x\":\"\r{hidden}\r\"}}}}\n");
        let mut answered = Answered::default();
        answered.written(ping.as_bytes());
        let out = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n";
        let effects = answered.effects(out, &[]);
        assert_eq!(effects.len(), 1, "{effects:?}");
        assert!(effects[0].arguments_text().contains("pc00000001t00001"), "{effects:?}");
    }
}

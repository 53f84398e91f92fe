//! Where each answer a persistent process writes belongs: a response whose
//! id a script sent is that script's, however late it comes, and goes to
//! that script's session in the ledger. An error with a null id names no
//! request: it stays where it came, with the script whose window it came
//! in (or the latest, between windows), as output does by position.

use super::ledger::Ledger;
use crate::frame::Frame;
use crate::protocol::Id;
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct Routes {
    /// Each request id: the salts of the scripts that sent it, in the order
    /// they did, and how many answers to it have come.
    ids: HashMap<Id, (Vec<u32>, usize)>,
    /// The salt of the script after which each marker was sent.
    marks: HashMap<Id, u32>,
}

/// Where a whole line goes.
#[derive(Debug, PartialEq)]
enum Owner {
    /// To the session of the script with this salt, as an answer to this id.
    Script(u32, Id),
    /// Nowhere: the answer to the marker of an earlier script, which came
    /// after its window (the server had read past that script by then).
    Mark,
}

impl Routes {
    /// Notes the ids `frames` name, as the script with salt `salt`'s: an
    /// answer to one the server read out of another request's line (a call
    /// joined by a CR) goes to that script too. Most ids are a script's
    /// own; one a frame holds as its attack (an integer past 2^53) may be
    /// sent by several scripts of a process.
    pub(crate) fn sent(&mut self, frames: &[Frame], salt: u32) {
        for id in frames.iter().flat_map(Frame::named_ids) {
            self.ids.entry(id).or_default().0.push(salt);
        }
    }

    /// Notes the marker `mark` sent after the script with salt `salt`.
    pub(crate) fn marked(&mut self, mark: Id, salt: u32) {
        self.marks.insert(mark, salt);
    }

    /// The salts of every script sent.
    pub(crate) fn salts(&self) -> Vec<u32> {
        self.ids.values().flat_map(|(salts, _)| salts.iter().copied()).collect()
    }

    /// `out` without its whole lines that answer a request of another
    /// script than the one with salt `current` (of any, with none), each
    /// handed to its script's session in `ledger` as having come at `at`
    /// (a call it answers may act for `grace` after it); also the ids so
    /// answered.
    pub(crate) fn route(
        &mut self,
        out: Vec<u8>,
        current: Option<u32>,
        ledger: &Ledger,
        (grace, at): (Duration, Instant),
    ) -> (Vec<u8>, Vec<Id>) {
        let lines: Vec<_> = out.split_inclusive(|b| *b == b'\n').map(|l| (l, self.owner(l, current))).collect();
        if lines.iter().all(|(_, o)| o.is_none()) {
            return (out, Vec::new());
        }
        let (mut kept, mut answered) = (Vec::with_capacity(out.len()), Vec::new());
        for (line, owner) in lines {
            match owner {
                Some(Owner::Script(salt, id)) => {
                    ledger.answer(salt, line, &id, at, grace);
                    answered.push(id);
                }
                Some(Owner::Mark) => {}
                None => kept.extend_from_slice(line),
            }
        }
        (kept, answered)
    }

    /// The script and request a whole line answers, where that is another
    /// script's than `current`'s: a response (not a request the server
    /// sends) with an id a script sent. Answers to an id several scripts
    /// sent go to them in the order they sent it, one each, as JSON-RPC
    /// pairs them; an answer past the last goes to the last, whose
    /// judgement then shows it. The answer to an earlier script's marker
    /// is the harness's own, and goes nowhere.
    fn owner(&mut self, line: &[u8], current: Option<u32>) -> Option<Owner> {
        let v = crate::json_line::parse(line.strip_suffix(b"\n")?)?;
        let response = v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
        let id = v.get("id").filter(|_| response).and_then(Id::from_value)?;
        if let Some(salt) = self.marks.get(&id) {
            return (Some(*salt) != current).then_some(Owner::Mark);
        }
        let (salts, answers) = self.ids.get_mut(&id)?;
        let salt = salts[(*answers).min(salts.len() - 1)];
        *answers += 1;
        (Some(salt) != current).then_some(Owner::Script(salt, id))
    }
}

#[cfg(test)]
mod tests {
    use super::{Owner, Routes};
    use crate::frame::{Expect, Frame, Rule};
    use crate::protocol::Id;

    /// An id two scripts of one process both sent (an integer past 2^53 is
    /// the attack, not a fresh id): each gets one of its answers, in the
    /// order they sent it, and a third answer goes to the later one, whose
    /// judgement shows it as repeated. Not two answers to the later one
    /// and none to the first.
    #[test]
    fn answers_to_an_id_two_scripts_sent_go_one_to_each_in_order() {
        let line = br#"{"jsonrpc":"2.0","id":-9007199254740993,"method":"tools/call","params":{}}"#;
        let frame = Frame {
            bytes: [&line[..], b"\n"].concat(),
            expect: Expect::Reject(Rule::ImpreciseId),
            id: None,
            tokens: vec![],
            family: "placed".into(),
            kind: "boundary_id".into(),
            fill: None,
        };
        let mut routes = Routes::default();
        routes.sent(std::slice::from_ref(&frame), 1);
        routes.sent(std::slice::from_ref(&frame), 2);
        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":-9007199254740993,\"result\":{}}\n";
        let id = Id::Int(-9_007_199_254_740_993);
        assert_eq!(routes.owner(answer, Some(2)), Some(Owner::Script(1, id.clone())), "the first to the first sender");
        assert_eq!(routes.owner(answer, Some(2)), None, "the second is the current script's own");
        assert_eq!(routes.owner(answer, None), Some(Owner::Script(2, id)), "one more goes to the last sender");
    }

    /// The answer to an earlier script's marker that comes in a later
    /// script's window is no answer to a request of that script.
    #[test]
    fn a_late_answer_to_an_earlier_marker_goes_nowhere() {
        let mut routes = Routes::default();
        routes.marked(Id::Str("portcullis-mark-1".into()), 1);
        routes.marked(Id::Str("portcullis-mark-2".into()), 2);
        let answer = |n: u8| format!("{{\"jsonrpc\":\"2.0\",\"id\":\"portcullis-mark-{n}\",\"result\":{{}}}}\n");
        assert_eq!(routes.owner(answer(1).as_bytes(), Some(2)), Some(Owner::Mark));
        assert_eq!(routes.owner(answer(2).as_bytes(), Some(2)), None, "the current script's own is left to its window");
    }
}

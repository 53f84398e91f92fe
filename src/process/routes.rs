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
    /// The salt of the script each request id was sent in (ids are a
    /// script's own; even those past a precision boundary, which are the
    /// attack, differ between the scripts of one process).
    ids: HashMap<Id, u32>,
    /// The salt of the script after which each marker was sent, and how
    /// many answers to it have come.
    marks: HashMap<Id, (u32, usize)>,
}

/// Where a whole line goes.
#[derive(Debug, PartialEq)]
enum Owner {
    /// To the session of the script with this salt, as an answer to this id.
    Script(u32, Id),
    /// Nowhere: the one answer to an earlier script's marker, which came
    /// after its window (the window ran out first), the harness's own.
    Mark,
}

impl Routes {
    /// Notes the ids `frames` name, as the script with salt `salt`'s: an
    /// answer to one the server read out of another request's line (a call
    /// joined by a CR) goes to that script too.
    pub(crate) fn sent(&mut self, frames: &[Frame], salt: u32) {
        self.ids.extend(frames.iter().flat_map(Frame::named_ids).map(|id| (id, salt)));
    }

    /// Notes the marker `mark` sent after the script with salt `salt`.
    pub(crate) fn marked(&mut self, mark: Id, salt: u32) {
        self.marks.insert(mark, (salt, 0));
    }

    /// The salts of every script sent.
    pub(crate) fn salts(&self) -> Vec<u32> {
        let mut salts: Vec<u32> = self.ids.values().copied().chain(self.marks.values().map(|(s, _)| *s)).collect();
        salts.sort_unstable();
        salts.dedup();
        salts
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
    /// sends) with an id a script sent. The first answer to an earlier
    /// script's marker is the harness's own and goes nowhere; a second one
    /// is that script's, to be judged as an answer to no request.
    fn owner(&mut self, line: &[u8], current: Option<u32>) -> Option<Owner> {
        let v = crate::json_line::parse(line.strip_suffix(b"\n")?)?;
        let response = v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
        let id = v.get("id").filter(|_| response).and_then(Id::from_value)?;
        if let Some((salt, answers)) = self.marks.get_mut(&id) {
            *answers += 1;
            let salt = *salt;
            return match (Some(salt) == current, *answers) {
                (true, _) => None,
                (false, 1) => Some(Owner::Mark),
                (false, _) => Some(Owner::Script(salt, id)),
            };
        }
        self.ids.get(&id).filter(|s| Some(**s) != current).map(|s| Owner::Script(*s, id))
    }
}

#[cfg(test)]
mod tests {
    use super::{Owner, Routes};
    use crate::protocol::Id;

    /// The answer to an earlier script's marker that comes in a later
    /// script's window (its own window ran out first) is the harness's; a
    /// second answer to it is evidence, its script's.
    #[test]
    fn a_late_answer_to_an_earlier_marker_goes_nowhere_and_a_second_to_its_script() {
        let mut routes = Routes::default();
        let mark = |n: u8| Id::Str(format!("portcullis-mark-{n}"));
        routes.marked(mark(1), 1);
        routes.marked(mark(2), 2);
        let answer = |n: u8| format!("{{\"jsonrpc\":\"2.0\",\"id\":\"portcullis-mark-{n}\",\"result\":{{}}}}\n");
        assert_eq!(routes.owner(answer(1).as_bytes(), Some(2)), Some(Owner::Mark));
        assert_eq!(routes.owner(answer(1).as_bytes(), Some(2)), Some(Owner::Script(1, mark(1))), "a second is kept");
        assert_eq!(routes.owner(answer(2).as_bytes(), Some(2)), None, "the current script's own is left to its window");
    }
}

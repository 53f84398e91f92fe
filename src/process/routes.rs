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
    /// The salt of the script each request id was sent in.
    ids: HashMap<Id, u32>,
}

impl Routes {
    /// Notes the ids `frames` name, as the script with salt `salt`'s: an
    /// answer to one the server read out of another request's line (a call
    /// joined by a CR) goes to that script too.
    pub(crate) fn sent(&mut self, frames: &[Frame], salt: u32) {
        self.ids.extend(frames.iter().flat_map(Frame::named_ids).map(|id| (id, salt)));
    }

    /// The salts of every script sent.
    pub(crate) fn salts(&self) -> Vec<u32> {
        self.ids.values().copied().collect()
    }

    /// `out` without its whole lines that answer a request of another
    /// script than the one with salt `current` (of any, with none), each
    /// handed to its script's session in `ledger` as having come at `at`
    /// (a call it answers may act for `grace` after it); also the ids so
    /// answered.
    pub(crate) fn route(
        &self,
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
                Some((salt, id)) => {
                    ledger.answer(salt, line, &id, at, grace);
                    answered.push(id);
                }
                None => kept.extend_from_slice(line),
            }
        }
        (kept, answered)
    }

    /// The script and request a whole line answers, where that is another
    /// script's than `current`'s: a response (not a request the server
    /// sends) with an id a script sent.
    fn owner(&self, line: &[u8], current: Option<u32>) -> Option<(u32, Id)> {
        let v = crate::json_line::parse(line.strip_suffix(b"\n")?)?;
        let response = v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
        let id = v.get("id").filter(|_| response).and_then(Id::from_value)?;
        self.ids.get(&id).filter(|s| Some(**s) != current).map(|s| (*s, id))
    }
}

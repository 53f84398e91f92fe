//! Where each answer a persistent process writes belongs. A response
//! whose id a script sent is that script's, however late it comes. An
//! error with a null id names no request: where an earlier script still
//! awaits an answer that may come with its id or a null one (a request it
//! found invalid, say), the oldest such request is the one it answers, as
//! a server that answers in order answers the earliest first. What belongs
//! to another script goes to that script's session in the ledger. The
//! script whose window is open keeps as many errors with a null id as it
//! may be owed itself, whoever sent them: they are told apart by nothing.

use super::ledger::Ledger;
use crate::frame::Frame;
use crate::protocol::Id;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct Routes {
    /// The salt of the script each request id was sent in.
    ids: HashMap<Id, u32>,
    /// Requests of scripts past their window that may be answered with a
    /// null id and were not answered yet, oldest first: each id, its
    /// script's salt, and when its answer is due.
    anonymous: VecDeque<(Id, u32, Instant)>,
    /// How many more errors with a null id the script whose window is open
    /// keeps.
    keeps: usize,
}

impl Routes {
    /// Notes the ids `frames` name, as the script with salt `salt`'s: an
    /// answer to one the server read out of another request's line (a call
    /// joined by a CR) goes to that script too.
    pub(crate) fn sent(&mut self, frames: &[Frame], salt: u32) {
        self.ids.extend(frames.iter().flat_map(Frame::named_ids).map(|id| (id, salt)));
    }

    /// Opens the window of a script that may be owed `or_null` answers
    /// with a null id.
    pub(crate) fn open(&mut self, or_null: usize) {
        self.keeps = or_null;
    }

    /// Notes that the script with salt `salt` awaits, until `due`, answers
    /// to `ids` that may come with a null id.
    pub(crate) fn await_anonymous(&mut self, ids: &[Id], salt: u32, due: Instant) {
        self.anonymous.extend(ids.iter().map(|id| (id.clone(), salt, due)));
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
        &mut self,
        out: Vec<u8>,
        current: Option<u32>,
        ledger: &Ledger,
        (grace, at): (Duration, Instant),
    ) -> (Vec<u8>, Vec<Id>) {
        let (mut kept, mut answered) = (Vec::with_capacity(out.len()), Vec::new());
        for line in out.split_inclusive(|b| *b == b'\n') {
            match self.owner(line, current, at) {
                Some((salt, id)) => {
                    ledger.answer(salt, line, &id, at, grace);
                    self.anonymous.retain(|(owed, ..)| *owed != id);
                    answered.push(id);
                }
                None => kept.extend_from_slice(line),
            }
        }
        (kept, answered)
    }

    /// The script and request a whole line answers, where that is another
    /// script's than `current`'s: a response (not a request the server
    /// sends) with an id a script sent, or an error with a null id beyond
    /// what the open window keeps while an earlier script awaits one
    /// (answers due before `at` are no longer awaited).
    fn owner(&mut self, line: &[u8], current: Option<u32>, at: Instant) -> Option<(u32, Id)> {
        let v = crate::json_line::parse(line.strip_suffix(b"\n")?)?;
        let response = v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
        let id = v.get("id").filter(|_| response)?;
        if id.is_null() && v.get("error").is_some() {
            if current.is_some() && self.keeps > 0 {
                self.keeps -= 1;
                return None;
            }
            self.anonymous.retain(|(.., due)| *due >= at);
            let oldest = self.anonymous.iter().position(|(_, salt, _)| Some(*salt) != current)?;
            return self.anonymous.remove(oldest).map(|(id, salt, _)| (salt, id));
        }
        let id = Id::from_value(id)?;
        self.ids.get(&id).filter(|s| Some(**s) != current).map(|s| (*s, id))
    }
}

//! The answers a session waits for before it goes on, as a client does.
//!
//! A client reads the answer to each request before it closes stdin. A
//! server that answers requests concurrently (every server built on the
//! Python SDK, for one) cancels what is still in flight when stdin closes,
//! and answers "Connection closed" instead of acting: a calm of a few
//! milliseconds before EOF would cut a slow tool short, and report a correct
//! server's valid call as never executed. So a settle that expects no exit
//! waits, besides the calm, until every owed answer has come, or the bound
//! of [`Latency`] has passed. Answers that come only if the server misreads
//! a must-reject frame as a call are waited for too, but briefly
//! ([`Latency::brief`]): a correct server never sends them.

use super::Limits;
use super::capture::Capture;
use crate::protocol::Id;
use crate::seam::Awaited;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The ids a response carries: one object's, or each of a batch's.
pub(crate) fn answered_ids(v: &Value) -> impl Iterator<Item = Id> + '_ {
    answered_values(v).filter_map(Id::from_value)
}

/// The same, as they are, JSON-RPC ids or not.
fn answered_values(v: &Value) -> impl Iterator<Item = &Value> + '_ {
    v.as_array().map_or(std::slice::from_ref(v), Vec::as_slice).iter().filter_map(|a| a.get("id"))
}

/// How many errors with a null id a response holds: the answers to frames
/// whose id could not be read.
fn null_errors(v: &Value) -> usize {
    let responses = v.as_array().map_or(std::slice::from_ref(v), Vec::as_slice);
    responses.iter().filter(|r| r.get("error").is_some() && r.get("id").is_none_or(Value::is_null)).count()
}

/// Answers that come only if the server misread a must-reject frame as a
/// call ([`Awaited::misread`]), each with a `W` (how long it is waited for,
/// say), and the errors with a null id that show none was: once as many
/// have come as the frames owe ([`Awaited::anonymous`]), every such frame
/// was rejected, and none is awaited any more.
#[derive(Debug)]
pub(crate) struct Possible<W> {
    ids: Vec<(Value, W)>,
    anonymous: usize,
    nulls: usize,
}

impl<W> Default for Possible<W> {
    fn default() -> Self {
        Possible { ids: Vec::new(), anonymous: 0, nulls: 0 }
    }
}

impl<W> Possible<W> {
    /// These answers, `anonymous` errors with a null id showing none comes.
    pub(crate) fn new(ids: Vec<(Value, W)>, anonymous: usize) -> Self {
        Possible { ids, anonymous, nulls: 0 }
    }

    /// Reads one line of stdout.
    pub(crate) fn read(&mut self, v: &Value) {
        self.nulls += null_errors(v);
        for got in answered_values(v) {
            self.ids.retain(|(o, _)| {
                let ids = Id::from_value(o).zip(Id::from_value(got));
                o != got && !ids.is_some_and(|(o, got)| same_request(&o, &got))
            });
        }
    }

    /// The answers still awaited.
    pub(crate) fn pending(&self) -> &[(Value, W)] {
        match self.anonymous > 0 && self.nulls >= self.anonymous {
            true => &[],
            false => &self.ids,
        }
    }
}

/// The requests still waiting for an answer on a child's stdout.
#[derive(Debug, Default)]
pub(crate) struct Owed {
    ids: Vec<Id>,
    /// Whether valid tool calls were among them.
    calls: bool,
    /// Answers that may come, or not.
    possible: Possible<()>,
    /// How far stdout has been read for answers: the end of its last whole
    /// line.
    scanned: usize,
}

impl Owed {
    /// Adds answers to wait for.
    pub(crate) fn add(&mut self, awaited: Awaited) {
        self.calls |= !awaited.calls.is_empty();
        self.ids.extend(awaited.requests.into_iter().chain(awaited.calls));
        self.possible.ids.extend(awaited.misread.into_iter().map(|id| (id, ())));
        self.possible.anonymous += awaited.anonymous;
    }

    /// Waits for nothing more: what is still unanswered is the check's to
    /// judge.
    pub(crate) fn clear(&mut self) {
        self.ids.clear();
        self.calls = false;
        self.possible = Possible::default();
    }

    /// Whether valid tool calls were owed answers.
    pub(crate) fn with_calls(&self) -> bool {
        self.calls
    }

    /// Whether answers that may come are still awaited: some have not come,
    /// and not every frame owing an error with a null id has had one.
    pub(crate) fn possible_pending(&self) -> bool {
        !self.possible.pending().is_empty()
    }

    /// Reads the whole lines `stdout` has gained for answers, owed or
    /// possible; whether none is owed any more.
    pub(crate) fn answered(&mut self, stdout: &Capture) -> bool {
        if self.ids.is_empty() && !self.possible_pending() {
            return true;
        }
        let new = stdout.since(self.scanned);
        let Some(end) = memchr::memrchr(b'\n', &new) else { return self.ids.is_empty() };
        for line in new[..end].split(|b| *b == b'\n') {
            if let Some(v) = crate::json_line::parse(line) {
                self.possible.read(&v);
                for id in answered_ids(&v) {
                    self.ids.retain(|o| !same_request(o, &id));
                }
            }
        }
        self.scanned += end + 1;
        self.ids.is_empty()
    }
}

/// Whether an answer with id `got` shows the server done with request
/// `owed`: the same id, or the same digits retyped (a number for a numeric
/// string, or back). Whether the id came back right is for the checks to
/// judge; the wait is only for the server to finish.
pub(crate) fn same_request(owed: &Id, got: &Id) -> bool {
    match (owed, got) {
        (Id::Int(n), Id::Str(s)) | (Id::Str(s), Id::Int(n)) => s.parse() == Ok(*n),
        _ => owed == got,
    }
}

/// The slowest a target's server has been to answer everything owed, once
/// it had read it, shared by all the target's sessions: how long to wait
/// for answers is learned from it.
#[derive(Debug)]
pub(crate) struct Latency {
    /// In microseconds; `u64::MAX` until a session has had all its answers.
    slowest: AtomicU64,
    /// The same, over sessions whose answers included valid tool calls'.
    slowest_call: AtomicU64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency { slowest: AtomicU64::new(u64::MAX), slowest_call: AtomicU64::new(u64::MAX) }
    }
}

/// How many times the slowest answer seen is waited for: a server's pace
/// varies (a first call that loads a library, a loaded machine), and a
/// wait cut short would cancel a call in flight.
pub(crate) const HEADROOM: u32 = 8;

/// How many times the slowest tool call seen an answer that may never come
/// is waited for ([`Latency::brief`]): a call misread from a must-reject
/// frame takes as long as a valid one, and a correct server, which sends
/// no such answer, costs every session that waits for one this much.
pub(crate) const BRIEF_HEADROOM: u32 = 2;

impl Latency {
    /// Records that a session had every answer `took` after the server had
    /// read what it was sent; `calls` when valid tool calls were among them.
    pub(crate) fn record(&self, took: Duration, calls: bool) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX - 1);
        let slower = |s: u64| Some(if s == u64::MAX { micros } else { s.max(micros) });
        let _ = self.slowest.fetch_update(Ordering::Relaxed, Ordering::Relaxed, slower);
        if calls {
            let _ = self.slowest_call.fetch_update(Ordering::Relaxed, Ordering::Relaxed, slower);
        }
    }

    /// How long a session waits for owed answers once the server has read
    /// what it was sent, before it closes stdin: the timeout until it has
    /// answered everything once, then [`HEADROOM`] times its slowest, never
    /// less than the exit grace (EOF would cancel a call cut short) nor more
    /// than the timeout.
    pub(crate) fn bound(&self, limits: &Limits) -> Duration {
        let grace = limits.exit_grace.min(limits.timeout);
        match self.slowest.load(Ordering::Relaxed) {
            u64::MAX => limits.timeout,
            micros => (Duration::from_micros(micros) * HEADROOM).clamp(grace, limits.timeout),
        }
    }

    /// How long a session waits for answers that may never come
    /// ([`Awaited::misread`]): [`BRIEF_HEADROOM`] times the slowest session
    /// with tool calls, at least a quiet; the exit grace until one was seen;
    /// never more than the timeout.
    pub(crate) fn brief(&self, limits: &Limits) -> Duration {
        match self.slowest_call.load(Ordering::Relaxed) {
            u64::MAX => limits.exit_grace,
            micros => (Duration::from_micros(micros) * BRIEF_HEADROOM).max(limits.quiet),
        }
        .min(limits.timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A capture of `bytes`, read to the end.
    fn captured(bytes: &'static [u8]) -> Capture {
        let (capture, _) = Capture::start(bytes, 1 << 20);
        capture.wait_closed(Instant::now() + Duration::from_secs(5));
        capture
    }

    fn owing(ids: Vec<Id>) -> Owed {
        let mut owed = Owed::default();
        owed.add(Awaited { requests: ids, ..Awaited::default() });
        owed
    }

    #[test]
    fn whole_lines_answer_by_id_batch_or_retyped_id() {
        let stdout =
            captured(b"banner\n{\"id\":1,\"result\":{}}\n[{\"id\":\"x\",\"error\":{}},{\"id\":\"7\",\"result\":{}}]\n");
        assert!(owing(vec![Id::Int(1), Id::Str("x".into()), Id::Int(7)]).answered(&stdout));
        assert!(!owing(vec![Id::Int(1), Id::Int(2)]).answered(&stdout), "id 2 was never answered");
        let cut = captured(b"{\"id\":1,\"result\":{}}\n{\"id\":2,\"result\"");
        assert!(!owing(vec![Id::Int(2)]).answered(&cut), "a line cut short answers nothing yet");
        assert!(Owed::default().answered(&cut), "nothing owed, nothing to wait for");
    }

    #[test]
    fn possible_answers_are_read_beside_owed_ones_and_never_owed() {
        let stdout = captured(b"{\"id\":\"5\",\"result\":{}}\n{\"id\":1,\"result\":{}}\n");
        let mut owed = Owed::default();
        let awaited = Awaited {
            calls: vec![Id::Int(1)],
            misread: vec![Value::from(5), Value::from(6)],
            anonymous: 2,
            ..Awaited::default()
        };
        owed.add(awaited);
        assert!(owed.with_calls());
        assert!(owed.answered(&stdout), "id 1 came; possible ones are not owed");
        assert!(owed.possible_pending(), "id 6 did not come");
        let mut owed = Owed::default();
        owed.add(Awaited { misread: vec![Value::from(5)], anonymous: 1, ..Awaited::default() });
        assert!(!owed.with_calls());
        assert!(owed.answered(&stdout) && !owed.possible_pending(), "a retyped id 5 came");
        // Errors with a null id, one per frame owing one: none was misread.
        let stdout = captured(b"{\"id\":null,\"error\":{}}\n[{\"error\":{}}]\n{\"id\":1,\"result\":{}}\n");
        let mut owed = Owed::default();
        owed.add(Awaited { misread: vec![Value::from(5)], anonymous: 3, ..Awaited::default() });
        assert!(owed.answered(&stdout) && owed.possible_pending(), "two of three came");
        let mut owed = Owed::default();
        owed.add(Awaited { misread: vec![Value::from(5)], anonymous: 2, ..Awaited::default() });
        assert!(owed.answered(&stdout) && !owed.possible_pending(), "both came");
    }

    #[test]
    fn the_brief_wait_is_twice_the_slowest_call_within_a_quiet_and_the_timeout() {
        let limits = Limits::default();
        let latency = Latency::default();
        latency.record(Duration::from_millis(900), false);
        assert_eq!(latency.brief(&limits), limits.exit_grace, "the exit grace until calls were answered");
        latency.record(Duration::from_micros(100), true);
        assert_eq!(latency.brief(&limits), limits.quiet, "at least a quiet");
        latency.record(Duration::from_millis(40), true);
        assert_eq!(latency.brief(&limits), Duration::from_millis(40) * BRIEF_HEADROOM);
        latency.record(Duration::from_secs(4), true);
        assert_eq!(latency.brief(&limits), limits.timeout, "never more than the timeout");
    }

    #[test]
    fn the_wait_is_the_timeout_until_answers_were_seen_then_learned_within_bounds() {
        let limits = Limits::default();
        let latency = Latency::default();
        assert_eq!(latency.bound(&limits), limits.timeout);
        latency.record(Duration::from_millis(2), false);
        assert_eq!(latency.bound(&limits), limits.exit_grace, "never less than the exit grace");
        latency.record(Duration::from_millis(300), true);
        latency.record(Duration::from_millis(5), false);
        assert_eq!(latency.bound(&limits), Duration::from_millis(300) * HEADROOM, "the slowest, with headroom");
        latency.record(Duration::from_secs(4), false);
        assert_eq!(latency.bound(&limits), limits.timeout, "never more than the timeout");
    }
}

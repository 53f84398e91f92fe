//! What every check needs to know about one session, worked out once.

use crate::frame::{Call, Expect, Frame, Rule};
use crate::observation::Observation;
use crate::protocol::{Id, Policy, Revision};
use crate::script::Script;
use crate::seam::{Exit, Session};
use serde_json::Value;
use std::collections::HashMap;
use std::ops::Range;

/// One stdout line (without its LF) and its JSON value, if it is one.
#[derive(Debug)]
pub struct Line {
    /// Its bytes in stdout.
    pub range: Range<usize>,
    /// The parsed value, when the line is UTF-8 and exactly one JSON value.
    pub value: Option<Value>,
}

/// One response the gateway wrote (batch responses are flattened).
#[derive(Debug)]
pub struct Reply {
    /// Its line in stdout.
    pub range: Range<usize>,
    /// The id as written; `Null` when absent.
    pub id: Value,
    /// The error code, when it is an error response with an integer code.
    pub code: Option<i64>,
    /// Whether it is an error response.
    pub error: bool,
    /// Whether it is a result with `isError: true`.
    pub tool_error: bool,
    /// Whether it is a result asking for input (`resultType`
    /// `input_required`), which acts on nothing yet.
    pub asks_input: bool,
}

/// What a frame is held to, at the revision the session negotiated and the
/// level its script was labelled at.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Judged {
    /// Valid, no action; `request` when a success response is owed.
    Inert {
        /// Whether a success response is owed.
        request: bool,
    },
    /// Valid: each call acts exactly once with exactly its arguments.
    Act(Vec<Call>),
    /// Must not act.
    Reject(Rule),
    /// Either reading is fine: rejected with no effect, or acting at most
    /// once per call; with exactly `calls`' arguments when they are known.
    Either {
        /// The tolerated rule, or the one above the judged level.
        rule: Rule,
        /// The calls as a reading that accepts the frame must run them.
        calls: Option<Vec<Call>>,
    },
}

impl Judged {
    fn of(frame: &Frame, revision: Revision) -> Judged {
        match &frame.expect {
            Expect::Inert { request } => Judged::Inert { request: *request },
            Expect::Act(_) if frame.kind == "batch" && !revision.has_batches() => Judged::Reject(Rule::BatchNotAllowed),
            Expect::Act(calls) => Judged::Act(calls.clone()),
            // A batch labelled for a revision without batches, in a session
            // the server negotiated one with them: its calls must act.
            Expect::Reject(Rule::BatchNotAllowed) if frame.kind == "batch" && revision.has_batches() => {
                batch_calls(frame).map(Judged::Act).unwrap_or(Judged::Reject(Rule::BatchNotAllowed))
            }
            Expect::Reject(rule) => Judged::Reject(*rule),
            Expect::Tolerate(rule, calls) => Judged::Either { rule: *rule, calls: Some(calls.clone()) },
            Expect::Unjudged(rule) => Judged::Either { rule: *rule, calls: None },
        }
    }

    /// The rule of a must-reject frame.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Judged::Reject(r) => Some(*r),
            _ => None,
        }
    }

    /// Whether the frame may act: a valid one, or either way.
    pub fn may_act(&self) -> bool {
        matches!(self, Judged::Act(_) | Judged::Either { .. })
    }

    /// Whether a gateway under `close` may end the session after it: a
    /// frame rejected, or one either reading of which may be.
    pub fn may_close(&self) -> bool {
        matches!(self, Judged::Reject(_) | Judged::Either { .. })
    }
}

/// The calls of a batch frame, read back from its bytes.
fn batch_calls(frame: &Frame) -> Option<Vec<Call>> {
    let end = frame.bytes.len() - usize::from(frame.bytes.ends_with(b"\n"));
    let Value::Array(items) = crate::json_line::parse(&frame.bytes[..end])? else { return None };
    let calls = items.iter().zip(&frame.tokens).map(|(item, token)| {
        let params = item.get("params")?;
        Some(Call {
            id: Id::from_value(item.get("id")?)?,
            token: token.clone(),
            tool: params.get("name")?.as_str()?.to_owned(),
            arguments: params.get("arguments")?.as_object()?.clone(),
        })
    });
    let calls: Option<Vec<Call>> = calls.collect();
    calls.filter(|c| c.len() == items.len())
}

/// The precomputed facts of one session.
#[derive(Debug)]
pub struct Facts<'a> {
    /// The script that ran.
    pub script: &'a Script,
    /// What came back.
    pub obs: &'a Observation,
    /// The policy the gateway is held to (`auto` resolved by what it did).
    pub policy: Policy,
    /// The revision the session runs under.
    pub revision: Revision,
    /// What each frame is held to.
    pub judged: Vec<Judged>,
    /// Each frame's span in stdin.
    pub spans: Vec<Range<usize>>,
    /// Under `close`: the frame after which the session ended, or must have.
    pub closing: Option<usize>,
    /// How many frames were wholly written before the gateway ended.
    pub delivered: usize,
    /// Where the gateway stalled: under keep-open, when the marker written
    /// after the script went unanswered and it still ran once stdin
    /// closed, the first frame after the last it answered or acted for
    /// that a reader may refuse or that is owed an answer by id (else the
    /// first after it). It was never shown to have read past that frame,
    /// so none from it on is owed anything.
    pub stalled_at: Option<usize>,
    /// Which frame each token belongs to: the last that carries it.
    pub owner: HashMap<String, usize>,
    /// The frames, in order, of each token that several frames carry (a
    /// call asked about, then retried with the same arguments).
    pub carriers: HashMap<String, Vec<usize>>,
    /// For each frame the driver filled and wrote, how many effects had
    /// come before it was written: none of those is its.
    pub written_after: HashMap<usize, usize>,
    /// Which frame each request id belongs to.
    pub id_owner: HashMap<Id, usize>,
    /// The stdout lines.
    pub lines: Vec<Line>,
    /// Every response on stdout.
    pub replies: Vec<Reply>,
}

impl<'a> Facts<'a> {
    /// Works the facts out.
    pub fn new(script: &'a Script, obs: &'a Observation, session: &Session) -> Self {
        let spans = script.frame_spans();
        let delivered = match obs.ended_at {
            Some(end) => spans.iter().take_while(|s| s.end <= end).count(),
            None => spans.len(),
        };
        let mut owner = HashMap::new();
        let mut id_owner = HashMap::new();
        let mut carriers: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, f) in script.frames.iter().enumerate() {
            for t in &f.tokens {
                if let Some(before) = owner.insert(t.clone(), i)
                    && before != i
                {
                    carriers.entry(t.clone()).or_insert_with(|| vec![before]).push(i);
                }
            }
            if let Some(id) = &f.id {
                id_owner.insert(id.clone(), i);
            }
            if let Expect::Act(calls) | Expect::Tolerate(_, calls) = &f.expect {
                for c in calls {
                    id_owner.insert(c.id.clone(), i);
                }
            }
        }
        let lines = split_lines(&obs.stdout);
        let replies = lines.iter().flat_map(replies_of).collect();
        let mut facts = Facts {
            script,
            obs,
            policy: session.policy,
            revision: script.revision,
            judged: Vec::new(),
            spans,
            closing: None,
            delivered,
            stalled_at: None,
            owner,
            carriers,
            written_after: obs
                .filled
                .iter()
                .filter(|f| f.written.is_ok())
                .map(|f| (f.frame, f.effects_before))
                .collect(),
            id_owner,
            lines,
            replies,
        };
        facts.revision = facts.negotiated().unwrap_or(script.revision);
        facts.judged = script.frames.iter().map(|f| Judged::of(f, facts.revision)).collect();
        // The calls of a batch read back for a revision with batches: their
        // answers are the batch's, which settling the policy reads.
        for (i, j) in facts.judged.iter().enumerate() {
            if let Judged::Act(calls) = j {
                for call in calls {
                    facts.id_owner.entry(call.id.clone()).or_insert(i);
                }
            }
        }
        if facts.policy == Policy::Auto {
            // Held to what it showed; one that showed nothing is held to
            // what it is doing: still running, keep-open, else close.
            let fallback = if obs.exit_before_eof.ended() { Policy::Close } else { Policy::KeepOpen };
            facts.policy = seen_policy(&facts).map_or(fallback, |(p, _)| p);
        }
        if facts.policy == Policy::Close {
            facts.closing = facts.closing_frame();
        }
        // Only once stdin closed and the server ran on: one that exits at
        // EOF read everything (a server that never answers the marker, or
        // one slow to, shows no stall).
        let ran_on = obs.eof_sent && !obs.exit.ended();
        if obs.marker_unanswered && ran_on && facts.policy == Policy::KeepOpen {
            // The likeliest frame, as for an end: the first after the last
            // answered or acted for that a reader may refuse, or that is
            // owed an answer by id (a request still being served).
            let from = facts.last_alive().map_or(0, |a| a + 1);
            let owed = |i: &usize| facts.judged[*i].may_close() || !facts.script.frames[*i].owed_ids().is_empty();
            let first = (from..facts.delivered).find(owed);
            facts.stalled_at = first.or((from < facts.delivered).then_some(from));
        }
        facts
    }

    /// The first frame that must end the session under `close`.
    fn must_close(&self) -> Option<usize> {
        self.judged.iter().position(|j| j.rule().is_some_and(|r| r.must_close()))
    }

    /// Under `close`: the frame that must end the session, or, when the
    /// gateway ended before stdin closed, the first frame it may have ended
    /// on at or after the last one it answered or acted for.
    fn closing_frame(&self) -> Option<usize> {
        let must = self.must_close();
        let Some(end) = self.obs.ended_at.filter(|_| self.obs.exit_before_eof.ended()) else { return must };
        let alive = self.last_alive().unwrap_or(0);
        let may = (alive..self.judged.len()).find(|i| self.judged[*i].may_close() && self.spans[*i].start < end);
        match (may, must) {
            (Some(c), Some(m)) => Some(c.min(m)),
            (c, m) => c.or(m),
        }
    }

    /// The last frame the gateway answered by id or acted for.
    pub fn last_alive(&self) -> Option<usize> {
        let answered = self.replies.iter().filter_map(|r| self.frame_of(&r.id));
        let acted = self.obs.effects.iter().flat_map(|e| {
            let text = format!("{} {}", e.tool, e.arguments_text());
            crate::token::tokens_in(&text).filter_map(|t| self.owner.get(t).copied()).collect::<Vec<_>>()
        });
        answered.chain(acted).max()
    }

    /// The revision the gateway answered `initialize` with, if it is one
    /// the suite knows.
    fn negotiated(&self) -> Option<Revision> {
        let init = self.script.frames.iter().find(|f| f.kind == "initialize")?.id.clone()?;
        self.lines.iter().filter_map(|l| l.value.as_ref()).find_map(|v| {
            let answers = Id::from_value(v.get("id")?)? == init;
            answers.then(|| v.get("result")?.get("protocolVersion")?.as_str()?.parse().ok())?
        })
    }

    /// The frame a response id belongs to: the one that carries it as a
    /// valid id, else one whose bytes hold it as an id all the same (one of
    /// the two ids of a duplicate key, or `true`, which a lenient reader
    /// takes for one).
    pub fn frame_of(&self, id: &Value) -> Option<usize> {
        self.frame_of_among(id, &std::collections::HashSet::new())
    }

    /// [`Facts::frame_of`], where several frames hold an id no frame owns
    /// (two frames with `"id": true`): the first of them not in `answered`,
    /// so that each echoed answer goes to a frame of its own.
    pub fn frame_of_among(&self, id: &Value, answered: &std::collections::HashSet<usize>) -> Option<usize> {
        if id.is_null() {
            return None; // a null id names no frame
        }
        let owned = Id::from_value(id).and_then(|id| self.id_owner.get(&id).copied());
        owned.or_else(|| {
            let member = format!("\"id\":{id}");
            // The member whole: `"id":7` is no answer to `"id":70`.
            let holds = |i: &usize| {
                let bytes = &self.script.frames[*i].bytes;
                memchr::memmem::find_iter(bytes, member.as_bytes()).any(|at| {
                    let next = bytes.get(at + member.len()).copied().unwrap_or(b'\n');
                    matches!(next, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n')
                })
            };
            // A number no double holds, echoed as the reader held it
            // (2^53 + 1 as 2^53, 2^64 as a float): the same double.
            let as_double = |i: &usize| {
                let bytes = &self.script.frames[*i].bytes;
                id.as_f64().is_some_and(|want| id_numbers(bytes).any(|got| got == want))
            };
            let first =
                |found: Vec<usize>| found.iter().copied().find(|i| !answered.contains(i)).or(found.first().copied());
            let frames = 0..self.judged.len();
            first(frames.clone().filter(holds).collect()).or_else(|| first(frames.filter(as_double).collect()))
        })
    }

    /// Whether frame `i` comes after the frame that closed the session.
    pub fn after_close(&self, i: usize) -> bool {
        self.closing.is_some_and(|c| i > c)
    }

    /// Whether the gateway was still there to handle frame `i`, and was
    /// not shown to have stalled before it.
    pub fn reached(&self, i: usize) -> bool {
        i < self.delivered && !self.after_close(i) && self.stalled_at.is_none_or(|s| i < s)
    }
}

/// The numbers that `bytes` hold as an `"id"` member, read as doubles.
fn id_numbers(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    memchr::memmem::find_iter(bytes, b"\"id\":").filter_map(move |at| {
        let rest = &bytes[at + 5..];
        let end = rest.iter().position(|b| !b"-+.eE0123456789".contains(b)).unwrap_or(rest.len());
        std::str::from_utf8(&rest[..end]).ok()?.parse::<f64>().ok().filter(|f| f.is_finite())
    })
}

/// The policy a gateway showed on the first frame that must end a session
/// under `close`, and that frame: `keep-open` when it answered or acted on
/// a later frame, `close` when it did neither and ended before stdin
/// closed.
/// `None` when no such frame was wholly delivered, the gateway crashed, or
/// it showed neither.
pub(crate) fn seen_policy(facts: &Facts) -> Option<(Policy, usize)> {
    let m = facts.must_close()?;
    let obs = facts.obs;
    if m >= facts.delivered || !facts.script.frames[m].bytes.ends_with(b"\n") || matches!(obs.exit, Exit::Crashed(_)) {
        return None;
    }
    match facts.last_alive().is_some_and(|a| a > m) {
        true => Some((Policy::KeepOpen, m)),
        // An exit that came only once stdin closed shows no policy: a
        // keep-open server slow to answer exits at EOF too.
        false if obs.exit_before_eof.ended() => Some((Policy::Close, m)),
        false => None,
    }
}

fn split_lines(stdout: &[u8]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, b) in stdout.iter().enumerate() {
        if *b == b'\n' {
            let bytes = &stdout[start..i];
            let value = crate::json_line::parse(bytes);
            lines.push(Line { range: start..i, value });
            start = i + 1;
        }
    }
    lines
}

fn replies_of(line: &Line) -> Vec<Reply> {
    let one = |v: &Value| -> Option<Reply> {
        let o = v.as_object()?;
        if o.contains_key("method") {
            return None;
        }
        let error = o.get("error");
        Some(Reply {
            range: line.range.clone(),
            id: o.get("id").cloned().unwrap_or(Value::Null),
            code: error.and_then(|e| e.get("code")).and_then(Value::as_i64),
            error: error.is_some(),
            tool_error: o.get("result").and_then(|r| r.get("isError")) == Some(&Value::Bool(true)),
            asks_input: o.get("result").is_some_and(crate::json_line::asks_input),
        })
    };
    match &line.value {
        Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => vec![],
    }
}

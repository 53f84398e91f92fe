//! What every check needs to know about one session, worked out once.

use crate::frame::Expect;
use crate::observation::Observation;
use crate::protocol::{Id, Policy, Revision};
use crate::script::Script;
use crate::seam::Session;
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
}

/// The precomputed facts of one session.
#[derive(Debug)]
pub struct Facts<'a> {
    /// The script that ran.
    pub script: &'a Script,
    /// What came back.
    pub obs: &'a Observation,
    /// The policy the gateway is held to.
    pub policy: Policy,
    /// The revision the session runs under.
    pub revision: Revision,
    /// Each frame's span in stdin.
    pub spans: Vec<Range<usize>>,
    /// Under `close`: the first frame that must end the session.
    pub closing: Option<usize>,
    /// How many frames were wholly written before the gateway ended.
    pub delivered: usize,
    /// Which frame each token belongs to.
    pub owner: HashMap<String, usize>,
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
        let closing = match session.policy {
            Policy::Close => script.frames.iter().position(|f| f.expect.rule().is_some_and(|r| r.class().closes())),
            Policy::KeepOpen => None,
        };
        let delivered = match obs.ended_at {
            Some(end) => spans.iter().take_while(|s| s.end <= end).count(),
            None => spans.len(),
        };
        let mut owner = HashMap::new();
        let mut id_owner = HashMap::new();
        for (i, f) in script.frames.iter().enumerate() {
            for t in &f.tokens {
                owner.insert(t.clone(), i);
            }
            if let Some(id) = &f.id {
                id_owner.insert(id.clone(), i);
            }
            if let Expect::Act(calls) = &f.expect {
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
            spans,
            closing,
            delivered,
            owner,
            id_owner,
            lines,
            replies,
        };
        facts.revision = facts.negotiated().unwrap_or(script.revision);
        facts
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

    /// The frame a response id belongs to.
    pub fn frame_of(&self, id: &Value) -> Option<usize> {
        Id::from_value(id).and_then(|id| self.id_owner.get(&id).copied())
    }

    /// Whether frame `i` comes after the frame that closed the session.
    pub fn after_close(&self, i: usize) -> bool {
        self.closing.is_some_and(|c| i > c)
    }

    /// Whether the gateway was still there to handle frame `i`.
    pub fn reached(&self, i: usize) -> bool {
        i < self.delivered && !self.after_close(i)
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
        })
    };
    match &line.value {
        Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => vec![],
    }
}

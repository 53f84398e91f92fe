//! One conversation with a server as a client opens it: `initialize` and
//! `notifications/initialized` (in 2026-07-28, `server/discover`), then
//! `tools/list` and the revision's marker, each waited for up to a bound;
//! then whatever the caller sends; then stdin closed, the exit grace, and
//! the whole process group ended. Everything the server wrote, on stdout
//! and stderr, is kept to the last byte.

use crate::process::{ChildGateway, ChildTarget};
use crate::protocol::{Id, Policy, Revision};
use crate::script::Script;
use crate::seam::{Action, Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A conversation under way.
pub struct Conversation {
    gateway: ChildGateway,
    recorder: Recorder,
    revision: Revision,
    bound: Duration,
    started: Instant,
    /// The requests answered so far, by method.
    pub answered: Vec<&'static str>,
    /// The first request left unanswered within the bound, if any.
    pub unanswered: Option<&'static str>,
    /// The `tools` array of the `tools/list` answer, if one came.
    pub tools: Option<Vec<Value>>,
}

/// What a finished conversation left.
pub struct Transcript {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit: Exit,
    /// Whether it was still running past the exit grace, and so was ended
    /// by the signal sent to its group.
    pub outlived_grace: bool,
    pub answered: Vec<&'static str>,
    pub unanswered: Option<&'static str>,
    /// Bytes of stdout and stderr cut for want of room.
    pub cut: (u64, u64),
    /// What the probes saw the server do, with the session's tokens.
    pub effects: Vec<Action>,
    pub elapsed: Duration,
}

impl Conversation {
    /// Starts `target`'s command for a session whose tokens have `salt`,
    /// answers awaited for up to the target's answer wait each.
    pub fn start(target: &ChildTarget, revision: Revision, salt: u32) -> Result<Conversation, Fault> {
        let recorder = Recorder::new();
        let session = Session { policy: Policy::KeepOpen, revision, salt };
        let gateway = target.start(&session, recorder.clone())?;
        Ok(Conversation {
            gateway,
            recorder,
            revision,
            bound: target.waits().answer,
            started: Instant::now(),
            answered: Vec::new(),
            unanswered: None,
            tools: None,
        })
    }

    /// The opening, as the revision opens a session (`initialize` and
    /// `notifications/initialized`, or `server/discover`), then
    /// `tools/list`, then the revision's marker (`ping`, or
    /// `server/discover` again): each request sent once the one before was
    /// answered; it stops at the first left unanswered. Whether all were
    /// answered.
    pub fn open(&mut self) -> bool {
        self.open_calling(None)
    }

    /// [`Conversation::open`], with `call` (a tool and its arguments) made
    /// between `tools/list` and the marker, awaited as they are: the first
    /// call after an idle start.
    pub fn open_calling(&mut self, call: Option<&(String, Value)>) -> bool {
        let revision = self.revision;
        let handshake = Script::handshake(revision);
        let opener = if revision.has_handshake() { "initialize" } else { "server/discover" };
        let mut frames = handshake.frames.into_iter();
        let first = frames.next().expect("a session opens with a frame");
        if self.request(opener, 1, &first.bytes).is_none() {
            return false;
        }
        for frame in frames {
            self.send(&frame.bytes);
        }
        let list = revision.request_line(Value::from(2), "tools/list");
        let Some(listed) = self.request("tools/list", 2, &list) else { return false };
        self.tools = listed.pointer("/result/tools").and_then(Value::as_array).cloned();
        if let Some((name, arguments)) = call {
            let mut line = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}});
            if let Some(meta) = revision.envelope() {
                line["params"]["_meta"] = serde_json::from_str(&meta).expect("the envelope is JSON");
            }
            let mut bytes = serde_json::to_vec(&line).expect("a call serializes");
            bytes.push(b'\n');
            if self.request("tools/call", 4, &bytes).is_none() {
                return false;
            }
        }
        self.request(revision.marker_method(), 3, &revision.marker_with(Value::from(3))).is_some()
    }

    /// Sends `bytes` as they are.
    pub fn send(&mut self, bytes: &[u8]) {
        // A write to a server that has gone is the server's business.
        let _ = self.gateway.write_stdin(bytes);
    }

    /// Sends request `line` (id `id`, method `method`) and waits for its
    /// answer, noting whether it came.
    pub fn request(&mut self, method: &'static str, id: i64, line: &[u8]) -> Option<Value> {
        self.send(line);
        let answer = self.gateway.await_answer(Id::Int(id), self.bound);
        match answer {
            Some(_) => self.answered.push(method),
            None => {
                self.unanswered.get_or_insert(method);
            }
        }
        answer
    }

    /// Sends the revision's marker (`ping`, or `server/discover`) with id
    /// `id` and waits for its answer, which is not counted in the
    /// opening's.
    pub fn marker(&mut self, id: i64) -> Option<Value> {
        self.send(&self.revision.marker_with(Value::from(id)));
        self.gateway.await_answer(Id::Int(id), self.bound)
    }

    /// Its temporary HOME.
    pub fn home(&self) -> std::path::PathBuf {
        self.gateway.home().to_owned()
    }

    /// Whether the server is still running.
    pub fn running(&mut self) -> bool {
        !self.gateway.exit().ended()
    }

    /// Closes stdin, ends the process group after the exit grace, and
    /// keeps everything written.
    pub fn finish(self) -> Transcript {
        let finished = self.gateway.finish_with_exit();
        Transcript {
            stdout: finished.stdout,
            stderr: finished.stderr,
            exit: finished.exit,
            outlived_grace: finished.outlived_grace,
            answered: self.answered,
            unanswered: self.unanswered,
            cut: finished.cut,
            effects: self.recorder.actions(),
            elapsed: self.started.elapsed(),
        }
    }
}

impl Transcript {
    /// How the opening went and how the process ended, in a few words.
    pub fn story(&self, stdin_closed_at_once: bool) -> String {
        let opening = match (stdin_closed_at_once, self.answered.is_empty(), self.unanswered) {
            (true, _, _) => "stdin closed before any input".to_owned(),
            (false, true, Some(m)) => format!("{m} unanswered"),
            (false, false, Some(m)) => format!("answered {}; {m} unanswered", self.answered.join(", ")),
            (false, _, None) => format!("answered {}", self.answered.join(", ")),
        };
        let ended = match (&self.exit, self.outlived_grace) {
            (Exit::Running, _) => "was ended".to_owned(),
            (Exit::Crashed(how), true) => format!("did not exit within the exit grace and was ended ({how})"),
            (e, _) => e.to_string(),
        };
        format!("{opening}; {ended} ({:.1} s)", self.elapsed.as_secs_f64())
    }
}

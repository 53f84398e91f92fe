//! One server process serving keep-open scripts one after another, as
//! persistent mode in AFL++ and libFuzzer runs many inputs in one process.
//!
//! The rules are few and fixed. The process is initialized once. Each
//! script then runs without its handshake, with request ids no earlier
//! script used, and is followed by a marker request ([`Revision::marker`]:
//! `ping` where the revision has it). The script's window ends when the
//! marker and every answer it is owed have come and each of its valid
//! calls has acted (within the answer wait): its stdout is what
//! came since the script began, the marker's answer left out; its effects
//! are those that carry its tokens. Output that comes after that and
//! before the next script begins is still its own by position, and an
//! effect that carries its tokens later is its own by salt: both go to the
//! ledger, and the script is judged again. The output the process wrote
//! before its first script (a banner, say) is that script's.

use super::ChildTarget;
use super::history::History;
use super::ledger::Ledger;
use super::routes::Routes;
use super::session::ChildGateway;
use crate::frame::Expect;
use crate::json_line::{Awaited, without_answer};
use crate::observation::Observation;
use crate::protocol::{Id, Policy, Revision};
use crate::run::{owed, owed_or_null};
use crate::script::Script;
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Target};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// What one script in the persistent process showed.
pub(crate) struct Ran {
    pub(crate) obs: Observation,
    /// The scripts the process ran before this one.
    pub(crate) history: History,
    /// Whether the process can serve another script: the marker was
    /// answered (whether or not every answer the script was owed came) and
    /// it still runs.
    pub(crate) healthy: bool,
    /// When the answers it still awaits ([`Observation::awaiting`]) are due.
    pub(crate) due: Option<Instant>,
    /// The deadline of every answer its requests may get.
    pub(crate) answer_by: Instant,
    /// Those of the answers it awaits that may come with a null id: a
    /// server may never send them, as the SDKs do not.
    pub(crate) anonymous: Vec<Id>,
}

/// What starting a persistent process came to.
pub(crate) enum Started {
    Ready(Box<Persistent>),
    /// No answer to `initialize` within the answer wait.
    Silent,
    /// The server negotiated another revision than the one asked for.
    OtherRevision,
}

/// A process kept for one revision's scripts.
pub(crate) struct Persistent {
    pub(crate) revision: Revision,
    /// Which process of the run it is.
    pub(crate) serial: u64,
    child: ChildGateway,
    marks: u64,
    history: History,
    /// The latest script's salt and recorder, for what comes after it.
    last: Option<(u32, Recorder, usize)>,
    /// Output before the first script.
    early: (Vec<u8>, Vec<u8>),
    /// The bytes of the scripts it ran.
    bytes: usize,
    /// Whose each answer is, whenever it comes.
    routes: Routes,
    /// The answers its scripts still await, each with when it is due: a
    /// client waits for them before it closes stdin.
    /// Each flagged where it may come with a null id.
    pending: Vec<(Id, Instant, bool)>,
    /// Output taken and not routed: a partial line (at a window's end, or
    /// between scripts), which goes with the rest of it (and what came
    /// before any script ran).
    held: Vec<u8>,
    /// The salt of the script whose line `held` ends with: the one whose
    /// window it began in, or, begun between scripts, the one before.
    held_from: Option<u32>,
}

/// Scripts a process runs before it is ended, as AFL's persistent loop
/// restarts its target, and the most bytes they may write: a history
/// stays a size a replay can run.
const RUNS: usize = 1_000;
const HISTORY_BYTES: usize = 16 << 20;

impl Persistent {
    /// Starts a process and runs the handshake.
    pub(crate) fn start(target: &ChildTarget, revision: Revision) -> Result<Started, Fault> {
        let session = Session { policy: Policy::KeepOpen, revision, salt: 0 };
        let mut child = target.start(&session, Recorder::new())?;
        child.write_stdin(&Script::handshake(revision).stdin())?;
        let answer = match child.await_answer(Id::Int(1), target.waits().answer) {
            Some(answer) => Some(answer),
            // No answer by the start bound rests on time alone: a loaded
            // machine (or the run's own starts, several at once) may slow a
            // start past it. While the process runs and has written nothing,
            // the wait is confirmed with the bound twice as long before it is
            // given up.
            None if !child.gone() && !child.wrote_anything() => {
                child.await_answer_patiently(Id::Int(1), target.waits().answer, 2)
            }
            None => None,
        };
        let Some(answer) = answer else { return Ok(Started::Silent) };
        // Scripts without their handshake are judged at the revision they
        // asked for: a server that negotiated another cannot run them.
        if !revision.opened_by(&answer) {
            return Ok(Started::OtherRevision);
        }
        let stdout = without_answer(&child.take_stdout(), &Value::from(1));
        let early = (stdout, child.take_stderr());
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Ok(Started::Ready(Box::new(Persistent {
            revision,
            serial: SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            child,
            marks: 0,
            history: History::default(),
            last: None,
            early,
            bytes: 0,
            routes: Routes::default(),
            pending: Vec::new(),
            held: Vec::new(),
            held_from: None,
        })))
    }

    /// Whether the process has exited: one started on standby may have
    /// ended while it waited, and is no process to run a script in.
    pub(crate) fn exited(&mut self) -> bool {
        self.child.gone()
    }

    /// Whether the process has run as many scripts, or as many bytes of
    /// them, as one process is given.
    pub(crate) fn worn(&self) -> bool {
        self.worn_quarters(4)
    }

    /// Whether it is three quarters worn: its successor may start now.
    pub(crate) fn wearing(&self) -> bool {
        self.worn_quarters(3)
    }

    /// Whether it has run twice what one process is given: worn, it may
    /// serve on while its successor starts, but not past this.
    pub(crate) fn worn_out(&self) -> bool {
        self.worn_quarters(8)
    }

    /// Whether it has run `quarters` quarters of the scripts, or of their
    /// bytes, one process is given.
    fn worn_quarters(&self, quarters: usize) -> bool {
        self.history.len * 4 >= RUNS * quarters || self.bytes * 4 >= HISTORY_BYTES * quarters
    }

    /// Runs `body` (a script without its handshake) with tokens of `salt`.
    /// With `defer`, its window ends once its marker is answered (the
    /// server has read past it) and its answered calls have acted: answers
    /// still owed are awaited as late evidence until their deadline
    /// ([`Ran::due`]), while the next script runs. Without it, the window
    /// waits for them, as a shrinking step must; with `null_answers` too,
    /// for those that may come with a null id where the request's id was
    /// readable (a step of a finding that rests on them: an SDK never
    /// sends them, and each such step waits them out).
    pub(crate) fn run(
        &mut self,
        body: &Arc<Script>,
        salt: u32,
        ledger: &Ledger,
        (defer, null_answers): (bool, bool),
    ) -> Result<Ran, Fault> {
        let mut late_out = [std::mem::take(&mut self.held), self.child.take_stdout()].concat();
        let from = self.held_from.take();
        let unfinished = self.held_line(&mut late_out, from, ledger);
        let late_err = self.child.take_stderr();
        let (mut stdout, mut stderr) = std::mem::take(&mut self.early);
        // A line the server is still writing (a long answer to an earlier
        // script, say) is routed whole once the rest of it comes, in this
        // script's window ([`Persistent::carry_over`]); judged apart, its
        // tail would read as a line of this script that is no protocol
        // message.
        let mut partial = Vec::new();
        // The script a line begun before this window is the output of.
        let mut carried = None;
        match &self.last {
            Some((last, ..)) => {
                let last = *last;
                let whole = crate::json_line::whole(&late_out);
                partial = late_out[whole..].to_vec();
                // Unfinished since before the script before, it is still that one's.
                carried = if unfinished { from } else { Some(last) }.filter(|_| !partial.is_empty());
                let late_out = self.route(late_out[..whole].to_vec(), None, ledger);
                ledger.late_output(last, &late_out, &late_err, self.child.output_at(true));
            }
            None => {
                stdout.extend(late_out);
                stderr.extend(late_err);
            }
        }
        self.settle_last(ledger);
        let recorder = Recorder::new();
        self.child.rebind(recorder.clone(), salt);
        self.routes.sent(&body.frames, salt);
        // Only a session's own driver fills a retry from an answer.
        debug_assert!(body.frames.iter().all(|f| f.fill.is_none()), "a retry that waits on a fill, shared");
        for chunk in body.writes() {
            self.child.write_stdin_owned(chunk)?;
        }
        self.marks += 1;
        let mark = format!("portcullis-mark-{}", self.marks);
        self.child.write_stdin(&self.revision.marker(&mark))?;
        self.routes.marked(Id::Str(mark.clone()), salt);
        let session = Session { policy: Policy::KeepOpen, revision: self.revision, salt };
        let owed_ids = owed(body, &session);
        // Answers that may come with the request's id or a null one.
        let or_null = owed_or_null(body, &session);
        // A marker that waits behind no owed answer measures the server.
        let measures = defer && owed_ids.is_empty() && or_null.is_empty() && body.len_bytes() < 64 << 10;
        let marker = Id::Str(mark.clone());
        let awaited = match (defer, null_answers) {
            (true, _) => Awaited::ids(vec![marker]),
            (false, false) => Awaited::ids([owed_ids.clone(), vec![marker]].concat()),
            (false, true) => Awaited::or_null([owed_ids.clone(), vec![marker]].concat(), or_null.clone()),
        };
        let waits = self.child.waits().answer;
        let written = Instant::now();
        let deadline = written + waits;
        let answered = self.child.await_owed(awaited, deadline);
        // Where the marker waited behind no owed answer, after a script of
        // ordinary size, how long it took is how long this server takes to
        // answer now.
        if answered && measures {
            self.child.answered_in(written.elapsed());
        }
        // A valid call may act after it answers: its script waits for it,
        // within a wait of its own once every answer came, else within the
        // answers' deadline (a call left unanswered had all of it to act).
        // One still awaited may act until its answer is due.
        let mut raw = [partial, self.child.take_stdout()].concat();
        self.carry_over(&mut raw, &mut carried, ledger);
        let (mut out, tail) = self.route_whole(raw, salt, ledger);
        // The server read past the script: it can serve the next one, even
        // where an answer it owed never came.
        let marked = answered || answers_in(&out, &Id::Str(mark.clone()));
        // Deferred, the answers still owed are awaited as late evidence
        // (with those among them that may come with a null id, where they
        // have an id: a server that runs requests concurrently may refuse
        // one after it answered the marker).
        let still_owed = |out: &[u8]| -> (Vec<Id>, Vec<Id>) {
            if !defer {
                return (Vec::new(), Vec::new());
            }
            let anonymous = uncovered(&owed_ids, &mark, &or_null, out);
            let by_id = owed_ids.iter().filter(|id| !answers_in(out, id)).cloned();
            (by_id.chain(anonymous.iter().cloned()).collect(), anonymous)
        };
        let (awaiting, _) = still_owed(&out);
        let acted_by = if answered { Instant::now() + waits } else { deadline };
        let tokens = awaited_tokens(body, &out, &awaiting);
        self.child.await_tokens(&tokens, acted_by);
        let mut raw = [tail, self.child.take_stdout()].concat();
        self.carry_over(&mut raw, &mut carried, ledger);
        let (more, rest) = self.route_whole(raw, salt, ledger);
        out.extend(more);
        // A line still being written is routed once it is whole: left in
        // this session's output, a routed answer would land after it and
        // split it. One begun before this window is still that script's.
        self.held_from = (!rest.is_empty()).then_some(carried.unwrap_or(salt));
        self.held = rest;
        stdout.extend(without_answer(&out, &Value::from(mark.as_str())));
        stderr.extend(self.child.take_stderr());
        let exit = self.child.exit();
        // An answer still awaited may come until its deadline, unless the
        // process has ended.
        let (awaiting, anonymous) = still_owed(&out);
        let due = (!awaiting.is_empty()).then_some(deadline);
        self.pending.extend(awaiting.iter().map(|id| (id.clone(), deadline, anonymous.contains(id))));
        let obs = Observation {
            stdout,
            stderr,
            effects: recorder.actions(),
            ended_at: exit.ended().then_some(body.len_bytes()),
            exit_before_eof: exit.clone(),
            exit: exit.clone(),
            eof_sent: false,
            cut: self.child.cut(),
            awaiting,
            filled: Vec::new(),
            marker_unanswered: !marked,
        };
        let history = self.history.clone();
        self.bytes += body.len_bytes();
        self.history.push(Arc::clone(body));
        self.last = Some((salt, recorder, obs.effects.len()));
        Ok(Ran { obs, history, healthy: marked && exit == Exit::Running, due, answer_by: deadline, anonymous })
    }

    /// Between scripts: takes the effects that came (the latest script's
    /// to the ledger, as [`Persistent::run`] does when the next begins)
    /// and routes the answers still awaited. Once the process has ended (a
    /// crash or a signal ended it), nothing more can come: what its scripts
    /// still await is missing now, and it says so (`true`).
    pub(crate) fn tend(&mut self, ledger: &Ledger) -> bool {
        // Read before what is drained: all it wrote is in by then.
        let over = self.child.exit().ended() && self.child.stdout_closed();
        self.child.collect_effects();
        self.drain(ledger);
        self.settle_last(ledger);
        if over {
            ledger.expire(&self.routes.salts());
        }
        over
    }

    /// Routes the answers that came since the last script's window to
    /// their requests, before the answers still awaited are judged due: an
    /// answer already written is never judged missing. The other whole
    /// lines (an error with a null id, say) are the latest script's, by
    /// position, at once; a partial line waits for the rest of it.
    pub(crate) fn drain(&mut self, ledger: &Ledger) {
        if self.pending.is_empty() {
            return;
        }
        let mut out = [std::mem::take(&mut self.held), self.child.take_stdout()].concat();
        let from = self.held_from.take();
        let unfinished = self.held_line(&mut out, from, ledger);
        let whole = crate::json_line::whole(&out);
        let kept = self.route(out[..whole].to_vec(), None, ledger);
        match &self.last {
            Some((last, ..)) if !kept.is_empty() => ledger.late_output(*last, &kept, &[], self.child.output_at(true)),
            _ => self.held.extend_from_slice(&kept),
        }
        self.held.extend_from_slice(&out[whole..]);
        let last = self.last.as_ref().map(|(last, ..)| *last);
        self.held_from = if unfinished { from } else { last }.filter(|_| !self.held.is_empty());
    }

    /// Where `out` begins with a line held unfinished, begun in (or after)
    /// the script with salt `from`: that line, taken out of `out` once it
    /// is whole and routed; unless it answers a request, it is that
    /// script's output, as late evidence. Whether it is still unfinished.
    fn held_line(&mut self, out: &mut Vec<u8>, from: Option<u32>, ledger: &Ledger) -> bool {
        let Some(from) = from else { return false };
        let Some(end) = out.iter().position(|b| *b == b'\n') else { return true };
        let line: Vec<u8> = out.drain(..=end).collect();
        let kept = self.route(line, None, ledger);
        if !kept.is_empty() {
            ledger.late_output(from, &kept, &[], self.child.output_at(true));
        }
        false
    }

    /// Where a line began before this script's window (`carried`) and
    /// `raw` now holds its end: that line, taken out of `raw` and routed
    /// whole; unless it answers a request, it is the previous script's
    /// output, by position, as late evidence.
    fn carry_over(&mut self, raw: &mut Vec<u8>, carried: &mut Option<u32>, ledger: &Ledger) {
        if !self.held_line(raw, *carried, ledger) {
            *carried = None;
        }
    }

    /// The whole lines of `out` routed as the window of the script with
    /// salt `salt` takes them, and the line still being written after them.
    fn route_whole(&mut self, out: Vec<u8>, salt: u32, ledger: &Ledger) -> (Vec<u8>, Vec<u8>) {
        let whole = crate::json_line::whole(&out);
        let tail = out[whole..].to_vec();
        let mut out = out;
        out.truncate(whole);
        (self.route(out, Some(salt), ledger), tail)
    }

    fn route(&mut self, out: Vec<u8>, current: Option<u32>, ledger: &Ledger) -> Vec<u8> {
        let grace = self.child.waits().answer;
        let (kept, answered) = self.routes.route(out, current, ledger, (grace, self.child.output_at(false)));
        self.pending.retain(|(id, ..)| !answered.contains(id));
        kept
    }

    /// Hands the latest script's effects that came after its window to
    /// the ledger, as late evidence.
    fn settle_last(&mut self, ledger: &Ledger) {
        if let Some((salt, recorder, seen)) = &mut self.last {
            let actions = recorder.actions_since(*seen);
            *seen += actions.len();
            for a in actions {
                ledger.late_effect(Some(*salt), a, Instant::now());
            }
        }
    }

    /// Ends the process as a client does (stdin closed, the exit grace,
    /// then the group ended); what it wrote and did meanwhile is the latest
    /// script's late evidence.
    pub(crate) fn end(mut self, ledger: &Ledger) {
        // As a client does, it waits for the answers still due before it
        // closes stdin (a server may cancel calls in flight at EOF).
        // Only those not yet due: one answered with a null id, or past its
        // deadline, is not waited for.
        // Each answer is routed as it comes: the job may go on beside (the
        // process ending on a thread of its own), and must never judge
        // missing an answer already written.
        loop {
            let now = Instant::now();
            self.pending.retain(|(_, due, _)| *due > now);
            let Some(until) = self.pending.iter().map(|(_, due, _)| *due).max() else { break };
            let (or_null, ids): (Vec<_>, Vec<_>) = self.pending.iter().partition(|(.., anonymous)| *anonymous);
            let ids = ids.into_iter().map(|(id, ..)| id.clone()).collect();
            let or_null = or_null.into_iter().map(|(id, ..)| Some(id.clone())).collect();
            let slice = until.min(now + std::time::Duration::from_millis(5));
            let all = self.child.await_owed(Awaited::or_null(ids, or_null), slice);
            self.drain(ledger);
            if all || self.child.gone() {
                break;
            }
        }
        self.settle_last(ledger);
        let out = [std::mem::take(&mut self.held), self.child.take_stdout()].concat();
        let err = self.child.take_stderr();
        let grace = self.child.waits().answer;
        let Persistent { child, last, mut routes, held_from, .. } = self;
        let at = child.output_at(true);
        let (tail_out, tail_err) = child.finish();
        if let Some((salt, recorder, seen)) = last {
            // Output that came by its end came by the time it was read (its
            // last words by now); effects are stamped as they are taken, as
            // the window's are: a stamp never earlier than the evidence.
            let at = if tail_out.is_empty() && tail_err.is_empty() { at } else { Instant::now() };
            let mut out = [out, tail_out].concat();
            // A line held unfinished is the script's it began in, cut or whole.
            if let Some(from) = held_from {
                let end = out.iter().position(|b| *b == b'\n').map_or(out.len(), |i| i + 1);
                let (line, _) = routes.route(out.drain(..end).collect(), None, ledger, (grace, at));
                ledger.late_output(from, &line, &[], at);
            }
            let (out, _) = routes.route(out, None, ledger, (grace, at));
            ledger.late_output(salt, &out, &[err, tail_err].concat(), at);
            let taken = Instant::now();
            for a in recorder.actions_since(seen) {
                ledger.late_effect(Some(salt), a, taken);
            }
            // Nothing more can come: what its scripts still awaited is missing.
            ledger.expire(&routes.salts());
        }
    }
}

/// The tokens a script's window waits to see act: each valid call's, and
/// a tolerated frame's unless `out` shows the server refused it (an error
/// or an `isError` result for its id, or an error with a null id and no
/// answer for its id); none of a frame whose answer is still `awaiting`.
fn awaited_tokens(script: &Script, out: &[u8], awaiting: &[Id]) -> Vec<String> {
    let answers: Vec<Value> = crate::json_line::values(out).collect();
    let answers = answers.iter().flat_map(|v| crate::json_line::messages(v).iter());
    let (mut refused_anonymously, mut by_id) = (false, Vec::new());
    for a in answers {
        match a.get("id").and_then(Id::from_value) {
            Some(id) => by_id.push((id, a.get("error").is_some() || a["result"]["isError"] == true)),
            None => refused_anonymously |= a.get("error").is_some(),
        }
    }
    let refused = |id: &Option<Id>| match by_id.iter().find(|(got, _)| Some(got) == id.as_ref()) {
        Some((_, error)) => *error,
        None => refused_anonymously,
    };
    // A call still awaited may act until its answer is due, apart from
    // the window.
    let running = |f: &crate::frame::Frame| f.id.as_ref().is_some_and(|id| awaiting.contains(id));
    let calls = script.frames.iter().filter(|f| !running(f)).filter_map(|f| match &f.expect {
        Expect::Act(calls) => Some(calls),
        Expect::Tolerate(_, calls) if !refused(&f.id) => Some(calls),
        _ => None,
    });
    // A call of a batch whose own answer is still awaited, likewise.
    calls.flatten().filter(|c| !awaiting.contains(&c.id)).map(|c| c.token.clone()).collect()
}

/// The ids of `or_null` (answers that may come with their request's id
/// or a null one) that nothing in `out` answered, by id or with a null id.
/// The answers to `owed` and to the marker `mark` answer none of them.
fn uncovered(owed: &[Id], mark: &str, or_null: &[Option<Id>], out: &[u8]) -> Vec<Id> {
    let owed = [owed, &[Id::Str(mark.to_owned())]].concat();
    let mut awaited = Awaited::or_null(owed, or_null.to_vec());
    awaited.strike(out);
    awaited.uncovered().into_iter().flatten().collect()
}

/// Whether a whole line of `out` answers `id`, as the window's wait reads
/// answers.
fn answers_in(out: &[u8], id: &Id) -> bool {
    crate::json_line::values(out).any(|v| crate::json_line::answers(&v, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_slower_than_its_bound_is_given_the_bound_twice_over() {
        // The server reads the handshake, then answers it 3.2 s after it
        // began, past the 3 s start bound: a start on a loaded machine. It
        // is confirmed with the bound twice as long, not given up as silent.
        let probes = std::sync::Arc::new(crate::probe::Probes::start(&Default::default()).expect("probes"));
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"slow","version":"0"}}}"#;
        let body = format!("read line; sleep 3.2; printf '%s\\n' '{answer}'; exec cat >/dev/null");
        let server = crate::process::Command::new("sh", ["-c", body.as_str()]);
        let waits = crate::process::Waits::from_ms(200, 10, 200).starting_within(std::time::Duration::from_secs(3));
        let target = ChildTarget::new(server, waits, Vec::new(), probes);
        match Persistent::start(&target, Revision::R2025_06_18).expect("it starts") {
            Started::Ready(p) => p.end(target.ledger()),
            Started::Silent => panic!("a start past its bound was given up"),
            Started::OtherRevision => panic!("it answered 2025-06-18"),
        }
    }

    #[test]
    fn a_script_run_is_held_once_its_history_shares_it() {
        // The server answers the handshake, then reads on and answers nothing.
        let probes = Arc::new(crate::probe::Probes::start(&Default::default()).expect("probes"));
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mute","version":"0"}}}"#;
        let body = format!("read line; printf '%s\\n' '{answer}'; exec cat >/dev/null");
        let server = crate::process::Command::new("sh", ["-c", body.as_str()]);
        let target = ChildTarget::new(server, crate::process::Waits::from_ms(200, 10, 200), Vec::new(), probes);
        let Started::Ready(mut p) = Persistent::start(&target, Revision::R2025_06_18).expect("it starts") else {
            panic!("it answered its handshake")
        };
        let spec = crate::script::ScriptSpec::whole(Revision::R2025_06_18, vec![crate::attack::Step::Control(0)]);
        let body =
            |salt| Arc::new(spec.render(&crate::Catalogue::reference(), salt).into_after_handshake().expect("a body"));
        let first = body(1);
        p.run(&first, 1, target.ledger(), (true, false)).expect("it runs");
        let second = p.run(&body(2), 2, target.ledger(), (true, false)).expect("it runs");
        let held = second.history.held();
        assert_eq!(held.len(), 1);
        assert!(Arc::ptr_eq(&held[0], &first), "the history holds the script run, not a copy");
        p.end(target.ledger());
    }

    #[test]
    fn a_history_view_keeps_what_came_before_it_and_nothing_after() {
        let script = |n| Script::handshake(Revision::ALL[n]);
        let mut process = History::default();
        let before_any = process.clone();
        process.push(script(0).into());
        let after_one = process.clone();
        process.push(script(1).into());
        assert!(before_any.scripts().is_empty());
        assert_eq!(after_one.scripts(), [script(0)]);
        assert_eq!(process.scripts(), [script(0), script(1)]);
    }
}

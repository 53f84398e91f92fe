//! One server process behind the gateway seam, over real pipes.
//!
//! stdin is written on a thread of its own, so a server that stops reading
//! blocks that thread, not the harness; stdout and stderr are drained on
//! theirs into bounded captures. A settle waits for the answers the client
//! is owed and then for output and effects to stay quiet, or for the exit
//! when one is due; every wait is bounded by the answer wait. Effects the
//! probes see are the session's when they carry its tokens (or none), and
//! go to the ledger when they carry an earlier session's.
//!
//! Dropping the gateway ends the session as a client ends it: stdin closes,
//! the server gets the exit grace to finish and exit, effects are collected
//! until they have been quiet after it, and then the whole group is ended.
//! Its effects until then are the session's: a run reads the recorder only
//! once the gateway is gone.

use super::answered::Answered;
use super::capture::Capture;
use super::group;
use super::spawn::{Home, end as end_group, spawn};
use super::{ChildTarget, Shared};
use crate::json_line::{self, Awaited, answers};
use crate::protocol::{Id, Revision};
use crate::seam::{Exit, Fault, Gateway, Recorder, Settle};
use crate::token::salts_in;
use serde_json::Value;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// What the writer thread has not written yet.
#[derive(Default)]
struct Backlog {
    /// Bytes handed to the writer thread and not yet in the pipe.
    queued: AtomicUsize,
    /// A write failed: the child closed stdin or ended.
    broken: AtomicBool,
}

/// What an ended server left: its output since last taken, how it ended,
/// how many bytes of stdout and stderr were cut for want of room, and
/// whether it outlived the exit grace and was ended by its group's signal.
pub(crate) struct Finished {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    pub(crate) exit: Exit,
    pub(crate) cut: (u64, u64),
    pub(crate) outlived_grace: bool,
    /// Whether every marker a settle wrote was answered ([`Gateway::read_past`]).
    pub(crate) read_past: bool,
}

/// One running server.
pub struct ChildGateway {
    child: Child,
    writer: Option<mpsc::Sender<Vec<u8>>>,
    backlog: Arc<Backlog>,
    /// A second handle on stdin's pipe, to ask how much of what was sent
    /// the server has not read yet; dropped when stdin closes.
    stdin_pipe: Option<std::fs::File>,
    stdout: Capture,
    stderr: Capture,
    out_taken: usize,
    err_taken: usize,
    /// Where the output of the session it serves begins: every wait for
    /// answers reads from there (or from what is not taken yet, if less),
    /// so an answer read by one wait (a retry's, for its fill) still counts
    /// for the next.
    session_from: usize,
    status: Option<ExitStatus>,
    last_write: Instant,
    /// Bytes written to stdin in this session: the waits grow with them.
    sent: usize,
    last_effect: Option<Instant>,
    closed_at: Option<Instant>,
    shared: Arc<Shared>,
    recorder: Recorder,
    /// The salts of the tokens of the session it serves: the session's own,
    /// and those of every token written to it since (a replayed history's).
    salts: Vec<u32>,
    /// Whether it has served a session: a process started ahead and never
    /// used has no effects of its own to collect when it ends.
    served: bool,
    /// Whether [`ChildGateway::end`] has run.
    ended: bool,
    /// Whether, when it ended, the server was still running past the exit
    /// grace, so that its group was sent SIGTERM (and maybe SIGKILL).
    outlived_grace: bool,
    /// Under `--effect answer`, the requests sent and the answers read.
    answered: Option<Answered>,
    /// Once the server had exited, when the last wait for quiet effects
    /// ended (quiet, or at its deadline): a later wait counts from there.
    quiet_since_exit: Option<Instant>,
    /// How many times as long as the target's its waits are.
    patience: u32,
    /// How late evidence came that its quiet waits cover.
    cover: super::waits::Cover,
    /// When the process was started, and when it was first seen to have
    /// written: the start bound runs until then ([`super::Waits::start`]).
    started: Instant,
    spoke_at: Option<Instant>,
    /// When it was first written to: its first answer, measured from
    /// then, tells how long it takes to start.
    first_write: Option<Instant>,
    /// The revision of the session it serves: a settle's marker is one of
    /// its requests.
    revision: Revision,
    /// The ids of the markers a settle wrote, and whether the answer to
    /// each has been seen; their answers are the harness's own, left out of
    /// the stdout taken ([`ChildGateway::take_stdout`]).
    marks: Vec<(Value, bool)>,
    /// Whether the bytes written so far end inside a line: a marker
    /// written then would join it.
    mid_line: bool,
    /// Taken stdout held back while a marker's answer may still be coming:
    /// the start of a line not yet whole.
    held: Vec<u8>,
    _home: Home,
}

impl ChildGateway {
    /// Starts `target`'s command for the session with token salt `salt`.
    pub(crate) fn spawn(target: &ChildTarget, salt: u32, recorder: Recorder) -> Result<ChildGateway, Fault> {
        let spawned = spawn(&target.command, target.shared.cache())?;
        if target.yields {
            super::group::lower_priority(&spawned.child);
        }
        target.shared.ledger.serves(salt);
        let mut stdin = spawned.stdin;
        let stdin_pipe = stdin.as_fd().try_clone_to_owned().ok().map(std::fs::File::from);
        let capture = target.shared.grown.now().capture;
        let (stdout, _) = Capture::start(spawned.stdout, capture);
        let (stderr, _) = Capture::start(spawned.stderr, capture);
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let backlog = Arc::new(Backlog::default());
        let (left, shared) = (backlog.clone(), target.shared.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            for chunk in rx {
                if stdin.write_all(&chunk).and_then(|_| stdin.flush()).is_err() {
                    left.broken.store(true, Ordering::Relaxed);
                    break;
                }
                shared.ledger.wrote(&chunk);
                left.queued.fetch_sub(chunk.len(), Ordering::Relaxed);
            }
        });
        Ok(ChildGateway {
            child: spawned.child,
            writer: Some(tx),
            backlog,
            stdin_pipe,
            stdout,
            stderr,
            out_taken: 0,
            err_taken: 0,
            session_from: 0,
            status: None,
            last_write: Instant::now(),
            sent: 0,
            last_effect: None,
            closed_at: None,
            shared: target.shared.clone(),
            recorder,
            salts: vec![salt],
            served: true,
            ended: false,
            outlived_grace: false,
            answered: target.answers.then(Answered::default),
            quiet_since_exit: None,
            patience: 1,
            cover: Default::default(),
            started: Instant::now(),
            spoke_at: None,
            first_write: None,
            revision: Revision::LATEST,
            marks: Vec::new(),
            mid_line: false,
            held: Vec::new(),
            _home: spawned.home,
        })
    }

    /// Whether the process has exited and its stdout closed: nothing more
    /// can come from it.
    pub(crate) fn gone(&mut self) -> bool {
        self.poll().is_some() && self.stdout.closed()
    }

    fn poll(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Makes the session it serves one of `revision`.
    pub(crate) fn serving(&mut self, revision: Revision) {
        self.revision = revision;
    }

    /// Points the process at another session: its recorder and its tokens.
    pub(crate) fn rebind(&mut self, recorder: Recorder, salt: u32) {
        self.recorder = recorder;
        self.session_from = self.stdout.len();
        self.sent = 0;
        self.salts = vec![salt];
        self.served = true;
        self.shared.ledger.serves(salt);
    }

    /// This process, kept for a later session: it serves none until
    /// [`ChildGateway::rebind`].
    pub(crate) fn unserved(mut self) -> ChildGateway {
        self.served = false;
        self
    }

    /// The waits now, for what this session sent.
    pub(crate) fn waits(&self) -> super::Waits {
        let waits = self.uncovered_waits();
        super::Waits { quiet: self.covering(waits, self.cover.running), ..waits }
    }

    /// The quiet of `waits` grown to cover evidence that came `late`,
    /// never past the answer wait.
    fn covering(&self, waits: super::Waits, late: Duration) -> Duration {
        waits.quiet.max(super::waits::covering(late)).min(waits.answer.max(waits.quiet))
    }

    /// The quiet wait once the server has exited: what it was seen to do
    /// late while it ran is no longer to be waited for (what comes later
    /// still is late evidence, judged again), unless processes it left in
    /// its group may still do it; the late evidence of a finding this
    /// session confirms is ([`super::waits::Cover`]).
    fn quiet_after_exit(&self) -> Duration {
        if group::group_alive(self.child.id()) {
            return self.waits().quiet;
        }
        self.covering(self.uncovered_waits(), self.cover.exited)
    }

    /// [`ChildGateway::waits`] without this session's cover.
    fn uncovered_waits(&self) -> super::Waits {
        self.shared.grown.now().scaled(self.patience).for_bytes(self.sent)
    }

    /// Makes the quiet waits of this session long enough to cover
    /// evidence that came as late as `cover` says.
    pub(crate) fn cover(&mut self, cover: super::waits::Cover) {
        self.cover = cover;
    }

    /// Makes every wait of this session `times` as long as the target's.
    pub(crate) fn patience(&mut self, times: u32) {
        self.patience = times.max(1);
    }

    /// Bytes of stdout and of stderr written but not kept.
    pub(crate) fn cut(&self) -> (u64, u64) {
        (self.stdout.cut(), self.stderr.cut())
    }

    /// Whether bytes sent to stdin still wait for the server to read them.
    fn stdin_unread(&self) -> bool {
        let Some(pipe) = self.stdin_pipe.as_ref() else { return false };
        if self.backlog.broken.load(Ordering::Relaxed) {
            return false;
        }
        let in_pipe = rustix::io::ioctl_fionread(pipe).unwrap_or(0) as usize;
        self.backlog.queued.load(Ordering::Relaxed) + in_pipe > 0
    }

    /// The last sign of activity: output, a write, or one of its effects.
    fn last_activity(&self) -> Instant {
        let output = self.stdout.last().max(self.stderr.last()).max(self.last_write);
        self.last_effect.map_or(output, |e| e.max(output))
    }

    /// Takes the probes' effects: this session's to its recorder, an
    /// earlier one's to the ledger; and, under `--effect answer`, the
    /// success results read since.
    pub(crate) fn collect_effects(&mut self) {
        if !self.served {
            return;
        }
        if let Some(answered) = self.answered.as_mut().filter(|a| self.stdout.len() > a.read_from()) {
            let new = self.stdout.since(answered.read_from());
            // An answer to an earlier script's request (in the persistent
            // process) stands for that script's effect: the ledger takes it.
            let now = Instant::now();
            for action in answered.effects(&new, &self.recorder.actions()) {
                if let Some(own) = self.shared.ledger.route_answered(action, now, &self.salts) {
                    self.recorder.record(own);
                    self.last_effect = Some(now);
                }
            }
        }
        for (at, action) in self.shared.probes.take() {
            if let Some(own) = self.shared.ledger.route(action, at, &self.salts) {
                self.recorder.record(own);
                self.last_effect = Some(self.last_effect.map_or(at, |e| e.max(at)));
            }
        }
        // Another session of the target that ran meanwhile (a confirming
        // one, on its own thread) may have taken this one's effects from
        // the probes: the ledger kept them for it.
        for own in self.shared.ledger.take_strays(&self.salts) {
            self.recorder.record(own);
            self.last_effect = Some(Instant::now());
        }
    }

    /// Takes effects until none has come for `quiet`, at most until
    /// `deadline`. The quiet is counted from the end of the last such wait
    /// after the server exited, when there was one: effects are watched
    /// without a break since then, so that time counts.
    fn effects_until_quiet(&mut self, quiet: Duration, deadline: Instant) {
        let from = self.quiet_since_exit.unwrap_or_else(Instant::now);
        loop {
            self.collect_effects();
            let latest = self.shared.probes.last_effect().into_iter().chain(self.last_effect).fold(from, Instant::max);
            // Once portcullis is stopping, what its sessions show is no
            // finding: nothing is left to wait for.
            if latest.elapsed() >= quiet || Instant::now() >= deadline || super::spawn::stopping() {
                if self.status.is_some() {
                    self.quiet_since_exit = Some(latest);
                }
                return;
            }
            std::thread::sleep(quiet.saturating_sub(latest.elapsed()).min(Duration::from_millis(2)));
        }
    }

    /// Writes a marker request of the session's revision, its answer to be
    /// left out of the stdout taken; returns its id.
    fn write_marker(&mut self) -> Result<Vec<Id>, Fault> {
        let mark = format!("portcullis-settle-{}", self.marks.len() + 1);
        self.write_stdin(&self.revision.marker(&mark))?;
        self.marks.push((Value::from(mark.as_str()), false));
        Ok(vec![Id::Str(mark)])
    }

    /// `new`, the stdout just taken, after what was held, without the
    /// first answer to each marker a settle wrote. While one's answer has
    /// not been seen, the start of a line not yet whole is held back: it
    /// may be that answer. Once stdout is closed (the server exited and
    /// its pipe drained), or the session finishes
    /// ([`ChildGateway::finish_with_exit`]), it is handed out.
    fn without_marks(&mut self, new: Vec<u8>) -> Vec<u8> {
        let out = [std::mem::take(&mut self.held), new].concat();
        let whole = json_line::whole(&out);
        let mut kept = out[..whole].to_vec();
        for (mark, seen) in self.marks.iter_mut().filter(|(_, seen)| !*seen) {
            let without = json_line::without_answer(&kept, mark);
            *seen = without.len() < kept.len();
            kept = without;
        }
        match self.marks.iter().all(|(_, seen)| *seen) || self.stdout.closed() {
            true => kept.extend_from_slice(&out[whole..]),
            false => self.held = out[whole..].to_vec(),
        }
        kept
    }

    /// Where a wait for answers begins to read: the session's output, and
    /// any not taken yet from before it.
    fn answers_from(&self) -> usize {
        self.session_from.min(self.out_taken)
    }

    /// Reads the stdout lines from `scanned` on for answers, forgets the
    /// owed ids they answer, and moves `scanned` past them.
    fn read_answers(&mut self, owed: &mut Awaited, scanned: &mut usize) {
        self.note_spoke();
        let new = self.stdout.since(*scanned);
        let used = json_line::whole(&new);
        owed.strike(&new[..used]);
        *scanned += used;
    }

    /// Waits until the answer to request `id` has come (or the bound, which
    /// runs from when the process first wrote: see [`Waits::start`]), and
    /// returns it; stdout stays to be taken.
    pub(crate) fn await_answer(&mut self, id: Id, bound: Duration) -> Option<Value> {
        self.await_answer_patiently(id, bound, 1)
    }

    /// [`ChildGateway::await_answer`] with the start bound `patience`
    /// times as long.
    pub(crate) fn await_answer_patiently(&mut self, id: Id, bound: Duration, patience: u32) -> Option<Value> {
        let from = Instant::now();
        if !self.await_until(Awaited::ids(vec![id.clone()]), |me| me.answers_due(from, bound, patience)) {
            return None;
        }
        let out = self.stdout.since(self.out_taken);
        json_line::values(&out).find(|v| answers(v, &id))
    }

    /// Waits until every `owed` answer has come, the server has exited, or
    /// `deadline` passes, taking effects meanwhile; whether all came.
    pub(crate) fn await_owed(&mut self, owed: Awaited, deadline: Instant) -> bool {
        self.await_until(owed, |_| deadline)
    }

    /// [`ChildGateway::await_owed`] until the deadline `due` gives now.
    fn await_until(&mut self, mut owed: Awaited, due: impl Fn(&mut ChildGateway) -> Instant) -> bool {
        let mut scanned = self.answers_from();
        loop {
            self.collect_effects();
            self.read_answers(&mut owed, &mut scanned);
            if owed.is_empty() {
                return true;
            }
            let deadline = due(self);
            if self.gone() || Instant::now() >= deadline {
                return false;
            }
            self.stdout.wait_past(self.stdout.len(), deadline.min(Instant::now() + Duration::from_millis(2)));
        }
    }

    /// Notes that a request this process owed at once took `took` to be
    /// answered: the target's answer wait grows with it.
    pub(crate) fn answered_in(&self, took: Duration) {
        self.shared.grown.answered_in(took);
    }

    /// When the latest bytes it wrote to stdout (and, with `stderr`, to
    /// either) were read: no later than that came any output taken so far.
    /// Evidence taken after a while (a script's late output, read as the
    /// next begins) is stamped with it, never with the time it was taken.
    pub(crate) fn output_at(&self, stderr: bool) -> Instant {
        let out = self.stdout.last();
        if stderr { out.max(self.stderr.last()) } else { out }
    }

    /// Notes when the process is first seen to have written, and how long
    /// after it was first written to: the target's start bound grows with
    /// it.
    fn note_spoke(&mut self) {
        if self.spoke_at.is_none() && self.stdout.len() > 0 {
            let now = Instant::now();
            self.spoke_at = Some(now);
            let asked = self.first_write.unwrap_or(self.started);
            self.shared.grown.started_in(now.saturating_duration_since(asked));
        }
    }

    /// Whether its stdout has closed: everything it wrote there is in.
    pub(crate) fn stdout_closed(&self) -> bool {
        self.stdout.closed()
    }

    /// Whether the process has written anything to stdout.
    pub(crate) fn wrote_anything(&self) -> bool {
        self.stdout.len() > 0
    }

    /// When a wait for answers that began at `from` ends: `answer` after
    /// `from`, or after the process first wrote when that came later;
    /// while it has written nothing, no sooner than the start bound
    /// (`patience` times over) after it started.
    fn answers_due(&mut self, from: Instant, answer: Duration, patience: u32) -> Instant {
        self.note_spoke();
        match self.spoke_at {
            Some(at) => from.max(at) + answer,
            None => (from + answer).max(self.started + self.waits().start * patience),
        }
    }

    /// Takes effects until each of `tokens` is in one of this session's,
    /// or `deadline` passes.
    pub(crate) fn await_tokens(&mut self, tokens: &[String], deadline: Instant) {
        loop {
            self.collect_effects();
            let seen: Vec<String> = self.recorder.actions().iter().map(|a| a.arguments_text()).collect();
            // Once portcullis is stopping, no effect is left to wait for.
            let all = tokens.iter().all(|t| seen.iter().any(|s| s.contains(t.as_str())));
            if all || Instant::now() >= deadline || super::spawn::stopping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Its temporary HOME.
    pub(crate) fn home(&self) -> &std::path::Path {
        self._home.path()
    }

    /// Ends the session as dropping it does, and returns the stdout and
    /// stderr written since they were last taken, an exit's last words too.
    pub(crate) fn finish(self) -> (Vec<u8>, Vec<u8>) {
        let finished = self.finish_with_exit();
        (finished.stdout, finished.stderr)
    }

    /// [`ChildGateway::finish`], and how the process ended.
    pub(crate) fn finish_with_exit(mut self) -> Finished {
        self.end();
        self.stdout.wait_closed(Instant::now() + Duration::from_millis(100));
        self.stderr.wait_closed(Instant::now() + Duration::from_millis(100));
        let exit = self.exit();
        let stdout = self.take_stdout();
        let stdout = [stdout, std::mem::take(&mut self.held)].concat();
        let stderr = self.take_stderr();
        let (cut, outlived_grace, read_past) = (self.cut(), self.outlived_grace, self.read_past());
        Finished { stdout, stderr, exit, cut, outlived_grace, read_past }
    }

    /// Closes stdin, gives the server the exit grace to exit, collects its
    /// effects until quiet after that, and ends its group.
    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        let _ = self.close_stdin();
        let waits = self.waits();
        let closed = self.closed_at.unwrap_or_else(Instant::now);
        let own = (closed + waits.exit_grace).saturating_duration_since(Instant::now());
        let started = Instant::now();
        self.status = self.status.or_else(|| group::wait_for(&mut self.child, own));
        self.outlived_grace = self.status.is_none();
        // Effects still in delivery, or of processes the server left running;
        // a process that served no session has none to wait for.
        if self.served {
            let quiet = match self.status {
                Some(_) => self.quiet_after_exit(),
                None => waits.quiet,
            };
            self.effects_until_quiet(quiet, started + waits.answer);
        }
        let grace = waits.quiet.max(Duration::from_millis(100)).min(waits.answer);
        self.status = end_group(&mut self.child, Duration::ZERO, grace).or(self.status);
        self.collect_effects();
    }
}

impl ChildGateway {
    /// Notes a write of `bytes` (when, how much, whether it ends a line,
    /// the answers and salts it carries): whether it is then queued for
    /// the writer, which it is not once stdin is closed or the pipe broke.
    fn note_write(&mut self, bytes: &[u8]) -> bool {
        self.last_write = Instant::now();
        self.first_write.get_or_insert(self.last_write);
        self.sent += bytes.len();
        if let Some(last) = bytes.last() {
            self.mid_line = *last != b'\n';
        }
        // Room for an answer that echoes what was written, twice over (an
        // escaped echo), beside the capture bound.
        self.stdout.allow(2 * bytes.len());
        if let Some(answered) = &mut self.answered {
            answered.written(bytes);
        }
        // Tokens of other salts written here are this session's too: their
        // effects are its own, and, late, no later session's.
        for salt in salts_in(bytes) {
            if !self.salts.contains(&salt) {
                self.salts.push(salt);
                self.shared.ledger.serves(salt);
            }
        }
        self.writer.is_some() && !self.backlog.broken.load(Ordering::Relaxed)
    }

    /// Queues `bytes` for the writer. A closed channel means the writer
    /// saw the pipe break: the server stopped reading or ended, which is
    /// the server's business.
    fn queue(&mut self, bytes: Vec<u8>) {
        if let Some(w) = &self.writer {
            self.backlog.queued.fetch_add(bytes.len(), Ordering::Relaxed);
            let _ = w.send(bytes);
        }
    }
}

impl Gateway for ChildGateway {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        if self.note_write(bytes) {
            self.queue(bytes.to_vec());
        }
        Ok(())
    }

    /// The bytes go to the writer as they are: a call of 32 MiB is not
    /// copied on its way.
    fn write_stdin_owned(&mut self, bytes: Vec<u8>) -> Result<(), Fault> {
        if self.note_write(&bytes) {
            self.queue(bytes);
        }
        Ok(())
    }

    fn close_stdin(&mut self) -> Result<(), Fault> {
        self.writer = None;
        self.stdin_pipe = None;
        self.last_write = Instant::now();
        self.closed_at.get_or_insert(self.last_write);
        Ok(())
    }

    fn take_stdout(&mut self) -> Vec<u8> {
        let new = self.stdout.since(self.out_taken);
        self.out_taken += new.len();
        match self.marks.is_empty() {
            true => new,
            false => self.without_marks(new),
        }
    }

    fn take_stderr(&mut self) -> Vec<u8> {
        let new = self.stderr.since(self.err_taken);
        self.err_taken += new.len();
        new
    }

    fn exit(&mut self) -> Exit {
        match self.poll() {
            None => Exit::Running,
            Some(s) => match (s.code(), s.signal()) {
                (Some(code), _) => Exit::Exited(code),
                (None, Some(sig)) => Exit::Crashed(format!("killed by signal {sig}")),
                (None, None) => Exit::Crashed("ended without a status".into()),
            },
        }
    }

    /// Waits for the owed answers, then for output and effects to stay
    /// quiet; or, when an exit is due, for the exit, the grace counted from
    /// when the server has read everything it was sent. A server still
    /// starting has read nothing, and gets the answer wait. Once it has
    /// exited, its pipes drain and its effects are collected until quiet.
    fn settle(&mut self, settle: &Settle) -> Result<(), Fault> {
        let waits = self.waits();
        let from = Instant::now();
        // Under keep-open, what may come with a null id is left to the
        // quiet wait and to late output: a server that never sends it would
        // hold every such session to its deadline. A confirming session
        // (longer waits) awaits it where the request's id was readable:
        // what it confirms missing was missing at its deadline, not only
        // through a quiet wait.
        // After the script of a session that may go on (keep-open, auto),
        // a marker request written and answered shows that the server has
        // read past every frame; unanswered while the server runs on, that
        // it stalled (its reader died on a frame, say), and the frames after
        // the last it answered are not judged as read
        // ([`crate::check::Facts::stalled_at`]). A script that ends inside a
        // line (a frame cut at EOF) gets none: it would join that line.
        let marker = match settle.marked && !settle.expect_exit && !self.mid_line {
            true => self.write_marker()?,
            false => Vec::new(),
        };
        let owed_ids = [settle.owed.clone(), marker.clone()].concat();
        let mut owed = match (settle.or_null_later, self.patience) {
            (false, _) => Awaited::of(settle).and(marker),
            (true, 1) => Awaited::ids(owed_ids),
            (true, _) => Awaited::or_null(owed_ids, settle.owed_or_null.clone()),
        };
        let mut caught_up = Instant::now();
        let mut scanned = self.answers_from();
        loop {
            let deadline = self.answers_due(from, waits.answer, 1);
            if Instant::now() >= deadline {
                break;
            }
            self.collect_effects();
            if self.poll().is_some() {
                let drained = deadline.min(Instant::now() + waits.exit_grace);
                self.stdout.wait_closed(drained);
                self.stderr.wait_closed(drained);
                self.effects_until_quiet(self.quiet_after_exit(), deadline);
                return Ok(());
            }
            self.read_answers(&mut owed, &mut scanned);
            let behind = self.stdin_unread();
            if behind {
                caught_up = Instant::now();
            }
            let done = match settle.expect_exit {
                true => !behind && caught_up.elapsed() >= waits.exit_grace,
                false => owed.is_empty() && !behind && self.last_activity().elapsed() >= waits.quiet,
            };
            if done {
                break;
            }
            match self.stdout.closed() {
                true => {
                    group::wait_for(&mut self.child, Duration::from_millis(2));
                }
                false => self.stdout.wait_past(self.stdout.len(), Instant::now() + Duration::from_millis(2)),
            }
        }
        self.collect_effects();
        Ok(())
    }

    /// Whether every marker a settle wrote has been answered, in the
    /// stdout taken so far.
    fn read_past(&self) -> bool {
        self.marks.iter().all(|(_, seen)| *seen)
    }
}

impl Drop for ChildGateway {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use crate::json_line::Awaited;
    use crate::probe::{ProbeConfig, Probes};
    use crate::process::{ChildTarget, Waits};
    use crate::protocol::{Id, Policy, Revision};
    use crate::seam::{Gateway, Recorder, Session, Target};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// `cat` as a target, which echoes what it is sent, and a session of it.
    fn cat(waits: Waits) -> (ChildTarget, Session) {
        let probes = Arc::new(Probes::start(&ProbeConfig::default()).expect("probes"));
        let cat = crate::process::Command::new("cat", Vec::<String>::new());
        let session = Session { policy: Policy::KeepOpen, revision: Revision::LATEST, salt: 1 };
        (ChildTarget::new(cat, waits, Vec::new(), probes), session)
    }

    #[test]
    fn a_wait_counts_an_answer_an_earlier_wait_of_its_session_read() {
        // `cat` answers a request with the answer it is sent. The wait for
        // a retry's fill reads the answer; the session's stdout is taken;
        // a later wait for the same answer (the session's last), whose
        // deadline has passed already, still finds it come.
        let (target, session) = cat(Waits::default());
        let mut gateway = target.start(&session, Recorder::new()).expect("cat starts");
        gateway.write_stdin(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n").expect("written");
        let owed = || Awaited::ids(vec![Id::Int(4)]);
        assert!(gateway.await_owed(owed(), Instant::now() + Duration::from_secs(30)), "cat echoes it");
        assert!(!gateway.take_stdout().is_empty());
        assert!(gateway.await_owed(owed(), Instant::now()), "read by the first wait, it counts for the second");
    }

    #[test]
    fn a_settle_under_keep_open_writes_its_marker_on_a_line_of_its_own_only() {
        // `cat` echoes the marker request back (a request, no answer): the
        // server was not shown to have read past. Written inside a line (a
        // frame cut at EOF), a marker would join it: none is written.
        let (target, session) = cat(Waits::from_ms(2_000, 10, 200));
        let settle = crate::seam::Settle::new(Vec::new(), false).or_null(vec![None]).or_null_later(true).marked(true);
        let mut whole = target.start(&session, Recorder::new()).expect("cat starts");
        whole.write_stdin(b"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}\n").expect("written");
        whole.settle(&settle).expect("settled");
        assert!(String::from_utf8_lossy(&whole.take_stdout()).contains("\"portcullis-settle-1\""));
        assert!(!whole.read_past(), "an echo is no answer");
        // The start of a line is held back while the marker may still be
        // answered, and handed out once the server has exited.
        whole.write_stdin(b"tail").expect("written");
        whole.close_stdin().expect("closed");
        whole.settle(&crate::seam::Settle::new(Vec::new(), true)).expect("settled");
        assert!(whole.take_stdout().ends_with(b"tail"), "nothing is held back past the end");
        let mut cut = target.start(&session, Recorder::new()).expect("cat starts");
        cut.write_stdin(b"{\"jsonrpc\":\"2.0\",\"id\":true,").expect("written");
        cut.settle(&settle).expect("settled");
        assert!(!String::from_utf8_lossy(&cut.take_stdout()).contains("portcullis-settle"), "no marker joins the line");
        assert!(cut.read_past(), "none awaited");
    }

    #[test]
    fn the_lines_written_are_counted_once_each_and_none_after_stdin_closed() {
        let (target, session) = cat(Waits::default());
        let mut gateway = target.start(&session, Recorder::new()).expect("cat starts");
        // Three lines, one of them split across two writes, and a start
        // of a line that never ends.
        for chunk in [&b"a\nb"[..], b"b\n", b"c\nd"] {
            gateway.write_stdin(chunk).expect("written");
        }
        gateway.close_stdin().expect("closed");
        gateway.write_stdin(b"e\n").expect("a write after the end is no error");
        // The writer counts each write once it has gone through: a bounded
        // wait for the third line.
        for _ in 0..3_000 {
            if target.ledger().lines_written() >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        gateway.settle(&crate::seam::Settle::new(Vec::new(), true)).expect("settled");
        assert_eq!(target.ledger().lines_written(), 3);
    }
}

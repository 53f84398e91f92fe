//! A child process behind the gateway seam, over real pipes.
//!
//! Each session spawns the command in its own process group, with a scrubbed
//! environment (PATH, LANG, HOME set to a fresh temporary folder, a package
//! cache the target's processes share, plus what the user passes through).
//! stdin is written on its own thread; stdout and
//! stderr are drained on theirs into bounded captures; every wait is
//! bounded; and the session ends with stdin closed, then SIGTERM, then
//! SIGKILL to the whole group, so no process is left behind and no target
//! that stops reading or floods its output can stall the harness.
//!
//! Effect probes play the executor recorder: whatever they observe while the
//! session runs is handed to the session's [`Recorder`] when it settles.

mod affinity;
mod ahead;
mod busy;
mod capture;
mod discover;
mod group;
mod homes;
mod late_calls;
mod members;
mod owed;
mod quick;
mod reply;
mod shared;

pub use affinity::pin_job;
pub use capture::Capture;
pub use discover::list_tools;
pub use shared::{Off, SharedChild, Sharing};

use crate::attack::tokens_in;
use crate::catalogue::{Catalogue, ToolSpec};
use crate::probe::Probes;
use crate::seam::{Action, Awaited, Exit, Fault, Gateway, Recorder, Session, Target};
use std::collections::VecDeque;
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The command to run and the environment it gets.
#[derive(Clone, Debug)]
pub struct Command {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables for the child besides PATH, LANG, HOME and the package
    /// cache (`XDG_CACHE_HOME`, `npm_config_cache`): a value, or `None` to
    /// pass the harness's own value through. They may set those too.
    pub env: Vec<(String, Option<String>)>,
}

/// The bounds of one session.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The longest any one wait may take.
    pub timeout: Duration,
    /// How long output and effects must stay quiet to count as settled.
    pub quiet: Duration,
    /// How long a child may take to exit once it should (after stdin
    /// closes, or after a frame that must close the session), counted from
    /// when it has read all it was sent.
    pub exit_grace: Duration,
    /// How long a child may leave what it was sent unread (still starting,
    /// say) before it counts as stalled and is waited for no longer.
    pub stall: Duration,
    /// Bytes of stdout, and of stderr, kept per session.
    pub capture: usize,
}

impl Limits {
    /// How long effects may still be in delivery once a child and every
    /// process it started are gone, until the server has shown otherwise.
    fn after_exit(&self) -> Duration {
        self.quiet / 5
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(5),
            quiet: Duration::from_millis(10),
            exit_grace: Duration::from_secs(1),
            stall: Duration::from_secs(1),
            capture: 8 << 20,
        }
    }
}

/// Starts one child per session.
#[derive(Clone)]
pub struct ChildTarget {
    /// What to run.
    pub command: Command,
    /// The bounds.
    pub limits: Limits,
    /// The tools to call.
    pub catalogue: Catalogue,
    /// The probes that observe effects.
    pub probes: Arc<Probes>,
    /// Effects set aside because they carry only another session's tokens.
    pub late_effects: Arc<AtomicUsize>,
    /// Valid calls of earlier scripts still to act, whose late effects are
    /// theirs rather than counted late.
    late_calls: Arc<late_calls::LateCalls>,
    homes: Arc<homes::Homes>,
    /// How slow the server has been to answer, learned across sessions.
    latency: Arc<owed::Latency>,
    /// How many processes to keep spawned ahead of fresh sessions.
    ahead: usize,
    /// Those processes, oldest first (see the `ahead` module).
    spares: Arc<Mutex<VecDeque<ChildGateway>>>,
}

impl ChildTarget {
    /// A target running `command` that calls `tools`, with their canary URLs
    /// on the probes' HTTP sink and no late effect counted yet.
    pub fn new(command: Command, limits: Limits, tools: Vec<ToolSpec>, probes: Arc<Probes>) -> ChildTarget {
        let catalogue = Catalogue { tools, canary_base: probes.http_base() };
        let late_effects = Arc::new(AtomicUsize::new(0));
        ChildTarget {
            command,
            limits,
            catalogue,
            probes,
            late_effects,
            late_calls: Arc::default(),
            homes: Arc::default(),
            latency: Arc::default(),
            ahead: 0,
            spares: Arc::default(),
        }
    }
}

impl Target for ChildTarget {
    type Gateway = ChildGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    fn start(&self, session: &Session, recorder: Recorder) -> Result<ChildGateway, Fault> {
        self.set_aside_stale();
        self.fresh_process(session, recorder)
    }
}

impl ChildTarget {
    /// This target, learning how fast the server answers together with
    /// `other` (the positive control's target, say, whose call is the first
    /// measure of how long one takes): both wait for answers by what either
    /// has seen.
    pub fn learning_with(mut self, other: &ChildTarget) -> ChildTarget {
        self.latency = other.latency.clone();
        self
    }

    /// How long a session waits for answers that come only if the server
    /// misread a must-reject frame as a call ([`owed::Latency::brief`]).
    pub(crate) fn misread_wait(&self) -> Duration {
        self.latency.brief(&self.limits)
    }

    /// Effects still arriving from an earlier session are not the next
    /// one's: they are counted as late and dropped.
    fn set_aside_stale(&self) {
        for effect in self.probes.settle(Duration::ZERO, Duration::ZERO) {
            self.late_calls.set_aside(&effect, &self.late_effects);
        }
    }

    /// A process for a session of its own, like [`Target::start`], but
    /// taken from `spare` (spawned ahead, so it started meanwhile) when one
    /// is there and still running; a new spare is spawned for next time if
    /// `another` is wanted. The caller binds it to its session
    /// ([`ChildGateway::rebind`]).
    pub(crate) fn start_from(&self, spare: &mut Option<ChildGateway>, another: bool) -> Result<ChildGateway, Fault> {
        self.set_aside_stale();
        let ready = spare.take().and_then(|mut c| c.poll().is_none().then_some(c));
        let child = match ready {
            Some(child) => {
                affinity::join_chain(child.id());
                child
            }
            None => ChildGateway::spawn(self, 0, Recorder::new(), false)?,
        };
        if another {
            *spare = ChildGateway::spawn(self, 0, Recorder::new(), true).ok();
        }
        Ok(child)
    }
}

/// Bytes a pipe always holds: its buffer is at least one page.
const SURE_FIT: usize = 4096;

/// What the writer thread has not written yet.
#[derive(Default)]
struct Backlog {
    /// Bytes handed to the writer thread and not yet in the pipe.
    queued: AtomicUsize,
    /// A write failed: the child closed stdin or ended, and reads no more.
    broken: AtomicBool,
}

/// One running child.
pub struct ChildGateway {
    child: Child,
    writer: Option<mpsc::Sender<Vec<u8>>>,
    backlog: Arc<Backlog>,
    /// A second handle on stdin's pipe, to ask how many bytes in it the
    /// child has not read, and to write what surely fits without the writer
    /// thread; dropped when stdin closes.
    stdin_pipe: Option<std::fs::File>,
    stdout: Capture,
    stderr: Capture,
    out_taken: usize,
    err_taken: usize,
    status: Option<ExitStatus>,
    last_write: Instant,
    /// When stdin was closed, if it was.
    closed_at: Option<Instant>,
    limits: Limits,
    /// How long effects may still be in delivery once the child and every
    /// process it started are gone.
    pub(crate) after_exit: Duration,
    /// Whether that wait was made once the child and every process it
    /// started were gone: nothing of theirs can still be on its way after.
    delivered: bool,
    /// Bytes handed to stdin so far.
    sent: usize,
    probes: Arc<Probes>,
    recorder: Recorder,
    salt: u32,
    late_effects: Arc<AtomicUsize>,
    late_calls: Arc<late_calls::LateCalls>,
    home: Option<tempfile::TempDir>,
    homes: Arc<homes::Homes>,
    /// The answers the session waits for before it settles.
    owed: owed::Owed,
    latency: Arc<owed::Latency>,
    /// The child and the processes it started ([`members::subtree`]), found
    /// once it has answered: a launcher's server is among them by then.
    server: std::cell::OnceCell<Vec<u32>>,
}

impl ChildGateway {
    /// Spawns the target's command. A process started `ahead` of its use
    /// starts on whichever core is free (see [`affinity`]); the threads
    /// that serve it keep to the caller's.
    fn spawn(target: &ChildTarget, salt: u32, recorder: Recorder, ahead: bool) -> Result<ChildGateway, Fault> {
        let home = tempfile::tempdir().map_err(|e| Fault::Spawn(format!("temporary HOME: {e}")))?;
        let cmd = &target.command;
        let mut command = std::process::Command::new(&cmd.program);
        command.args(&cmd.args).env_clear().env("HOME", home.path());
        command.env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
        command.env("LANG", std::env::var_os("LANG").unwrap_or_else(|| "C.UTF-8".into()));
        if let Some(cache) = target.homes.cache() {
            command.env("XDG_CACHE_HOME", cache).env("npm_config_cache", cache.join("npm"));
        }
        for (key, value) in &cmd.env {
            match value {
                Some(v) => command.env(key, v),
                None => match std::env::var_os(key) {
                    Some(v) => command.env(key, v),
                    None => &mut command,
                },
            };
        }
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut child = command.spawn().map_err(|e| Fault::Spawn(format!("{}: {e}", cmd.program)))?;
        if ahead {
            affinity::leave_chain(child.id());
        }
        let (stdin, out, err) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(mut stdin), Some(out), Some(err)) = (stdin, out, err) else {
            return Err(Fault::Spawn("the child's pipes were not set up".into()));
        };
        let stdin_pipe = stdin.as_fd().try_clone_to_owned().ok().map(std::fs::File::from);
        let (stdout, _) = Capture::start(out, target.limits.capture);
        let (stderr, _) = Capture::start(err, target.limits.capture);
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let backlog = Arc::new(Backlog::default());
        let left = backlog.clone();
        // The writer runs apart: a child that stops reading blocks it, not
        // the harness. It ends when the channel closes or a write fails.
        std::thread::spawn(move || {
            use std::io::Write;
            for chunk in rx {
                if stdin.write_all(&chunk).and_then(|_| stdin.flush()).is_err() {
                    left.broken.store(true, Ordering::Relaxed);
                    break;
                }
                left.queued.fetch_sub(chunk.len(), Ordering::Relaxed);
            }
        });
        Ok(ChildGateway {
            child,
            writer: Some(tx),
            backlog,
            stdin_pipe,
            stdout,
            stderr,
            out_taken: 0,
            err_taken: 0,
            status: None,
            last_write: Instant::now(),
            closed_at: None,
            limits: target.limits,
            after_exit: target.limits.after_exit(),
            delivered: false,
            sent: 0,
            probes: target.probes.clone(),
            recorder,
            salt,
            late_effects: target.late_effects.clone(),
            late_calls: target.late_calls.clone(),
            home: Some(home),
            homes: target.homes.clone(),
            owed: owed::Owed::default(),
            latency: target.latency.clone(),
            server: std::cell::OnceCell::new(),
        })
    }

    fn poll(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// The child's process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child and the processes it started, in its group, found at the
    /// first call: call it once the child has answered, when a launcher has
    /// started its server. The server's processes do not change once it
    /// serves, so they are not looked for again.
    pub(crate) fn server(&self) -> &[u32] {
        let pgid = self.id();
        self.server.get_or_init(|| members::subtree(pgid, pgid))
    }

    /// Waits until stdout has bytes not yet taken, or `until` passes.
    pub(crate) fn wait_stdout(&self, until: Instant) {
        self.stdout.wait_past(self.out_taken, until);
    }

    /// Forgets the output already taken, so a process that lives for many
    /// sessions never fills its captures.
    pub(crate) fn forget_taken(&self) {
        self.stdout.forget_before(self.out_taken);
        self.stderr.forget_before(self.err_taken);
    }

    /// Points the gateway at another session's recorder and tokens (a
    /// shared process serving one script after another).
    pub(crate) fn rebind(&mut self, recorder: Recorder, salt: u32) {
        self.recorder = recorder;
        self.salt = salt;
    }

    /// How many bytes written to stdin still wait for the child to read
    /// them (queued for the writer thread, or in the pipe); `None` once
    /// stdin is closed or broken.
    fn unread(&self) -> Option<usize> {
        let pipe = self.stdin_pipe.as_ref()?;
        if self.backlog.broken.load(Ordering::Relaxed) {
            return None;
        }
        let in_pipe = rustix::io::ioctl_fionread(pipe).unwrap_or(0) as usize;
        Some(self.backlog.queued.load(Ordering::Relaxed) + in_pipe)
    }

    /// Whether bytes written to stdin still wait for the child to read them:
    /// it has not caught up (it may still be starting).
    fn stdin_unread(&self) -> bool {
        self.unread().is_some_and(|n| n > 0)
    }

    /// Whether the child has read nothing of what it was sent: it is still
    /// starting, most likely. (A write still under way counts both queued
    /// and in the pipe, so what is unread can look larger than what was
    /// sent.)
    fn read_nothing(&self) -> bool {
        self.sent > 0 && self.unread().is_some_and(|n| n >= self.sent)
    }

    /// The last sign of activity: output, a write, or an effect.
    fn last_activity(&self) -> Instant {
        let output = self.stdout.last().max(self.stderr.last()).max(self.last_write);
        self.probes.last_effect().map_or(output, |e| e.max(output))
    }

    /// Hands the probes' effects to the recorder once none has come for
    /// `quiet`, setting aside those that carry only tokens of other sessions:
    /// counted as late, unless an earlier script's valid call acts late.
    pub(crate) fn collect_effects(&mut self, quiet: Duration) {
        self.collect_effects_after(Instant::now(), quiet);
    }

    /// As [`ChildGateway::collect_effects`], the quiet counted from `from`
    /// or the latest effect's arrival, whichever is later.
    pub(crate) fn collect_effects_after(&mut self, from: Instant, quiet: Duration) {
        let own = format!("pc{:08x}", self.salt);
        for effect in self.probes.settle_after(from, quiet, self.limits.timeout) {
            let text = effect.arguments_text();
            let mut tokens = tokens_in(&text).peekable();
            let foreign = tokens.peek().is_some() && tokens.all(|t| !t.starts_with(&own));
            if foreign {
                self.late_calls.set_aside(&effect, &self.late_effects);
            } else {
                self.recorder.record(Action { tool: effect.tool, arguments: effect.arguments });
            }
        }
    }
}

impl Gateway for ChildGateway {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        self.last_write = Instant::now();
        let Some(w) = &self.writer else { return Ok(()) };
        if self.backlog.broken.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.sent += bytes.len();
        // With nothing queued, bytes that fit in the smallest pipe buffer
        // besides what the child has not read yet cannot block: written
        // here, they skip a hop through the writer thread.
        if let Some(pipe) = &self.stdin_pipe
            && self.backlog.queued.load(Ordering::Relaxed) == 0
            && rustix::io::ioctl_fionread(pipe).is_ok_and(|unread| unread as usize + bytes.len() <= SURE_FIT)
        {
            use std::io::Write;
            if (&*pipe).write_all(bytes).is_err() {
                self.backlog.broken.store(true, Ordering::Relaxed);
            }
            return Ok(());
        }
        // A closed channel means the writer saw the pipe break: the child
        // stopped reading or ended, which is the child's business.
        self.backlog.queued.fetch_add(bytes.len(), Ordering::Relaxed);
        let _ = w.send(bytes.to_vec());
        Ok(())
    }

    fn await_answers(&mut self, awaited: Awaited) {
        self.owed.add(awaited);
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
        new
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

    fn cut(&self) -> (u64, u64) {
        (self.stdout.cut(), self.stderr.cut())
    }

    fn settle(&mut self, expect_exit: bool) -> Result<(), Fault> {
        self.settle_then(expect_exit, false)
    }

    fn settle_before_eof(&mut self, expect_exit: bool) -> Result<(), Fault> {
        self.settle_then(expect_exit, true)
    }
}

impl ChildGateway {
    /// [`Gateway::settle`], knowing whether EOF and another settle follow.
    fn settle_then(&mut self, expect_exit: bool, eof_next: bool) -> Result<(), Fault> {
        let deadline = Instant::now() + self.limits.timeout;
        let (quiet, grace) = (self.limits.quiet, self.limits.exit_grace.min(self.limits.timeout));
        // While the child leaves stdin unread it has not caught up, and a
        // child still starting may stay silent that long: calm, and the exit
        // grace, count from when it has read everything, and a child that
        // reads nothing for the stall bound is waited for no longer.
        let mut caught_up = Instant::now();
        let mut behind_since = None;
        // A session that expects no exit waits for the answers it is owed
        // too: EOF would cancel a call still in flight (see [`owed`]). And,
        // briefly, for those that come only if it misread a must-reject
        // frame as a call, whose effect EOF would cancel too.
        let mut answered = expect_exit || self.owed.answered(&self.stdout);
        let mut possible = expect_exit || !self.owed.possible_pending();
        let answer_bound = self.latency.bound(&self.limits);
        // A child still at work when its grace runs out gets until the
        // deadline while it stays busy (see [`busy`]).
        let mut busy = expect_exit.then(|| busy::Busy::watch(self.child.id()));
        while Instant::now() < deadline {
            if self.poll().is_some() {
                // Let the pipes drain: they close once every holder is gone
                // (a process the child left running may hold them).
                let drained = deadline.min(Instant::now() + grace);
                self.stdout.wait_closed(drained);
                self.stderr.wait_closed(drained);
                // What is still on its way comes from processes the child
                // left running, or is in delivery, unless that wait was
                // made already (a session that ended before EOF settles
                // again after it).
                let wait = match group::alive(&self.child) {
                    true => quiet,
                    false if self.delivered => Duration::ZERO,
                    false => self.after_exit,
                };
                self.collect_effects(wait);
                self.delivered = !group::alive(&self.child);
                return Ok(());
            }
            let behind = self.stdin_unread();
            if behind {
                caught_up = Instant::now();
            }
            // A child that has read nothing yet is still starting: it gets
            // the timeout, not the stall bound (a Python server may take a
            // second and more before it reads a line).
            let stall = if self.read_nothing() { self.limits.timeout } else { self.limits.stall };
            let stalled = behind && behind_since.get_or_insert(caught_up).elapsed() >= stall;
            if (!answered || !possible) && !behind {
                if self.owed.answered(&self.stdout) && !answered {
                    answered = true;
                    self.latency.record(caught_up.elapsed(), self.owed.with_calls());
                }
                possible = !self.owed.possible_pending();
            }
            let done = match expect_exit {
                true => !behind && caught_up.elapsed() >= grace && !busy.as_mut().is_some_and(busy::Busy::busy),
                false => {
                    let calm = self.last_activity().max(caught_up).elapsed() >= quiet;
                    let waited = |bound| !behind && caught_up.elapsed() >= bound;
                    calm && (answered || waited(answer_bound)) && (possible || waited(self.latency.brief(&self.limits)))
                }
            };
            if done || stalled {
                break;
            }
            if !behind {
                behind_since = None;
            }
            // Woken by output, by stdout closing as an exiting child's does,
            // then by the exit; a look at least every 2 ms all the same.
            match self.stdout.closed() {
                true => {
                    group::wait_for(&mut self.child, Duration::from_millis(2));
                }
                false => self.stdout.wait_past(self.stdout.len(), Instant::now() + Duration::from_millis(2)),
            }
        }
        self.owed.clear();
        // Output, writes and effects have been calm for `quiet`, or the
        // bound ran out. A child still busy (slow under load, say) may act
        // after a calm, and what it acts on is read later with its output:
        // effects get a quiet of their own from now, so both are seen. When
        // EOF comes next, the settle after it waits for the exit and the
        // effects after it, and so sees them anyway.
        self.collect_effects(if eof_next { Duration::ZERO } else { quiet });
        Ok(())
    }
}

impl Drop for ChildGateway {
    fn drop(&mut self) {
        let _ = self.close_stdin();
        let grace = self.limits.quiet.max(Duration::from_millis(100)).min(self.limits.timeout);
        // A child whose stdin closed earlier has had part of its grace.
        let closed = self.closed_at.unwrap_or_else(Instant::now);
        let own = (closed + grace).saturating_duration_since(Instant::now());
        group::end(&mut self.child, own, grace);
        if let Some(home) = self.home.take() {
            self.homes.remove(home);
        }
    }
}

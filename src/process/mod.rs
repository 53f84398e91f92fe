//! The child-process driver: a server run as a real process over real
//! pipes, behind the same [`Gateway`](crate::seam::Gateway) seam as an
//! in-process gateway. Linux only (process groups, pidfd, `/proc`).
//!
//! - [`spawn`](self) starts the server in a process group of its own, with
//!   a scrubbed environment and a fresh HOME; [`capture`](self) drains its
//!   output into bounded buffers; [`group`](self) ends the whole group.
//! - [`ChildGateway`] is one process serving sessions; [`ChildTarget`]
//!   starts one per session, keeping at most one started ahead.
//! - A persistent process runs script after script, each followed by a
//!   marker request (`ping`, or `server/discover` in a revision without
//!   it); the campaign engine's [`Job`](crate::campaign::Job)
//!   decides which sessions run there and which in a process of their own.
//! - The [`Waits`] come from flags and grow when the server shows it needs
//!   longer; they never shrink, and nothing skips one.
//! - The ledger keeps every session run: an effect is its session's by
//!   the salt of its tokens, output its script's by position. Late
//!   evidence is added to its session, which the engine judges again.
//!
//! The driver judges nothing: it hands back what it observed, and the
//! engine (`campaign`) owns verdicts, finding keys and confirmation.
//!
//! Effect probes (an HTTP sink, file watchers) play the executor recorder.

mod answered;
mod capture;
mod discover;
mod group;
mod history;
mod ledger;
mod persistent;
mod routes;
mod session;
mod spawn;
mod waits;

pub(crate) use capture::stderr_tail;
pub(crate) use discover::{list_tools, speaks_stateless};
pub(crate) use history::History;
pub use ledger::Siblings;
pub(crate) use ledger::{Entry, Ledger};
pub(crate) use persistent::{Persistent, Started};
pub use session::ChildGateway;
pub use spawn::Command;
pub(crate) use spawn::{end_everything, end_servers, run_bounded};
pub use waits::Waits;

use crate::catalogue::{Catalogue, ToolSpec};
use crate::observation::Observation;
use crate::probe::Probes;
use crate::run::drive;
use crate::script::Script;
use crate::seam::{Action, Fault, Recorder, Session, Target};
pub(crate) use spawn::Home;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
pub(crate) use waits::Cover;
use waits::Grown;

/// What every process of a target shares.
pub(crate) struct Shared {
    pub(crate) probes: Arc<Probes>,
    pub(crate) ledger: Ledger,
    pub(crate) grown: Arc<Grown>,
    /// The package cache every process gets, made on first use: a server
    /// run through `npx -y` or `uvx` downloads itself once, not at every
    /// start into a fresh HOME.
    cache: OnceLock<Option<Home>>,
}

impl Shared {
    pub(crate) fn cache(&self) -> Option<&Path> {
        self.cache.get_or_init(|| Home::new().ok()).as_ref().map(Home::path)
    }
}

/// Starts one server process per session.
#[derive(Clone)]
pub struct ChildTarget {
    /// What to run.
    pub command: Command,
    /// The tools to call.
    pub catalogue: Catalogue,
    shared: Arc<Shared>,
    ahead: bool,
    /// Whether its processes run at a lower priority ([`ChildTarget::yielding`]).
    yields: bool,
    /// Whether a success result counts as the action (`--effect answer`).
    answers: bool,
    spare: Arc<Mutex<Option<ChildGateway>>>,
}

impl ChildTarget {
    /// A target running `command` that calls `tools`, with their canary
    /// URLs on the probes' HTTP sink.
    pub fn new(command: Command, waits: Waits, tools: Vec<ToolSpec>, probes: Arc<Probes>) -> ChildTarget {
        let catalogue = Catalogue { tools, canary_base: probes.http_base() };
        let grown = Arc::new(Grown::new(waits));
        let shared = Shared { probes, ledger: Ledger::default(), grown, cache: OnceLock::new() };
        ChildTarget {
            command,
            catalogue,
            shared: Arc::new(shared),
            ahead: false,
            yields: false,
            answers: false,
            spare: Arc::default(),
        }
    }

    /// Keeps one process started ahead of the next session, so that its
    /// start overlaps the session before. Not for a server of which only
    /// one instance may run at a time.
    pub fn started_ahead(mut self, ahead: bool) -> ChildTarget {
        self.ahead = ahead;
        self
    }

    /// A target of the same server whose processes run at a lower
    /// priority than the machine's other work (a lane beside a search,
    /// which then keeps the server's time), sharing this one's ledger,
    /// probes and waits. It keeps a process started ahead of its own: one
    /// started lowered is never handed to a session of this target (a
    /// priority once lowered is not raised again).
    pub(crate) fn yielding(&self) -> ChildTarget {
        ChildTarget { yields: true, spare: Arc::default(), ..self.clone() }
    }

    /// Shares its waits with `other`'s, as they grow: a second target of
    /// the same server (a job's shrinking lane) waits as long as what
    /// either has learned of it. Only on a target no clone shares yet.
    pub fn waits_shared_with(mut self, other: &ChildTarget) -> ChildTarget {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.grown = other.shared.grown.clone();
        }
        self
    }

    /// Judges, of the records in a watched file or directory, only those
    /// of its own sessions, leaving each other's to the other targets
    /// `siblings` is shared with: the jobs of one campaign, which watch
    /// the same places. A target alone judges every record it sees.
    pub fn among(self, siblings: &Siblings) -> ChildTarget {
        self.shared.ledger.among(siblings.clone());
        self
    }

    /// Counts each success result as the action of the request it
    /// answers (`--effect answer`), for a tool with no effect a probe can
    /// see; a request whose tokens a probe saw is not counted twice.
    pub fn effects_from_answers(mut self, answers: bool) -> ChildTarget {
        self.answers = answers;
        self
    }

    /// The waits now: the flags, grown by what the server has shown.
    pub fn waits(&self) -> Waits {
        self.shared.grown.now()
    }

    /// The quiet wait and the late evidence that grew it past its flag,
    /// when any did: a progress line shows them.
    pub fn grown_by(&self) -> Option<(Duration, String)> {
        self.shared.grown.grown()
    }

    /// Runs `script` in a process of its own, as a client does, to its
    /// end: what the server writes and does while the session ends (its
    /// stdin closed, the exit grace, the group ended) is the session's.
    /// Every wait is `patience` times as long (a verdict that rests on time
    /// alone is confirmed so), and the quiet waits long enough to cover
    /// evidence as late as `cover` says (a session that showed it is
    /// confirmed so).
    pub(crate) fn run_patiently(
        &self,
        session: &Session,
        script: &Script,
        patience: u32,
        cover: Cover,
    ) -> Result<Observation, Fault> {
        let recorder = Recorder::new();
        let mut gateway = self.start(session, recorder.clone())?;
        gateway.patience(patience);
        gateway.cover(cover);
        let mut obs = drive(&mut gateway, &recorder, session, script)?;
        obs.cut = gateway.cut();
        let finished = gateway.finish_with_exit();
        obs.stdout.extend(finished.stdout);
        obs.stderr.extend(finished.stderr);
        // A marker answered as the session ended shows it all read too.
        obs.marker_unanswered &= !finished.read_past;
        obs.effects = recorder.actions();
        Ok(obs)
    }

    /// Grows the waits to cover evidence that came `late` after its
    /// session (a saved finding's), as a job's do once it has seen it.
    pub fn cover(&self, late: Duration) {
        self.shared.grown.cover(late, &format!("the saved finding's evidence came {} ms late", late.as_millis()));
    }

    /// The answer wait and the measurement that grew it past its flag,
    /// when one did: a progress line shows them.
    pub fn answer_grown_by(&self) -> Option<(Duration, String)> {
        self.shared.grown.answer_grown()
    }

    /// The package cache its processes get, once one has started.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn cache_dir(&self) -> Option<std::path::PathBuf> {
        self.shared.cache.get().and_then(Option::as_ref).map(|h| h.path().to_owned())
    }

    /// The ledger its sessions' evidence is kept in.
    pub(crate) fn ledger(&self) -> &Ledger {
        &self.shared.ledger
    }

    /// Whether one process is kept started ahead of the next session: the
    /// server may run twice at once.
    pub(crate) fn ahead(&self) -> bool {
        self.ahead
    }

    /// Grows the quiet wait to cover evidence that came `late` after its
    /// process went quiet, for the reason `why`.
    pub(crate) fn grow_quiet(&self, late: Duration, why: &str) {
        self.shared.grown.cover(late, why);
    }

    /// The probes that observe effects.
    pub fn probes(&self) -> &Probes {
        &self.shared.probes
    }

    /// The effects of the session whose tokens have the salts `salts` (a
    /// replayed history has several), run apart from a job (a replay), that
    /// came after it ended: once the probes have been quiet for the quiet
    /// wait, each that carries its tokens, and each that carries none of
    /// any session's (the latest session's, as in a job). Evidence its
    /// verdict must still count.
    pub fn late_effects(&self, salts: &[u32]) -> Vec<Action> {
        let waits = self.waits();
        let ledger = &self.shared.ledger;
        let settled = self.shared.probes.settle(waits.quiet, waits.answer);
        let mut late: Vec<Action> = settled.into_iter().filter_map(|a| ledger.route(a, Instant::now(), &[])).collect();
        late.extend(ledger.take_strays(salts));
        late
    }
}

impl Target for ChildTarget {
    type Gateway = ChildGateway;

    fn catalogue(&self) -> Catalogue {
        self.catalogue.clone()
    }

    /// The process started ahead if there is one (it shows everything it
    /// wrote since it started, an early exit too), else a new one; then,
    /// when started ahead, another for next time.
    fn start(&self, session: &Session, recorder: Recorder) -> Result<ChildGateway, Fault> {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        let mut child = match spare.take() {
            Some(mut c) => {
                c.rebind(recorder, session.salt);
                c
            }
            None => ChildGateway::spawn(self, session.salt, recorder)?,
        };
        child.serving(session.revision);
        if self.ahead {
            *spare = ChildGateway::spawn(self, 0, Recorder::new()).ok().map(ChildGateway::unserved);
        }
        Ok(child)
    }
}

//! Starting the shared processes: the revisions a job draws, ahead of need
//! when a core is spare, and the replacements of retired ones, each
//! initialized and answering a marker before it is used.

use super::{Live, Off, SharedChild, marker};
use crate::attack::lifecycle::{INITIALIZED, initialize_text};
use crate::child::affinity;
use crate::child::reply::Waits;
use crate::child::{ChildGateway, ChildTarget};
use crate::protocol::{Id, Revision};
use crate::seam::{Fault, Gateway, Recorder};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A process starting on its own thread.
pub(super) struct Starting {
    revision: Revision,
    pub(super) thread: JoinHandle<Result<Option<Started>, Fault>>,
}

/// A process initialized and answering, and how long that took.
pub(super) type Started = (ChildGateway, Duration);

impl SharedChild<'_> {
    /// Starts the next revision still to start ahead, other than `now`
    /// (which the caller starts), unless a start is already under way (one
    /// besides the one the job is `waiting` for); once all have started and
    /// a shared process is live, spawns a spare, if a core is spare and the
    /// spare may expect to be used ([`SharedChild::spare_pays`]).
    pub(super) fn start_ahead(&mut self, now: Revision, waiting: bool) {
        let under_way = self.starting.iter().filter(|s| !s.thread.is_finished()).count();
        if self.disabled() || under_way > usize::from(waiting) {
            return;
        }
        while !self.ahead.is_empty() {
            let next = self.ahead.remove(0);
            let had = next == now || self.live.iter().any(|l| l.revision == next);
            if !had && !self.starting.iter().any(|s| s.revision == next) {
                return self.start_in_background(next);
            }
        }
        // Not before a shared process is live, so that the spare does not
        // slow the job's first start. Once spawned, a spare is replaced as
        // it is taken ([`ChildTarget::start_from`]), while it pays.
        if self.core_to_spare && self.spare.is_none() && !self.live.is_empty() && self.spare_pays() {
            self.spare = ChildGateway::spawn(self.target, 0, Recorder::new(), true).ok();
        }
    }

    /// Starts a process for each of `revisions` now, all at once, and waits
    /// until each is initialized and answering: what a measurement does
    /// before its clock starts, as a plain client's clock starts once its
    /// server has. A revision that does not start gives sharing up, as it
    /// would when first drawn.
    pub fn warm(&mut self, revisions: &[Revision]) -> Result<(), Fault> {
        for &revision in revisions {
            self.start_in_background(revision);
        }
        for &revision in revisions {
            if let Some(live) = self.ensure(revision)? {
                self.live.push(live);
            }
        }
        Ok(())
    }

    /// A live process initialized at `revision`: the one running, the one
    /// starting in the background, or one started now.
    pub(super) fn ensure(&mut self, revision: Revision) -> Result<Option<Live>, Fault> {
        if let Some(at) = self.live.iter().position(|l| l.revision == revision) {
            let mut live = self.live.swap_remove(at);
            if !live.child.exit().ended() {
                return Ok(Some(live));
            }
        }
        let starting = self.starting.iter().any(|s| s.revision == revision);
        // Once the server has started, with a core to spare, the start runs
        // in the background too, so that the next revision ahead can start
        // while the job waits for it.
        if !starting && self.core_to_spare && self.sharing.quickest.is_some() {
            self.start_in_background(revision);
        }
        let started = self.join_start(revision);
        let Some(child) = self.started(started?) else {
            self.turn_off(Off::NoMarker);
            return Ok(None);
        };
        Ok(Some(Live { revision, child }))
    }

    /// Waits for the start of `revision` in the background (or starts it
    /// now, if none is under way). While the job waits, its core is idle,
    /// so the next revision ahead may start meanwhile.
    fn join_start(&mut self, revision: Revision) -> Result<Option<Started>, Fault> {
        // The start itself is bounded by the timeout; this bound is a backstop.
        let deadline = Instant::now() + self.target.limits.timeout * 2;
        loop {
            let Some(at) = self.starting.iter().position(|s| s.revision == revision) else {
                return start_initialized(self.target, revision, false);
            };
            if self.starting[at].thread.is_finished() || !self.core_to_spare || Instant::now() >= deadline {
                let started = self.starting.swap_remove(at).thread.join();
                return match started.map_err(|_| Fault::Io("starting panicked".into()))? {
                    Ok(Some(started)) => {
                        affinity::join_chain(started.0.id());
                        Ok(Some(started))
                    }
                    // The server has answered markers before, so a start in
                    // the background that did not was slowed (a loaded
                    // machine, say): one more try, in the foreground, before
                    // sharing is given up.
                    Ok(None) => start_initialized(self.target, revision, false),
                    Err(e) => Err(e),
                };
            }
            self.start_ahead(revision, true);
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Starts the replacement of a retired process of `revision` in the
    /// background, unless no session is left to use it.
    pub(super) fn replace(&mut self, revision: Revision) {
        if self.sessions_left() != Some(0) {
            self.start_in_background(revision);
        }
    }

    /// Starts a process for `revision` in the background, so its start
    /// overlaps other work: a replacement for one just retired, a revision
    /// ahead of need, or one the job waits for while another starts.
    pub(super) fn start_in_background(&mut self, revision: Revision) {
        if self.disabled() || self.starting.iter().any(|s| s.revision == revision) {
            return;
        }
        let target = self.target.clone();
        let cores = affinity::unpinned_cores();
        let thread = std::thread::spawn(move || {
            affinity::adopt(cores);
            start_initialized(&target, revision, true)
        });
        self.starting.push(Starting { revision, thread });
    }
}

/// Starts a process and initializes it at `revision`; `None` when it does
/// not answer a marker after the handshake. It is spawned directly rather
/// than through [`crate::seam::Target::start`], which would take the
/// probes' pending effects from a script running meanwhile.
fn start_initialized(target: &ChildTarget, revision: Revision, ahead: bool) -> Result<Option<Started>, Fault> {
    let begun = Instant::now();
    let mut child = ChildGateway::spawn(target, 0, Recorder::new(), ahead)?;
    let init = "portcullis-init";
    let hello = format!(
        "{}\n{}\n",
        initialize_text(0, revision).replace(r#""id":0"#, &format!(r#""id":"{init}""#)),
        INITIALIZED
    );
    child.write_stdin(hello.as_bytes())?;
    // Starting may be slow (an interpreter, say): the full timeout.
    let timeout = target.limits.timeout;
    let waits = Waits { owed: vec![(Id::Str(init.into()), timeout)], ..Waits::default() };
    let ready = marker(&mut child, "portcullis-ready", waits, timeout)?;
    Ok(ready.map(|_| (child, begun.elapsed())))
}

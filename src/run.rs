//! The driver: writes a script through the seam and records what came back.

use crate::fill::{self, Filled, Unwritten};
use crate::frame::{Frame, Rule};
pub use crate::observation::Observation;
use crate::protocol::{Id, Policy};
use crate::script::Script;
use crate::seam::{Exit, Fault, Gateway, Recorder, Session, Settle, Target};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The panic message of a caught panic.
pub(crate) fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_owned())
}

/// Runs one script through a fresh gateway of `target`. A panic inside the
/// gateway is a crash (a finding); a [`Fault`] is the harness failing.
pub fn run<T: Target>(target: &T, session: &Session, script: &Script) -> Result<Observation, Fault> {
    let recorder = Recorder::new();
    let mut gateway = target.start(session, recorder.clone())?;
    let mut obs = drive(&mut gateway, &recorder, session, script)?;
    // A gateway that runs apart (a child process) ends the session when it
    // is dropped, and what it does until then is still the session's.
    drop(gateway);
    obs.effects = recorder.actions();
    Ok(obs)
}

/// Drives one script through a started `gateway` whose executor is
/// `recorder`, as [`run`] does.
pub(crate) fn drive<G: Gateway>(
    gateway: &mut G,
    recorder: &Recorder,
    session: &Session,
    script: &Script,
) -> Result<Observation, Fault> {
    let gateway = &mut *gateway;
    let mut obs = Observation::none();
    // Each write is gathered from the frames it spans and handed over as
    // it is: a call of 32 MiB is held by its frame and its write alone,
    // with no copy of the whole of stdin beside them.
    let stdin_len = script.len_bytes();
    let mut gather = script.gather();
    let mut crashed = None;
    // How much longer what was written is than the script's own bytes,
    // where a filled frame took the place of its placeholders.
    let mut longer = 0isize;
    let waiting = fill::waiting(script);
    for span in fill::write_spans(script, &waiting) {
        let chunk = match waiting.iter().find(|(_, r)| *r == span) {
            Some((i, _)) => match fill_frame(gateway, recorder, &mut obs, script, *i)? {
                Ok(bytes) => bytes,
                Err(_) => {
                    // A gateway that ended before the retry never read it.
                    if gateway.exit().ended() {
                        obs.ended_at.get_or_insert(span.start.saturating_add_signed(longer));
                    }
                    longer -= span.len() as isize;
                    continue;
                }
            },
            None => gather.take(span.clone()),
        };
        longer += chunk.len() as isize - span.len() as isize;
        match catch_unwind(AssertUnwindSafe(|| gateway.write_stdin_owned(chunk))) {
            Ok(r) => r?,
            Err(p) => crashed = Some(panic_text(p)),
        }
        collect(gateway, &mut obs);
        let exit = crashed.clone().map(Exit::Crashed).unwrap_or_else(|| gateway.exit());
        if exit.ended() {
            obs.ended_at.get_or_insert(span.end.saturating_add_signed(longer));
        }
        if crashed.is_some() {
            break;
        }
    }
    let script = &*fill::written(script, &obs.filled);
    if crashed.is_none() {
        let settle = Settle::new(owed(script, session), must_close(script, session));
        let settle = settle.or_null(owed_or_null(script, session));
        let settle = settle.or_null_later(session.policy == Policy::KeepOpen);
        gateway.settle(&settle.marked(session.policy != Policy::Close))?;
        collect(gateway, &mut obs);
    }
    obs.exit_before_eof = crashed.clone().map(Exit::Crashed).unwrap_or_else(|| gateway.exit());
    if obs.exit_before_eof.ended() {
        obs.ended_at.get_or_insert(stdin_len.saturating_add_signed(longer));
    }
    if script.eof && crashed.is_none() {
        obs.eof_sent = true;
        match catch_unwind(AssertUnwindSafe(|| gateway.close_stdin())) {
            Ok(r) => r?,
            Err(p) => crashed = Some(panic_text(p)),
        }
        if crashed.is_none() {
            gateway.settle(&Settle::new(Vec::new(), true))?;
        }
        collect(gateway, &mut obs);
    }
    obs.exit = crashed.map(Exit::Crashed).unwrap_or_else(|| gateway.exit());
    // Taken last: a marker answered after stdin closed shows it all read too.
    obs.marker_unanswered = !gateway.read_past();
    obs.effects = recorder.actions();
    Ok(obs)
}

/// Waits for the answer the fill of frame `i` names, as a client awaits a
/// result before it retries (and for the answers of earlier retries with
/// the same state, which that state was spent on), and returns the frame's
/// bytes filled from it, or why it is not written; either way recorded.
fn fill_frame<G: Gateway>(
    gateway: &mut G,
    recorder: &Recorder,
    obs: &mut Observation,
    script: &Script,
    i: usize,
) -> Result<Result<Vec<u8>, Unwritten>, Fault> {
    let frame = &script.frames[i];
    let how = frame.fill.as_ref().expect("a frame that waits on a fill");
    // A request no earlier frame sent (a shrinking step dropped it) gets
    // no answer to wait for.
    let sent = script.frames[..i].iter().any(|f| f.id.as_ref() == Some(&how.from));
    let retried = |f: &Filled| {
        let same = script.frames[f.frame].fill.as_ref().is_some_and(|g| g.from == how.from);
        (same && f.written.is_ok()).then(|| script.frames[f.frame].id.clone()).flatten()
    };
    let earlier: Vec<Id> = obs.filled.iter().filter_map(retried).collect();
    let owed: Vec<Id> = [how.from.clone()].into_iter().chain(earlier.iter().cloned()).collect();
    let due = owed.iter().any(|id| fill::response(&obs.stdout, id).is_none());
    if sent && due && !gateway.exit().ended() {
        gateway.settle(&Settle::new(owed, false))?;
        collect(gateway, obs);
    }
    let written = match (sent, gateway.exit().ended()) {
        (false, _) => Err(Unwritten::NotSent),
        (_, true) => Err(Unwritten::Ended),
        _ => fill::fill(frame, how, &obs.stdout, &earlier),
    };
    obs.filled.push(Filled { frame: i, written: written.clone(), effects_before: recorder.len() });
    Ok(written)
}

/// Whether the policy requires the gateway to have ended before EOF: under
/// `close`, once a complete frame that closes the session was written.
fn must_close(script: &Script, session: &Session) -> bool {
    session.policy == Policy::Close
        && script.frames.iter().any(|f| f.expect.rule().is_some_and(Rule::must_close) && f.bytes.ends_with(b"\n"))
}

/// The frames whose answers a client waits for before it goes on: the
/// whole frames before the first that must end the session under `close`
/// (after it, the gateway should be gone), or every whole frame. A gateway
/// that ends the session sooner (after a refused frame, which it may) ends
/// the wait by exiting. Under `auto` the frames after such a frame are
/// awaited too: a gateway that ends the session ends the wait by exiting,
/// one that goes on by answering, so the wait ends on evidence either way,
/// where one that stopped at the frame told a slow gateway from a closing
/// one by the load of the machine.
fn awaited<'a>(script: &'a Script, session: &Session, past_closing: bool) -> impl Iterator<Item = &'a Frame> {
    let may_end = session.policy == Policy::Close || (session.policy == Policy::Auto && !past_closing);
    let closes = move |f: &&Frame| may_end && f.expect.rule().is_some_and(Rule::must_close);
    script.frames.iter().filter(|f| f.bytes.ends_with(b"\n")).take_while(move |f| !closes(f))
}

/// The ids the [`awaited`] frames must be answered with.
pub(crate) fn owed(script: &Script, session: &Session) -> Vec<Id> {
    awaited(script, session, true).flat_map(Frame::owed_ids).collect()
}

/// The answers the [`awaited`] frames are owed that may come with the
/// frame's id or a null one ([`Frame::owes_anonymous_error`]). Where the
/// gateway may end the session after such a frame (`close`, `auto`), the
/// wait ends when it does, which shows it ended there. Under `keep-open`
/// an in-process gateway is waited for them; a child process may leave
/// them to the quiet wait ([`Settle::or_null_later`]), as an answer that
/// comes later still counts as late output.
pub(crate) fn owed_or_null(script: &Script, session: &Session) -> Vec<Option<Id>> {
    awaited(script, session, false).filter(|f| f.owes_anonymous_error()).map(|f| f.id.clone()).collect()
}

fn collect<G: Gateway>(gateway: &mut G, obs: &mut Observation) {
    obs.stdout.extend(gateway.take_stdout());
    obs.stderr.extend(gateway.take_stderr());
}

//! How the session ended: `policy` (close after the first malformed or
//! invalid frame, or stay open under keep-open) and `liveness` (no crash, no
//! early exit, exit when stdin closes).

use super::facts::Judged;
use super::{CheckId, Facts, Violation};
use crate::protocol::Policy;
use crate::seam::Exit;

pub(super) fn check(facts: &Facts, out: &mut Vec<Violation>) {
    let obs = facts.obs;
    let last_seen = facts.delivered.saturating_sub(1);
    if let Exit::Crashed(msg) = &obs.exit {
        out.push(Violation::at_frame(
            CheckId::Liveness,
            facts,
            last_seen.min(facts.spans.len() - 1),
            format!("crashed: {msg}"),
        ));
        return;
    }
    if let Some(c) = facts.closing {
        for r in &facts.replies {
            if let Some(i) = facts.frame_of(&r.id).filter(|i| *i > c) {
                let detail = format!("answered request id {} after frame #{c} should have closed the session", r.id);
                out.push(Violation::at_stdout(CheckId::Policy, r.range.clone(), Some(i), detail));
            }
        }
        // A frame cut short only ends at EOF; the gateway cannot close on it sooner.
        let complete = facts.script.frames[c].bytes.ends_with(b"\n");
        if complete && !obs.exit_before_eof.ended() {
            let later = match obs.exit.ended() {
                true => format!("; it {} only once stdin closed", obs.exit),
                false => String::new(),
            };
            let detail = format!("still running after a malformed or invalid frame under the close policy{later}");
            out.push(Violation::at_frame(CheckId::Policy, facts, c, detail));
        }
    }
    if let Some(end) = obs.ended_at.filter(|_| obs.exit_before_eof.ended()) {
        let rejected_before = facts.judged[..facts.delivered].iter().any(Judged::may_close);
        let frame = last_seen.min(facts.spans.len() - 1);
        match facts.policy {
            Policy::KeepOpen if rejected_before => out.push(Violation::at_frame(
                CheckId::Policy,
                facts,
                frame,
                format!("ended the session (after stdin byte {end}) under the keep-open policy"),
            )),
            // The gateway may end as soon as it has seen part of the closing frame.
            Policy::Close if facts.closing.is_some_and(|c| facts.spans[c].start < end) => {}
            _ => out.push(Violation::at_frame(
                CheckId::Liveness,
                facts,
                frame,
                format!("ended with {:?} before stdin closed, with no frame that warranted it", obs.exit_before_eof),
            )),
        }
    }
    if obs.eof_sent && !obs.exit.ended() {
        let frame = facts.spans.len() - 1;
        out.push(Violation::at_frame(CheckId::Liveness, facts, frame, "still running after stdin closed".to_owned()));
    }
}

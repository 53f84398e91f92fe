//! How the session ended: `policy` (close after the first malformed or
//! invalid frame, or stay open under keep-open) and `liveness` (no crash, no
//! early exit, exit when stdin closes).

use super::facts::Judged;
use super::{CheckId, Facts, Kind, Violation};
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
            Kind::Crashed { said: msg.clone() },
        ));
        return;
    }
    if let Some(c) = facts.closing {
        for r in &facts.replies {
            if let Some(i) = facts.frame_of(&r.id).filter(|i| *i > c) {
                let kind = Kind::AnsweredAfterClose { id: r.id.to_string(), closing: c };
                out.push(Violation::at_stdout(CheckId::Policy, r.range.clone(), Some(i), kind));
            }
        }
        // A frame cut short only ends at EOF; the gateway cannot close on it sooner.
        let complete = facts.script.frames[c].bytes.ends_with(b"\n");
        if complete && !obs.exit_before_eof.ended() {
            let then = obs.exit.ended().then(|| obs.exit.to_string());
            out.push(Violation::at_frame(CheckId::Policy, facts, c, Kind::RunningAfterClose { then }));
        }
    }
    if let Some(end) = obs.ended_at.filter(|_| obs.exit_before_eof.ended()) {
        let rejected_before = facts.judged[..facts.delivered].iter().any(Judged::may_close);
        let frame = last_seen.min(facts.spans.len() - 1);
        match facts.policy {
            Policy::KeepOpen if rejected_before => {
                out.push(Violation::at_frame(CheckId::Policy, facts, frame, Kind::EndedUnderKeepOpen { at: end }))
            }
            // The gateway may end as soon as it has seen part of the closing frame.
            Policy::Close if facts.closing.is_some_and(|c| facts.spans[c].start < end) => {}
            _ => out.push(Violation::at_frame(
                CheckId::Liveness,
                facts,
                frame,
                Kind::EndedEarly { exit: format!("{:?}", obs.exit_before_eof) },
            )),
        }
    }
    if obs.eof_sent && !obs.exit.ended() {
        let frame = facts.spans.len() - 1;
        out.push(Violation::at_frame(CheckId::Liveness, facts, frame, Kind::RunningAfterEof));
    }
}

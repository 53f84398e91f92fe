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
                let frame = ended_on(facts, end).unwrap_or(frame);
                out.push(Violation::at_frame(CheckId::Policy, facts, frame, Kind::EndedUnderKeepOpen { at: end }))
            }
            // The gateway may end as soon as it has seen part of the closing frame.
            Policy::Close if facts.closing.is_some_and(|c| facts.spans[c].start < end) => {}
            // An empty or blank line may be skipped or refused, and a gateway
            // that refuses it under close may end the session there.
            Policy::Close if blank_before(facts, end) => {}
            _ => out.push(Violation::at_frame(
                CheckId::Liveness,
                facts,
                frame,
                Kind::EndedEarly { exit: format!("{:?}", obs.exit_before_eof) },
            )),
        }
    }
    if let Some(at) = facts.stalled_at {
        // The marker the session's revision has, as the script asked.
        let kind = Kind::Stalled { marker: facts.script.revision.marker_method() };
        out.push(Violation::at_frame(CheckId::Liveness, facts, at, kind));
    }
    if obs.eof_sent && !obs.exit.ended() {
        let frame = facts.spans.len() - 1;
        out.push(Violation::at_frame(CheckId::Liveness, facts, frame, Kind::RunningAfterEof));
    }
}

/// The frame a session that ended under keep-open most likely ended on,
/// among those it may close on after the last frame it answered (it had
/// read that far and was alive): one past the size a reader may hold, the
/// likeliest end (the last such), else the first. Only where none came
/// after it is the answered frame itself blamed (a server may answer the
/// frame it then ends on): a server that answers one frame and dies on the
/// silent one after it is blamed on that one. The end is seen only when a
/// later write fails or stdout closes, often frames later; blaming the
/// frame written last would key one cause (say, a line past a reader's
/// limit) by whatever came after.
fn ended_on(facts: &Facts, end: usize) -> Option<usize> {
    let written = |i: &usize| *i < facts.delivered && facts.spans[*i].start < end;
    let may_close = |i: &usize| facts.judged[*i].may_close();
    let answered = facts.replies.iter().filter_map(|r| facts.frame_of(&r.id)).filter(written).max();
    let from = answered.map_or(0, |a| a + 1);
    let candidates: Vec<usize> = (from..facts.delivered).filter(written).filter(may_close).collect();
    let oversize = |i: &&usize| {
        let rule = facts.script.frames[**i].expect.rule_or_tolerated();
        rule.is_some_and(|r| r.cause() == crate::frame::Cause::Oversize)
    };
    let after = candidates.iter().rfind(oversize).or(candidates.first()).copied();
    after.or(answered.filter(may_close))
}

/// Whether a whole empty or blank line was written before stdin byte `end`.
fn blank_before(facts: &Facts, end: usize) -> bool {
    let frames = facts.script.frames.iter().zip(&facts.spans).take(facts.delivered);
    frames
        .into_iter()
        .any(|(f, span)| span.start < end && f.bytes.ends_with(b"\n") && f.bytes.iter().all(u8::is_ascii_whitespace))
}

#[cfg(test)]
mod tests {
    use crate::attack::Step;
    use crate::attack::terminator::{Kind, Terminator};
    use crate::catalogue::Catalogue;
    use crate::check::{CheckId, check};
    use crate::observation::Observation;
    use crate::protocol::{Policy, Revision};
    use crate::script::ScriptSpec;
    use crate::seam::{Exit, Session};

    /// The liveness and policy violations of a session that ends right
    /// after an empty line, held to `policy`.
    fn ended_on_an_empty_line(policy: Policy) -> Vec<CheckId> {
        let revision = Revision::R2025_06_18;
        let steps = vec![Step::Terminator(Terminator { kind: Kind::EmptyLine, tool: 0 }), Step::Control(0)];
        let script = ScriptSpec::whole(revision, steps).render(&Catalogue::reference(), 1);
        let empty = script.frames.iter().position(|f| f.bytes == b"\n").expect("an empty line");
        let end = script.frames[..=empty].iter().map(|f| f.bytes.len()).sum();
        let init = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#);
        let obs = Observation {
            stdout: format!("{init}\n").into_bytes(),
            exit_before_eof: Exit::Exited(0),
            exit: Exit::Exited(0),
            ended_at: Some(end),
            eof_sent: true,
            ..Observation::none()
        };
        let session = Session { policy, revision, salt: 1 };
        let ends = |c: &CheckId| matches!(c, CheckId::Liveness | CheckId::Policy);
        check(&script, &obs, &session).into_iter().map(|v| v.check).filter(ends).collect()
    }

    /// A session that answered everything before a raw CR in a string,
    /// then ended, the end seen only once the valid call after it was
    /// written, is blamed on that frame, not the one written last.
    #[test]
    fn an_end_under_keep_open_is_blamed_on_the_first_frame_after_the_last_answer() {
        let bad = Step::Terminator(Terminator { kind: Kind::RawCr, tool: 0 });
        assert_blamed(vec![Step::Control(0), bad, Step::Control(0)], "valid_call", "raw_cr_in_string");
    }

    /// A server that answers a frame it may close on and ends on a silent
    /// one after it is blamed on the silent one.
    #[test]
    fn an_end_after_an_answered_frame_is_blamed_on_a_later_one_it_may_close_on() {
        let cr = Step::Terminator(Terminator { kind: Kind::RawCr, tool: 0 });
        let lf = Step::Terminator(Terminator { kind: Kind::RawLf, tool: 0 });
        assert_blamed(vec![Step::Control(0), cr, lf, Step::Control(0)], "raw_cr_in_string", "raw_lf_in_string");
    }

    /// A server may answer the frame it then ends on: where it may close on
    /// none after it, the answered one is blamed.
    #[test]
    fn an_end_after_an_answered_frame_it_may_close_on_is_blamed_on_that_frame_alone() {
        let cr = Step::Terminator(Terminator { kind: Kind::RawCr, tool: 0 });
        assert_blamed(vec![Step::Control(0), cr, Step::Control(0)], "raw_cr_in_string", "raw_cr_in_string");
    }

    /// Where several frames it may close on went unanswered, one past the
    /// size a reader may hold is the likeliest end.
    #[test]
    fn an_end_after_unanswered_frames_is_blamed_on_one_past_a_readers_size() {
        use crate::attack::size::{Kind as Sized, Size};
        let bad = Step::Terminator(Terminator { kind: Kind::RawCr, tool: 0 });
        let large = Step::Size(Size { kind: Sized::Pipe, size: 2, tool: 0 });
        assert_blamed(vec![Step::Control(0), bad, large, Step::Control(0)], "valid_call", "pipe_sized_call");
    }

    /// A session of `steps` that answered every request up to the first
    /// frame of attack kind `answered` (that one too), then ended, the end
    /// seen only once every frame was written, is blamed on the frame of
    /// attack kind `kind`.
    fn assert_blamed(steps: Vec<Step>, answered: &str, kind: &str) {
        let revision = Revision::R2025_06_18;
        let script = ScriptSpec::whole(revision, steps).render(&Catalogue::reference(), 1);
        let at = script.frames.iter().position(|f| f.kind == answered).expect("the last frame answered");
        let blamed = script.frames.iter().position(|f| f.kind == kind).expect("the frame blamed");
        let mut stdout = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"{revision}"}}}}"#) + "\n";
        for f in script.frames[1..=at].iter().filter_map(|f| f.id.as_ref()) {
            stdout += &format!(r#"{{"jsonrpc":"2.0","id":{f},"result":{{"content":[]}}}}"#);
            stdout += "\n";
        }
        let obs = Observation {
            stdout: stdout.into_bytes(),
            exit_before_eof: Exit::Exited(0),
            exit: Exit::Exited(0),
            ended_at: Some(script.len_bytes()),
            eof_sent: true,
            ..Observation::none()
        };
        let session = Session { policy: Policy::KeepOpen, revision, salt: 1 };
        let ended = check(&script, &obs, &session).into_iter().find(|v| v.check == CheckId::Policy);
        assert!(blamed + 1 < script.frames.len(), "frames were written after it");
        let kinds: Vec<_> = script.frames.iter().map(|f| &f.kind).collect();
        assert_eq!(ended.and_then(|v| v.frame), Some(blamed), "{kinds:?}");
    }

    #[test]
    fn a_gateway_may_end_the_session_on_an_empty_line_under_close_only() {
        assert_eq!(ended_on_an_empty_line(Policy::Close), [], "refusing it by closing broke nothing");
        assert!(!ended_on_an_empty_line(Policy::KeepOpen).is_empty(), "under keep-open the session goes on");
    }
}

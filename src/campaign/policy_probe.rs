//! The probe behind [`Policy::Auto`]: one session that shows whether a
//! gateway ends the session on a malformed frame or goes on.

use super::{HuntConfig, SessionRun, salt};
use crate::attack::Step;
use crate::check;
use crate::protocol::{Policy, Revision};
use crate::script::ScriptSpec;
use crate::seam::{Fault, Session};

/// Which policy a gateway follows, as a probe session showed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicySeen {
    /// The policy the gateway is held to from now on.
    pub policy: Policy,
    /// What it did, and on which frame.
    pub detail: String,
}

/// How many times a probe that shows no policy is run, each with waits
/// twice as long as the one before.
pub(crate) const PROBE_TRIES: u32 = 3;

/// Runs the probe for [`Policy::Auto`]: the handshake, a banner line (a
/// frame that must end the session under `close`) and a valid call. A
/// gateway that ends the session there follows `close`; one that answers
/// and goes on, `keep-open`. `run` runs the probe with its waits times the
/// factor it is given. A probe that shows neither (the gateway was slow on
/// a loaded machine, or crashed) is run again with doubled waits; one that
/// never shows a policy leaves the hunt at [`Policy::Auto`], where each
/// session is held to the policy it shows, and no policy is assumed.
pub(crate) fn probe_policy(
    run: &dyn Fn(&ScriptSpec, u32, u32) -> Result<SessionRun, Fault>,
    cfg: &HuntConfig,
) -> Result<PolicySeen, Fault> {
    use crate::attack::noise::{Kind, Noise, Text};
    let revision = cfg.revisions.last().copied().unwrap_or(Revision::LATEST_HANDSHAKEN);
    let banner = Step::Noise(Noise { kind: Kind::LineBefore, text: Text::Banner, tool: 0 });
    let spec = ScriptSpec { level: cfg.level, ..ScriptSpec::whole(revision, vec![banner, Step::Control(0)]) };
    let session = Session { policy: Policy::Auto, revision, salt: 0 };
    let mut shown = Vec::new();
    for attempt in 0..PROBE_TRIES {
        let factor = 1 << attempt;
        let (script, obs, _) = run(&spec, salt(cfg, attempt), factor)?;
        let Some((policy, at)) = check::seen_policy(&script, &obs, &session) else {
            shown.push(format!("{} with waits ×{factor}", obs.exit));
            continue;
        };
        let rule = script.frames[at].expect.rule().map_or("", |r| r.id());
        let what = if policy == Policy::Close { "ended the session after" } else { "went on after" };
        let tries = match attempt {
            0 => String::new(),
            n => format!(", on try {} with waits ×{factor}", n + 1),
        };
        let detail = format!("the gateway {what} frame #{at} (`{rule}`) of a probe session{tries}");
        return Ok(PolicySeen { policy, detail });
    }
    Ok(PolicySeen {
        policy: Policy::Auto,
        detail: format!(
            "no probe session showed a policy (the gateway {}); each session is held to the policy it shows",
            shown.join(", then ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::observation::Observation;
    use crate::seam::Exit;
    use std::cell::RefCell;

    /// The probe run by a fake gateway that shows nothing (it is still
    /// running, silent) until try `shows_on`, where it ends the session
    /// after the banner; the factors each try was given, and the verdict.
    fn probe(shows_on: u32) -> (Vec<u32>, PolicySeen) {
        let factors = RefCell::new(Vec::new());
        let run = |spec: &ScriptSpec, salt: u32, factor: u32| {
            factors.borrow_mut().push(factor);
            let script = spec.render(&Catalogue::reference(), salt);
            let handshake = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".to_vec();
            let exit = match factors.borrow().len() as u32 == shows_on {
                true => Exit::Exited(0),
                false => Exit::Running,
            };
            let obs = Observation {
                stdout: handshake,
                exit_before_eof: exit.clone(),
                exit,
                eof_sent: true,
                ..Observation::none()
            };
            Ok((script.into(), obs, Vec::new()))
        };
        let seen = probe_policy(&run, &HuntConfig::default()).expect("no fault");
        (factors.into_inner(), seen)
    }

    #[test]
    fn a_probe_that_shows_no_policy_is_tried_again_with_doubled_waits() {
        let (factors, seen) = probe(2);
        assert_eq!(factors, [1, 2]);
        assert_eq!(seen.policy, Policy::Close);
        assert!(seen.detail.ends_with("on try 2 with waits ×2"), "{}", seen.detail);
    }

    #[test]
    fn a_gateway_that_never_shows_a_policy_is_held_to_none() {
        let (factors, seen) = probe(0);
        assert_eq!(factors, [1, 2, 4]);
        assert_eq!(seen.policy, Policy::Auto, "never close for want of evidence");
        assert!(seen.detail.starts_with("no probe session showed a policy"), "{}", seen.detail);
    }
}

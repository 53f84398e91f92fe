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

/// Runs the probe for [`Policy::Auto`]: the handshake, a banner line (a
/// frame that must end the session under `close`) and a valid call. A
/// gateway that ends the session there follows `close`; one that answers
/// and goes on, `keep-open`. One that shows neither (it crashed) is held
/// to `close`.
pub(crate) fn probe_policy(
    run: &dyn Fn(&ScriptSpec, u32) -> Result<SessionRun, Fault>,
    cfg: &HuntConfig,
) -> Result<PolicySeen, Fault> {
    use crate::attack::noise::{Kind, Noise, Text};
    let revision = cfg.revisions.last().copied().unwrap_or(Revision::R2025_11_25);
    let banner = Step::Noise(Noise { kind: Kind::LineBefore, text: Text::Banner, tool: 0 });
    let spec = ScriptSpec { level: cfg.level, ..ScriptSpec::whole(revision, vec![banner, Step::Control(0)]) };
    let (script, obs, _) = run(&spec, salt(cfg, 0))?;
    let session = Session { policy: Policy::Auto, revision, salt: 0 };
    Ok(match check::seen_policy(&script, &obs, &session) {
        Some((policy, at)) => {
            let rule = script.frames[at].expect.rule().map_or("", |r| r.id());
            let what = if policy == Policy::Close { "ended the session after" } else { "went on after" };
            PolicySeen { policy, detail: format!("the gateway {what} frame #{at} (`{rule}`) of a probe session") }
        }
        None => PolicySeen {
            policy: Policy::Close,
            detail: format!("the probe session showed no policy (the gateway {}); held to close", obs.exit),
        },
    })
}

//! Hunting: proptest draws scripts, runs them through a target, and shrinks
//! the first failure while it keeps the same check id, so the minimal script
//! shows the same bug rather than whichever one is easiest to reach.

use crate::attack;
use crate::attack::Step;
use crate::check::{self, CheckId, Violation};
pub use crate::finding::Finding;
use crate::observation::Observation;
use crate::protocol::{Level, Policy, Revision};
use crate::run;
use crate::script::{Mix, Script, ScriptSpec, scripts_mixed};
use crate::seam::{Fault, Session, Target};
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How a hunt runs. Start from the default and set what differs:
///
/// ```
/// use portcullis::{HuntConfig, Policy};
/// let cfg = HuntConfig::default().cases(64).policy(Policy::KeepOpen);
/// assert_eq!((cfg.cases, cfg.policy), (64, Policy::KeepOpen));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HuntConfig {
    /// Sessions to try before calling the target clean. Default: the
    /// `PROPTEST_CASES` environment variable, else 256.
    pub cases: u32,
    /// The RNG seed; the same seed draws the same scripts.
    pub seed: u64,
    /// The policy the target is held to. Default: [`Policy::Auto`], which
    /// [`hunt`] settles with a probe session before it draws any script.
    pub policy: Policy,
    /// The level frames are judged at. Default: [`Level::Hardening`].
    pub level: Level,
    /// The revisions scripts ask for.
    pub revisions: Vec<Revision>,
    /// Where proptest keeps failing seeds (a path from the crate root), if
    /// anywhere.
    pub persistence: Option<&'static str>,
    /// Only this check counts, when set: a hunt for one kind of bug.
    pub focus: Option<CheckId>,
    /// How often scripts that need a process of their own are drawn.
    pub mix: Mix,
    /// Most shrinking steps after a failure (each one a session).
    pub max_shrink_iters: u32,
    /// Most time spent shrinking, in milliseconds; 0 for no bound.
    pub max_shrink_ms: u32,
    /// Mixed into every session's token salt. 0 (the default) gives a seed
    /// the same tokens in every run; a random one gives a run tokens of
    /// its own, which a server that remembers earlier runs needs (one that
    /// refuses a second entity of the same name would otherwise ignore the
    /// calls it already saw).
    pub salt_base: u32,
}

impl Default for HuntConfig {
    fn default() -> Self {
        let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
        HuntConfig {
            cases,
            seed: 0,
            policy: Policy::Auto,
            level: Level::Hardening,
            revisions: Revision::ALL.to_vec(),
            persistence: None,
            focus: None,
            mix: Mix::Full,
            max_shrink_iters: 2048,
            max_shrink_ms: 0,
            salt_base: 0,
        }
    }
}

setters! {
    HuntConfig;
    /// Sets [`HuntConfig::cases`].
    cases: u32,
    /// Sets [`HuntConfig::seed`].
    seed: u64,
    /// Sets [`HuntConfig::policy`].
    policy: Policy,
    /// Sets [`HuntConfig::level`].
    level: Level,
    /// Sets [`HuntConfig::revisions`].
    revisions: Vec<Revision>,
    /// Sets [`HuntConfig::persistence`]: where proptest keeps failing seeds.
    persistence: Option<&'static str>,
    /// Sets [`HuntConfig::focus`].
    focus: Option<CheckId>,
    /// Sets [`HuntConfig::mix`].
    mix: Mix,
    /// Sets [`HuntConfig::max_shrink_iters`].
    max_shrink_iters: u32,
    /// Sets [`HuntConfig::max_shrink_ms`].
    max_shrink_ms: u32,
    /// Sets [`HuntConfig::salt_base`].
    salt_base: u32,
}

/// A proptest config that keeps failing seeds in `path` (from the crate
/// root): what properties under `tests/` need, since proptest would
/// otherwise look for a source file beside each test binary.
pub fn persist_to(path: &'static str) -> Config {
    Config { failure_persistence: Some(Box::new(FileFailurePersistence::Direct(path))), ..Config::default() }
}

/// A proptest runner whose draws are fixed by `seed`: the same seed, the
/// same scripts.
pub(crate) fn seeded_runner(config: Config, seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs one session and checks it.
pub fn session<T: Target>(
    target: &T,
    policy: Policy,
    spec: &ScriptSpec,
    salt: u32,
) -> Result<(Script, Observation, Vec<Violation>), Fault> {
    let catalogue = target.catalogue();
    if catalogue.runnable().is_empty() {
        return Err(Fault::config("the target offers no runnable tool whose arguments can carry a token"));
    }
    let script = spec.render(&catalogue, salt);
    let (obs, violations) = run_script(target, policy, &script, salt)?;
    Ok((script, obs, violations))
}

/// Runs one rendered script and checks it.
pub fn run_script<T: Target>(
    target: &T,
    policy: Policy,
    script: &Script,
    salt: u32,
) -> Result<(Observation, Vec<Violation>), Fault> {
    let session = Session { policy, revision: script.revision, salt };
    let obs = run::run(target, &session, script)?;
    let violations = check::check(script, &obs, &session);
    Ok((obs, violations))
}

/// What [`run_fresh`] ran: the script with its new tokens, their salt,
/// what it showed and its violations.
pub(crate) struct FreshRun {
    /// The script as sent.
    pub script: Script,
    /// The salt of its tokens.
    pub salt: u32,
    /// What the session showed.
    pub observation: Observation,
    /// The checks it broke.
    pub violations: Vec<Violation>,
}

/// Runs a saved `script`, whose tokens have salt `salt`, with tokens no
/// server has seen ([`fresh_salt`], [`Script::resalt`]): a replay against a
/// server that remembers the first run's calls must not meet them again.
pub(crate) fn run_fresh<T: Target>(target: &T, policy: Policy, script: &Script, salt: u32) -> Result<FreshRun, Fault> {
    let (script, fresh) = resalted(script, salt);
    let (observation, violations) = run_script(target, policy, &script, fresh)?;
    Ok(FreshRun { script, salt: fresh, observation, violations })
}

/// `script` with tokens no run has used, and the new salt of those that
/// had `salt`. Tokens of other salts (a replayed history's) are made new
/// as well: a server that remembers earlier calls meets every call as new,
/// and a late effect of an earlier run is told from this one's.
pub(crate) fn resalted(script: &Script, salt: u32) -> (Script, u32) {
    let mut script = script.clone();
    let fresh = fresh_salt();
    script.resalt(salt, fresh);
    for other in script.salts().into_iter().filter(|s| *s != fresh) {
        script.resalt(other, fresh_salt());
    }
    (script, fresh)
}

/// The scripts a hunt draws for `cfg`.
pub fn strategy(cfg: &HuntConfig) -> BoxedStrategy<ScriptSpec> {
    use proptest::strategy::Strategy;
    let revisions = proptest::sample::select(cfg.revisions.clone()).boxed();
    let level = cfg.level;
    scripts_mixed(revisions, attack::any_step(), cfg.mix).prop_map(move |spec| ScriptSpec { level, ..spec }).boxed()
}

/// Hunts for a failing session; `Ok(None)` when every case held. Under
/// [`Policy::Auto`], a probe session first shows which policy the target
/// follows, and the hunt holds it to that one.
pub fn hunt<T: Target>(target: &T, cfg: &HuntConfig) -> Result<Option<Finding>, Fault> {
    let seen = match cfg.policy {
        Policy::Auto => Some(probe_policy(&|spec, salt| session(target, Policy::Auto, spec, salt), cfg)?),
        _ => None,
    };
    let cfg = &HuntConfig { policy: seen.as_ref().map_or(cfg.policy, |s| s.policy), ..cfg.clone() };
    let found = hunt_with(target, cfg, strategy(cfg), &|_| true)?;
    Ok(found.map(|f| Finding { policy_seen: seen.map(|s| s.detail), ..f }))
}

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

/// A distinct salt for each session of a hunt, so no late effect of one
/// session carries a token of another.
fn salt(cfg: &HuntConfig, session: u32) -> u32 {
    (cfg.seed as u32).wrapping_mul(0x9E37_79B9).rotate_left(16) ^ session ^ cfg.salt_base
}

/// A salt unlikely to have been used before, by this run or another: for
/// tokens no server has seen yet.
pub(crate) fn fresh_salt() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u32(NEXT.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.finish() as u32
}

/// Hunts over scripts drawn from `scripts`. `progress` hears the number of
/// sessions run after each one and stops the hunt (as clean) by returning
/// false.
pub(crate) fn hunt_with<T: Target>(
    target: &T,
    cfg: &HuntConfig,
    scripts: BoxedStrategy<ScriptSpec>,
    progress: &dyn Fn(u32) -> bool,
) -> Result<Option<Finding>, Fault> {
    hunt_by(cfg, scripts, progress, &|spec, salt, _| session(target, cfg.policy, spec, salt))
}

/// What runs one session of a hunt: choices, salt and the check being
/// shrunk in (`None` while searching, and for the run that reports the
/// result, which must wait as long as the search did), the rendered
/// script, what it showed and its violations out.
pub(crate) type Runner<'a> = dyn Fn(&ScriptSpec, u32, Option<CheckId>) -> Result<SessionRun, Fault> + 'a;

/// One session's rendered script, what it showed and its violations.
pub(crate) type SessionRun = (Script, Observation, Vec<Violation>);

/// Hunts with sessions run by `run` (which may, say, share one process
/// between sessions, as long as what it reports holds for a fresh one).
pub fn hunt_by(
    cfg: &HuntConfig,
    scripts: BoxedStrategy<ScriptSpec>,
    progress: &dyn Fn(u32) -> bool,
    run: &Runner,
) -> Result<Option<Finding>, Fault> {
    let config = Config {
        cases: cfg.cases,
        failure_persistence: cfg.persistence.map(|p| Box::new(FileFailurePersistence::Direct(p)) as _),
        max_shrink_iters: cfg.max_shrink_iters,
        // The shrink bound is kept below rather than by proptest, which
        // would print a line naming its own setting, not the caller's.
        max_shrink_time: 0,
        ..Config::default()
    };
    let shrink_bound = Duration::from_millis(u64::from(cfg.max_shrink_ms));
    let mut runner = seeded_runner(config, cfg.seed);
    let caught: Cell<Option<CheckId>> = Cell::new(None);
    let cases = Cell::new(0u32);
    let fault: RefCell<Option<Fault>> = RefCell::new(None);
    let sessions = Cell::new(0u32);
    // The last session that showed the caught check, and its salt.
    let last_failing: RefCell<Option<(SessionRun, u32)>> = RefCell::new(None);
    let first_caught: Cell<Option<Instant>> = Cell::new(None);
    let out_of_time = || cfg.max_shrink_ms > 0 && first_caught.get().is_some_and(|t| t.elapsed() >= shrink_bound);
    let stopped = Cell::new(false);
    let result = runner.run(&scripts, |spec| {
        if fault.borrow().is_some() {
            return Err(TestCaseError::fail("harness fault"));
        }
        // Once stopped before a failure, every case is rejected unrun, so
        // proptest gives up after its reject limit instead of drawing every
        // case left; out of shrinking time, every candidate passes unrun and
        // proptest ends with the last failing one.
        if stopped.get() {
            return Err(TestCaseError::reject("stopped"));
        }
        if out_of_time() {
            return Ok(());
        }
        if caught.get().is_none() {
            cases.set(cases.get() + 1);
        }
        sessions.set(sessions.get() + 1);
        let salt = salt(cfg, sessions.get());
        let outcome = run(&spec, salt, caught.get());
        if caught.get().is_none() && !progress(cases.get()) {
            stopped.set(true);
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(f) => {
                *fault.borrow_mut() = Some(f);
                return Err(TestCaseError::fail("harness fault"));
            }
        };
        let violations: Vec<_> = outcome.2.iter().filter(|v| cfg.focus.is_none_or(|c| c == v.check)).collect();
        // Before the first failure any check counts; after it, only the
        // same one, so shrinking cannot wander to another bug.
        let hit = match caught.get() {
            None => violations.first().map(|v| v.check),
            Some(c) => violations.iter().any(|v| v.check == c).then_some(c),
        };
        match hit {
            Some(c) => {
                caught.set(Some(c));
                *last_failing.borrow_mut() = Some((outcome, salt));
                first_caught.set(first_caught.get().or(Some(Instant::now())));
                Err(TestCaseError::fail(c.id()))
            }
            None => Ok(()),
        }
    });
    if let Some(f) = fault.into_inner() {
        return Err(f);
    }
    let spec = match result {
        Ok(()) => return Ok(None),
        Err(TestError::Abort(_)) if stopped.get() => return Ok(None),
        Err(TestError::Fail(_, spec)) => spec,
        Err(TestError::Abort(why)) => return Err(Fault::config(format!("proptest aborted: {why}"))),
    };
    let check = caught.get().expect("a failure names its check");
    let shrink_ran_out = out_of_time();
    // The last failing session was the minimal one; run it again to report
    // it whole, with tokens of its own (a server that remembers the last
    // run's would ignore its calls). Should that run not show the check,
    // the last failing one is reported as it was.
    let salt = salt(cfg, sessions.get() + 1);
    let again = run(&spec, salt, None)?;
    let ((script, observation, mut violations), salt) = match again.2.iter().any(|v| v.check == check) {
        true => (again, salt),
        false => last_failing.into_inner().expect("a failure keeps its session"),
    };
    // The caught check's violations first: they are what the report shows.
    violations.sort_by_key(|v| v.check != check);
    Ok(Some(Finding {
        check,
        violations,
        spec,
        script,
        observation,
        cases_until_caught: cases.get(),
        salt,
        seed: cfg.seed,
        policy: cfg.policy,
        shrink_ran_out,
        late: None,
        history: Vec::new(),
        confirmed: true,
        policy_seen: None,
    }))
}

/// Hunts and panics with the full report on a finding or a harness fault:
/// the one call a user's `#[test]` needs.
pub fn assert_holds<T: Target>(target: &T, cfg: &HuntConfig) {
    match hunt(target, cfg) {
        Ok(None) => {}
        Ok(Some(f)) => panic!("{}", crate::report::finding(&f, None)),
        Err(fault) => panic!("harness fault (not a finding about the gateway): {fault}"),
    }
}

//! Hunting: proptest draws scripts, runs them through a target, and
//! shrinks each distinct finding while it keeps the same check and cause, so
//! every minimal script shows its own bug (see `hunt_by`).

#[cfg(all(feature = "process", target_os = "linux"))]
mod confirmer;
#[cfg(feature = "cli")]
mod control;
pub mod delta;
mod flight;
mod handed;
#[cfg(all(feature = "process", target_os = "linux"))]
mod job;
mod lane;
#[cfg(all(feature = "cli", target_os = "linux"))]
mod parallel;
mod policy_probe;
mod rounds;
mod scope;
#[cfg(all(feature = "cli", target_os = "linux"))]
mod shares;
#[cfg(all(feature = "process", target_os = "linux"))]
mod verdict;
#[cfg(all(feature = "cli", target_os = "linux"))]
mod worker;

pub use crate::finding::{Distinct, Finding};
#[cfg(feature = "cli")]
pub(crate) use control::confirmed_control;
#[cfg(feature = "cli")]
pub(crate) use flight::Flight;
#[cfg(feature = "cli")]
pub(crate) use handed::Handed;
#[cfg(all(feature = "process", target_os = "linux"))]
pub use job::Job;
pub use lane::Lane;
pub(crate) use lane::SessionRun;
#[cfg(all(feature = "cli", target_os = "linux"))]
pub(crate) use parallel::{Lanes, Plan, run as run_campaign, splits};
pub use policy_probe::PolicySeen;
pub(crate) use policy_probe::probe_policy;
#[cfg(feature = "process")]
pub(crate) use rounds::Known;
pub use rounds::{Progress, hunt_by};
#[cfg(feature = "cli")]
pub(crate) use rounds::{Runner, Shrinker, hunt_among};
#[cfg(all(feature = "cli", target_os = "linux"))]
pub(crate) use verdict::whole as replay_whole;
#[cfg(all(feature = "cli", target_os = "linux"))]
pub(crate) use worker::Onlooker;

use crate::attack;
use crate::campaign::lane::into_session_run;
use crate::check::{self, CheckId, Violation};
use crate::observation::Observation;
use crate::protocol::{Level, Policy, Revision};
use crate::run;
use crate::script::{Mix, Part, Script, ScriptSpec, scripts_mixed};
use crate::seam::{Fault, Session, Target};
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, TestRng, TestRunner};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};

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
    /// The RNG seed; the same seed draws the same scripts. Default: the
    /// `PROPTEST_RNG_SEED` environment variable, else 0.
    pub seed: u64,
    /// The policy the target is held to. Default: [`Policy::Auto`], which
    /// [`hunt`] settles with a probe session before it draws any script.
    pub policy: Policy,
    /// The level frames are judged at. Default: [`Level::Hardening`];
    /// [`Level::Tolerated`] judges as [`Level::Spec`] (tolerated rules are
    /// never judged).
    pub level: Level,
    /// The revisions scripts ask for. Default: those that open with
    /// `initialize` ([`Revision::HANDSHAKEN`]), which every gateway speaks
    /// one of; 2026-07-28 is drawn when asked for.
    pub revisions: Vec<Revision>,
    /// Where proptest keeps failing seeds (a path from the crate root), if
    /// anywhere. Without one, [`assert_holds`] keeps them in
    /// `proptest-regressions/` under the crate root, in a file named for
    /// the test file that calls it (`tests/boundary.rs` keeps
    /// `proptest-regressions/tests/boundary.txt`), unless
    /// [`HuntConfig::persist`] is off or
    /// `PROPTEST_DISABLE_FAILURE_PERSISTENCE` is set; a failing seed kept
    /// there runs first the next time.
    pub persistence: Option<&'static str>,
    /// Whether [`assert_holds`] keeps failing seeds where
    /// [`HuntConfig::persistence`] names no file. Default: true.
    pub persist: bool,
    /// Only this check counts, when set: a hunt for one kind of bug.
    pub focus: Option<CheckId>,
    /// How often scripts that need a process of their own are drawn.
    pub mix: Mix,
    /// Which of the mix's scripts are drawn. Default: [`Part::All`].
    pub part: Part,
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
    /// Most distinct findings to make before the hunt stops; 0 (the
    /// default) for every one the cases show. [`hunt`] makes one.
    pub max_findings: u32,
}

impl Default for HuntConfig {
    fn default() -> Self {
        let from_env = |name: &str| std::env::var(name).ok();
        let cases = from_env("PROPTEST_CASES").and_then(|c| c.parse().ok()).unwrap_or(256);
        let seed = from_env("PROPTEST_RNG_SEED").and_then(|c| c.parse().ok()).unwrap_or(0);
        HuntConfig {
            cases,
            seed,
            policy: Policy::Auto,
            level: Level::Hardening,
            revisions: Revision::HANDSHAKEN.to_vec(),
            persistence: None,
            persist: true,
            focus: None,
            mix: Mix::Full,
            part: Part::All,
            max_shrink_iters: 2048,
            max_shrink_ms: 0,
            salt_base: 0,
            max_findings: 0,
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
    /// Sets [`HuntConfig::persist`].
    persist: bool,
    /// Sets [`HuntConfig::focus`].
    focus: Option<CheckId>,
    /// Sets [`HuntConfig::mix`].
    mix: Mix,
    /// Sets [`HuntConfig::part`].
    part: Part,
    /// Sets [`HuntConfig::max_shrink_iters`].
    max_shrink_iters: u32,
    /// Sets [`HuntConfig::max_shrink_ms`].
    max_shrink_ms: u32,
    /// Sets [`HuntConfig::salt_base`].
    salt_base: u32,
    /// Sets [`HuntConfig::max_findings`].
    max_findings: u32,
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

/// How many times as long every wait of the session that confirms a
/// finding resting on time is.
#[cfg(feature = "process")]
pub(crate) const PATIENCE: u32 = 4;

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
    // Tolerated rules are never judged: the most lenient level is spec.
    let level = cfg.level.max(Level::Spec);
    let part = cfg.part;
    part.drawn(scripts_mixed(revisions, attack::any_step(), cfg.mix))
        .prop_map(move |spec| ScriptSpec { level, ..spec })
        .boxed()
}

/// Hunts for a failing session; `Ok(None)` when every case held. Under
/// [`Policy::Auto`], a probe session first shows which policy the target
/// follows, and the hunt holds it to that one.
pub fn hunt<T: Target>(target: &T, cfg: &HuntConfig) -> Result<Option<Finding>, Fault> {
    Ok(hunt_all(target, &cfg.clone().max_findings(1))?.into_iter().next())
}

/// Hunts for every distinct finding (at most
/// [`HuntConfig::max_findings`]), each shrunk and listed once, in the order
/// they were found; empty when every case held. A success answer to a frame
/// that must be rejected is listed in its effect's [`Finding::also`] where
/// both are found ([`crate::finding::fold`]): its key is kept there, its
/// own session is not.
pub fn hunt_all<T: Target>(target: &T, cfg: &HuntConfig) -> Result<Vec<Finding>, Fault> {
    let seen = match cfg.policy {
        Policy::Auto => {
            Some(probe_policy(&|spec, salt, _| session(target, Policy::Auto, spec, salt).map(into_session_run), cfg)?)
        }
        _ => None,
    };
    let cfg = &HuntConfig { policy: seen.as_ref().map_or(cfg.policy, |s| s.policy), ..cfg.clone() };
    let found = hunt_with(target, cfg, strategy(cfg), &|_| true)?;
    Ok(found.into_iter().map(|f| Finding { policy_seen: seen.as_ref().map(|s| s.detail.clone()), ..f }).collect())
}

/// A distinct salt for each session of a hunt, so no late effect of one
/// session carries a token of another.
pub(crate) fn salt(cfg: &HuntConfig, session: u32) -> u32 {
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

/// Hunts over scripts drawn from `scripts`. `progress` hears how the hunt
/// goes and stops it by returning false.
pub(crate) fn hunt_with<T: Target>(
    target: &T,
    cfg: &HuntConfig,
    scripts: BoxedStrategy<ScriptSpec>,
    progress: &dyn Fn(&Progress) -> bool,
) -> Result<Vec<Finding>, Fault> {
    hunt_by(cfg, scripts, progress, &|spec, salt, _| session(target, cfg.policy, spec, salt))
}

/// Where [`assert_holds`] called from `file` keeps failing seeds (see
/// [`regressions_path`]), the crate root `CARGO_MANIFEST_DIR` as `cargo
/// test` sets it, else the working folder. Made once per file for the life
/// of the test process.
fn regressions_of(file: &'static str) -> &'static str {
    static KEPT: std::sync::Mutex<std::collections::BTreeMap<&'static str, &'static str>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    kept.entry(file).or_insert_with(|| {
        let root = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
        let root = root.or_else(|| std::env::current_dir().ok()).unwrap_or_default();
        Box::leak(regressions_path(&root, file).display().to_string().into_boxed_str())
    })
}

/// `root/proptest-regressions/` and `file`'s path within the crate at
/// `root`, `.txt` for `.rs`. The compiler names `file` from the workspace's
/// root, which may be `root` or a folder above it, or absolutely; a file
/// outside the crate is named by its file name alone.
fn regressions_path(root: &std::path::Path, file: &str) -> std::path::PathBuf {
    use std::path::{Path, PathBuf};
    let path = Path::new(file);
    let absolute = match path.is_absolute() {
        true => Some(path.to_path_buf()),
        false => root.ancestors().map(|a| a.join(path)).find(|p| p.is_file()),
    };
    let within = absolute.as_deref().and_then(|p| p.strip_prefix(root).ok()).map(Path::to_path_buf);
    let within = within.unwrap_or_else(|| PathBuf::from(path.file_name().unwrap_or_default()));
    root.join("proptest-regressions").join(within.with_extension("txt"))
}

/// Hunts and panics with the full report of every distinct finding (or of
/// a harness fault): the one call a user's `#[test]` needs. Failing seeds
/// are kept under `proptest-regressions/` beside the calling test, and run
/// first the next time (see [`HuntConfig::persistence`]).
#[track_caller]
pub fn assert_holds<T: Target>(target: &T, cfg: &HuntConfig) {
    let kept = std::env::var_os("PROPTEST_DISABLE_FAILURE_PERSISTENCE").is_none() && cfg.persist;
    let persistence = cfg.persistence.or_else(|| kept.then(|| regressions_of(std::panic::Location::caller().file())));
    let cfg = &HuntConfig { persistence, ..cfg.clone() };
    match hunt_all(target, cfg) {
        Ok(found) if found.is_empty() => {}
        Ok(found) => {
            let reports: Vec<String> = found.iter().map(|f| crate::report::finding(f, None)).collect();
            panic!("{}\n{}", reports.join("\n"), crate::report::distinct_table(&found, &[]))
        }
        Err(fault) => panic!("harness fault (not a finding about the gateway): {fault}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{HuntConfig, Part, regressions_path, seeded_runner, strategy};
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::Config;
    use std::path::Path;

    /// Whether each of `n` scripts drawn for `part` needs a process of its
    /// own.
    fn own_in(part: Part, n: usize) -> Vec<bool> {
        let scripts = strategy(&HuntConfig::default().part(part));
        let mut runner = seeded_runner(Config::default(), 7);
        (0..n).map(|_| scripts.new_tree(&mut runner).expect("a script").current().needs_own_process()).collect()
    }

    #[test]
    fn each_part_draws_its_own_side_of_the_mix_and_the_two_make_it_whole() {
        let all = own_in(Part::All, 700);
        let own = all.iter().filter(|o| **o).count();
        assert!((50..200).contains(&own), "about one script in seven needs a process of its own: {own} of 700");
        assert!(own_in(Part::Own, 100).iter().all(|o| *o), "the own part draws only those");
        assert!(own_in(Part::Shared, 300).iter().all(|o| !*o), "the shared part draws none of them");
        assert_eq!(Part::Own.share_of(256, crate::Mix::Full) + Part::Shared.share_of(256, crate::Mix::Full), 256);
        assert_eq!(Part::Own.share_of(256, crate::Mix::Full), 256 / 7);
    }

    #[test]
    fn assert_holds_keeps_its_seeds_under_the_crate_root_named_for_its_test_file() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().join("crates/gateway");
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("tests/boundary.rs"), "").unwrap();
        let kept = root.join("proptest-regressions/tests/boundary.txt");
        // From the crate's root, from the workspace's, and absolutely.
        assert_eq!(regressions_path(&root, "tests/boundary.rs"), kept);
        assert_eq!(regressions_path(&root, "crates/gateway/tests/boundary.rs"), kept);
        assert_eq!(regressions_path(&root, root.join("tests/boundary.rs").to_str().unwrap()), kept);
        // Outside the crate: its file name alone, never beside the file.
        let elsewhere = regressions_path(&root, "/elsewhere/src/lib.rs");
        assert_eq!(elsewhere, root.join("proptest-regressions/lib.txt"));
        assert!(elsewhere.starts_with(&root) && !Path::new("/elsewhere").join("lib.txt").exists());
    }
}

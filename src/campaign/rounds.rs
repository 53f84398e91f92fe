//! A hunt in rounds: each round draws scripts until a session shows a
//! distinct finding no earlier round made, shrinks it while it keeps the
//! same check and cause (so the minimal script shows the same bug rather
//! than whichever is easiest to reach), and hands the cases left to the
//! next round.

use super::flight::{Flight, cuts, smallest};
use super::handed::{Caught, Handed};
use super::lane::{SessionRun, into_session_run};
use super::{Finding, HuntConfig, Lane, seeded_runner};
use crate::check::{CheckId, Violation};
use crate::finding::{Distinct, distinct, evidence};
use crate::observation::Observation;
use crate::script::{Part, Script, ScriptSpec};
use crate::seam::Fault;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestError};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What runs one session of a hunt: choices, salt and the [`Lane`] in,
/// the rendered script, what it showed and its violations out.
pub(crate) type Runner<'a> = dyn Fn(&ScriptSpec, u32, Lane) -> Result<SessionRun, Fault> + 'a;

/// A [`Runner`] as a user's runner is written: it hands back the script it
/// rendered, which the hunt then shares.
pub(crate) type OwnRunner<'a> =
    dyn Fn(&ScriptSpec, u32, Lane) -> Result<(Script, Observation, Vec<Violation>), Fault> + 'a;

/// What a hunt reports as it goes; the callback that hears it stops the
/// hunt (or the shrinking under way) by returning false.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// Search sessions run so far.
    Searched(u32),
    /// A finding is being shrunk: what it is, the steps run and the time
    /// spent so far.
    Shrinking {
        /// The finding's check and cause.
        finding: Distinct,
        /// Shrinking sessions run.
        steps: u32,
        /// Time spent shrinking it.
        elapsed: Duration,
    },
    /// A finding that rests on time alone (no exit, answer or effect
    /// within a wait) was seen, but no fresh session with waits four times as long
    /// repeated it: it is not reported, and the hunt goes on.
    Unconfirmed {
        /// The finding's check, kind and cause.
        finding: Distinct,
    },
    /// A finding that rests on time alone was seen, but the hunt was
    /// stopped before a fresh session could confirm it: it is not
    /// reported.
    Untried {
        /// The finding's check, kind and cause.
        finding: Distinct,
    },
    /// A finding that rests on time alone was confirmed, but meanwhile
    /// other jobs made the last findings `--max-findings` allows: it is
    /// not reported, and the hunt stops.
    PastBound {
        /// The finding's check, kind and cause.
        finding: Distinct,
    },
}

/// What a hunt tells of a finding resting on time alone that it does not
/// report: unconfirmed, or untried where it was stopped first.
fn not_reported(finding: Distinct, halted: bool) -> Progress {
    match halted {
        true => Progress::Untried { finding },
        false => Progress::Unconfirmed { finding },
    }
}

/// The distinct findings the jobs of one run have made, so that none
/// shrinks one another already has, how many search sessions of all jobs
/// showed each, and the rules that showed each cause.
#[derive(Debug, Default)]
pub(crate) struct Known(Mutex<Seen>);

#[derive(Debug, Default)]
struct Seen {
    made: Vec<Distinct>,
    hits: HashMap<Distinct, u32>,
    rules: HashMap<Distinct, BTreeSet<String>>,
    /// The first search session that showed each finding under each rule.
    witnesses: HashMap<Distinct, BTreeMap<String, (ScriptSpec, u32)>>,
    /// The keys a baseline accepts, as it lists them.
    accepted: Vec<String>,
    /// Most findings to make, as `--max-findings` counts them; 0 for no bound.
    most: usize,
    /// Those made that rest on time alone, not yet confirmed by a patient
    /// session: claimed, so that no other job shrinks them too, but not
    /// counted, so that no lane stops drawing for one that may be the
    /// load's.
    doubtful: Vec<Distinct>,
}

impl Seen {
    /// How many findings `--max-findings` counts: those made, leaving out
    /// those that fold into another made ([`Distinct::folds_into`]) and
    /// those a baseline accepts (by their key, or the key they would fold
    /// into).
    fn counted(&self) -> usize {
        let folds = |d: &Distinct| d.folds_into().is_some_and(|to| self.made.contains(&to));
        let counts = |d: &&Distinct| !folds(d) && !d.listed_in(&self.accepted) && !self.doubtful.contains(d);
        self.made.iter().filter(counts).count()
    }
}

impl Known {
    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `d`; false when another job made it first, or when it would
    /// count past the most findings the run makes ([`Known::most`]): lanes
    /// drawing at once then make no more than that between them.
    #[cfg(feature = "process")]
    pub(crate) fn add(&self, d: &Distinct) -> bool {
        self.claim(d, false)
    }

    /// [`Known::add`], and where `d` rests on time alone (`timed`), notes
    /// it doubtful under the same lock: until a patient session confirms
    /// it ([`Known::confirmed`]) it does not count, and no lane sees it
    /// counted meanwhile.
    pub(super) fn claim(&self, d: &Distinct, timed: bool) -> bool {
        let mut known = self.lock();
        if known.made.contains(d) {
            return false;
        }
        // Added, would the count pass the bound? (An effect whose success
        // answer was made takes that one's place: the count stays.)
        known.made.push(d.clone());
        if known.most > 0 && known.counted() > known.most {
            known.made.pop();
            return false;
        }
        if timed {
            known.doubtful.push(d.clone());
        }
        true
    }

    /// Makes no more than `most` findings as `--max-findings` counts them
    /// (0 for no bound).
    #[cfg(feature = "process")]
    pub(crate) fn most(&self, most: u32) {
        self.lock().most = most as usize;
    }

    /// Takes back `d`, claimed when it was caught but not confirmed.
    fn forget(&self, d: &Distinct) {
        let mut known = self.lock();
        known.made.retain(|k| k != d);
        known.doubtful.retain(|k| k != d);
    }

    /// Counts `d`, confirmed; false (and `d` taken back) where the findings
    /// other jobs made meanwhile leave it no room within
    /// [`Known::most`].
    fn confirmed(&self, d: &Distinct) -> bool {
        let mut known = self.lock();
        known.doubtful.retain(|k| k != d);
        if known.most > 0 && known.counted() > known.most {
            known.made.retain(|k| k != d);
            return false;
        }
        true
    }

    /// Whether `d` has been made, by any job.
    #[cfg(feature = "process")]
    pub(crate) fn contains(&self, d: &Distinct) -> bool {
        self.lock().made.contains(d)
    }

    /// Whether `d` has been made so that evidence of it that `rests` on
    /// time alone, or not, adds nothing: made on evidence or confirmed, or
    /// claimed by time alone where this evidence is no better.
    #[cfg(feature = "process")]
    pub(crate) fn claimed(&self, d: &Distinct, rests: bool) -> bool {
        let known = self.lock();
        known.made.contains(d) && (rests || !known.doubtful.contains(d))
    }

    /// Whether `d` is claimed by time alone, not yet confirmed: it may
    /// still be let go.
    #[cfg(feature = "process")]
    pub(crate) fn pending(&self, d: &Distinct) -> bool {
        self.lock().doubtful.contains(d)
    }

    /// Whether `d` folds into a finding made already
    /// ([`Distinct::folds_into`]): listed as that one's evidence, it is
    /// kept as caught, since shrinking it buys nothing.
    fn evidence_of_made(&self, d: &Distinct) -> bool {
        d.folds_into().is_some_and(|to| self.lock().made.contains(&to))
    }

    /// Takes the keys a baseline accepts (`check/kind (cause)`): they do
    /// not count toward `--max-findings`.
    #[cfg(feature = "process")]
    pub(crate) fn accept(&self, keys: &[String]) {
        self.lock().accepted.extend_from_slice(keys);
    }

    /// How many there are, leaving out those that fold into another made
    /// ([`Distinct::folds_into`]) and those a baseline accepts (by their
    /// key, or the key they would fold into): what `--max-findings` counts.
    pub(crate) fn len(&self) -> usize {
        self.lock().counted()
    }

    /// Counts one more search session that showed `d`.
    fn hit(&self, d: &Distinct) {
        *self.lock().hits.entry(d.clone()).or_default() += 1;
    }

    /// How many search sessions showed `d`, in every job.
    pub(crate) fn hits(&self, d: &Distinct) -> u32 {
        self.lock().hits.get(d).copied().unwrap_or(0)
    }

    /// Records what showed each finding `run` shows within `scope`: the
    /// rule of each violation, under its cause, and `spec` drawn with
    /// `salt` as the first witness of each.
    pub(crate) fn saw(
        &self,
        scope: super::scope::Scope,
        (script, obs, violations): &SessionRun,
        (spec, salt): (&ScriptSpec, u32),
    ) {
        let mut known = self.lock();
        for v in scope.reported(violations, script, obs) {
            if let Some(rule) = evidence(v, script) {
                let d = distinct(v, script, obs);
                let witnesses = known.witnesses.entry(d.clone()).or_default();
                witnesses.entry(rule.clone()).or_insert_with(|| (spec.clone(), salt));
                known.rules.entry(d).or_default().insert(rule);
            }
        }
    }

    /// A witness of each rule that showed `f`'s key but none of its own
    /// session's, by rule.
    pub(crate) fn witnesses(&self, f: &Finding) -> Vec<crate::finding::Witness> {
        let own = f.own_rules();
        let known = self.lock();
        let all = known.witnesses.get(&f.distinct()).into_iter().flatten();
        let others = all.filter(|(rule, _)| !own.contains(rule));
        others.map(|(rule, (spec, salt))| crate::finding::Witness::new(rule.clone(), spec.clone(), *salt)).collect()
    }

    /// The rules that showed `d`, sorted, with those of `f`'s own session.
    pub(crate) fn rules(&self, f: &Finding) -> Vec<String> {
        let mut rules = self.lock().rules.get(&f.distinct()).cloned().unwrap_or_default();
        rules.extend(f.own_rules());
        rules.into_iter().collect()
    }
}

/// Hunts with sessions run by `run` (which may, say, share one process
/// between sessions, as long as what it reports in [`Lane::Search`],
/// [`Lane::Confirm`] and [`Lane::ConfirmTimed`] holds for a fresh one; a
/// shrunk script is confirmed in [`Lane::Confirm`], or in
/// [`Lane::ConfirmTimed`] with longer waits where its finding rests on
/// time alone, before it is reported; [`Lane::Search`] has more
/// room where the runner gives the hunt a shared process's history),
/// for every distinct finding [`HuntConfig::max_findings`] allows, each
/// shrunk within [`HuntConfig::max_shrink_ms`]. The callback hears the
/// search and the shrinking, and stops either by returning false. Under
/// [`Policy::Auto`](crate::Policy::Auto) it runs no probe: each session is
/// held to the policy it shows ([`hunt_all`](super::hunt_all) probes first).
/// Findings are folded as [`hunt_all`](super::hunt_all) says.
pub fn hunt_by(
    cfg: &HuntConfig,
    scripts: BoxedStrategy<ScriptSpec>,
    progress: &dyn Fn(&Progress) -> bool,
    run: &OwnRunner,
) -> Result<Vec<Finding>, Fault> {
    let run = |spec: &ScriptSpec, salt: u32, lane: Lane| run(spec, salt, lane).map(into_session_run);
    let found = hunt_among(cfg, scripts, progress, (&run, None), &Known::default(), &|_| {})?;
    // One finding per behaviour: a success answer folds into the effect
    // of the same cause ([`Distinct::folds_into`]).
    Ok(crate::finding::fold(found, |f| f).0)
}

/// [`hunt_by`], leaving alone what `known` holds (another job's findings)
/// and adding its own. `found` hears each finding as soon as a search
/// session has shown it (before it is shrunk; state-dependent until a fresh
/// session repeats it, where a shared process showed it), and again once
/// shrunk and confirmed, so a run stopped meanwhile keeps it. Where `flight` takes a
/// finding that shows only once a deadline has passed, it is shrunk in flight
/// ([`super::flight`]) rather than one candidate at a time. Where the
/// flight hands findings apart ([`Flight::apart`]), each is handed as it is
/// caught and neither shrunk here nor returned: a [`Shrinker`] reports it.
pub(crate) fn hunt_among<'a>(
    cfg: &HuntConfig,
    scripts: BoxedStrategy<ScriptSpec>,
    progress: &dyn Fn(&Progress) -> bool,
    (run, flight): (&'a Runner<'a>, Option<&'a Flight<'a>>),
    known: &Known,
    found: &dyn Fn(&Finding),
) -> Result<Vec<Finding>, Fault> {
    let start = Instant::now();
    // A lane drawing the own-process part has salts apart from the rest.
    let sessions = if cfg.part == Part::Own { OWN_SESSIONS } else { 0 };
    let mut state = Hunt { cfg, run, flight, progress, known, found, halted: false, start, searched: 0, sessions };
    let mut findings = Vec::new();
    for round in 0.. {
        let room = cfg.max_findings == 0 || known.len() < cfg.max_findings as usize;
        if state.searched >= cfg.cases || !room || state.halted {
            break;
        }
        match state.round(round, scripts.clone(), None)? {
            Round::Found(f) => {
                found(&f);
                findings.push(*f); // claimed when it was caught
            }
            // Not a finding: another session may still show it, and then
            // a confirmation may repeat it.
            Round::Unconfirmed(d) => {
                known.forget(&d);
                progress(&not_reported(d, state.halted));
            }
            Round::Handed => {}
            Round::Done => break,
        }
    }
    for f in &mut findings {
        f.hits = known.hits(&f.distinct()).max(1);
        f.rules = known.rules(f);
        f.witnesses = known.witnesses(f);
    }
    Ok(findings)
}

/// Shrinks and confirms, one after another, the findings a search hands
/// apart ([`Flight::apart`]), with sessions run by a runner of its own
/// (another process of the server, while the search goes on). Its salts
/// are apart from the search's.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) struct Shrinker<'a> {
    hunt: Hunt<'a>,
}

#[cfg_attr(not(feature = "cli"), allow(dead_code))]
impl<'a> Shrinker<'a> {
    /// A lane shrinking for `cfg`'s hunts (each part of the mix drawn by
    /// [`super::strategy`]); `progress` hears its shrinking and stops it by
    /// returning false (the findings still handed are then reported as
    /// caught).
    pub(crate) fn new(
        cfg: &'a HuntConfig,
        progress: &'a dyn Fn(&Progress) -> bool,
        (run, flight): (&'a Runner<'a>, Option<&'a Flight<'a>>),
        known: &'a Known,
    ) -> Shrinker<'a> {
        let start = Instant::now();
        let hunt = Hunt {
            cfg,
            run,
            flight,
            progress,
            known,
            found: &|_| {},
            halted: false,
            start,
            searched: 0,
            sessions: SHRINKER_SESSIONS,
        };
        Shrinker { hunt }
    }

    /// Runs no more sessions: what is handed from now on is reported as
    /// the search caught it.
    pub(crate) fn halt(&mut self) {
        self.hunt.halted = true;
    }

    /// `handed`, shrunk and confirmed; `None` where it rests on time alone
    /// and no fresh session repeated it (then the search may make it again).
    pub(crate) fn shrink(&mut self, handed: Handed) -> Result<Option<Finding>, Fault> {
        // Told to stop meanwhile (a signal, --duration), it runs nothing
        // more: the finding is reported as the search caught it.
        let (key, at) = (handed.key.clone(), Duration::ZERO);
        self.hunt.halted |= !(self.hunt.progress)(&Progress::Shrinking { finding: key, steps: 0, elapsed: at });
        // Drawn again as the hunt that caught it drew it.
        let scripts = super::strategy(&HuntConfig { part: handed.part, ..self.hunt.cfg.clone() });
        match self.hunt.round(0, scripts, Some(handed))? {
            Round::Found(f) => Ok(Some(*f)),
            Round::Unconfirmed(d) => {
                self.hunt.known.forget(&d);
                (self.hunt.progress)(&not_reported(d, self.hunt.halted));
                Ok(None)
            }
            Round::Handed | Round::Done => Ok(None),
        }
    }
}

/// The first session number of a [`Shrinker`]: its salts differ from
/// every search session's.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
const SHRINKER_SESSIONS: u32 = 1 << 30;

/// The first session number of a hunt drawing [`Part::Own`]: its salts
/// differ from those of the search beside it.
const OWN_SESSIONS: u32 = 1 << 29;

/// A hunt's state across its rounds.
struct Hunt<'a> {
    cfg: &'a HuntConfig,
    run: &'a Runner<'a>,
    flight: Option<&'a Flight<'a>>,
    progress: &'a dyn Fn(&Progress) -> bool,
    known: &'a Known,
    found: &'a dyn Fn(&Finding),
    /// Whether the callback stopped the hunt.
    halted: bool,
    start: Instant,
    /// Search sessions run, all rounds together.
    searched: u32,
    /// Sessions run, shrinking and reporting included: each has a salt of
    /// its own.
    sessions: u32,
}

/// Whether the finding `d` that `run` showed rests on time alone.
fn rests_on_time(d: &Distinct, (script, obs, violations): &SessionRun) -> bool {
    d.rests_on_time(violations, script, obs)
}

/// The findings `shown` (in the order checks are reported) of a search
/// session that showed `run`, in the order one is claimed: those shown on
/// evidence before those by time alone. A verdict by time alone may be the
/// load's, and one no patient session confirms must not hide what the
/// session showed happen (an effect of a rejected frame, a call acted
/// twice). A session whose first violation is an early end it showed
/// (an exit, a crash) shows that alone: it explains the answers that did
/// not come after it, which are no finding each; where that first one
/// rests on time (still running after EOF, a stall), it hides only the
/// others that rest on time or on what did not come (an answer, the end of
/// a line, which a server still running may yet write).
fn claimable(mut shown: Vec<Distinct>, run: &SessionRun) -> Vec<Distinct> {
    let (script, obs, violations) = run;
    let timed = |d: &Distinct| rests_on_time(d, run);
    // Each of its violations something that did not come (an answer, an
    // effect, the end of a line) or a verdict by time.
    let lacked = |d: &Distinct| {
        let mut of_d = violations.iter().filter(|v| distinct(v, script, obs) == *d);
        of_d.all(|v| v.kind.absent() || crate::finding::on_time(v, script, obs))
    };
    if let Some(first) = shown.first().filter(|d| d.check == CheckId::Liveness).cloned() {
        match timed(&first) {
            false => shown.truncate(1),
            true => shown.retain(|d| *d == first || !lacked(d)),
        }
    }
    shown.dedup();
    shown.sort_by_cached_key(timed);
    shown
}

/// The findings `run` shows within `cfg`'s scope.
fn judged(cfg: &HuntConfig, run: &SessionRun) -> Vec<Distinct> {
    super::scope::Scope::from(cfg).judged(run)
}

/// Whether the finding `d` that `run` showed shows only once a deadline
/// has passed, so that each of its shrinking steps waits it out.
fn at_a_deadline(d: &Distinct, (script, obs, violations): &SessionRun) -> bool {
    let late =
        |v: &crate::check::Violation| v.kind.shows_at_a_deadline() || crate::finding::null_at_a_deadline(v, script);
    violations.iter().any(|v| late(v) && distinct(v, script, obs) == *d)
}

/// `f`, reported as a shared process showed it, after `history` and with
/// the salt its tokens carried there, where it was (no fresh session has
/// repeated it): state-dependent.
fn unconfirmed(f: Finding, history: Option<(Vec<Script>, u32)>) -> Finding {
    match history {
        Some((history, salt)) => Finding { history, salt, confirmed: false, ..f },
        None => f,
    }
}

/// How a round ended.
enum Round {
    /// With a finding, shrunk and confirmed.
    Found(Box<Finding>),
    /// With a finding that rests on time alone and that no fresh session
    /// with waits four times as long repeated.
    Unconfirmed(Distinct),
    /// With a finding handed to be shrunk and confirmed apart.
    Handed,
    /// With the cases spent, or stopped.
    Done,
}

impl Hunt<'_> {
    /// The seed of round `round`: the hunt's own first, so a first finding
    /// comes where it always did.
    fn seed(&self, round: u32) -> u64 {
        if round == 0 {
            return self.cfg.seed;
        }
        let mut h = DefaultHasher::new();
        (self.cfg.seed, round).hash(&mut h);
        h.finish()
    }

    /// One round: the next distinct finding, shrunk and confirmed, or
    /// handed to be where the flight hands catches apart. With `replay`,
    /// the round that caught a handed finding: its cases drawn again unrun
    /// up to the one that caught it, which proptest then shrinks here.
    fn round(
        &mut self,
        round: u32,
        scripts: BoxedStrategy<ScriptSpec>,
        replay: Option<Handed>,
    ) -> Result<Round, Fault> {
        let cfg = self.cfg;
        let (seed, cases) =
            replay.as_ref().map_or((self.seed(round), cfg.cases - self.searched), |h| (h.seed, h.cases));
        let hand = self.flight.and_then(|f| f.apart).filter(|_| replay.is_none());
        let config = Config {
            cases,
            // A round that hands its finding apart persists no failure: its
            // replay must draw the same cases as it did.
            failure_persistence: cfg
                .persistence
                .filter(|_| hand.is_none() && replay.is_none())
                .map(|p| Box::new(FileFailurePersistence::Direct(p)) as _),
            max_shrink_iters: cfg.max_shrink_iters,
            // The shrink bound is kept below rather than by proptest, which
            // would print a line naming its own setting, not the caller's.
            max_shrink_time: 0,
            // A part of the mix is drawn by leaving out the rest: a night's
            // campaign leaves out more than proptest's default bound.
            max_local_rejects: u32::MAX,
            ..Config::default()
        };
        let shrink_bound = Duration::from_millis(u64::from(cfg.max_shrink_ms));
        let mut runner = seeded_runner(config, seed);
        let caught: RefCell<Option<Distinct>> = RefCell::new(replay.as_ref().map(|h| h.key.clone()));
        let fault: RefCell<Option<Fault>> = RefCell::new(None);
        let (searched, sessions, steps) = (Cell::new(self.searched), Cell::new(self.sessions), Cell::new(0u32));
        // A replay's case, the search sessions run until it and when it
        // was first seen.
        let case = replay.as_ref().map(|h| h.case);
        let handed_at = replay.as_ref().map(|h| (h.found_at, h.first_seen));
        // The session the search caught (a replay's is known from the
        // start), and the candidates the shrinking accepted since,
        // smallest last.
        let caught_run: RefCell<Option<Caught>> = RefCell::new(replay.map(|h| h.caught));
        // Cases drawn this round, shrinking candidates included; the one
        // the search hands, when it does; whether a replay drew another
        // case than the one handed (a failure persisted meanwhile runs
        // first): the caught session is then reported unshrunk.
        let drawn = Cell::new(0u32);
        let handing: Cell<Option<u32>> = Cell::new(None);
        let strayed = Cell::new(false);
        let accepted: RefCell<Vec<ScriptSpec>> = RefCell::new(Vec::new());
        let first_caught: Cell<Option<Instant>> = Cell::new(None);
        // A lane told to stop shrinks none of what is still handed to it.
        let (stopped, halted) = (Cell::new(false), Cell::new(self.halted));
        // Whether the caught finding is shrunk in flight, after proptest
        // has given up on candidates passed unrun.
        let in_flight = Cell::new(false);
        // What each shrinking candidate run wrote, and whether it showed
        // the finding.
        let tried: RefCell<HashMap<Vec<u8>, bool>> = RefCell::default();
        let out_of_time = || cfg.max_shrink_ms > 0 && first_caught.get().is_some_and(|t| t.elapsed() >= shrink_bound);
        let evidence = || caught.borrow().as_ref().is_some_and(|d| self.known.evidence_of_made(d));
        let result = runner.run(&scripts, |spec| {
            drawn.set(drawn.get() + 1);
            if fault.borrow().is_some() {
                return Err(TestCaseError::fail("harness fault"));
            }
            match case.map(|c| drawn.get().cmp(&c)) {
                Some(std::cmp::Ordering::Less) => return Ok(()),
                Some(std::cmp::Ordering::Equal) => {
                    first_caught.set(Some(Instant::now()));
                    let key = caught.borrow().clone().expect("a replay names its finding");
                    return Err(self.replayed(&spec, &key, &caught_run, (&strayed, &in_flight)));
                }
                _ => {}
            }
            // Once stopped before a failure, every case is rejected unrun, so
            // proptest gives up after its reject limit instead of drawing every
            // case left; out of shrinking time (or told to stop, or shrinking
            // the evidence of a finding made), every candidate passes unrun
            // and proptest ends with the last failing one.
            if stopped.get() {
                return Err(TestCaseError::reject("stopped"));
            }
            if out_of_time()
                || evidence()
                || halted.get()
                || in_flight.get()
                || handing.get().is_some()
                || strayed.get()
            {
                return Ok(());
            }
            let shrinking = caught.borrow().clone();
            // A candidate that writes what one already run wrote (a choice
            // that renders the same, such as another pick of the one tool)
            // shows what that one showed, unrun.
            let written = self.flight.filter(|_| shrinking.is_some()).and_then(|f| (f.written)(&spec));
            if let (Some(d), Some(shown)) = (&shrinking, written.as_ref().and_then(|w| tried.borrow().get(w).copied()))
            {
                if !shown {
                    return Ok(());
                }
                accepted.borrow_mut().push(spec.clone());
                return Err(TestCaseError::fail(d.to_string()));
            }
            match &shrinking {
                None => searched.set(searched.get() + 1),
                Some(_) => steps.set(steps.get() + 1),
            }
            sessions.set(sessions.get() + 1);
            let salt = super::salt(cfg, sessions.get());
            let lane = shrinking.clone().map_or(Lane::Search, Lane::Shrink);
            let outcome = (self.run)(&spec, salt, lane);
            let go_on = match &shrinking {
                None => (self.progress)(&Progress::Searched(searched.get())),
                Some(d) => {
                    let elapsed = first_caught.get().map_or(Duration::ZERO, |t| t.elapsed());
                    (self.progress)(&Progress::Shrinking { finding: d.clone(), steps: steps.get(), elapsed })
                }
            };
            if !go_on {
                match shrinking {
                    None => stopped.set(true),
                    Some(_) => halted.set(true),
                }
            }
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(f) => {
                    *fault.borrow_mut() = Some(f);
                    return Err(TestCaseError::fail("harness fault"));
                }
            };
            let shown = judged(cfg, &outcome);
            if shrinking.is_none() {
                self.known.saw(super::scope::Scope::from(cfg), &outcome, (&spec, salt));
            }
            if let (Some(d), Some(w)) = (&shrinking, written) {
                tried.borrow_mut().insert(w, shown.contains(d));
            }
            let hit = match &shrinking {
                // The first finding no job has made, in the order one is
                // claimed ([`claimable`]), claimed at once so no other job
                // shrinks it too.
                None => {
                    let shown = claimable(shown, &outcome);
                    shown.iter().for_each(|d| self.known.hit(d));
                    shown.into_iter().find(|d| self.known.claim(d, rests_on_time(d, &outcome)))
                }
                // While shrinking, only the same finding counts, so
                // shrinking cannot wander to another bug.
                Some(d) => shown.contains(d).then(|| d.clone()),
            };
            match hit {
                Some(d) => {
                    let why = d.to_string();
                    *caught.borrow_mut() = Some(d.clone());
                    match shrinking {
                        // Heard at once unless it rests on time alone, which
                        // only a run with longer waits confirms.
                        None => {
                            let history = self.flight.and_then(|f| (f.history)(salt));
                            if !rests_on_time(&d, &outcome) {
                                let at = self.start.elapsed();
                                let f = self.finding(&d, spec.clone(), outcome.clone(), salt, searched.get(), Some(at));
                                (self.found)(&Finding { shrink_ran_out: true, ..unconfirmed(f, history.clone()) });
                            }
                            // Handed apart, unless stopped: then reported as caught.
                            if hand.is_some() && !stopped.get() {
                                handing.set(Some(drawn.get()));
                            }
                            let flies = self.flight.is_some_and(|f| (f.takes)(&d, &spec));
                            in_flight.set(handing.get().is_none() && flies && at_a_deadline(&d, &outcome));
                            *caught_run.borrow_mut() = Some(Caught { spec: spec.clone(), run: outcome, salt, history });
                        }
                        Some(_) => accepted.borrow_mut().push(spec.clone()),
                    }
                    first_caught.set(first_caught.get().or(Some(Instant::now())));
                    Err(TestCaseError::fail(why))
                }
                None => Ok(()),
            }
        });
        self.sessions = sessions.get() + 1;
        self.halted = stopped.get() || halted.get();
        let found_at = searched.get();
        self.searched = searched.get();
        if let Some(f) = fault.into_inner() {
            return Err(f);
        }
        // A replay that did not reach its case, or drew another, reports
        // the caught session unshrunk (it may cut down further).
        let caught_spec = || caught_run.borrow().as_ref().map(|c| c.spec.clone());
        let unshrunk = case.is_some() && (result.is_ok() || strayed.get());
        let spec = match result {
            Ok(()) if case.is_none() => return Ok(Round::Done),
            Ok(()) => caught_spec().expect("a replay holds its caught session"),
            Err(TestError::Abort(_)) if stopped.get() => {
                self.searched = cfg.cases;
                return Ok(Round::Done);
            }
            Err(TestError::Fail(..)) if strayed.get() => caught_spec().expect("a replay holds its caught session"),
            Err(TestError::Fail(_, spec)) => spec,
            Err(TestError::Abort(why)) => return Err(Fault::config(format!("proptest aborted: {why}"))),
        };
        let d = caught.into_inner().expect("a failure names its finding");
        if let (Some(case), Some(hand)) = (handing.get(), hand) {
            let caught = caught_run.into_inner().expect("a failure keeps the session that caught it");
            let first_seen = first_caught.get().map(|t| t.saturating_duration_since(self.start));
            hand(Handed { seed, cases, case, part: cfg.part, key: d, caught, found_at, first_seen });
            return Ok(Round::Handed);
        }
        let mut accepted = accepted.into_inner();
        let spec = match (self.flight, first_caught.get()) {
            (Some(flight), Some(since)) if in_flight.get() && !self.halted => {
                self.shrink_in_flight(&d, spec, flight, since, &mut accepted)?
            }
            _ => spec,
        };
        // Out of shrinking time, told to stop (an interrupt, --duration,
        // enough findings elsewhere), or evidence of a finding made: the
        // script may cut down further.
        let shrink_ran_out = out_of_time() || self.known.evidence_of_made(&d) || self.halted || unshrunk;
        let first_seen = first_caught.get().map(|t| t.saturating_duration_since(self.start));
        let (found_at, first_seen) = handed_at.unwrap_or((found_at, first_seen));
        let caught_run = caught_run.into_inner().expect("a failure keeps the session that caught it");
        let Some(Caught { spec, run, salt, history }) = self.confirm(&d, spec, accepted, caught_run)? else {
            return Ok(Round::Unconfirmed(d));
        };
        // Confirmed by time alone once other jobs made the last findings
        // the run makes: past --max-findings.
        if !self.known.confirmed(&d) {
            (self.progress)(&Progress::PastBound { finding: d });
            return Ok(Round::Done);
        }
        let f = self.finding(&d, spec, run, salt, found_at, first_seen);
        Ok(Round::Found(Box::new(Finding { shrink_ran_out, ..unconfirmed(f, history) })))
    }

    /// The replay of a handed round has drawn its case again, `spec`:
    /// the failure proptest shrinks, unrun. Where it is not the case the
    /// search caught, the round only reports the caught session.
    fn replayed(
        &self,
        spec: &ScriptSpec,
        key: &Distinct,
        caught: &RefCell<Option<Caught>>,
        (strayed, in_flight): (&Cell<bool>, &Cell<bool>),
    ) -> TestCaseError {
        let caught = caught.borrow();
        let Caught { spec: was, run, .. } = caught.as_ref().expect("a replay holds its caught session");
        strayed.set(spec != was);
        let flies = self.flight.is_some_and(|f| (f.takes)(key, spec));
        in_flight.set(!strayed.get() && flies && at_a_deadline(key, run));
        TestCaseError::fail(key.to_string())
    }

    /// The finding `d` that a session of `spec` showed.
    fn finding(
        &self,
        d: &Distinct,
        spec: ScriptSpec,
        run: SessionRun,
        salt: u32,
        found_at: u32,
        first_seen: Option<Duration>,
    ) -> Finding {
        let cfg = self.cfg;
        Finding {
            cases_until_caught: found_at,
            hits: 0,
            first_seen,
            ..Finding::shown(d, spec, run, salt, (cfg.seed, cfg.policy))
        }
    }
}

impl Hunt<'_> {
    /// Shrinks `spec`, which shows `d`, in flight: rounds of candidates
    /// run together until none shows it, within the shrinking bounds
    /// counted from `since`. Each candidate that showed it and was kept is
    /// added to `accepted`; the smallest is returned.
    fn shrink_in_flight(
        &mut self,
        d: &Distinct,
        mut spec: ScriptSpec,
        flight: &Flight,
        since: Instant,
        accepted: &mut Vec<ScriptSpec>,
    ) -> Result<ScriptSpec, Fault> {
        let cfg = self.cfg;
        let bound = Duration::from_millis(u64::from(cfg.max_shrink_ms));
        let mut steps = 0u32;
        while (cfg.max_shrink_ms == 0 || since.elapsed() < bound) && steps < cfg.max_shrink_iters {
            let candidates = cuts(&spec);
            if candidates.is_empty() {
                break;
            }
            // Each its own salt; `self.sessions` stays the next unused.
            let round: Vec<(ScriptSpec, u32)> = candidates
                .iter()
                .map(|c| {
                    let salt = super::salt(cfg, self.sessions);
                    self.sessions += 1;
                    (c.clone(), salt)
                })
                .collect();
            let until = (cfg.max_shrink_ms > 0).then(|| since + bound);
            let runs = (flight.run)(&round, d, until)?;
            steps += runs.len() as u32;
            let go_on = (self.progress)(&Progress::Shrinking { finding: d.clone(), steps, elapsed: since.elapsed() });
            let shown: Vec<bool> = runs.iter().map(|run| judged(cfg, run).contains(d)).collect();
            match smallest(candidates, &shown) {
                Some(smaller) => {
                    accepted.push(smaller.clone());
                    spec = smaller;
                }
                None => break,
            }
            if !go_on {
                self.halted = true;
                break;
            }
        }
        Ok(spec)
    }

    /// The session a finding is reported with: the shrunk script run fresh
    /// ([`Lane::Confirm`]), with tokens of its own (a server that remembers
    /// the last run's would ignore its calls). Where a fresh session does
    /// not repeat it (the shrinking ran in a shared process, whose state
    /// helped, or the server is flaky), the accepted candidates are tried
    /// fresh from the smallest back, at doubling distances, and then the
    /// script the search caught, each in [`Lane::Confirm`], or in
    /// [`Lane::ConfirmTimed`] (longer waits still) where the finding rests
    /// on time alone. Where none repeats it, a finding that rests on time
    /// alone is not confirmed (`None`); any other is
    /// reported with the session the search caught, and the history of
    /// its shared process if it ran in one. Where no cut showed the
    /// finding and the search's session ran fresh, that session is it.
    fn confirm(
        &mut self,
        d: &Distinct,
        minimal: ScriptSpec,
        mut accepted: Vec<ScriptSpec>,
        caught: Caught,
    ) -> Result<Option<Caught>, Fault> {
        let timed = rests_on_time(d, &caught.run);
        // Told to stop, nothing more runs: a finding is reported as the
        // search caught it, unless it rests on time alone and so is not.
        if self.halted {
            return Ok((!timed).then_some(caught));
        }
        if accepted.is_empty() && minimal == caught.spec && !timed && caught.history.is_none() {
            return Ok(Some(caught));
        }
        if accepted.last() != Some(&minimal) {
            accepted.push(minimal);
        }
        let mut tries: Vec<&ScriptSpec> = Vec::new();
        let mut back = 0;
        while back < accepted.len() {
            tries.push(&accepted[accepted.len() - 1 - back]);
            back = back * 2 + 1;
        }
        if tries.last() != Some(&&caught.spec) {
            tries.push(&caught.spec);
        }
        for spec in tries {
            let salt = super::salt(self.cfg, self.sessions);
            self.sessions += 1;
            // Resting on time, it must hold with longer waits still.
            let lane = if timed { Lane::ConfirmTimed } else { Lane::Confirm };
            let again = (self.run)(spec, salt, lane)?;
            if judged(self.cfg, &again).contains(d) {
                return Ok(Some(Caught { spec: spec.clone(), run: again, salt, history: None }));
            }
        }
        Ok((!timed).then_some(caught))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckId;
    use crate::protocol::{Policy, Revision};
    use crate::reference::{Mutant, Reference};
    use std::collections::HashSet;

    /// A session of one valid call showing each of `kinds` on the call,
    /// and what it shows in the order a search claims one.
    fn claimed(kinds: &[(CheckId, crate::check::Kind)]) -> Vec<String> {
        let spec = ScriptSpec::whole(Revision::LATEST, vec![crate::attack::Step::Control(0)]);
        let script = spec.render(&crate::Catalogue::reference(), 1);
        let call = script.frames.len() - 1;
        let v = |(check, kind): &(CheckId, crate::check::Kind)| Violation {
            check: *check,
            frame: Some(call),
            span: None,
            kind: kind.clone(),
        };
        let run: SessionRun = (script.into(), Observation::none(), kinds.iter().map(v).collect());
        let shown = run.2.iter().map(|v| distinct(v, &run.0, &run.1)).collect();
        claimable(shown, &run).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_session_still_running_after_eof_is_claimed_for_what_it_showed_happen_first() {
        use crate::check::Kind;
        let late = (CheckId::Liveness, Kind::RunningAfterEof);
        let crashed = (CheckId::Liveness, Kind::Crashed { said: "killed by signal 9".into() });
        let twice = (CheckId::ExactlyOnce, Kind::ExecutedTimes { id: "2".into(), times: 2 });
        let unanswered = (CheckId::Correlation, Kind::Unanswered { id: "2".into() });
        let (late_key, twice_key) = ("liveness/running_after_eof", "exactly-once/executed_times (valid_call)");
        // Under load a server may exit past the grace: that verdict, which
        // a patient session may not repeat, neither hides the call acting
        // twice nor comes before it; the answer it may explain goes.
        let all = [late.clone(), twice.clone(), unanswered.clone()];
        assert_eq!(claimed(&all), [twice_key, late_key]);
        // Nor is a line not yet ended, which a server still running may end.
        let unended = (CheckId::StdoutClean, Kind::AfterLastLf { bytes: 3 });
        assert_eq!(claimed(&[late.clone(), unended]), [late_key]);
        assert_eq!(claimed(std::slice::from_ref(&late)), [late_key]);
        // An end the session showed explains everything after it.
        assert_eq!(claimed(&[crashed, twice.clone()]), ["liveness/crashed (valid_call)"]);
        // Without a liveness verdict, evidence first, then time.
        assert_eq!(claimed(&[twice, unanswered]), [twice_key, "correlation/unanswered (valid_call)"]);
    }

    #[test]
    fn a_finding_on_evidence_is_made_though_each_session_also_ran_past_eof_unconfirmed() {
        // On a loaded machine a server may exit past the grace in every
        // session: a verdict by time alone, which sorts first and which no
        // patient session repeats. The mutant's finding is made all the
        // same, and nothing by time alone is reported.
        let cfg = HuntConfig { cases: 256, policy: Policy::KeepOpen, ..Default::default() };
        let bugged = Reference::mutant(Mutant::BoolId);
        let late =
            Violation { check: CheckId::Liveness, frame: None, span: None, kind: crate::check::Kind::RunningAfterEof };
        let run = |spec: &ScriptSpec, salt: u32, lane: Lane| {
            let mut run = into_session_run(super::super::session(&bugged, cfg.policy, spec, salt)?);
            if lane == Lane::Search {
                run.2.insert(0, late.clone());
            }
            Ok(run)
        };
        let scripts = super::super::strategy(&cfg);
        let found = hunt_among(&cfg, scripts, &|_| true, (&run, None), &Known::default(), &|_| {});
        let keys: Vec<String> = found.expect("the harness runs").iter().map(|f| f.distinct().to_string()).collect();
        assert!(!keys.is_empty(), "the mutant is caught");
        assert!(keys.iter().all(|k| !k.starts_with("liveness")), "{keys:?}");
    }

    /// What `--max-findings` counts: neither a finding a baseline accepts
    /// (by its key, or the key it would fold into) nor one that folds
    /// into a finding made already.
    #[test]
    #[cfg(feature = "process")]
    fn max_findings_counts_neither_accepted_nor_folded_findings() {
        let key = |check, kind: &str, what: &str| Distinct { check, kind: kind.into(), what: what.into() };
        let effect = key(CheckId::NoEffectOnReject, "effect_of_rejected", "invalid_request");
        let answer = key(CheckId::Correlation, "rejected_succeeded", "invalid_request");
        let other = key(CheckId::Correlation, "unanswered", "unparseable_line");
        let known = Known::default();
        known.accept(&[effect.to_string()]);
        known.add(&effect);
        known.add(&answer);
        assert_eq!(known.len(), 0, "accepted, and accepted through the key it folds into");
        known.add(&other);
        assert_eq!(known.len(), 1);
        let unaccepted = Known::default();
        unaccepted.add(&effect);
        unaccepted.add(&answer);
        assert_eq!(unaccepted.len(), 1, "the answer folds into its effect");
        // Lanes drawing at once claim no more than the bound between them:
        // one past it is not made, one that does not count still is.
        let bounded = Known::default();
        bounded.most(1);
        assert!(bounded.add(&effect));
        assert!(!bounded.add(&other), "a second finding past --max-findings 1");
        assert!(bounded.add(&answer), "it folds into the effect made, and does not count");
        assert!(!bounded.add(&effect), "made already");
        assert_eq!((bounded.len(), bounded.contains(&other)), (1, false));
        // An effect whose success answer was made first takes its place.
        let answered = Known::default();
        answered.most(1);
        assert!(answered.add(&answer));
        assert!(answered.add(&effect), "the answer folds into it: the count stays one");
        assert_eq!(answered.len(), 1);
    }

    /// A claim by time alone does not count toward `--max-findings` until
    /// a patient session confirms it: no lane stops drawing for it, and
    /// another lane's finding meanwhile takes the room.
    #[test]
    #[cfg(feature = "process")]
    fn a_claim_by_time_alone_counts_only_once_confirmed() {
        let key = |check, kind: &str| Distinct { check, kind: kind.into(), what: String::new() };
        let (late, twice) = (key(CheckId::Liveness, "running_after_eof"), key(CheckId::ExactlyOnce, "executed_times"));
        let known = Known::default();
        known.most(1);
        assert!(known.claim(&late, true));
        assert_eq!(known.len(), 0, "pending, it leaves room");
        assert!(known.contains(&late) && !known.add(&late), "claimed: no other job shrinks it");
        known.forget(&late);
        assert!(known.claim(&late, true), "forgotten, it may be claimed again");
        assert!(known.add(&twice), "another lane's finding meanwhile");
        assert!(!known.confirmed(&late), "no room left once confirmed");
        assert_eq!((known.len(), known.contains(&late)), (1, false));
        let alone = Known::default();
        alone.most(1);
        assert!(alone.claim(&late, true));
        assert!(alone.confirmed(&late));
        assert_eq!(alone.len(), 1, "confirmed, it counts");
        assert!(!alone.add(&twice), "and fills the room");
    }

    /// A claim by time alone that a patient session confirms after other
    /// lanes filled `--max-findings` is not reported, and the run says so.
    #[test]
    #[cfg(feature = "process")]
    fn a_timed_claim_confirmed_past_the_bound_is_told_not_dropped_silently() {
        let cfg = HuntConfig { cases: 64, policy: Policy::KeepOpen, max_findings: 1, ..Default::default() };
        let clean = Reference::strict();
        let late =
            Violation { check: CheckId::Liveness, frame: None, span: None, kind: crate::check::Kind::RunningAfterEof };
        let other = Distinct { check: CheckId::ExactlyOnce, kind: "executed_times".into(), what: String::new() };
        let known = Known::default();
        known.most(1);
        // Every session, patient ones too, shows the server running past
        // EOF; another lane makes its finding while this one is confirmed.
        let run = |spec: &ScriptSpec, salt: u32, lane: Lane| {
            if lane != Lane::Search {
                known.add(&other);
            }
            let mut run = into_session_run(super::super::session(&clean, cfg.policy, spec, salt)?);
            run.2.insert(0, late.clone());
            Ok(run)
        };
        let told = RefCell::new(Vec::new());
        let progress = |p: &Progress| {
            told.borrow_mut().push(p.clone());
            true
        };
        let scripts = super::super::strategy(&cfg);
        let found = hunt_among(&cfg, scripts, &progress, (&run, None), &known, &|_| {}).expect("the harness runs");
        assert!(found.is_empty(), "no room left for it");
        let past: Vec<_> = told.borrow().iter().filter(|p| matches!(p, Progress::PastBound { .. })).cloned().collect();
        let key = Distinct { check: CheckId::Liveness, kind: "running_after_eof".into(), what: String::new() };
        assert_eq!(past, [Progress::PastBound { finding: key }]);
        assert_eq!((known.len(), known.contains(&other)), (1, true));
    }

    #[test]
    fn a_finding_at_a_deadline_is_shrunk_in_flight_each_session_with_a_salt_of_its_own() {
        // The mutant takes a 4 KiB chunk with no LF for a line: a valid
        // call cut there never acts, which shows only at its deadline.
        let target = Reference::mutant(Mutant::ChunkedRead);
        let cfg = HuntConfig {
            cases: 512,
            policy: Policy::KeepOpen,
            focus: Some(CheckId::ExactlyOnce),
            ..Default::default()
        };
        let salts = RefCell::new(Vec::new());
        let rounds = Cell::new(0);
        let session = |spec: &ScriptSpec, salt: u32| {
            salts.borrow_mut().push(salt);
            super::super::session(&target, cfg.policy, spec, salt).map(into_session_run)
        };
        let run = |spec: &ScriptSpec, salt: u32, _: Lane| session(spec, salt);
        let takes = |_: &Distinct, _: &ScriptSpec| true;
        let together = |round: &[(ScriptSpec, u32)], _: &Distinct, _: Option<Instant>| {
            rounds.set(rounds.get() + 1);
            round.iter().map(|(spec, salt)| session(spec, *salt)).collect()
        };
        let flight = Flight { takes: &takes, run: &together, history: &|_| None, written: &|_| None, apart: None };
        let found = hunt_among(
            &cfg,
            super::super::strategy(&cfg),
            &|_| true,
            (&run, Some(&flight)),
            &Known::default(),
            &|_| {},
        );
        let found = found.expect("the harness runs");
        let f = found.first().expect("the mutant is caught");
        assert_eq!(f.distinct().kind, "never_executed", "{f:?}");
        assert!(rounds.get() > 0, "shrunk in flight");
        let salts = salts.into_inner();
        assert_eq!(salts.iter().collect::<HashSet<_>>().len(), salts.len(), "no salt twice: {salts:?}");
        assert!(f.confirmed, "what it shrank to was confirmed");
    }

    #[test]
    fn a_catch_handed_apart_is_shrunk_in_its_lane_as_inline_while_the_search_draws_on() {
        let cfg = HuntConfig { cases: 256, policy: Policy::KeepOpen, ..Default::default() };
        handed_apart_as_inline(&cfg, &cfg, Mutant::BoolId);
    }

    /// A lane drawing the own-process part hands its catches to a shrinking
    /// lane whose hunt draws every script: the lane draws each again from
    /// that part, and shrinks it as the own-process hunt would have inline.
    #[test]
    fn a_catch_of_the_own_process_part_is_drawn_again_from_that_part() {
        let all = HuntConfig { cases: 64, policy: Policy::KeepOpen, ..Default::default() };
        let own = HuntConfig { part: Part::Own, ..all.clone() };
        handed_apart_as_inline(&own, &all, Mutant::CallBeforeInitialize);
    }

    /// Hunts `mutant` with `cfg` inline, then again handing each catch to a
    /// lane that shrinks for `lane_cfg`'s hunt: the same findings, shrunk
    /// to the same scripts.
    fn handed_apart_as_inline(cfg: &HuntConfig, lane_cfg: &HuntConfig, mutant: Mutant) {
        let bugged = Reference::mutant(mutant);
        let run = |spec: &ScriptSpec, salt: u32, _: Lane| {
            super::super::session(&bugged, cfg.policy, spec, salt).map(into_session_run)
        };
        // Unfolded, as the lanes hand them.
        let scripts = super::super::strategy(cfg);
        let inline = hunt_among(cfg, scripts, &|_| true, (&run, None), &Known::default(), &|_| {});
        let inline = inline.expect("the harness runs");
        assert!(!inline.is_empty(), "the mutant is caught");
        let handed = RefCell::new(Vec::new());
        let hand = |h: Handed| handed.borrow_mut().push(h);
        let together = |_: &[(ScriptSpec, u32)], _: &Distinct, _: Option<Instant>| Ok(Vec::new());
        let flight =
            Flight { takes: &|_, _| false, run: &together, history: &|_| None, written: &|_| None, apart: Some(&hand) };
        let searched = Cell::new(0);
        let progress = |p: &Progress| {
            if let Progress::Searched(n) = p {
                searched.set(*n);
            }
            true
        };
        let known = Known::default();
        let scripts = super::super::strategy(cfg);
        let found = hunt_among(cfg, scripts, &progress, (&run, Some(&flight)), &known, &|_| {});
        assert!(found.expect("the harness runs").is_empty(), "nothing is shrunk or reported by the search");
        assert_eq!(searched.get(), cfg.cases, "the search drew every case");
        let handed = handed.into_inner();
        assert_eq!(handed.len(), inline.len(), "the same catches, at the same cases");
        // The lane runs on a thread of its own, with a target of its own.
        let shrunk = std::thread::scope(|s| {
            let lane = s.spawn(|| {
                let target = Reference::mutant(mutant);
                let run = |spec: &ScriptSpec, salt: u32, _: Lane| {
                    super::super::session(&target, cfg.policy, spec, salt).map(into_session_run)
                };
                let mut shrinker = Shrinker::new(lane_cfg, &|_| true, (&run, None), &known);
                let shrunk: Result<Vec<_>, Fault> = handed.into_iter().map(|h| shrinker.shrink(h)).collect();
                shrunk.expect("the harness runs")
            });
            lane.join().expect("the lane ends")
        });
        for (lane, inline) in shrunk.iter().zip(&inline) {
            let lane = lane.as_ref().expect("confirmed");
            assert_eq!(lane.distinct(), inline.distinct());
            assert_eq!(lane.spec, inline.spec, "proptest shrank it as it would have inline");
            assert_eq!((lane.cases_until_caught, lane.confirmed), (inline.cases_until_caught, true));
        }
    }

    #[test]
    fn a_shared_catch_no_fresh_session_repeats_is_reported_with_its_history_and_one_it_repeats_fresh() {
        // The runner's search sessions "ran in a shared process" whose
        // history it gives; its confirming sessions run against `fresh`.
        let before = ScriptSpec::whole(Revision::LATEST, vec![]).render(&crate::catalogue::Catalogue::reference(), 1);
        let history = |salt: u32| Some((vec![before.clone()], salt));
        for (fresh, repeats) in [(Reference::strict(), false), (Reference::mutant(Mutant::BoolId), true)] {
            let caught = Reference::mutant(Mutant::BoolId);
            let cfg = HuntConfig { cases: 256, policy: Policy::KeepOpen, ..Default::default() };
            let run = |spec: &ScriptSpec, salt: u32, lane: Lane| match lane {
                Lane::Confirm | Lane::ConfirmTimed => {
                    super::super::session(&fresh, cfg.policy, spec, salt).map(into_session_run)
                }
                _ => super::super::session(&caught, cfg.policy, spec, salt).map(into_session_run),
            };
            let together = |_: &[(ScriptSpec, u32)], _: &Distinct, _: Option<Instant>| Ok(Vec::new());
            let flight =
                Flight { takes: &|_, _| false, run: &together, history: &history, written: &|_| None, apart: None };
            let scripts = super::super::strategy(&cfg);
            let found = hunt_among(&cfg, scripts, &|_| true, (&run, Some(&flight)), &Known::default(), &|_| {});
            let found = found.expect("the harness runs");
            let f = found.first().expect("the mutant is caught");
            assert_eq!(f.confirmed, repeats, "{f:?}");
            assert_eq!(f.history.is_empty(), repeats, "the history only where no fresh session repeated it");
            let own = format!("pc{:08x}t", f.salt);
            assert!(String::from_utf8_lossy(&f.script.stdin()).contains(&own), "the salt its tokens carry");
        }
    }
}

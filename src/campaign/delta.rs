//! Delta debugging of a failing script, for targets proptest's shrinking
//! cannot reach (a saved artifact, a child process): first whole frames,
//! then bytes within each frame. A candidate is kept only when the target
//! still shows the same finding (its [`Distinct`] key: check, kind and
//! rule) and the strict reference gateway, run in-process over the same
//! tools, still agrees with every label — so a cut never turns a
//! must-reject frame into a valid one (or the other way) behind the labels'
//! back. A cut that drops the handshake and keeps what came after it
//! changes what those frames are (a call before `initialize`), and is
//! never kept.

use super::{FreshRun, run_fresh, run_script};
use crate::check::Violation;
use crate::finding::{Distinct, distinct};
use crate::observation::Observation;
use crate::protocol::Policy;
use crate::reference::Reference;
use crate::script::Script;
use crate::seam::{Fault, Target};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The outcome of a minimization.
#[derive(Debug)]
pub struct Minimized {
    /// The smallest failing script found, with the tokens of its last run.
    pub script: Script,
    /// The salt of those tokens. Every run against the target gets tokens
    /// of its own, so a server that remembers a call meets each as new.
    pub salt: u32,
    /// What it showed.
    pub observation: Observation,
    /// Its violations, the minimized check's first.
    pub violations: Vec<Violation>,
    /// Sessions run against the target.
    pub runs: usize,
    /// Whether byte-level cuts were checked against the reference (when the
    /// reference disagrees with the original labels, only frames are cut).
    pub oracle: bool,
    /// Whether the time budget ran out before a fixpoint.
    pub out_of_time: bool,
}

struct Search<'a, T: Target> {
    target: &'a T,
    reference: Reference,
    policy: Policy,
    key: &'a Distinct,
    /// Whether the script began with its handshake.
    handshake: bool,
    salt: u32,
    deadline: Instant,
    runs: usize,
    oracle: bool,
    tried: HashSet<Vec<u8>>,
}

impl<T: Target> Search<'_, T> {
    fn fails(&mut self, script: &Script) -> Result<bool, Fault> {
        if Instant::now() >= self.deadline {
            return Ok(false);
        }
        if !self.tried.insert(script.stdin()) {
            return Ok(false); // already tried, and it did not fail (or it would be the best)
        }
        if self.handshake && !script.frames.is_empty() && !has_handshake(script) {
            return Ok(false);
        }
        if self.oracle {
            let (_, v) = run_script(&self.reference, self.policy, script, self.salt)?;
            if !v.is_empty() {
                return Ok(false);
            }
        }
        self.runs += 1;
        let run = run_fresh(self.target, self.policy, script, self.salt)?;
        Ok(shows(&run, self.key))
    }
}

/// Whether a run shows the finding `key`.
fn shows(run: &FreshRun, key: &Distinct) -> bool {
    key.shown_in(&run.violations, &run.script, &run.observation)
}

/// Whether `script` holds every frame of its revision's handshake.
fn has_handshake(script: &Script) -> bool {
    let kinds = Script::handshake(script.revision).frames;
    kinds.iter().all(|h| script.frames.iter().any(|f| f.family == "handshake" && f.kind == h.kind))
}

/// One write per frame: cuts change lengths, so the original boundaries
/// no longer mean anything.
fn with_frames(base: &Script, frames: Vec<crate::frame::Frame>) -> Script {
    Script::one_write_per_frame(base.revision, frames, base.eof)
}

/// Splits bytes into lexical pieces: JSON strings (with their quotes),
/// runs of letters and digits, runs of whitespace, and single other bytes.
fn lex(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let b = bytes[i];
        i += 1;
        if b == b'"' {
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
        } else if b.is_ascii_alphanumeric() {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
        } else if b == b' ' || b == b'\t' {
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
        }
        pieces.push(bytes[start..i.min(bytes.len())].to_vec());
    }
    pieces
}

/// Classic ddmin over `items`, trying complements of ever finer chunks.
fn ddmin<I: Clone>(mut items: Vec<I>, fails: &mut dyn FnMut(&[I]) -> Result<bool, Fault>) -> Result<Vec<I>, Fault> {
    let mut n = 2;
    while items.len() >= 2 {
        let chunk = items.len().div_ceil(n);
        let mut reduced = false;
        for start in (0..items.len()).step_by(chunk) {
            let rest: Vec<I> =
                items[..start].iter().chain(items[(start + chunk).min(items.len())..].iter()).cloned().collect();
            if fails(&rest)? {
                items = rest;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if n >= items.len() {
                break;
            }
            n = (n * 2).min(items.len());
        }
    }
    Ok(items)
}

/// Minimizes `script`, which shows the finding `key` against `target`,
/// within `budget`.
pub fn minimize<T: Target>(
    target: &T,
    policy: Policy,
    script: Script,
    key: &Distinct,
    salt: u32,
    budget: Duration,
) -> Result<Minimized, Fault> {
    minimize_on(target, target, policy, script, key, salt, budget)
}

/// [`minimize`], trying candidates against `candidates` (the same gateway,
/// say, with shorter waits where the finding allows them) and running the
/// script and the result against `target`. The budget covers both runs
/// against `target`: candidates stop in time for the last one, which takes
/// about as long as the first. When the script does not fail against
/// `candidates` (their waits are too short for this gateway), candidates
/// run against `target`.
pub fn minimize_on<C: Target, T: Target>(
    candidates: &C,
    target: &T,
    policy: Policy,
    script: Script,
    key: &Distinct,
    salt: u32,
    budget: Duration,
) -> Result<Minimized, Fault> {
    let refused = || Fault::config(format!("the script does not show {key} against this target"));
    let started = Instant::now();
    if !shows(&run_fresh(target, policy, &script, salt)?, key) {
        return Err(refused());
    }
    let deadline = (started + budget).checked_sub(started.elapsed()).unwrap_or(started);
    // Sessions run: the first and the last against `target`, and the search's.
    let found = match search(candidates, policy, &script, key, salt, deadline)? {
        Some((best, runs, oracle)) => Some((best, runs + 2, oracle)),
        None if Instant::now() < deadline => {
            search(target, policy, &script, key, salt, deadline)?.map(|(best, runs, oracle)| (best, runs + 3, oracle))
        }
        None => None,
    };
    // A budget spent before a search could run the script leaves it whole:
    // it failed against `target` above.
    let (best, runs, oracle) = match found {
        Some(found) => found,
        None if Instant::now() >= deadline => (script, 2, true),
        None => return Err(refused()),
    };
    let out_of_time = Instant::now() >= deadline;
    let FreshRun { script, salt, observation, mut violations } = run_fresh(target, policy, &best, salt)?;
    violations.sort_by_key(|v| distinct(v, &script, &observation) != *key);
    Ok(Minimized { script, salt, observation, violations, runs, oracle, out_of_time })
}

/// Delta debugging of `script` against `target` until `deadline`: the
/// smallest failing script found, the sessions run, and whether the
/// reference checked the cuts; `None` if `script` itself does not fail.
fn search<T: Target>(
    target: &T,
    policy: Policy,
    script: &Script,
    key: &Distinct,
    salt: u32,
    deadline: Instant,
) -> Result<Option<(Script, usize, bool)>, Fault> {
    let reference = Reference { mutant: None, catalogue: target.catalogue().into() };
    let handshake = has_handshake(script);
    let mut search = Search {
        target,
        reference,
        policy,
        key,
        handshake,
        salt,
        deadline,
        runs: 0,
        oracle: true,
        tried: HashSet::new(),
    };
    search.oracle = run_script(&search.reference, policy, script, salt)?.1.is_empty();
    let oracle = search.oracle;
    if !search.fails(script)? {
        return Ok(None);
    }
    let frames = ddmin(script.frames.clone(), &mut |fs| search.fails(&with_frames(script, fs.to_vec())))?;
    let mut best = with_frames(script, frames);
    if oracle {
        // Bytes only of must-reject frames, and only while they keep every
        // token they carry: the attack gets smaller, attribution stays.
        let mut order: Vec<usize> =
            (0..best.frames.len()).filter(|i| best.frames[*i].expect.rule().is_some()).collect();
        order.sort_by_key(|i| std::cmp::Reverse(best.frames[*i].bytes.len()));
        // Canary URLs whole, too: a replay against another sink moves the
        // script onto it by the sink's address, and a cut one (127.0.1 still
        // reaches 127.0.0.1) would keep the old sink.
        let sink = target.catalogue().canary_base;
        let holds = |b: &[u8], part: &[u8]| memchr::memmem::find(b, part).is_some();
        for i in order {
            let base = best.clone();
            let tokens = base.frames[i].tokens.clone();
            let urls: Vec<Vec<u8>> = tokens
                .iter()
                .map(|t| format!("{sink}/{t}").into_bytes())
                .filter(|u| holds(&base.frames[i].bytes, u))
                .collect();
            let try_bytes = |b: &[u8], search: &mut Search<T>| {
                if !tokens.iter().all(|t| holds(b, t.as_bytes())) || !urls.iter().all(|u| holds(b, u)) {
                    return Ok(false);
                }
                let mut frames = base.frames.clone();
                frames[i].bytes = b.to_vec();
                search.fails(&with_frames(&base, frames))
            };
            // Whole lexical pieces first (few, so quick), then single bytes.
            let pieces = ddmin(lex(&base.frames[i].bytes), &mut |p| try_bytes(&p.concat(), &mut search))?;
            let bytes = ddmin(pieces.concat(), &mut |b| try_bytes(b, &mut search))?;
            best.frames[i].bytes = bytes;
            best = with_frames(&base, best.frames);
        }
    }
    Ok(Some((best, search.runs, oracle)))
}

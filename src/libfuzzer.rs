//! Entry points for coverage-guided fuzzing (cargo fuzz / libFuzzer): each
//! takes the fuzzer's bytes and panics, with the usual report, when a
//! property breaks — which is how libFuzzer learns of a crash.
//!
//! - [`check_script`]: the bytes build a [`ScriptSpec`] through `arbitrary`;
//!   every check must hold, judged as a hunt judges under `auto`: each
//!   session is held to the policy the gateway shows in it, so a gateway
//!   that follows either policy can pass.
//! - [`check_raw_stdin`]: the bytes go to stdin as they are, after the
//!   handshake, in two writes split where the first byte says. No frame has
//!   a label, so what must hold is what needs none: no crash, exit once stdin
//!   closes, a clean stdout. (Write boundaries that change what acts are
//!   [`check_script`]'s to find: its scripts choose splits and joins, and
//!   its labels say what must act.)
//! - [`check_oracle`]: the bytes build an arbitrary observation; the checks
//!   themselves must never panic.
//!
//! A user fuzzes their own Rust gateway through the seam with
//! [`fuzz_gateway!`](crate::fuzz_gateway).

use crate::campaign::session;
use crate::check::{CheckId, Facts, Violation, check};
use crate::frame::{Expect, Frame};
use crate::observation::Observation;
use crate::protocol::{Policy, Revision};
use crate::report;
use crate::run::run;
use crate::script::{Script, ScriptSpec};
use crate::seam::{Action, Exit, Fault, Gateway, Recorder, Session, Settle, Target};
use arbitrary::{Arbitrary, Unstructured};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

/// Structure-aware: an arbitrary script against `target`, judged under
/// [`Policy::Auto`] as a hunt judges it, in a revision that opens with
/// `initialize` ([`Revision::HANDSHAKEN`]), which every gateway speaks one
/// of, as a hunt draws by default.
pub fn check_script<T: Target>(target: &T, data: &[u8]) {
    check_script_in(target, data, &Revision::HANDSHAKEN);
}

/// [`check_script`] in one of `revisions` (the revision the bytes pick
/// is taken among them): [`Revision::ALL`] for a gateway that speaks the
/// stateless 2026-07-28 too.
pub fn check_script_in<T: Target>(target: &T, data: &[u8], revisions: &[Revision]) {
    let Ok(mut spec) = ScriptSpec::arbitrary(&mut Unstructured::new(data)) else { return };
    if !revisions.contains(&spec.revision) {
        let Some(at) = Revision::ALL.iter().position(|r| *r == spec.revision) else { return };
        let Some(&revision) = revisions.get(at % revisions.len().max(1)) else { return };
        spec.revision = revision;
    }
    let (script, obs, violations) = session(target, Policy::Auto, &spec, 0).expect("the harness runs");
    if !violations.is_empty() {
        panic!("{}", report::session(&script, &obs, &violations));
    }
}

/// `script`, then `bytes` as one unlabelled frame, then EOF. The frame goes
/// in two writes, split where its first byte says (in one when that points
/// at its end), so inputs also try the gateway's line buffering.
fn with_raw_frame(mut script: Script, bytes: &[u8]) -> Script {
    let start = script.write_ends.last().copied().unwrap_or(0);
    if let Some(&first) = bytes.first() {
        script.write_ends.push(start + 1 + first as usize % bytes.len());
    }
    script.write_ends.push(start + bytes.len());
    script.write_ends.dedup();
    script.frames.push(Frame {
        bytes: bytes.to_vec(),
        expect: Expect::Inert { request: false },
        id: None,
        tokens: vec![],
        family: "raw".into(),
        kind: "raw".into(),
        fill: None,
    });
    script.eof = true;
    script
}

/// Raw bytes on stdin against `target` after the handshake, under
/// keep-open: no crash, exit on EOF, a clean stdout. A fuzz target prepares
/// a [`RawStdin`] once instead.
pub fn check_raw_stdin<T: Target>(target: &T, data: &[u8]) {
    RawStdin::new(target).check(data);
}

/// The raw-bytes property for one target, prepared once. When the target
/// can copy a running session ([`Target::fork`]), the handshake runs once,
/// is checked once, and every input starts from a copy of the gateway it
/// left; otherwise every input runs after a handshake of its own.
pub struct RawStdin<T: Target> {
    target: T,
    handshake: Script,
    /// The gateway after the handshake alone and the revision it
    /// negotiated, when the target can copy it and the handshake held.
    warm: Option<(T::Gateway, Revision)>,
    /// stdout lines found clean at the revision inputs run under.
    clean: Mutex<Memo>,
}

impl<T: Target> RawStdin<T> {
    /// Renders the handshake and warms a gateway up on it, if the target
    /// can copy one.
    pub fn new(target: T) -> Self {
        let handshake = Script::handshake(Revision::R2025_11_25);
        let warm = warm_up(&target, &handshake);
        RawStdin { target, handshake, warm, clean: Mutex::default() }
    }

    /// Checks one input; panics with the report when a property breaks.
    pub fn check(&self, data: &[u8]) {
        match &self.warm {
            Some((gateway, revision)) => {
                let tail = Script { revision: *revision, frames: vec![], write_ends: vec![], eof: false };
                hold_raw(&Forked { target: &self.target, warm: gateway }, &with_raw_frame(tail, data), &self.clean);
            }
            None => hold_raw(&self.target, &with_raw_frame(self.handshake.clone(), data), &self.clean),
        }
    }
}

/// A gateway of `target` that has read `handshake` and written what a fresh
/// session wrote for it, all of it clean, if `target` can copy it.
fn warm_up<T: Target>(target: &T, handshake: &Script) -> Option<(T::Gateway, Revision)> {
    let session = Session { policy: Policy::KeepOpen, revision: handshake.revision, salt: 0 };
    let seen = run(target, &session, handshake).ok()?;
    let clean = label_free(check(handshake, &seen, &session)).is_empty();
    if !clean || seen.exit.ended() || !seen.effects.is_empty() {
        return None;
    }
    let recorder = Recorder::new();
    let mut gateway = target.start(&session, recorder.clone()).ok()?;
    target.fork(&gateway, Recorder::new())?;
    let stdin = handshake.stdin();
    for span in handshake.write_spans() {
        gateway.write_stdin(&stdin[span]).ok()?;
    }
    gateway.settle(&Settle::default()).ok()?;
    let same = gateway.take_stdout() == seen.stdout && gateway.take_stderr() == seen.stderr;
    let running = gateway.exit() == Exit::Running && recorder.is_empty();
    (same && running).then(|| (gateway, Facts::new(handshake, &seen, &session).revision))
}

/// Starts every session as a copy of one warmed-up gateway.
struct Forked<'a, T: Target> {
    target: &'a T,
    warm: &'a T::Gateway,
}

impl<T: Target> Target for Forked<'_, T> {
    type Gateway = T::Gateway;

    fn catalogue(&self) -> crate::Catalogue {
        self.target.catalogue()
    }

    fn start(&self, _: &Session, recorder: Recorder) -> Result<T::Gateway, Fault> {
        self.target.fork(self.warm, recorder).ok_or_else(|| Fault::config("the target stopped copying sessions"))
    }
}

/// Runs `script`, whose last frame is the raw input, and checks what needs
/// no labels. `clean` holds stdout lines already found clean at this
/// revision, which are not parsed again.
fn hold_raw<T: Target>(target: &T, script: &Script, clean: &Mutex<Memo>) {
    let session = Session { policy: Policy::KeepOpen, revision: script.revision, salt: 0 };
    let obs = run(target, &session, script).expect("the harness runs");
    let mut clean = clean.lock().unwrap_or_else(|e| e.into_inner());
    let (fresh, tail) = unseen_lines(&obs.stdout, &clean);
    // Nothing new on stdout and an exit on EOF alone: neither check can fail.
    let quiet = fresh.is_empty()
        && tail.is_empty()
        && obs.eof_sent
        && obs.exit_before_eof == Exit::Running
        && matches!(obs.exit, Exit::Exited(_));
    let holds = quiet || {
        let reduced = Observation { stdout: [fresh.concat().as_slice(), tail].concat(), ..obs.clone() };
        label_free(check(script, &reduced, &session)).is_empty()
    };
    if !holds {
        let violations = label_free(check(script, &obs, &session));
        panic!("{}", report::session(script, &obs, &violations));
    }
    if clean.len() < MEMO_LINES {
        clean.extend(fresh.into_iter().map(<[u8]>::to_vec));
    }
}

/// How many distinct clean stdout lines a [`RawStdin`] remembers.
const MEMO_LINES: usize = 4096;

/// Lines known clean, hashed eight bytes at a step: a per-byte hash (or
/// SipHash's rounds) would cost more, under coverage instrumentation, than
/// the parse the memo saves.
type Memo = HashSet<Vec<u8>, BuildHasherDefault<WordHash>>;

/// A multiplicative hash over 64-bit words (FNV's constants, a word at a
/// time); not for hostile keys, only for remembering our own lines.
struct WordHash(u64);

impl Default for WordHash {
    fn default() -> Self {
        WordHash(0xcbf2_9ce4_8422_2325)
    }
}

impl WordHash {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x100_0000_01b3).rotate_left(29);
    }
}

impl Hasher for WordHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        self.mix(u64::from_le_bytes(last) ^ bytes.len() as u64);
    }
}

/// The complete stdout lines (LF included) not in `clean`, and the bytes
/// after the last LF. A line's verdict under `stdout-clean` depends on
/// nothing but its bytes and the revision, and `liveness` not on stdout.
fn unseen_lines<'a>(stdout: &'a [u8], clean: &Memo) -> (Vec<&'a [u8]>, &'a [u8]) {
    let mut fresh = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', stdout) {
        let line = &stdout[start..=end];
        if !clean.contains(line) {
            fresh.push(line);
        }
        start = end + 1;
    }
    (fresh, &stdout[start..])
}

/// The violations that need no labels: a crash, a hang, an early exit, a
/// dirty stdout.
fn label_free(violations: Vec<Violation>) -> Vec<Violation> {
    violations.into_iter().filter(|v| matches!(v.check, CheckId::StdoutClean | CheckId::Liveness)).collect()
}

/// The checks over an arbitrary observation of an arbitrary script must
/// never panic.
pub fn check_oracle(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(spec) = ScriptSpec::arbitrary(&mut u) else { return };
    let script = spec.render(&crate::Catalogue::reference(), 0);
    let exit = |u: &mut Unstructured| -> arbitrary::Result<Exit> {
        Ok(match u.int_in_range(0..=2u8)? {
            0 => Exit::Running,
            1 => Exit::Exited(i32::arbitrary(u)?),
            _ => Exit::Crashed(String::arbitrary(u)?),
        })
    };
    let obs = (|| -> arbitrary::Result<Observation> {
        let effects = (0..u.int_in_range(0..=4u8)?)
            .map(|_| {
                let text = String::arbitrary(&mut u)?;
                let arguments = serde_json::from_str(&text).unwrap_or_default();
                Ok(Action { tool: String::arbitrary(&mut u)?, arguments })
            })
            .collect::<arbitrary::Result<_>>()?;
        Ok(Observation {
            stdout: Vec::arbitrary(&mut u)?,
            stderr: Vec::arbitrary(&mut u)?,
            effects,
            exit_before_eof: exit(&mut u)?,
            exit: exit(&mut u)?,
            ended_at: Option::arbitrary(&mut u)?,
            eof_sent: bool::arbitrary(&mut u)?,
            cut: (0, 0),
            awaiting: Vec::new(),
            filled: Vec::new(),
            marker_unanswered: bool::arbitrary(&mut u)?,
        })
    })();
    let Ok(obs) = obs else { return };
    for policy in Policy::ALL {
        let session = Session { policy, revision: script.revision, salt: 0 };
        let _ = check(&script, &obs, &session);
    }
}

/// A fuzz target for your own gateway, in one line of a `fuzz_targets/*.rs`
/// file (which also needs `#![no_main]`): every check must hold for every
/// script the fuzzer builds.
///
/// ```ignore
/// #![no_main]
/// portcullis::fuzz_gateway!(my_crate::MyTarget);
/// // A gateway that speaks the stateless 2026-07-28 too:
/// portcullis::fuzz_gateway!(my_crate::MyTarget, &portcullis::Revision::ALL);
/// ```
#[macro_export]
macro_rules! fuzz_gateway {
    ($target:expr) => {
        ::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            $crate::libfuzzer::check_script(&$target, data);
        });
    };
    ($target:expr, $revisions:expr) => {
        ::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            $crate::libfuzzer::check_script_in(&$target, data, $revisions);
        });
    };
}

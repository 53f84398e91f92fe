//! Entry points for coverage-guided fuzzing (cargo fuzz / libFuzzer): each
//! takes the fuzzer's bytes and panics, with the usual report, when a
//! property breaks — which is how libFuzzer learns of a crash.
//!
//! - [`check_script`]: the bytes build a [`ScriptSpec`] through `arbitrary`;
//!   every check must hold, under both policies.
//! - [`check_raw_stdin`]: the bytes go to stdin as they are, after the
//!   handshake. No frame has a label, so what must hold is what needs none:
//!   no crash, exit once stdin closes, a clean stdout, and the same stdout and
//!   effects whatever the write boundaries.
//! - [`check_oracle`]: the bytes build an arbitrary observation; the checks
//!   themselves must never panic.
//!
//! A user fuzzes their own Rust gateway through the seam with
//! [`fuzz_gateway!`](crate::fuzz_gateway).

use crate::campaign::{run_script, session};
use crate::check::{CheckId, check};
use crate::frame::{Expect, Frame};
use crate::protocol::{Policy, Revision};
use crate::report;
use crate::run::{Observation, run};
use crate::script::{Script, ScriptSpec};
use crate::seam::{Action, Exit, Session, Target};
use arbitrary::{Arbitrary, Unstructured};

/// Structure-aware: an arbitrary script against `target`, both policies.
pub fn check_script<T: Target>(target: &T, data: &[u8]) {
    let Ok(spec) = ScriptSpec::arbitrary(&mut Unstructured::new(data)) else { return };
    for policy in Policy::ALL {
        let (script, obs, violations) = session(target, policy, &spec, 0).expect("the harness runs");
        if !violations.is_empty() {
            panic!("{policy}:{}", report::session(&script, &obs, &violations));
        }
    }
}

/// The handshake for `revision`, then `bytes` as one unlabelled frame.
pub fn raw_script(bytes: &[u8], revision: Revision, catalogue: &crate::Catalogue) -> Script {
    let spec = ScriptSpec { revision, steps: vec![], splits: vec![], joins: vec![], eof: true };
    let mut script = spec.render(catalogue, 0);
    let frame = Frame {
        bytes: bytes.to_vec(),
        expect: Expect::Inert { request: false },
        id: None,
        tokens: vec![],
        family: "raw".into(),
        kind: "raw".into(),
    };
    script.frames.push(frame);
    let total = script.stdin().len();
    script.write_ends.push(total);
    script
}

/// Raw bytes on stdin against `target`, under keep-open: no crash, exit on
/// EOF, a clean stdout, and the same outcome when the bytes arrive one
/// write or two (split where the first byte of the input says).
pub fn check_raw_stdin<T: Target>(target: &T, data: &[u8]) {
    let script = raw_script(data, Revision::R2025_11_25, &target.catalogue());
    let (obs, violations) = run_script(target, Policy::KeepOpen, &script, 0).expect("the harness runs");
    let label_free: Vec<_> =
        violations.into_iter().filter(|v| matches!(v.check, CheckId::StdoutClean | CheckId::Liveness)).collect();
    if !label_free.is_empty() {
        panic!("{}", report::session(&script, &obs, &label_free));
    }
    let Some(&first) = data.first() else { return };
    let mut split = script.clone();
    let at = split.write_ends[split.write_ends.len() - 2] + 1 + first as usize % data.len();
    split.write_ends.insert(split.write_ends.len() - 1, at);
    split.write_ends.dedup();
    let session = Session { policy: Policy::KeepOpen, revision: script.revision, salt: 0 };
    let again = run(target, &session, &split).expect("the harness runs");
    if again.stdout != obs.stdout || again.effects != obs.effects {
        panic!(
            "the outcome depends on write boundaries (split at stdin byte {at}):\nwhole: {}\nsplit: {}",
            report::escape(&obs.stdout, 400),
            report::escape(&again.stdout, 400)
        );
    }
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
/// ```
#[macro_export]
macro_rules! fuzz_gateway {
    ($target:expr) => {
        ::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            $crate::fuzzing::check_script(&$target, data);
        });
    };
}

//! The seam: the same properties hold whatever the write boundaries, for
//! scripts cargo fuzz would build with `arbitrary`, and a user's gateway
//! adapted in a few lines is caught when it is naive.

use arbitrary::{Arbitrary, Unstructured};
use portcullis::campaign::{HuntConfig, assert_holds, hunt, session};
use portcullis::reference::{Reference, ReferenceGateway};
use portcullis::run::run;
use portcullis::script::any_script;
use portcullis::{Catalogue, Exit, Fault, Gateway, Policy, Recorder, ScriptSpec, Session, Target};
use proptest::prelude::*;

/// The strict reference, with what it is sent or what it writes rewritten
/// on the way, as a user's adapter around a gateway would.
struct Rewritten {
    inner: ReferenceGateway,
    write: fn(&mut ReferenceGateway, &[u8]) -> Result<(), Fault>,
    stdout: fn(Vec<u8>) -> Vec<u8>,
}

impl Gateway for Rewritten {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        (self.write)(&mut self.inner, bytes)
    }
    fn close_stdin(&mut self) -> Result<(), Fault> {
        self.inner.close_stdin()
    }
    fn take_stdout(&mut self) -> Vec<u8> {
        (self.stdout)(self.inner.take_stdout())
    }
    fn exit(&mut self) -> Exit {
        self.inner.exit()
    }
}

/// Starts [`Rewritten`] gateways with these rewrites.
struct RewrittenTarget {
    write: fn(&mut ReferenceGateway, &[u8]) -> Result<(), Fault>,
    stdout: fn(Vec<u8>) -> Vec<u8>,
}

impl Target for RewrittenTarget {
    type Gateway = Rewritten;
    fn catalogue(&self) -> Catalogue {
        Catalogue::reference()
    }
    fn start(&self, s: &Session, r: Recorder) -> Result<Rewritten, Fault> {
        let (write, stdout) = (self.write, self.stdout);
        Reference::strict().start(s, r).map(|inner| Rewritten { inner, write, stdout })
    }
}

/// The reference, fed one byte per write whatever the script's writes.
const TRICKLE: RewrittenTarget = RewrittenTarget {
    write: |g, bytes| bytes.iter().try_for_each(|b| g.write_stdin(std::slice::from_ref(b))),
    stdout: |out| out,
};

proptest! {
    #![proptest_config(portcullis::campaign::persist_to("proptest-regressions/seam.txt"))]

    /// Framing does not depend on how stdin was cut into writes.
    #[test]
    fn write_boundaries_do_not_change_what_the_reference_does(spec in any_script(), keep_open in any::<bool>()) {
        let policy = if keep_open { Policy::KeepOpen } else { Policy::Close };
        let script = spec.render(&Catalogue::reference(), 3);
        let s = Session { policy, revision: spec.revision, salt: 3 };
        let whole = run(&Reference::strict(), &s, &script).unwrap();
        let trickled = run(&TRICKLE, &s, &script).unwrap();
        prop_assert_eq!(&whole.stdout, &trickled.stdout);
        prop_assert_eq!(&whole.effects, &trickled.effects);
        prop_assert_eq!(&whole.exit, &trickled.exit);
        let (_, _, v) = session(&TRICKLE, policy, &spec, 3).unwrap();
        prop_assert!(v.is_empty(), "{:?}", v);
    }

    /// Scripts built by `arbitrary` from raw bytes, as cargo fuzz builds
    /// them, hold against the reference too.
    #[test]
    fn arbitrary_scripts_hold_against_the_reference(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let Ok(spec) = ScriptSpec::arbitrary(&mut Unstructured::new(&bytes)) else { return Ok(()) };
        for policy in Policy::ALL {
            let (script, obs, v) = session(&Reference::strict(), policy, &spec, 9).unwrap();
            prop_assert!(v.is_empty(), "{}", portcullis::report::session(&script, &obs, &v));
        }
    }
}

/// A gateway that trusts the first JSON value of every line.
struct Naive {
    buf: Vec<u8>,
    out: Vec<u8>,
    rec: Recorder,
    done: bool,
}

impl Gateway for Naive {
    fn write_stdin(&mut self, bytes: &[u8]) -> Result<(), Fault> {
        self.buf.extend_from_slice(bytes);
        while let Some(n) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=n).collect();
            let Ok(msg) = serde_json::from_slice::<serde_json::Value>(&line) else {
                continue;
            };
            if msg["method"] == "tools/call" {
                let p = &msg["params"];
                let arguments = p["arguments"].as_object().cloned().unwrap_or_default();
                let tool = p["name"].as_str().unwrap_or_default().to_owned();
                self.rec.record(portcullis::Action { tool, arguments });
            }
            if let Some(id) = msg.get("id") {
                let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}});
                self.out.extend(format!("{reply}\n").into_bytes());
            }
        }
        Ok(())
    }
    fn close_stdin(&mut self) -> Result<(), Fault> {
        self.done = true;
        Ok(())
    }
    fn take_stdout(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
    fn exit(&mut self) -> Exit {
        if self.done { Exit::Exited(0) } else { Exit::Running }
    }
}

struct NaiveTarget;

impl Target for NaiveTarget {
    type Gateway = Naive;
    fn catalogue(&self) -> Catalogue {
        Catalogue::reference()
    }
    fn start(&self, _: &Session, rec: Recorder) -> Result<Naive, Fault> {
        Ok(Naive { buf: vec![], out: vec![], rec, done: false })
    }
}

#[test]
fn a_naive_user_gateway_is_caught_with_a_full_report() {
    let f = hunt(&NaiveTarget, &HuntConfig::default().seed(0)).unwrap().expect("caught");
    assert!(f.script.frames.len() <= 4, "shrunk: {}", portcullis::report::finding(&f, None));
    let panic = std::panic::catch_unwind(|| assert_holds(&NaiveTarget, &HuntConfig::default().seed(0).persist(false)))
        .unwrap_err();
    let text = panic.downcast_ref::<String>().expect("a report");
    for part in ["portcullis finding", "seed: 0", "Minimized script", "First offending", "stderr", "exit:"] {
        assert!(text.contains(part), "missing {part:?} in {text}");
    }
}

#[test]
fn assert_holds_keeps_the_failing_seed_where_it_is_told_and_runs_it_first_again() {
    let dir = tempfile::tempdir().unwrap();
    let file: &'static str = Box::leak(dir.path().join("naive.txt").display().to_string().into_boxed_str());
    let cfg = HuntConfig::default().persistence(Some(file)).max_shrink_iters(0).max_findings(1);
    let run = |cfg: &HuntConfig| std::panic::catch_unwind(|| assert_holds(&NaiveTarget, cfg)).unwrap_err();
    run(&cfg);
    let kept = std::fs::read_to_string(file).expect("the failing seed is kept");
    assert!(kept.lines().any(|l| l.starts_with("cc ")), "{kept}");
    // Kept seeds run first: under another seed, the kept one fails again
    // before any other is drawn, and no other is kept.
    run(&cfg.clone().seed(7));
    let again = std::fs::read_to_string(file).unwrap();
    assert_eq!(again, kept);
}

#[test]
fn a_target_without_runnable_tools_is_a_harness_fault_not_a_finding() {
    struct Empty;
    impl Target for Empty {
        type Gateway = Naive;
        fn catalogue(&self) -> Catalogue {
            Catalogue { tools: vec![], canary_base: "http://127.0.0.1:9".into() }
        }
        fn start(&self, _: &Session, rec: Recorder) -> Result<Naive, Fault> {
            Ok(Naive { buf: vec![], out: vec![], rec, done: false })
        }
    }
    assert!(matches!(hunt(&Empty, &HuntConfig::default()), Err(Fault::Config { .. })));
}

/// The reference, with an unpaired surrogate escape (`\ud800`) at the start
/// of every error message it writes, as a server echoing what it was sent
/// writes one: still exactly one JSON value a line (RFC 8259 §7).
const SURROGATES: RewrittenTarget = RewrittenTarget {
    write: |g, bytes| g.write_stdin(bytes),
    stdout: |out| {
        let out = String::from_utf8(out).expect("the reference writes UTF-8");
        out.replace(r#""message":""#, r#""message":"\ud800"#).into_bytes()
    },
};

#[test]
fn unpaired_surrogate_escapes_in_answers_are_still_protocol_messages() {
    let cfg = HuntConfig::default().cases(64);
    let escaped = std::cell::Cell::new(0);
    let run = |spec: &ScriptSpec, salt: u32, _| {
        let out = session(&SURROGATES, cfg.policy, spec, salt)?;
        escaped.set(escaped.get() + usize::from(out.1.stdout.windows(6).any(|w| w == br"\ud800")));
        Ok(out)
    };
    let found = portcullis::campaign::hunt_by(&cfg, portcullis::campaign::strategy(&cfg), &|_| true, &run).unwrap();
    assert!(found.is_empty(), "{}", portcullis::report::finding(&found[0], None));
    assert!(escaped.get() > 16, "the escapes were there to be read: {} sessions", escaped.get());
}

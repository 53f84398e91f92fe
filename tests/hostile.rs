//! Hostile input, whatever its size or shape, goes through the reference
//! gateway and the checks without a panic or a stack overflow, and the
//! gateway never buffers more than its line bound.

use portcullis::campaign::session;
use portcullis::check::check;
use portcullis::reference::{MAX_LINE, Reference};
use portcullis::run::run;
use portcullis::{
    Catalogue, Exit, Expect, Fault, Frame, Gateway, Policy, Recorder, Revision, Rule, Script, ScriptSpec,
};
use portcullis::{CheckId, Session, Target};

/// The handshake, then `bytes` as one must-reject frame, written in
/// `chunk`-byte writes, then EOF.
fn script_with(bytes: Vec<u8>, rule: Rule, chunk: usize) -> Script {
    let spec = ScriptSpec::whole(Revision::R2025_11_25, vec![]);
    let mut script = spec.render(&Catalogue::reference(), 0);
    let start = script.stdin().len();
    let end = start + bytes.len();
    script.frames.push(Frame {
        bytes,
        expect: Expect::Reject(rule),
        id: None,
        tokens: vec![],
        family: "hostile".into(),
        kind: "hostile".into(),
        fill: None,
    });
    script.write_ends.extend((start + chunk..end).step_by(chunk));
    script.write_ends.push(end);
    script
}

fn through_reference(script: &Script) {
    for policy in Policy::ALL {
        let s = Session { policy, revision: script.revision, salt: 0 };
        let obs = run(&Reference::strict(), &s, script).expect("the harness runs");
        let violations = check(script, &obs, &s);
        assert!(violations.is_empty(), "{violations:?}");
        assert!(obs.stdout.len() < 4096, "a bounded answer, not an echo");
    }
}

#[test]
fn ten_thousand_deep_nesting() {
    let deep = format!("{}{}\n", "[".repeat(10_000), "]".repeat(10_000)).into_bytes();
    through_reference(&script_with(deep, Rule::TooDeep, usize::MAX / 2));
    let open = format!("{}\n", "{\"a\":".repeat(10_000)).into_bytes();
    through_reference(&script_with(open, Rule::TooDeep, 4096));
}

#[test]
fn sixteen_mebibyte_lines_in_one_write_and_in_many() {
    let huge = [vec![b'x'; 16 << 20], b"\n".to_vec()].concat();
    through_reference(&script_with(huge.clone(), Rule::LineTooLong, usize::MAX / 2));
    through_reference(&script_with(huge, Rule::LineTooLong, 1 << 16));
    let string = [b"{\"a\":\"".to_vec(), vec![b'y'; 16 << 20], b"\"}\n".to_vec()].concat();
    through_reference(&script_with(string, Rule::LineTooLong, 1 << 20));
    const { assert!(MAX_LINE < 16 << 20) };
}

#[test]
fn invalid_utf8_everywhere() {
    let bad: Vec<u8> = (0..=255u8).cycle().take(1 << 20).filter(|b| *b != b'\n').chain([b'\n']).collect();
    through_reference(&script_with(bad, Rule::InvalidUtf8, 1000));
}

#[test]
fn generated_deep_and_huge_steps_run_clean() {
    use portcullis::attack::{Step, ambiguity, terminator};
    let steps = vec![
        Step::Ambiguity(ambiguity::Ambiguity { kind: ambiguity::Kind::DeepNesting, tool: 0, depth: 2 }),
        Step::Terminator(terminator::Terminator { kind: terminator::Kind::Huge, tool: 1 }),
        Step::Control(0),
    ];
    for policy in Policy::ALL {
        for revision in Revision::ALL {
            let spec = ScriptSpec { splits: vec![7, 1 << 19], ..ScriptSpec::whole(revision, steps.clone()) };
            let (_, _, v) = session(&Reference::strict(), policy, &spec, 1).unwrap();
            assert!(v.is_empty(), "{v:?}");
        }
    }
}

/// A gateway whose stdout is hostile: deep JSON, a huge line, invalid UTF-8
/// and a fragment. The checks must flag it without falling over.
struct Spewer(Vec<u8>);

impl Gateway for Spewer {
    fn write_stdin(&mut self, _: &[u8]) -> Result<(), Fault> {
        Ok(())
    }
    fn close_stdin(&mut self) -> Result<(), Fault> {
        Ok(())
    }
    fn take_stdout(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
    fn exit(&mut self) -> Exit {
        Exit::Exited(0)
    }
}

struct SpewTarget;

impl Target for SpewTarget {
    type Gateway = Spewer;
    fn catalogue(&self) -> Catalogue {
        Catalogue::reference()
    }
    fn start(&self, _: &Session, _: Recorder) -> Result<Spewer, Fault> {
        let mut out = format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes();
        out.extend(vec![b'z'; 16 << 20]);
        out.extend(b"\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res");
        Ok(Spewer(out))
    }
}

#[test]
fn hostile_stdout_is_flagged_not_fatal() {
    let spec = ScriptSpec::whole(Revision::R2025_06_18, vec![]);
    let (_, _, v) = session(&SpewTarget, Policy::Close, &spec, 0).unwrap();
    let clean: Vec<_> = v.iter().filter(|v| v.check == CheckId::StdoutClean).collect();
    assert_eq!(clean.len(), 4, "deep line, huge line, invalid UTF-8, fragment: {clean:?}");
}

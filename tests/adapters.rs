//! The adapters put a gateway of either real shape under test with a few
//! lines of glue, and what the gateway does comes through them whole: the
//! strict reference passes, a planted bug is caught, a panic is a crash.

use portcullis::adapter::{Flow, LineTarget, StreamTarget};
use portcullis::prelude::*;
use portcullis::reference::{Mutant, ReferenceGateway};
use std::io::{Read, Write};
use std::sync::Arc;

/// A blocking loop that feeds the reference gateway (or a mutant) what it
/// reads, and writes what it answers.
fn serve(
    mut stdin: impl Read,
    mut stdout: impl Write,
    recorder: Recorder,
    policy: Policy,
    mutant: Option<Mutant>,
) -> std::io::Result<()> {
    let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), policy, mutant, recorder);
    let mut buf = [0u8; 4096];
    while !gateway.exit().ended() {
        match stdin.read(&mut buf)? {
            0 => gateway.close_stdin().expect("in memory"),
            n => gateway.write_stdin(&buf[..n]).expect("in memory"),
        }
        stdout.write_all(&gateway.take_stdout())?;
    }
    Ok(())
}

fn stream(policy: Policy, mutant: Option<Mutant>) -> impl Target {
    StreamTarget::new(Catalogue::reference(), move |recorder, stdin, stdout| {
        serve(stdin, stdout, recorder, policy, mutant)
    })
}

#[test]
fn the_reference_as_a_blocking_loop_holds_under_both_policies() {
    for policy in [Policy::Close, Policy::KeepOpen] {
        assert_holds(&stream(policy, None), &HuntConfig::default().policy(policy).cases(48));
    }
}

#[test]
fn a_planted_bug_in_a_blocking_loop_is_caught() {
    let m = Mutant::BoolId;
    let cfg = HuntConfig::default().policy(m.policy()).revisions(m.revisions()).focus(Some(m.expected()));
    let finding = hunt(&stream(m.policy(), Some(m)), &cfg).unwrap().expect("caught");
    assert_eq!(finding.check, m.expected());
}

/// The reference gateway behind a line handler: each line is fed whole,
/// the unterminated rest at EOF is fed then EOF, and the session ends when
/// the gateway does.
fn lines(policy: Policy) -> impl Target {
    LineTarget::new(Catalogue::reference(), move |recorder| {
        let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), policy, None, recorder);
        move |line: &[u8]| {
            gateway.write_stdin(line).expect("in memory");
            if !line.ends_with(b"\n") {
                gateway.close_stdin().expect("in memory");
            }
            let out = gateway.take_stdout();
            if gateway.exit().ended() { Flow::End(out) } else { Flow::Continue(out) }
        }
    })
}

#[test]
fn the_reference_as_a_line_handler_holds_under_both_policies() {
    for policy in [Policy::Close, Policy::KeepOpen] {
        assert_holds(&lines(policy), &HuntConfig::default().policy(policy).cases(48));
    }
}

#[test]
fn a_loop_that_panics_is_a_crash_and_one_that_fails_says_why() {
    let panics = StreamTarget::new(Catalogue::reference(), |_, mut stdin, _| {
        stdin.read_exact(&mut [0u8; 8])?;
        panic!("the loop gave up")
    });
    let f = hunt(&panics, &HuntConfig::default().cases(4)).unwrap().expect("a crash is caught");
    assert_eq!(f.check, CheckId::Liveness);
    assert_eq!(f.observation.exit, Exit::Crashed("the loop gave up".into()));

    let fails = StreamTarget::new(Catalogue::reference(), |_, mut stdin, _| {
        stdin.read_exact(&mut [0u8; 8])?;
        Err(std::io::Error::other("no executor configured"))
    });
    let f = hunt(&fails, &HuntConfig::default().cases(4)).unwrap().expect("an early end is caught");
    assert_eq!(f.observation.exit, Exit::Exited(1));
    let stderr = String::from_utf8_lossy(&f.observation.stderr);
    assert!(stderr.contains("no executor configured"), "{stderr}");
}

#[test]
fn answers_written_after_the_loop_reads_on_are_awaited() {
    // The loop hands each answer to a thread that writes it 20 ms later, as
    // a gateway that serves requests on workers does.
    let delayed = StreamTarget::new(Catalogue::reference(), |recorder, mut stdin, stdout| {
        let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), Policy::KeepOpen, None, recorder);
        let stdout = Arc::new(std::sync::Mutex::new(stdout));
        let mut buf = [0u8; 4096];
        let mut workers = Vec::new();
        while !gateway.exit().ended() {
            match stdin.read(&mut buf)? {
                0 => gateway.close_stdin().expect("in memory"),
                n => gateway.write_stdin(&buf[..n]).expect("in memory"),
            }
            let (out, stdout) = (gateway.take_stdout(), stdout.clone());
            workers.push(std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                stdout.lock().unwrap().write_all(&out)
            }));
        }
        workers.into_iter().try_for_each(|w| w.join().expect("a worker"))
    });
    assert_holds(&delayed, &HuntConfig::default().policy(Policy::KeepOpen).cases(32));
}

#[test]
fn a_loop_with_a_reader_thread_is_judged_when_it_has_caught_up() {
    // A reader thread hands stdin to the loop over a channel, as a
    // reader-task/handler-task gateway does: the loop ends, and writes its
    // errors, a little after its stdin is read.
    let threaded = |policy: Policy| {
        StreamTarget::new(Catalogue::reference(), move |recorder, mut stdin, mut stdout| {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = stdin.read(&mut buf) {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
            let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), policy, None, recorder);
            while !gateway.exit().ended() {
                match rx.recv() {
                    Ok(chunk) => gateway.write_stdin(&chunk).expect("in memory"),
                    Err(_) => gateway.close_stdin().expect("in memory"),
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
                stdout.write_all(&gateway.take_stdout())?;
            }
            Ok(())
        })
    };
    for policy in [Policy::Close, Policy::KeepOpen] {
        assert_holds(&threaded(policy), &HuntConfig::default().policy(policy).cases(32));
    }
}

#[test]
fn a_loop_that_ignores_eof_is_a_liveness_finding() {
    let deaf = StreamTarget::new(Catalogue::reference(), |recorder, mut stdin, mut stdout| {
        let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), Policy::KeepOpen, None, recorder);
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf)? {
                // EOF: it should return, and polls on instead.
                0 => std::thread::sleep(std::time::Duration::from_millis(5)),
                n => gateway.write_stdin(&buf[..n]).expect("in memory"),
            }
            // Its writes fail once the session is let go, which ends it.
            stdout.write_all(&gateway.take_stdout())?;
            stdout.flush()?;
        }
    })
    .bound(std::time::Duration::from_millis(200));
    let cfg = HuntConfig::default().policy(Policy::KeepOpen).cases(4).max_shrink_iters(8);
    let f = hunt(&deaf, &cfg).unwrap().expect("caught");
    assert_eq!(f.check, CheckId::Liveness, "{}", portcullis::report::finding(&f, None));
}

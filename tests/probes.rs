//! The effect probes on their own: each turns what it sees into an observed
//! action carrying the token, and hands each effect over once.

use portcullis::probe::{ProbeConfig, Probes};
use std::io::Write;
use std::time::Duration;

const TOKEN: &str = "pc0000abcdt00042";
const QUIET: Duration = Duration::from_millis(30);
const BOUND: Duration = Duration::from_secs(3);

fn text(effects: &[portcullis::Action]) -> String {
    effects.iter().map(|e| format!("{} {}", e.tool, e.arguments_text())).collect()
}

#[test]
fn the_http_sink_records_method_path_headers_and_body() {
    let probes = Probes::start(&ProbeConfig::default()).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    agent.post(&format!("{}/{TOKEN}", probes.http_base())).header("x-test", "yes").send("body-bytes").unwrap();
    let effects = probes.settle(QUIET, BOUND);
    assert_eq!(effects.len(), 1, "{}", text(&effects));
    let e = &effects[0];
    assert!(e.is_observed() && e.tool == "probe:http");
    assert_eq!(e.arguments["method"], "POST");
    assert_eq!(e.arguments["path"], format!("/{TOKEN}"));
    assert_eq!(e.arguments["headers"]["x-test"], "yes");
    assert_eq!(e.arguments["body"], "body-bytes");
    assert!(probes.settle(QUIET, BOUND).is_empty(), "handed over once");
}

#[test]
fn the_http_sink_answers_set_aside_paths_without_recording_them() {
    let cfg = ProbeConfig::default().http_ignore(vec!["/robots.txt".into(), "/health/*".into()]);
    let probes = Probes::start(&cfg).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let base = probes.http_base();
    for path in ["/robots.txt", "/robots.txt?x=1", "/health/live", "/health/"] {
        let mut answer = agent.get(&format!("{base}{path}")).call().unwrap();
        assert_eq!(answer.status(), 200, "{path} is answered as any request is");
        assert_eq!(answer.body_mut().read_to_string().unwrap(), "ok");
    }
    // Neither a longer path than an exact pattern nor the prefix's parent.
    for path in [format!("/robots.txt/{TOKEN}"), "/health".to_owned(), format!("/{TOKEN}")] {
        agent.get(&format!("{base}{path}")).call().unwrap();
    }
    let effects = probes.settle(QUIET, BOUND);
    let paths: Vec<&str> = effects.iter().map(|e| e.arguments["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [format!("/robots.txt/{TOKEN}").as_str(), "/health", &format!("/{TOKEN}")]);
    assert_eq!(probes.ignored(), 4);
}

#[test]
fn the_tcp_sink_records_what_a_connection_sends() {
    let probes = Probes::start(&ProbeConfig::default().tcp(true)).unwrap();
    let addr = probes.tcp_addr().expect("a TCP sink");
    assert!(addr.starts_with("127.0.0.1:"));
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.write_all(format!("SSH-2.0-helper run {TOKEN}\r\n").as_bytes()).unwrap();
    drop(conn);
    let effects = probes.settle(Duration::from_millis(200), BOUND);
    assert!(text(&effects).contains(TOKEN) && text(&effects).contains("probe:tcp"), "{}", text(&effects));
}

#[test]
fn watchers_see_tokens_in_new_files_and_appended_content() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("actions.log");
    std::fs::write(&log, "before\n").unwrap();
    std::fs::write(dir.path().join("old.txt"), TOKEN).unwrap(); // there before: not an effect
    let cfg = ProbeConfig::default().watch_dirs(vec![dir.path().join("out")]).watch_files(vec![log.clone()]);
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let probes = Probes::start(&cfg).unwrap();
    assert!(probes.settle(QUIET, BOUND).is_empty());
    std::fs::write(dir.path().join("out").join(format!("{TOKEN}.txt")), "x").unwrap();
    std::fs::write(dir.path().join("out").join("plain.txt"), "no token here").unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(format!("ran {TOKEN}\n").as_bytes())
        .unwrap();
    let effects = probes.settle(QUIET, BOUND);
    assert_eq!(effects.len(), 2, "one file named by the token, one log line: {}", text(&effects));
    assert!(effects.iter().all(|e| e.tool == "probe:file" && text(std::slice::from_ref(e)).contains(TOKEN)));
    assert!(probes.settle(QUIET, BOUND).is_empty(), "handed over once");
}

/// Probes watching the file `name` in a folder of its own, made empty
/// first when `made`.
fn watching(name: &str, made: bool) -> (tempfile::TempDir, std::path::PathBuf, Probes) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(name);
    if made {
        std::fs::write(&log, "").unwrap();
    }
    let probes = Probes::start(&ProbeConfig::default().watch_files(vec![log.clone()])).unwrap();
    (dir, log, probes)
}

#[test]
fn each_appended_record_is_an_effect_of_its_own() {
    // A rejected call and a valid one whose log lines land in one poll are
    // two effects, each with its own token, never one that holds both.
    let (_dir, log, probes) = watching("actions.log", true);
    assert!(probes.settle(QUIET, BOUND).is_empty());
    let (first, second) = ("pc0000abcdt00001", "pc0000abcdt00002");
    let records = format!("ran {first}\nno token\nran {second}\npartial {first}");
    std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(records.as_bytes()).unwrap();
    let effects = probes.settle(QUIET, BOUND);
    let contents: Vec<String> = effects.iter().map(|e| e.arguments["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(contents, [format!("ran {first}\n"), format!("ran {second}\n"), format!("partial {first}")]);
}

#[test]
fn a_record_caught_half_written_is_one_effect_with_its_whole_token() {
    // A writer caught between the pages of one write: the poll sees the
    // record cut inside its token. The token is found once, whichever poll
    // takes the cut.
    let (_dir, log, probes) = watching("actions.log", true);
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(format!("ran {}", &TOKEN[..7]).as_bytes()).unwrap();
    let mut effects: Vec<_> = probes.take().into_iter().map(|(_, a)| a).collect();
    std::thread::sleep(Duration::from_millis(20));
    effects.extend(probes.take().into_iter().map(|(_, a)| a));
    file.write_all(format!("{} done\n", &TOKEN[7..]).as_bytes()).unwrap();
    effects.extend(probes.settle(QUIET, BOUND));
    assert_eq!(effects.len(), 1, "{}", text(&effects));
    assert!(text(&effects).contains(TOKEN), "{}", text(&effects));
}

#[test]
fn a_record_taken_unfinished_counts_its_tokens_once() {
    // A writer that stalls mid-record: the watcher takes what it sees once
    // the file is still; the rest of the record, which names the token
    // again, is no second effect. A new file is read whole lines first too.
    let (_dir, log, probes) = watching("made-by-the-server.log", false);
    let mut file = std::fs::File::create(&log).unwrap();
    file.write_all(format!("call {TOKEN} with").as_bytes()).unwrap();
    let mut effects: Vec<_> = probes.take().into_iter().map(|(_, a)| a).collect();
    assert!(effects.is_empty(), "an unfinished line waits while the file moves: {}", text(&effects));
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(5));
        effects.extend(probes.take().into_iter().map(|(_, a)| a));
        if !effects.is_empty() {
            break;
        }
    }
    assert_eq!(effects.len(), 1, "taken once the file is still: {}", text(&effects));
    file.write_all(format!(" result {TOKEN}\n").as_bytes()).unwrap();
    effects.extend(probes.settle(QUIET, BOUND));
    assert_eq!(effects.len(), 1, "its rest names the token again: {}", text(&effects));
}

#[test]
fn records_appended_past_what_one_effect_keeps_are_each_seen() {
    // More than a probe keeps of one effect, appended between two polls.
    let (_dir, log, probes) = watching("actions.log", true);
    let token = |n: u32| format!("pc0000abcdt{n:05}");
    let records: String = (0..3000).map(|n| format!("{} {}\n", token(n), "x".repeat(40))).collect();
    assert!(records.len() > 128 << 10);
    std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(records.as_bytes()).unwrap();
    let effects = probes.settle(QUIET, BOUND);
    assert_eq!(effects.len(), 3000);
    assert!(text(&effects[2999..]).contains(&token(2999)));
}

#[test]
fn a_watched_directory_sees_directories_named_by_a_token_once_with_what_is_beneath() {
    let token = |n: u32| format!("pc0000abcdt{n:05}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(token(9))).unwrap(); // there before: not an effect
    let probes = Probes::start(&ProbeConfig::default().watch_dirs(vec![dir.path().into()])).unwrap();
    assert!(probes.settle(QUIET, BOUND).is_empty());
    // A directory alone; another with a file that names its token again.
    std::fs::create_dir(dir.path().join(token(1))).unwrap();
    std::fs::create_dir_all(dir.path().join(token(2)).join("sub")).unwrap();
    std::fs::write(dir.path().join(token(2)).join("sub").join("note.txt"), token(2)).unwrap();
    let effects = probes.settle(QUIET, BOUND);
    assert_eq!(effects.len(), 2, "one effect per directory: {}", text(&effects));
    for n in [1, 2] {
        let named = |e: &&portcullis::Action| text(std::slice::from_ref(*e)).contains(&format!("{}/\"", token(n)));
        assert_eq!(effects.iter().filter(named).count(), 1, "{}: {}", token(n), text(&effects));
    }
    assert!(effects.iter().all(|e| e.tool == "probe:file"));
    // Beneath a directory named by a token, a file shows only its own.
    std::fs::write(dir.path().join(token(1)).join("other.txt"), format!("{} {}", token(1), token(3))).unwrap();
    let effects = probes.settle(QUIET, BOUND);
    assert_eq!(effects.len(), 1, "{}", text(&effects));
    assert!(text(&effects).contains(&token(3)) && !text(&effects).contains(&token(1)), "{}", text(&effects));
    assert!(probes.settle(QUIET, BOUND).is_empty(), "handed over once");
}

#[test]
fn a_file_written_under_a_temporary_name_then_renamed_is_one_effect() {
    // As git makes a ref (`NAME.lock`, then renamed to NAME) and atomic
    // savers write a file: each poll sees one of the two names.
    let token = |n: u32| format!("pc0000abcdt{n:05}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("store.json"), "{}").unwrap();
    let probes = Probes::start(&ProbeConfig::default().watch_dirs(vec![dir.path().into()])).unwrap();
    let lock = dir.path().join(format!("{}.lock", token(1)));
    std::fs::write(&lock, "0123abcd").unwrap();
    assert_eq!(probes.settle(QUIET, BOUND).len(), 1, "the first name seen is the effect");
    std::fs::rename(&lock, dir.path().join(token(1))).unwrap();
    assert!(probes.settle(QUIET, BOUND).is_empty(), "the rename is the same effect");
    // Content saved to a temporary file, then renamed over the store.
    let tmp = dir.path().join("store.json.tmp");
    std::fs::write(&tmp, format!("{{\"note\":\"{}\"}}", token(2))).unwrap();
    assert_eq!(probes.settle(QUIET, BOUND).len(), 1);
    std::fs::rename(&tmp, dir.path().join("store.json")).unwrap();
    assert!(probes.settle(QUIET, BOUND).is_empty(), "the store holds what the temporary file did");
    // A new token in a new place is a new effect still.
    std::fs::write(dir.path().join(token(3)), "").unwrap();
    assert_eq!(probes.settle(QUIET, BOUND).len(), 1);
}

#[test]
fn a_missing_watch_dir_is_a_harness_fault() {
    let cfg = ProbeConfig::default().watch_dirs(vec!["/nonexistent/portcullis".into()]);
    assert!(matches!(Probes::start(&cfg), Err(portcullis::Fault::Config { .. })));
}

#[test]
fn watchers_see_only_the_new_tokens_of_files_rewritten_whole() {
    // Stores saved whole: through a rename (a new file), or in place, the
    // new entry in the middle of a JSON document. The tokens they already
    // held are no new effect; a new one is, once.
    let dir = tempfile::tempdir().unwrap();
    let token = |n: u32| format!("pc0000abcdt{n:05}");
    let doc = |ns: &[u32]| {
        format!(
            "{{\"notes\":[\n{}\n]}}",
            ns.iter().map(|n| format!("  \"{}\"", token(*n))).collect::<Vec<_>>().join(",\n")
        )
    };
    let store = dir.path().join("store.json");
    std::fs::write(&store, doc(&[1])).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let index = out.join("index.json");
    std::fs::write(&index, doc(&[1])).unwrap();
    let cfg = ProbeConfig::default().watch_dirs(vec![out.clone()]).watch_files(vec![store.clone()]);
    let probes = Probes::start(&cfg).unwrap();
    assert!(probes.settle(QUIET, BOUND).is_empty(), "what was there before is no effect");
    let holds = |effects: &[portcullis::Action], n: u32| text(effects).contains(&token(n));
    for (round, (ns, new)) in [(&[2, 1][..], 2), (&[2, 3, 1][..], 3), (&[4, 3, 2, 1][..], 4)].into_iter().enumerate() {
        let through = dir.path().join("tmp");
        std::fs::write(&through, doc(ns)).unwrap();
        if round % 2 == 0 {
            std::fs::rename(&through, &store).unwrap();
        } else {
            std::fs::write(&store, doc(ns)).unwrap();
        }
        std::fs::write(&index, doc(ns)).unwrap();
        let effects = probes.settle(QUIET, BOUND);
        assert_eq!(effects.len(), 2, "round {round}: the store and the index, once each: {}", text(&effects));
        assert!(effects.iter().all(|e| holds(std::slice::from_ref(e), new)), "round {round}: {}", text(&effects));
        for old in ns.iter().filter(|n| **n != new) {
            assert!(!holds(&effects, *old), "round {round}: {} again: {}", token(*old), text(&effects));
        }
    }
    assert!(probes.settle(QUIET, BOUND).is_empty(), "handed over once");
}

//! The source tree's shape: the library's top-level modules form no cycle
//! (the pipeline reads one way), and no two modules share a name stem.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The items `lib.rs` re-exports at the crate root, by the module each
/// comes from: `pub use module::{A, B};` or `pub use module::A;`.
fn root_items() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut items = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.trim().strip_prefix("pub use ")) {
        let Some((module, names)) = line.trim_end_matches(';').split_once("::") else { continue };
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            items.insert(name.trim().to_owned(), module.to_owned());
        }
    }
    items
}

/// The names a file uses after `crate::`: `crate::x`, and each of
/// `crate::{x, y}`.
fn named_after_crate(text: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut names = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + 7..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                names.extend(group.split(',').map(|n| ident(n.trim())));
            }
            None => names.push(ident(rest)),
        }
    }
    names
}

/// The top-level module a file belongs to, and the ones it names as
/// `crate::<module>`, `crate::{..}` or through an item the crate root
/// re-exports. The command line (`cli`) sits on top of everything and is
/// left out.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let root = root_items();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src()).expect("under src/");
        let top = rel.iter().next().and_then(|c| c.to_str()).expect("a name").trim_end_matches(".rs").to_owned();
        if ["lib", "main", "cli"].contains(&top.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        // Code only: a doc link names an item, it does not depend on it.
        let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        let text = code.join("\n");
        let uses = graph.entry(top.clone()).or_default();
        for name in named_after_crate(&text) {
            let module = root.get(&name).cloned().unwrap_or(name);
            if !module.is_empty() && module != top && module.starts_with(|c: char| c.is_ascii_lowercase()) {
                uses.insert(module);
            }
        }
    }
    graph
}

/// The first cycle found, as the path that closes it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten().filter(|n| graph.contains_key(*n)) {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_library_modules_form_no_cycle() {
    let graph = graph();
    assert!(graph.len() > 10, "the scan found the modules: {graph:?}");
    assert!(graph["report"].contains("finding"), "the scan reads `crate::` paths: {graph:?}");
    assert!(graph["reference"].contains("seam"), "and root re-exports in groups: {graph:?}");
    assert_eq!(cycle(&graph), None, "a module cycle");
}

#[test]
fn a_cycle_is_seen_when_there_is_one() {
    let mut graph = graph();
    graph.get_mut("token").expect("a token module").insert("report".to_owned());
    assert!(cycle(&graph).is_some(), "token -> report -> ... -> token closes a cycle");
}

#[test]
fn no_two_modules_share_a_name_stem() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in files {
        let stem = file.file_stem().and_then(|s| s.to_str()).expect("a file name");
        let name = match stem {
            "mod" => file.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).expect("a folder"),
            "lib" | "main" => continue,
            other => other,
        };
        if let Some(before) = seen.insert(name.to_owned(), file.clone()) {
            panic!("{} and {} are both module `{name}`", before.display(), file.display());
        }
    }
}

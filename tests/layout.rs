//! The source tree's shape: at every level of src/ (the crate root, and
//! inside each folder module), the modules form no cycle, so the pipeline
//! reads one way; and no two modules share a name stem.

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

/// A module's path below the crate root: `src/process/ledger.rs` is
/// `["process", "ledger"]`, `src/process/mod.rs` is `["process"]`, `lib.rs`
/// is the root. The binary's `main.rs` is not in the library.
type ModPath = Vec<String>;

fn module_of(file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(src()).expect("under src/");
    let mut parts: ModPath = rel.iter().map(|c| c.to_str().expect("a UTF-8 name").to_owned()).collect();
    let last = parts.pop().expect("a file name");
    match last.trim_end_matches(".rs") {
        "main" if parts.is_empty() => None,
        "lib" if parts.is_empty() => Some(parts),
        "mod" => Some(parts),
        stem => {
            parts.push(stem.to_owned());
            Some(parts)
        }
    }
}

/// The source of each library module, code only: a doc link names an item,
/// it does not depend on it.
fn modules() -> BTreeMap<ModPath, String> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&file) else { continue };
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        out.insert(module, code.join("\n"));
    }
    out
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// The paths a module's code names from `start` (`crate`, `super`,
/// `self`): `crate::a::b` and each member of `crate::a::{b, c::{d, e}}`.
/// `super::super::x` is named from `super` as `["super", "x"]`.
fn paths_after(text: &str, start: &str) -> Vec<Vec<String>> {
    let needle = format!("{start}::");
    let mut found = Vec::new();
    for (at, _) in text.match_indices(&needle) {
        if text[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        found.extend(tree(&text[at + needle.len()..], Vec::new()));
    }
    found
}

/// The paths of a use tree that begins `rest`, each after `prefix`.
fn tree(rest: &str, prefix: Vec<String>) -> Vec<Vec<String>> {
    let mut path = prefix;
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            return members(group).into_iter().flat_map(|m| tree(m.trim(), path.clone())).collect();
        }
        let name = ident(rest);
        if name.is_empty() {
            return vec![path];
        }
        rest = &rest[name.len()..];
        path.push(name);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => return vec![path],
        }
    }
}

/// The members of a group whose text begins after its `{`, up to the
/// matching `}`, split at the commas of its own level.
fn members(group: &str) -> Vec<&str> {
    let (mut depth, mut from, mut out) = (0usize, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(&group[from..i]);
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&group[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&group[from..]);
    out
}

/// Items a module re-exports from one of its own children
/// (`pub use child::{A, B};`), by name.
fn reexports(text: &str) -> BTreeMap<String, String> {
    let mut items = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        let Some(rest) = ["pub use ", "pub(crate) use ", "pub(super) use "].iter().find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        let Some((child, names)) = rest.trim_end_matches(';').split_once("::") else { continue };
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            items.insert(ident(name.trim()), child.to_owned());
        }
    }
    items
}

/// The module a path names: its longest prefix that is a module, where
/// an item a module re-exports from its child counts as the child's.
fn resolve(path: &[String], modules: &BTreeMap<ModPath, String>) -> ModPath {
    let mut at: ModPath = Vec::new();
    for name in path {
        let mut next = at.clone();
        next.push(name.clone());
        if modules.contains_key(&next) {
            at = next;
            continue;
        }
        if let Some(child) = modules.get(&at).map(|t| reexports(t)).and_then(|r| r.get(name).cloned()) {
            let mut next = at.clone();
            next.push(child);
            if modules.contains_key(&next) {
                at = next;
            }
        }
        break;
    }
    at
}

/// Each module and the modules it uses, by full path.
fn uses(modules: &BTreeMap<ModPath, String>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut graph = BTreeMap::new();
    for (module, text) in modules {
        let mut used = BTreeSet::new();
        let parent: ModPath = module[..module.len().saturating_sub(1)].to_vec();
        for path in paths_after(text, "crate") {
            used.insert(resolve(&path, modules));
        }
        for mut path in paths_after(text, "super") {
            // `super::super::x`: each further `super` climbs once more.
            let mut full = parent.clone();
            while path.first().is_some_and(|p| p == "super") {
                path.remove(0);
                full.pop();
            }
            full.extend(path);
            used.insert(resolve(&full, modules));
        }
        for path in paths_after(text, "self") {
            let mut full = module.clone();
            full.extend(path);
            used.insert(resolve(&full, modules));
        }
        used.remove(module);
        graph.insert(module.clone(), used);
    }
    graph
}

/// The graph among the children of `parent`: an edge from child `a` to
/// child `b` when code under `a` uses something under `b`.
fn level(uses: &BTreeMap<ModPath, BTreeSet<ModPath>>, parent: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let child = |m: &ModPath| (m.len() > parent.len() && m.starts_with(parent)).then(|| m[parent.len()].clone());
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, used) in uses {
        let Some(from) = child(module) else { continue };
        let edges = graph.entry(from.clone()).or_default();
        edges.extend(used.iter().filter_map(child).filter(|to| *to != from));
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

/// Every cycle-closing path, one per level that has one, as
/// `level: a -> b -> a`.
fn cycles(uses: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<String> {
    let parents: BTreeSet<ModPath> = uses.keys().map(|m| m[..m.len().saturating_sub(1)].to_vec()).collect();
    parents
        .iter()
        .filter_map(|parent| {
            let found = cycle(&level(uses, parent))?;
            let name = if parent.is_empty() { "crate".to_owned() } else { parent.join("::") };
            Some(format!("{name}: {}", found.join(" -> ")))
        })
        .collect()
}

fn path(s: &str) -> ModPath {
    s.split("::").map(str::to_owned).collect()
}

#[test]
fn no_level_of_the_source_tree_has_a_module_cycle() {
    let modules = modules();
    let uses = uses(&modules);
    assert!(uses.len() > 40, "the scan found the modules: {:?}", uses.keys());
    assert!(uses[&path("report")].contains(&path("finding")), "the scan reads `crate::` paths");
    assert!(uses[&path("reference")].contains(&path("seam")), "and root re-exports in groups");
    assert!(uses[&path("process::persistent")].iter().any(|m| m.starts_with(&path("process"))), "and `super::`");
    assert!(level(&uses, &[]).contains_key("cli"), "the command line is in the graph");
    assert_eq!(cycles(&uses), Vec::<String>::new(), "module cycles");
    // The child runner hands back what it observed; the engine judges it.
    let judges =
        |u: &ModPath| ["campaign", "check", "finding", "report"].iter().any(|j| u.first().is_some_and(|f| f == j));
    let runner = uses.iter().filter(|(m, _)| m.first().is_some_and(|m| m == "process"));
    let back: Vec<String> = runner.filter(|(_, u)| u.iter().any(judges)).map(|(m, _)| m.join("::")).collect();
    assert_eq!(back, Vec::<String>::new(), "the child runner judges nothing: no module of process/ uses a judge's");
}

#[test]
fn a_cycle_is_seen_when_there_is_one() {
    let modules = modules();
    let mut uses = uses(&modules);
    uses.get_mut(&path("token")).expect("a token module").insert(path("report"));
    assert!(cycles(&uses).iter().any(|c| c.starts_with("crate: ")), "token -> report -> ... -> token");
    let mut uses = self::uses(&modules);
    uses.get_mut(&path("process::spawn")).expect("process::spawn").insert(path("process::persistent"));
    assert!(cycles(&uses).iter().any(|c| c.starts_with("process: ")), "a cycle inside process/ too");
}

#[test]
fn nested_groups_and_climbing_supers_are_read() {
    let text = "use crate::{a::{B, c::D}, e::F};\nuse super::super::g::H;";
    let crate_paths = paths_after(text, "crate");
    for want in [&["a", "B"][..], &["a", "c", "D"], &["e", "F"]] {
        assert!(crate_paths.iter().any(|p| p == want), "{want:?} in {crate_paths:?}");
    }
    assert_eq!(paths_after(text, "super"), [["super", "g", "H"]]);
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

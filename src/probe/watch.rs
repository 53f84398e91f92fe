//! Watchers: a directory (a file created, renamed or changed whose name or
//! content holds a token) and a file (a token appearing in its content).
//! They poll: what changed since the last poll is compared with a snapshot.

use super::{KEEP, text};
use crate::attack::tokens_in;
use crate::seam::{Action, Fault};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Most entries a directory walk visits, and how deep.
const MAX_ENTRIES: usize = 10_000;
const MAX_DEPTH: usize = 8;

pub(super) enum Watch {
    Dir { root: PathBuf, seen: HashMap<PathBuf, (u64, Option<SystemTime>)> },
    File { path: PathBuf, offset: u64 },
}

impl Watch {
    pub(super) fn dir(root: PathBuf) -> Result<Watch, Fault> {
        if !root.is_dir() {
            return Err(Fault::Config(format!("--watch-dir {}: not a directory", root.display())));
        }
        let seen = snapshot(&root);
        Ok(Watch::Dir { root, seen })
    }

    pub(super) fn file(path: PathBuf) -> Result<Watch, Fault> {
        let offset = match fs::metadata(&path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(Fault::Config(format!("--watch-file {}: {e}", path.display()))),
        };
        Ok(Watch::File { path, offset })
    }

    /// Effects since the last poll.
    pub(super) fn poll(&mut self) -> Vec<Action> {
        match self {
            Watch::Dir { root, seen } => {
                let now = snapshot(root);
                let changed: Vec<&PathBuf> =
                    now.iter().filter(|(p, v)| seen.get(*p) != Some(v)).map(|(p, _)| p).collect();
                let effects = changed.into_iter().filter_map(|p| file_effect(p, &read_head(p, 0))).collect();
                *seen = now;
                effects
            }
            Watch::File { path, offset } => {
                let len = fs::metadata(&*path).map(|m| m.len()).unwrap_or(0);
                let from = if len < *offset { 0 } else { *offset };
                *offset = len;
                if len == from {
                    return vec![];
                }
                file_effect(path, &read_head(path, from)).into_iter().collect()
            }
        }
    }
}

fn snapshot(root: &Path) -> HashMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut out = HashMap::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if out.len() >= MAX_ENTRIES {
                return out;
            }
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() && depth < MAX_DEPTH {
                stack.push((e.path(), depth + 1));
            } else if meta.is_file() {
                out.insert(e.path(), (meta.len(), meta.modified().ok()));
            }
        }
    }
    out
}

fn read_head(path: &Path, from: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(mut f) = fs::File::open(path) {
        let _ = f.seek(SeekFrom::Start(from));
        let _ = f.take(KEEP as u64).read_to_end(&mut buf);
    }
    buf
}

/// An effect when the file's name or the new content holds a token.
fn file_effect(path: &Path, content: &[u8]) -> Option<Action> {
    let name = path.to_string_lossy();
    let content = text(content);
    let has_token = tokens_in(&name).next().is_some() || tokens_in(&content).next().is_some();
    has_token.then(|| {
        let mut seen = Map::new();
        seen.insert("path".into(), Value::from(name.into_owned()));
        seen.insert("content".into(), Value::from(content));
        Action::observed("file", seen)
    })
}

//! Watchers: a directory (a file created, renamed or changed whose name or
//! content holds a token, or a directory created or renamed whose name
//! does) and a file (a token appearing in its content).
//! They poll: what changed since the last poll is compared with what was
//! there before.
//!
//! A watched file that only grew (a log) yields what was appended, every
//! token in it, so a call that acts twice writes its token twice and shows
//! twice. A file rewritten whole (a store saved through a rename, a JSON
//! document with the new entry in its middle) yields the lines of the tokens
//! it did not hold before: the tokens it already held are not new effects.
//! Files in a watched directory are judged the same way as rewritten ones.
//! A token that shows in a new place as the place that held it goes (a
//! file written under a temporary name, then renamed) moved: no new effect.
//!
//! A token in the name of a directory is that directory's effect: what is
//! beneath it shows only the tokens its own name and content add, the
//! directory's masked, so a call that creates `TOKEN/note.txt` acts once,
//! not once for the directory and again for the file.

use super::{KEEP, text};
use crate::seam::{Action, Fault};
use crate::token::{TOKEN_LEN, tokens_in};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Most entries a directory walk visits, and how deep.
const MAX_ENTRIES: usize = 10_000;
const MAX_DEPTH: usize = 8;
/// Most bytes a watched directory's files are read for when watching
/// starts.
const BASELINE_BUDGET: u64 = 32 << 20;
/// Most of a rewritten watched file read to tell its new tokens.
const MAX_REREAD: u64 = 16 << 20;
/// The bytes before the end of a watched file kept to tell an append (they
/// are still there) from a rewrite.
const TAIL: u64 = 64;
/// How long a watched file stays unchanged, as its watcher sees it, before
/// its unfinished last line counts as a record of its own.
const STILL: Duration = Duration::from_millis(10);
/// Most tokens of an unfinished record masked in its rest.
const OPEN_MAX: usize = 16;
/// Most tokens a watched file is remembered to hold, about the tokens of
/// the sessions a ledger keeps: a log appended to all night stays this
/// small. Past it, only the tokens of the file's last [`TOKENS_TAIL`]
/// bytes are kept (the latest sessions'): a rewrite then shows the older
/// records as new effects, of sessions no ledger keeps any more, which
/// are judged as carrying no known token. Nothing is hidden.
const TOKENS_KEPT: usize = 1 << 16;
const TOKENS_TAIL: u64 = 512 << 10;

/// What a file was at the last poll.
#[derive(Clone, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: (u64, u64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp { len: meta.len(), modified: meta.modified().ok(), inode: (meta.dev(), meta.ino()) }
    }
}

/// A file as last seen: its stamp and the tokens it held.
pub(super) struct Seen {
    stamp: Stamp,
    tokens: HashSet<String>,
}

/// A watched file as last seen, and its last bytes.
pub(super) struct WatchedFile {
    path: PathBuf,
    seen: Option<Seen>,
    tail: Vec<u8>,
    /// How far records were taken: an unfinished last line waits.
    consumed: u64,
    /// The last bytes of an unfinished record taken, for a token it split.
    carry: Vec<u8>,
    /// The tokens of an unfinished record taken: its rest is no new effect
    /// of theirs.
    open: HashSet<String>,
    /// When the file's length last changed, as this watcher saw it.
    changed: Option<Instant>,
}

pub(super) enum Watch {
    Dir { root: PathBuf, seen: HashMap<PathBuf, Seen> },
    File(WatchedFile),
}

impl Watch {
    pub(super) fn dir(root: PathBuf) -> Result<Watch, Fault> {
        if !root.is_dir() {
            return Err(Fault::config(format!("--watch-dir {}: not a directory", root.display())));
        }
        // The tokens each file holds already, read within a budget: past
        // it, a file's first change reports every token it then holds.
        let mut budget = BASELINE_BUDGET;
        let seen = walk(&root)
            .into_iter()
            .map(|Entry { path, stamp, dir }| {
                let content = if dir { vec![] } else { read_range(&path, 0, (KEEP as u64).min(budget)) };
                budget -= content.len() as u64;
                let tokens = held(&path, &text_of(&content));
                (path, Seen { stamp, tokens })
            })
            .collect();
        Ok(Watch::Dir { root, seen })
    }

    pub(super) fn file(path: PathBuf) -> Result<Watch, Fault> {
        let mut w = WatchedFile {
            path,
            seen: None,
            tail: vec![],
            consumed: 0,
            carry: vec![],
            open: HashSet::new(),
            changed: None,
        };
        match fs::metadata(&w.path) {
            Ok(meta) => {
                let stamp = Stamp::of(&meta);
                w.consumed = stamp.len;
                let content = read_range(&w.path, 0, stamp.len.min(MAX_REREAD));
                w.remember(stamp, owned_tokens(&text_of(&content)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Fault::config(format!("--watch-file {}: {e}", w.path.display()))),
        }
        Ok(Watch::File(w))
    }

    /// Effects since the last poll; `drain` takes a watched file's
    /// unfinished last line too, for a last look.
    pub(super) fn poll(&mut self, drain: bool) -> Vec<Action> {
        match self {
            Watch::Dir { root, seen } => {
                let mut effects = Vec::new();
                let mut now = HashMap::new();
                let entries = walk(root);
                // The tokens of what is gone since the last poll: where they
                // show again they moved (a write to a temporary name, then a
                // rename, as git and atomic savers do), no new effect.
                let present: HashSet<&Path> = entries.iter().map(|e| e.path.as_path()).collect();
                let gone = seen.iter().filter(|(p, _)| !present.contains(p.as_path()));
                let moved: HashSet<String> = gone.flat_map(|(_, s)| s.tokens.iter().cloned()).collect();
                for Entry { path: p, stamp, dir } in entries {
                    let entry = match seen.remove(&p) {
                        // A directory changes as its entries do: those are
                        // judged themselves.
                        Some(b) if b.stamp == stamp || dir => b,
                        before => {
                            let content = if dir { vec![] } else { read_range(&p, 0, KEEP as u64) };
                            let text = text_of(&content);
                            let above: HashSet<String> = inherited(root, &p).into_iter().chain(moved.clone()).collect();
                            match &before {
                                // New: its name and content.
                                None => effects.extend(new_entry_effect(&p, dir, &text, &above)),
                                // Changed: each line of a token it did not hold.
                                Some(b) => {
                                    let held: HashSet<String> = b.tokens.union(&moved).cloned().collect();
                                    effects.extend(new_lines(&text, &held).map(|l| file_effect_text(&p, l)))
                                }
                            }
                            Seen { stamp, tokens: held(&p, &text) }
                        }
                    };
                    now.insert(p, entry);
                }
                *seen = now;
                effects
            }
            Watch::File(w) => w.poll(drain),
        }
    }
}

impl WatchedFile {
    fn remember(&mut self, stamp: Stamp, mut tokens: HashSet<String>) {
        if tokens.len() > TOKENS_KEPT {
            let from = stamp.len.saturating_sub(TOKENS_TAIL);
            tokens = owned_tokens(&text_of(&read_range(&self.path, from, stamp.len - from)));
            tokens.extend(self.open.iter().cloned());
        }
        let tail = TAIL.min(stamp.len);
        self.tail = read_range(&self.path, stamp.len - tail, tail);
        self.seen = Some(Seen { stamp, tokens });
    }

    /// What was added since the last poll, one effect a record: each line
    /// (or the unfinished rest, once the file is still or on `drain`) that
    /// holds a token, so that two calls whose records land in one poll are
    /// two effects, each its own frame's.
    fn poll(&mut self, drain: bool) -> Vec<Action> {
        let Ok(meta) = fs::metadata(&self.path) else {
            // Gone: whatever comes back is new.
            self.seen = None;
            self.consumed = 0;
            self.carry.clear();
            self.open.clear();
            return Vec::new();
        };
        let stamp = Stamp::of(&meta);
        let moved = self.seen.as_ref().is_none_or(|b| b.stamp != stamp);
        if moved {
            self.changed = Some(Instant::now());
        }
        // Still: unchanged for STILL as this watcher saw it (a writer may be
        // caught between the pages of one write).
        let still = drain || self.changed.is_some_and(|c| c.elapsed() >= STILL);
        match self.seen.take() {
            Some(b) if !moved && self.consumed >= stamp.len => {
                self.seen = Some(b);
                Vec::new()
            }
            Some(b) if !moved || self.appended(&b.stamp, &stamp) => {
                let len = stamp.len;
                let mut effects = self.appended_records(b.tokens, stamp.clone(), still);
                // The last look reads to the end, a read at a time.
                while drain && self.consumed < len {
                    let before = self.consumed;
                    let tokens = self.seen.take().map(|s| s.tokens).unwrap_or_default();
                    effects.extend(self.appended_records(tokens, stamp.clone(), still));
                    if self.consumed == before {
                        break;
                    }
                }
                effects
            }
            // There since the last poll (a log the server made): read as
            // appended from its start.
            None => {
                (self.consumed, self.carry, self.open) = (0, Vec::new(), HashSet::new());
                self.appended_records(HashSet::new(), stamp, still)
            }
            Some(b) => {
                // Rewritten: the lines of the tokens it did not hold before,
                // up to the length stamped (what comes after is the next
                // poll's, read on from there).
                let content = text_of(&read_range(&self.path, 0, stamp.len.min(MAX_REREAD)));
                let effects = new_lines(&content, &b.tokens).map(|l| file_effect_text(&self.path, l)).collect();
                (self.consumed, self.carry, self.open) = (stamp.len, Vec::new(), HashSet::new());
                self.remember(stamp, owned_tokens(&content));
                effects
            }
        }
    }

    /// The records appended since the last one taken, up to the length
    /// stamped: whole lines, and the unfinished rest once the file is
    /// `still`. Past [`MAX_REREAD`] a read ends at its last LF and the next
    /// poll reads on. The last bytes of an unfinished record taken are
    /// carried to the next read, so a token split across two polls is still
    /// found, and the tokens it held are masked in its rest: one record,
    /// each token once.
    fn appended_records(&mut self, mut tokens: HashSet<String>, stamp: Stamp, still: bool) -> Vec<Action> {
        let end = stamp.len.min(self.consumed + MAX_REREAD);
        let added = read_range(&self.path, self.consumed, end - self.consumed);
        let last_lf = added.iter().rposition(|b| *b == b'\n').map(|i| i + 1);
        let whole = match (still && end == stamp.len, last_lf) {
            (true, _) => added.len(),
            (false, Some(n)) => n,
            // A line longer than a read: taken as it is, carried on.
            (false, None) if end < stamp.len => added.len(),
            (false, None) => 0,
        };
        if whole == 0 {
            self.remember(stamp, tokens);
            return Vec::new();
        }
        self.consumed += whole as u64;
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(&added[..whole]);
        let added = text_of(&bytes);
        tokens.extend(owned_tokens(&added));
        let mut effects = Vec::new();
        let mut records = added.split_inclusive('\n').peekable();
        while let Some(r) = records.next() {
            let last = records.peek().is_none();
            // The first record goes on one taken unfinished: its tokens there
            // are no new effect.
            let open = std::mem::take(&mut self.open);
            if tokens_in(r).any(|t| !open.contains(t)) {
                let masked = open.iter().fold(r.to_owned(), |r, t| r.replace(t.as_str(), "[seen before]"));
                effects.push(file_effect_text(&self.path, text(masked.as_bytes())));
            }
            if last && !r.ends_with('\n') {
                // A log that never ends a line is one endless record: only
                // its latest pieces mask, or a call acting again is hidden.
                let open = if open.len() > OPEN_MAX { HashSet::new() } else { open };
                self.open = open.into_iter().chain(owned_tokens(r)).collect();
                self.carry = r.as_bytes()[r.len().saturating_sub(TOKEN_LEN - 1)..].to_vec();
            }
        }
        self.remember(stamp, tokens);
        effects
    }

    /// Whether the file went from `before` to `now` by growing only: the
    /// same file, longer, its old last bytes still in place.
    fn appended(&self, before: &Stamp, now: &Stamp) -> bool {
        let start = before.len.saturating_sub(TAIL);
        before.inode == now.inode
            && now.len > before.len
            && read_range(&self.path, start, before.len - start) == self.tail
    }
}

/// A regular file or directory under a watched directory.
struct Entry {
    path: PathBuf,
    stamp: Stamp,
    dir: bool,
}

/// Every regular file and directory under `root` (bounded), with its stamp.
fn walk(root: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
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
            }
            if meta.is_dir() || meta.is_file() {
                out.push(Entry { path: e.path(), stamp: Stamp::of(&meta), dir: meta.is_dir() });
            }
        }
    }
    out
}

/// The tokens in the names of the directories between `root` and `path`:
/// each was its directory's effect.
fn inherited(root: &Path, path: &Path) -> HashSet<String> {
    let below = path.strip_prefix(root).unwrap_or(path);
    let parents = below.parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    owned_tokens(&parents)
}

/// At most `max` bytes of the file from `from`.
fn read_range(path: &Path, from: u64, max: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(mut f) = fs::File::open(path) {
        let _ = f.seek(SeekFrom::Start(from));
        let _ = f.take(max).read_to_end(&mut buf);
    }
    buf
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn owned_tokens(s: &str) -> HashSet<String> {
    tokens_in(s).map(str::to_owned).collect()
}

/// The tokens a file in a watched directory holds, in its name or content.
fn held(path: &Path, content: &str) -> HashSet<String> {
    let mut tokens = owned_tokens(&path.to_string_lossy());
    tokens.extend(owned_tokens(content));
    tokens
}

/// Each line of `content` holding a token not in `before`, every token that
/// was in `before` masked (it is no new effect), within what a probe keeps.
fn new_lines<'a>(content: &'a str, before: &'a HashSet<String>) -> impl Iterator<Item = String> + 'a {
    content.lines().filter(|l| tokens_in(l).any(|t| !before.contains(t))).map(|l| {
        let masked =
            before.iter().filter(|t| l.contains(t.as_str())).fold(l.to_owned(), |l, t| l.replace(t, "[seen before]"));
        text(masked.as_bytes())
    })
}

/// The effect of a new file or directory: when its name or content holds a
/// token that the directories above it (`above`) do not, with theirs
/// masked in its path and content, as they are no new effect. A
/// directory's path ends in `/`.
fn new_entry_effect(path: &Path, dir: bool, content: &str, above: &HashSet<String>) -> Option<Action> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    tokens_in(&name).chain(tokens_in(content)).find(|t| !above.contains(*t))?;
    let mask = |s: &str| above.iter().fold(s.to_owned(), |s, t| s.replace(t.as_str(), "[seen before]"));
    let shown = format!("{}{}", path.to_string_lossy(), if dir { "/" } else { "" });
    Some(file_effect_text(Path::new(&mask(&shown)), text(mask(content).as_bytes())))
}

/// The effect of a file: its path and `content`, already bounded.
fn file_effect_text(path: &Path, content: String) -> Action {
    let mut seen = Map::new();
    seen.insert("path".into(), Value::from(path.to_string_lossy().into_owned()));
    seen.insert("content".into(), Value::from(content));
    Action::observed("file", seen)
}

//! Where a server may read and write without the audit calling it out: its
//! own folder and the folders its programs live in, the package (the
//! nearest folder with a manifest) each belongs to, the working folder,
//! its temporary HOME, package cache and TMPDIR, the system's folders, and
//! each `--allow-path`. Every path is compared as the kernel names it
//! (symbolic links resolved).

use std::path::{Path, PathBuf};

/// Folders of the system a program reads to run at all.
const SYSTEM: &[&str] =
    &["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/run"];

/// The places a server may touch, each with why.
pub struct Area {
    places: Vec<(PathBuf, String)>,
    /// The harness's own HOME: never a program's folder, however it runs.
    real_home: Option<PathBuf>,
}

/// Names for the temporary places, so a report reads the same every run.
pub struct Places {
    pub home: PathBuf,
    pub cache: Option<PathBuf>,
    pub tmpdir: PathBuf,
    pub cwd: PathBuf,
}

impl Places {
    /// `path` with the temporary places named: `{home}/.netrc`.
    pub fn show(&self, path: &Path) -> String {
        let named = [(Some(&self.home), "{home}"), (self.cache.as_ref(), "{cache}"), (Some(&self.tmpdir), "{tmpdir}")];
        for (place, name) in named {
            if let Some(rest) = place.and_then(|p| path.strip_prefix(real(p)).ok()) {
                return match rest.as_os_str().is_empty() {
                    true => name.to_owned(),
                    false => format!("{name}/{}", rest.display()),
                };
            }
        }
        path.display().to_string()
    }
}

/// `path` as the kernel names it, or as given when it does not exist.
pub fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

impl Area {
    /// The area of `words` (the command as launched) at `places`, widened
    /// by `allowed`.
    pub fn new(words: &[String], places: &Places, allowed: &[PathBuf]) -> Area {
        let mut area = Area { places: Vec::new(), real_home: std::env::var_os("HOME").map(|h| real(Path::new(&h))) };
        SYSTEM.iter().for_each(|s| area.add(Path::new(s), "system"));
        area.add(&places.home, "its HOME");
        area.add(&places.tmpdir, "its TMPDIR");
        area.add(&places.cwd, "the working folder");
        if let Some(cache) = &places.cache {
            area.add(cache, "its package cache");
        }
        allowed.iter().for_each(|p| area.add(p, "--allow-path"));
        for (i, word) in words.iter().enumerate() {
            // `server.py` names a file here: its folder is this one, not "".
            let Ok(path) = std::path::absolute(word) else { continue };
            if path.is_dir() {
                area.add(&path, "a folder the command names");
            } else if path.is_file() {
                match (i, path.parent()) {
                    (0, _) => area.program(&path),
                    (_, Some(folder)) => area.add(folder, "a file the command names is here"),
                    (_, None) => {}
                }
                // `node pkg/dist/index.js` reads `pkg/node_modules`.
                if let Some(root) = package_root(&real(&path), area.real_home.as_deref()) {
                    area.add(&root, "the package a file the command names belongs to");
                }
            } else if let Some(found) = on_path(word).filter(|_| i == 0 && !word.contains('/')) {
                area.program(&found);
            }
        }
        area
    }

    fn add(&mut self, path: &Path, why: &str) {
        // An empty path would hold every path: it is never a place.
        let Ok(at) = std::path::absolute(path).map(|p| real(&p)) else { return };
        if !self.places.iter().any(|(p, _)| *p == at) {
            self.places.push((at, why.to_owned()));
        }
    }

    /// Adds the folder a program run belongs to: its install prefix when it
    /// sits in a `bin` folder (`/opt/node/bin/node` gives `/opt/node`), its
    /// own folder otherwise; never `/` or the harness's HOME.
    pub fn program(&mut self, program: &Path) {
        self.program_within(program, 3);
    }

    /// [`Area::program`], and the interpreter a script names on its `#!`
    /// line (the kernel runs it unseen by strace), `depth` deep.
    fn program_within(&mut self, program: &Path, depth: u8) {
        if let Some(interpreter) = interpreter(program).filter(|_| depth > 0) {
            self.program_within(&interpreter, depth - 1);
        }
        // As named (`node_modules/.bin/x`, a link into its package) and
        // as the kernel finds it.
        let named = std::path::absolute(program).unwrap_or_else(|_| program.to_owned());
        for program in [named.clone(), real(&named)] {
            let Some(dir) = program.parent() else { continue };
            let in_bin = dir.file_name().is_some_and(|n| ["bin", "sbin", "shims", ".bin"].iter().any(|b| n == *b));
            let prefix = if in_bin { dir.parent().unwrap_or(dir) } else { dir };
            if prefix.parent().is_some() && Some(prefix) != self.real_home.as_deref() {
                self.add(prefix, "a program it runs lives here");
            }
        }
        if let Some(root) = package_root(&real(&named), self.real_home.as_deref()) {
            self.add(&root, "the package a program it runs belongs to");
        }
    }

    /// Why the area holds `path`, if it does.
    pub fn holds(&self, path: &Path) -> Option<&str> {
        self.places.iter().find(|(p, _)| path.starts_with(p)).map(|(_, why)| why.as_str())
    }
}

/// Files that make a folder the root of a package, whose dependencies
/// sit beneath it (`node_modules`, a `.venv`, `vendor`).
const MANIFESTS: &[&str] =
    &["package.json", "pyproject.toml", "setup.py", "Cargo.toml", "go.mod", "Gemfile", "composer.json"];

/// The nearest folder above `file` (at most eight up, never `/` or the
/// harness's `home`) that holds a package manifest.
fn package_root(file: &Path, home: Option<&Path>) -> Option<PathBuf> {
    for folder in file.ancestors().skip(1).take(8) {
        if folder.parent().is_none() || Some(folder) == home {
            return None;
        }
        if MANIFESTS.iter().any(|m| folder.join(m).is_file()) {
            return Some(folder.to_owned());
        }
    }
    None
}

/// The interpreter a script's `#!` line runs, found on PATH for `env`.
fn interpreter(script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).and_then(|mut f| f.read(&mut head)).ok()?;
    let line = head[..n].strip_prefix(b"#!")?.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let first = PathBuf::from(words.next()?);
    match first.file_name().is_some_and(|n| n == "env") {
        true => on_path(words.find(|w| !w.starts_with('-') && !w.contains('='))?),
        false => Some(first),
    }
}

/// Where `name` is found on PATH, as a shell would run it.
fn on_path(name: &str) -> Option<PathBuf> {
    on_path_in(name, &std::env::var("PATH").ok()?)
}

/// Where `name` is found on the search path `path`.
pub fn on_path_in(name: &str, path: &str) -> Option<PathBuf> {
    std::env::split_paths(path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The smallest set of folders that holds `files` and `folders`: each
/// file's folder (a file in a top-level folder, such as `/etc/hosts`,
/// itself), each folder itself, a folder inside another dropped, and a
/// folder with `SPREAD` or more kept beneath it taken whole (never a
/// top-level one).
pub fn smallest(files: &[PathBuf], folders: &[PathBuf]) -> Vec<PathBuf> {
    const SPREAD: usize = 4;
    let own = |p: &PathBuf| match p.parent() {
        Some(d) if d.components().count() > 2 => d.to_owned(),
        _ => p.clone(),
    };
    let mut dirs: Vec<PathBuf> = files.iter().map(own).chain(folders.iter().cloned()).collect();
    loop {
        dirs.sort();
        dirs.dedup();
        let kept: Vec<PathBuf> =
            dirs.iter().filter(|d| !dirs.iter().any(|o| o != *d && d.starts_with(o))).cloned().collect();
        let mut parents: Vec<PathBuf> = kept.iter().filter_map(|d| d.parent().map(Path::to_owned)).collect();
        parents.sort();
        let crowded =
            parents.iter().find(|p| p.components().count() > 2 && parents.iter().filter(|q| q == p).count() >= SPREAD);
        match crowded {
            Some(p) => {
                let p = p.clone();
                dirs = kept.into_iter().filter(|d| !d.starts_with(&p)).chain([p.clone()]).collect();
            }
            None => return kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_the_command_names_brings_the_package_it_belongs_to() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = real(dir.path()).join("pkg");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::create_dir_all(pkg.join("node_modules/dep")).unwrap();
        std::fs::write(pkg.join("dist/index.js"), "").unwrap();
        let places =
            Places { home: dir.path().join("h"), cache: None, tmpdir: dir.path().join("t"), cwd: dir.path().join("c") };
        let words = |script: &Path| vec!["node".to_owned(), script.display().to_string()];
        let area = Area::new(&words(&pkg.join("dist/index.js")), &places, &[]);
        assert_eq!(area.holds(&pkg.join("node_modules/dep/index.js")), None, "no manifest: its folder alone");
        std::fs::write(pkg.join("package.json"), "{}").unwrap();
        let area = Area::new(&words(&pkg.join("dist/index.js")), &places, &[]);
        let why = area.holds(&pkg.join("node_modules/dep/index.js"));
        assert_eq!(why, Some("the package a file the command names belongs to"));
        assert_eq!(area.holds(&dir.path().join("elsewhere")), None);
    }

    #[test]
    fn folders_crowded_enough_are_taken_whole_and_nested_ones_dropped() {
        let files = [
            "/usr/lib/py/a/x.py",
            "/usr/lib/py/b/y.py",
            "/usr/lib/py/c/z.py",
            "/usr/lib/py/d/w.py",
            "/etc/hosts",
            "/usr/lib/py/a/q/r.py",
        ];
        let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        let got: Vec<String> = smallest(&paths, &[]).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(got, ["/etc/hosts", "/usr/lib/py"]);
        let folder = [PathBuf::from("/srv/me/server")];
        let got = smallest(&[PathBuf::from("/srv/me/server/main.py")], &folder);
        assert_eq!(got, folder, "a folder opened is itself, not its parent");
    }
}

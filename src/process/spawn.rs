//! Starting a server: its own process group, a scrubbed environment with a
//! fresh HOME, and piped stdio. Every group and folder started here is
//! registered until it is ended, so that a signal to portcullis can end
//! and remove them ([`end_everything`]).

use super::group;
use crate::seam::Fault;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;
use tempfile::TempDir;

/// The command to run and the environment it gets.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Command {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables for the child besides PATH, LANG, HOME and the package
    /// cache (`XDG_CACHE_HOME`, `npm_config_cache`): a value, or `None` to
    /// pass the harness's own value through. They may set those too.
    pub env: Vec<(String, Option<String>)>,
    /// The working folder: portcullis's own when `None`.
    pub cwd: Option<PathBuf>,
    /// Files written into the fresh HOME before the start: a path relative
    /// to HOME and its content (an audit's canary credentials).
    pub home_files: Vec<(PathBuf, Vec<u8>)>,
}

impl Command {
    /// `program` with `args` and no variables passed through.
    pub fn new(program: impl Into<String>, args: impl IntoIterator<Item = impl Into<String>>) -> Command {
        let args = args.into_iter().map(Into::into).collect();
        Command { program: program.into(), args, env: Vec::new(), cwd: None, home_files: Vec::new() }
    }

    /// This command with `env` passed to the child as well.
    pub fn with_env(mut self, env: Vec<(String, Option<String>)>) -> Command {
        self.env = env;
        self
    }
}

/// A started server: its process, its pipes and its HOME.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
    pub(crate) home: Home,
}

/// Process groups and folders started and not yet ended.
#[derive(Default)]
struct Started {
    groups: Vec<u32>,
    folders: Vec<PathBuf>,
}

static STARTED: Mutex<Started> = Mutex::new(Started { groups: Vec::new(), folders: Vec::new() });

/// Set once the servers have been ended for good ([`end_servers`]), under
/// the registry's lock: no server starts after.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the servers have been ended for good: a wait for quiet after
/// one ended under its session has nothing left to wait for.
pub(crate) fn stopping() -> bool {
    STOPPING.load(std::sync::atomic::Ordering::Relaxed)
}

fn started() -> std::sync::MutexGuard<'static, Started> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary folder that is registered while it exists.
pub(crate) struct Home(TempDir);

impl Home {
    /// A new temporary folder, registered.
    pub(crate) fn new() -> Result<Home, Fault> {
        let dir = tempfile::Builder::new()
            .prefix("portcullis-")
            .tempdir()
            .map_err(|e| Fault::spawn("a temporary HOME folder", e))?;
        started().folders.push(dir.path().to_owned());
        Ok(Home(dir))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Home {
    /// Unregisters the folder; the field's own drop, after this, removes it.
    fn drop(&mut self) {
        started().folders.retain(|f| f != self.0.path());
    }
}

/// Forgets group `pgid` once it has been ended.
fn ended(pgid: u32) {
    started().groups.retain(|g| *g != pgid);
}

/// Ends the group led by `child` as [`group::end`] does, and forgets it.
pub(crate) fn end(child: &mut Child, own: Duration, grace: Duration) -> Option<ExitStatus> {
    let status = group::end(child, own, grace);
    ended(child.id());
    status
}

/// Starts `cmd` in a process group of its own with piped stdio, HOME a new
/// temporary folder and `cache` (if any) its package cache.
pub(crate) fn spawn(cmd: &Command, cache: Option<&Path>) -> Result<Spawned, Fault> {
    let home = Home::new()?;
    for (path, content) in &cmd.home_files {
        let at = home.path().join(path);
        let made = at.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(&at, content));
        made.map_err(|e| Fault::spawn(format!("a file in HOME ({})", path.display()), e))?;
    }
    let mut command = std::process::Command::new(&cmd.program);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    command.args(&cmd.args).env_clear().env("HOME", home.path());
    command.env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
    command.env("LANG", std::env::var_os("LANG").unwrap_or_else(|| "C.UTF-8".into()));
    if let Some(cache) = cache {
        command.env("XDG_CACHE_HOME", cache).env("npm_config_cache", cache.join("npm"));
    }
    for (key, value) in &cmd.env {
        match value {
            Some(v) => command.env(key, v),
            None => match std::env::var_os(key) {
                Some(v) => command.env(key, v),
                None => &mut command,
            },
        };
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    // Registered under the lock that a signal's cleanup takes, so that no
    // group starts unseen while it runs.
    let mut registry = started();
    if stopping() {
        return Err(Fault::spawn(&cmd.program, "portcullis is stopping and starts no more servers"));
    }
    let mut child = command.spawn().map_err(|e| Fault::spawn(&cmd.program, e))?;
    registry.groups.push(child.id());
    drop(registry);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
        return Err(Fault::spawn(&cmd.program, "its pipes were not set up"));
    };
    Ok(Spawned { child, stdin, stdout, stderr, home })
}

/// Runs `command` to its end in a process group of its own, registered
/// while it runs (so a signal to portcullis ends it), for at most `limit`:
/// past it the whole group is ended and there is no status.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn run_bounded(mut command: std::process::Command, limit: Duration) -> std::io::Result<Option<ExitStatus>> {
    command.process_group(0);
    let mut registry = started();
    let mut child = command.spawn()?;
    registry.groups.push(child.id());
    drop(registry);
    match group::wait_for(&mut child, limit) {
        Some(status) => {
            ended(child.id());
            Ok(Some(status))
        }
        None => {
            end(&mut child, Duration::ZERO, Duration::from_millis(500));
            Ok(None)
        }
    }
}

/// Ends every process group started here and not ended yet (SIGTERM, then
/// SIGKILL after `grace`), and removes every temporary folder made here:
/// what a signal to portcullis does before it exits. Returns how many
/// groups and folders there were.
pub fn end_everything(grace: Duration) -> (usize, usize) {
    let folders = std::mem::take(&mut started().folders);
    let groups = end_servers(grace);
    for f in &folders {
        let _ = std::fs::remove_dir_all(f);
    }
    (groups, folders.len())
}

/// Ends every process group started here and not ended yet (SIGTERM, then
/// SIGKILL after `grace`), and refuses to start any more: a run past its
/// `--duration` ends the sessions still running so. Returns how many
/// groups there were.
pub fn end_servers(grace: Duration) -> usize {
    let mut registry = started();
    STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
    let groups = std::mem::take(&mut registry.groups);
    group::end_groups(&groups, grace);
    // Held until here: a session thread cannot start a group meanwhile.
    drop(registry);
    groups.len()
}

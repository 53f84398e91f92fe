//! Saved findings: everything needed to replay one — the check, the policy,
//! the script's choices and salt, the tool it called — plus the frames and
//! violations escaped for a human. Written atomically (a temporary file,
//! then a hard link under its name) and never over an existing file but
//! its own: a run adds to the artifact it saved what it learns later (the
//! witnesses of its other rules), by a rename over it.

use crate::catalogue::{Catalogue, ToolSpec};
use crate::check::{CheckId, Violation};
use crate::escape::{SHOWN, escape};
use crate::finding::{Distinct, Finding, class_of, distinct, method_refused_as_unknown};
use crate::frame::Rule;
use crate::observation::Observation;
use crate::protocol::Policy;
use crate::script::{Script, ScriptSpec};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How many artifacts of one finding (check, seed and salt) a folder may
/// hold before saving one more is refused rather than searched for ever.
const NAMES_PER_FINDING: u32 = 10_000;

/// The artifact format's version. Version 1 (keys of older builds, read
/// as [`Artifact::key`] says) is read too.
pub const VERSION: u32 = 2;

/// One saved finding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Artifact {
    /// The format version.
    pub portcullis_artifact: u32,
    /// The id of the check it fails.
    pub check: String,
    /// The rest of its finding key ([`Distinct`]): the kind of violation;
    /// absent from artifacts saved before keys had kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The class of input (or what a crash said) of its finding key; in an
    /// artifact saved by an older build, maybe the rule, the attack kind or
    /// an older class ([`Artifact::key`] reads them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
    /// Whether `what` was written by a build that keyed findings by cause;
    /// false in artifacts saved before, whose `what` named the rule. Either
    /// way [`Artifact::key`] reads it as the class its frame belongs to now.
    #[serde(default)]
    pub keyed_by_cause: bool,
    /// The policy the gateway was held to.
    pub policy: Policy,
    /// The seed of the hunt.
    pub seed: u64,
    /// The salt of the session's tokens.
    pub salt: u32,
    /// The tools the script calls: the one it may run first, then any it
    /// must not.
    pub tools: Vec<ToolSpec>,
    /// The script's choices.
    pub spec: ScriptSpec,
    /// The exact script, bytes and labels (what replays run).
    pub script: Script,
    /// The canary base URL the script's tokens were put under.
    pub canary_base: String,
    /// The command it ran against, as given.
    pub command: Vec<String>,
    /// Each violation, as text.
    pub violations: Vec<String>,
    /// Each frame's bytes, escaped and bounded.
    pub frames: Vec<String>,
    /// The gateway's stderr, escaped and bounded.
    pub stderr: String,
    /// The scripts the same process ran before `script`, for a finding
    /// that a fresh session did not repeat (state-dependent): replays run
    /// them first, in one process, and `minimize` cuts them first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Script>,
    /// How long after its session was judged the evidence came, in
    /// milliseconds, for a late finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_ms: Option<u64>,
    /// The waits of the run that found it, in milliseconds (answer, quiet,
    /// exit grace): a replay waits at least as long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_ms: Option<[u64; 3]>,
    /// The start bound of the run that found it, in milliseconds, as it
    /// had grown by then: a replay's new process may take as long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<u64>,
    /// The temporary folder a profile made for the run (`{tmp}`), where the
    /// script's paths may point: a replay moves them into its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_tmp: Option<String>,
    /// A witness of each other rule its cause was seen under (its choices
    /// and salt, rendered against `tools` as `spec` is), when the hunt saw
    /// more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<crate::finding::Witness>,
}

/// Why an artifact could not be read or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum ArtifactError {
    /// Reading or writing the file failed.
    Io(PathBuf, std::io::Error),
    /// The file is not an artifact of a version this build reads.
    Format(PathBuf, String),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            ArtifactError::Format(p, e) => write!(f, "{}: not a portcullis artifact: {e}", p.display()),
        }
    }
}

impl std::error::Error for ArtifactError {}

impl Artifact {
    /// The artifact of a finding against a target that called `tool`.
    pub fn new(f: &Finding, tools: Vec<ToolSpec>, tools_base: &str, command: Vec<String>) -> Self {
        let key = f.distinct();
        Artifact {
            portcullis_artifact: VERSION,
            check: f.check.id().to_owned(),
            kind: Some(key.kind),
            what: Some(key.what),
            keyed_by_cause: true,
            policy: f.policy,
            seed: f.seed,
            salt: f.salt,
            tools,
            spec: f.spec.clone(),
            script: f.script.clone(),
            canary_base: tools_base.to_owned(),
            command,
            violations: f.violations.iter().map(|v| v.to_string()).collect(),
            frames: crate::fill::written(&f.script, &f.observation.filled)
                .frames
                .iter()
                .map(|fr| escape(&fr.bytes, SHOWN))
                .collect(),
            stderr: escape(&f.observation.stderr, SHOWN),
            history: f.history.clone(),
            late_ms: f.late.map(|d| d.as_millis() as u64),
            waits_ms: None,
            start_ms: None,
            profile_tmp: None,
            witnesses: f.witnesses.clone(),
        }
    }

    /// The witness of `rule`'s session, rendered against its tools.
    pub fn witness(&self, rule: &str) -> Option<Script> {
        let w = self.witnesses.iter().find(|w| w.rule == rule)?;
        let catalogue = Catalogue { tools: self.tools.clone(), canary_base: self.canary_base.clone() };
        Some(w.spec.render(&catalogue, w.salt))
    }

    /// Its finding key, when it was saved with one. A key saved by an
    /// older build named the frame its first violation concerns by that
    /// frame's rule, an older cause or its attack kind: read as the class
    /// that frame belongs to now. Crash lines read as they were.
    pub fn key(&self) -> Option<Distinct> {
        self.read_key().map(|(key, _)| key)
    }

    /// Its key, and whether the key names a frame's class (else a crash
    /// line, or nothing).
    fn read_key(&self) -> Option<(Distinct, bool)> {
        let check = CheckId::from_id(&self.check)?;
        let kind = self.kind.clone()?;
        let what = self.what.clone().unwrap_or_default();
        // "… (frame #N) …" in the first violation's text.
        let first = self.violations.first().and_then(|v| v.rsplit_once("(frame #")).map(|(_, rest)| rest);
        let at = first.and_then(|rest| rest.split(')').next()).and_then(|n| n.parse::<usize>().ok());
        let Some(frame) = at.and_then(|i| self.script.frames.get(i)) else {
            // With no frame named, a class is a name (a crash line is a line).
            let class =
                !what.is_empty() && what.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            return Some((Distinct { check, kind, what }, class));
        };
        let rule = frame.expect.rule_or_tolerated();
        // Before version 2, `bad_tool_name` and `bad_arguments` were of
        // the cause `tool_call`, and a tolerated call was of its rule's
        // cause to `exactly-once` too.
        let moved = matches!(rule, Some(Rule::BadToolName | Rule::BadArguments)) && what == "tool_call";
        let named_it = what == frame.kind
            || rule.is_some_and(|r| r.id() == what || r.cause().id() == what)
            || moved
            || what == class_of(check, frame);
        let what = if named_it { class_of(check, frame).to_owned() } else { what };
        // Older builds keyed a request refused as a method the server
        // does not have by its frame's class, not by its method; its code
        // is read off the violation's text, as the frame is above.
        let unknown = self.violations.first().is_some_and(|v| {
            let code = |c: &str| v.contains(&format!("answered with error {c}"));
            code("Some(-32601)") || code("-32601 ")
        });
        let method = (named_it && kind == "valid_refused" && unknown)
            .then(|| method_refused_as_unknown(Some(crate::protocol::code::METHOD_NOT_FOUND), frame))
            .flatten();
        Some((Distinct { check, kind, what: method.unwrap_or(what) }, named_it))
    }

    /// Whether its key is an end under keep-open saved before version 2,
    /// keyed by the frame written last, which says nothing of the frame
    /// the session ended on (one keyed by a crash line keeps its key).
    pub fn keyed_by_last_frame(&self) -> bool {
        let end = self.portcullis_artifact < 2 && self.kind.as_deref() == Some("ended_under_keep_open");
        end && self.read_key().is_some_and(|(_, named_frame)| named_frame)
    }

    /// The violations of a run of its script (`script` showed `obs`) that
    /// show its finding: of its key, or, saved without one, of its check;
    /// any end under keep-open where its key was the frame written last
    /// ([`Artifact::keyed_by_last_frame`]).
    pub fn showing(&self, violations: &[Violation], script: &Script, obs: &Observation) -> Vec<Violation> {
        let key = self.key();
        let by_last_frame = self.keyed_by_last_frame();
        let shows = |v: &&Violation| match &key {
            Some(k) if by_last_frame => v.check == k.check && v.kind.name() == k.kind,
            Some(k) => distinct(v, script, obs) == *k,
            None => v.check.id() == self.check,
        };
        violations.iter().filter(shows).cloned().collect()
    }

    /// The same, with the waits of the run that found it.
    pub fn waited(mut self, answer: Duration, quiet: Duration, exit_grace: Duration) -> Self {
        self.waits_ms = Some([answer, quiet, exit_grace].map(|d| d.as_millis() as u64));
        self
    }

    /// The same, with the start bound of the run that found it.
    pub fn started_within(mut self, start: Duration) -> Self {
        self.start_ms = Some(start.as_millis() as u64);
        self
    }

    /// Saves it in `dir` (created if missing) under a fresh name, atomically.
    pub fn save(&self, dir: &Path) -> Result<PathBuf, ArtifactError> {
        let io = |e| ArtifactError::Io(dir.to_path_buf(), e);
        std::fs::create_dir_all(dir).map_err(io)?;
        let text = serde_json::to_string_pretty(self).expect("artifacts serialize");
        let tmp = Staged::write(dir, text.as_bytes()).map_err(io)?;
        for n in 0..NAMES_PER_FINDING {
            let name = format!(
                "finding-{}-seed{}-{:08x}{}.json",
                self.check,
                self.seed,
                self.salt,
                if n == 0 { String::new() } else { format!("-{n}") }
            );
            let path = dir.join(name);
            // A hard link is made whole or not at all, and never replaces
            // a file already there.
            match std::fs::hard_link(&tmp.0, &path) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(ArtifactError::Io(path, e)),
            }
        }
        let full = format!("{NAMES_PER_FINDING} artifacts of this finding are there already");
        Err(ArtifactError::Io(dir.to_path_buf(), std::io::Error::new(std::io::ErrorKind::AlreadyExists, full)))
    }

    /// Writes it over `path`, an artifact this run saved, whole or not at
    /// all (a temporary file beside it, then a rename).
    pub fn save_over(&self, path: &Path) -> Result<(), ArtifactError> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let text = serde_json::to_string_pretty(self).expect("artifacts serialize");
        let tmp = Staged::write(dir, text.as_bytes()).map_err(|e| ArtifactError::Io(dir.to_path_buf(), e))?;
        std::fs::rename(&tmp.0, path).map_err(|e| ArtifactError::Io(path.to_path_buf(), e))
    }

    /// Reads one.
    pub fn load(path: &Path) -> Result<Artifact, ArtifactError> {
        let text = std::fs::read_to_string(path).map_err(|e| ArtifactError::Io(path.to_path_buf(), e))?;
        let a: Artifact =
            serde_json::from_str(&text).map_err(|e| ArtifactError::Format(path.to_path_buf(), e.to_string()))?;
        if !(1..=VERSION).contains(&a.portcullis_artifact) {
            return Err(ArtifactError::Format(path.to_path_buf(), format!("version {}", a.portcullis_artifact)));
        }
        Ok(a)
    }
}

/// A finished file under a hidden name in the target folder, removed when
/// dropped (once it is linked under its real name, or when saving failed).
struct Staged(PathBuf);

impl Staged {
    fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".portcullis-{}-{n}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
        let staged = Staged(path);
        file.write_all(bytes)?;
        file.sync_all()?;
        Ok(staged)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

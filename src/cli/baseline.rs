//! `--baseline FILE` and `--update-baseline FILE`: the causes a team knows
//! of and accepts, each with why, in a TOML file made for review. A run
//! reports a known cause as known and fails only on a new one; a known
//! cause the run did not see is reported as possibly fixed.

use crate::finding::Distinct;
pub use crate::report::Standing;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a baseline file's first lines say.
const HEADER: &str = "\
# portcullis baseline: causes known and accepted, one [[known]] entry each.
# A run reports these as known and fails only on a cause not listed here.
# `--update-baseline FILE` adds a run's new causes and keeps every reason
# written; say in `reason` why a cause is accepted (an upstream issue).
";

/// `--baseline` and `--update-baseline`, as `fuzz`, `check-stdout` and
/// `audit` take them.
#[derive(clap::Args, Clone, Default)]
pub struct Flags {
    /// Known causes, in a TOML file of `[[known]]` entries (a finding key
    /// and the reason it is accepted): each is reported as known and does
    /// not fail the run; a cause it does not list does (exit 1), and one it
    /// lists that the run did not see is reported as possibly fixed.
    #[arg(long, value_name = "FILE.toml")]
    pub baseline: Option<PathBuf>,
    /// Write this run's causes to this baseline file, keeping every entry
    /// that gives a reason; the run then exits 0 unless the harness
    /// failed. A run stopped before its end writes nothing.
    #[arg(long, value_name = "FILE.toml")]
    pub update_baseline: Option<PathBuf>,
}

/// The baselines a run was given, read before it starts: a bad file is a
/// one-line error, and the reasons an update keeps are known good.
pub struct Given {
    against: Option<(Baseline, PathBuf)>,
    keeping: Option<(Baseline, PathBuf)>,
    finder: Finder,
}

/// Which command finds the causes a baseline is read for: one file may
/// hold the causes of all three, each command judging and rewriting only
/// its own (by the key's first word: `check-stdout/`, `audit/`, or a
/// check of `fuzz`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Finder {
    Fuzz,
    CheckStdout,
    Audit,
}

impl Finder {
    /// Whether the cause `key` is one this command finds.
    fn owns(self, key: &str) -> bool {
        let first = key.split('/').next().unwrap_or_default();
        match self {
            Finder::CheckStdout => first == "check-stdout",
            Finder::Audit => first == "audit",
            Finder::Fuzz => first != "check-stdout" && first != "audit",
        }
    }
}

/// One cause a run found, as a baseline judges it.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    /// Its key: what the baseline lists to accept it, and what an update
    /// writes.
    pub key: String,
    /// A key that accepts it too: the finding it would fold into, listed
    /// for a run that also saw that one. Never the other way round: a
    /// baseline that accepts a success answer does not accept its effect.
    pub accepted_by: Option<String>,
    /// The keys of findings folded into it: seen, so not possibly fixed,
    /// but accepting nothing.
    pub folded: Vec<String>,
}

impl Seen {
    /// A finding of `key`, with the findings `also` folded into it.
    pub fn of(key: &Distinct, also: &[Distinct]) -> Seen {
        Seen {
            key: key.to_string(),
            accepted_by: key.folds_into().map(|k| k.to_string()),
            folded: also.iter().map(|k| k.to_string()).collect(),
        }
    }

    /// A cause that folds into none.
    pub fn alone(key: String) -> Seen {
        Seen { key, accepted_by: None, folded: Vec::new() }
    }

    /// Whether it shows the cause `finding`.
    fn shows(&self, finding: &str) -> bool {
        self.key == finding || self.accepted_by.as_deref() == Some(finding) || self.folded.iter().any(|f| f == finding)
    }
}

impl Flags {
    /// These flags, with `--baseline` from a profile where none was given.
    pub fn or_profiles(&self, named: Option<PathBuf>) -> Flags {
        Flags { baseline: self.baseline.clone().or(named), update_baseline: self.update_baseline.clone() }
    }

    /// Reads the files the flags name, for the causes `finder` finds.
    pub fn read(&self, finder: Finder) -> Result<Given> {
        let against = self.baseline.as_ref().map(|p| Baseline::read(p, "--baseline").map(|b| (b, p.clone())));
        let keeping = self.update_baseline.as_ref();
        let keeping = keeping.map(|p| Baseline::read_if_there(p, "--update-baseline").map(|b| (b, p.clone())));
        Ok(Given { against: against.transpose()?, keeping: keeping.transpose()?, finder })
    }
}

impl Given {
    /// The finding keys `--baseline` accepts, for the causes this command
    /// finds.
    pub fn accepted(&self) -> Vec<String> {
        let own = self.against.as_ref().map(|(b, _)| b.own(self.finder).known).unwrap_or_default();
        own.into_iter().map(|k| k.finding).collect()
    }

    /// How the causes `seen` stand against `--baseline`, where one was
    /// given.
    pub fn stand(&self, seen: &[Seen]) -> Option<Standing> {
        self.against.as_ref().map(|(b, p)| b.own(self.finder).stand(p, seen))
    }

    /// Writes `seen` to `--update-baseline`, keeping the entries that give
    /// a reason, unless the run was stopped; whether it wrote. Call it only
    /// once the run has judged, harness errors told first: a run that
    /// could not finish has not seen what it would have.
    pub fn update(&self, seen: &[Seen]) -> Result<bool> {
        let Some((old, path)) = &self.keeping else { return Ok(false) };
        if super::interrupt::stopped().is_some() {
            say!("portcullis: --update-baseline {}: left as it was, since the run was stopped", path.display());
            return Ok(false);
        }
        let mut new = old.own(self.finder).updated(seen);
        // The other commands' causes stay as they are.
        new.known.extend(old.known.iter().filter(|k| !self.finder.owns(&k.finding)).cloned());
        new.known.sort_by(|a, b| a.finding.cmp(&b.finding));
        new.write(path, "--update-baseline")?;
        let unreasoned = new.known.iter().filter(|k| k.reason.is_empty()).count();
        let todo = match unreasoned {
            0 => String::new(),
            n => format!("; {n} without a reason yet: say why each is accepted"),
        };
        say!(
            "portcullis: wrote {} to {}{todo}",
            crate::report::counted(new.known.len(), "known cause"),
            path.display()
        );
        Ok(true)
    }
}

/// A baseline's reason as a report shows it.
pub fn reason_text(reason: &str) -> &str {
    if reason.is_empty() { "known, no reason given" } else { reason }
}

/// The baseline's part of a report: what it knew, and what it lists that
/// the run did not see.
pub fn standing_text(s: &Standing) -> String {
    let (new, known, fixed) = (s.new.len(), s.known.len(), s.possibly_fixed.len());
    let mut out = format!("Baseline {}: {new} new, {known} known, {fixed} possibly fixed\n", s.file);
    for (key, reason) in &s.known {
        out.push_str(&format!("  known           {key}: {}\n", reason_text(reason)));
    }
    for (key, reason) in &s.possibly_fixed {
        out.push_str(&format!("  possibly fixed  {key}: {} (not seen in this run)\n", reason_text(reason)));
    }
    out
}

/// A baseline as written.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    #[serde(default)]
    pub known: Vec<Known>,
}

/// One known cause.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// The finding key as reports print it: `check/kind (cause)`.
    pub finding: String,
    /// Why it is accepted; empty where no one has said yet.
    #[serde(default)]
    pub reason: String,
}

impl Baseline {
    /// The baseline at `path`, named by `flag` in what goes wrong.
    pub fn read(path: &Path, flag: &str) -> Result<Baseline> {
        let named = format!("{flag} {}", path.display());
        let baseline: Baseline = super::profile::read_toml(path, &named)?;
        for (i, k) in baseline.known.iter().enumerate() {
            if !k.finding.contains('/') {
                let example = "correlation/unanswered (unparseable_line)";
                bail!("{named}: `{}` is no finding key such as `{example}`", k.finding);
            }
            if baseline.known[..i].iter().any(|o| o.finding == k.finding) {
                bail!("{named}: `{}` is listed twice", k.finding);
            }
        }
        Ok(baseline)
    }

    /// The baseline at `path` if there is one, else an empty one.
    pub fn read_if_there(path: &Path, flag: &str) -> Result<Baseline> {
        match path.exists() {
            true => Baseline::read(path, flag),
            false => Ok(Baseline::default()),
        }
    }

    /// Its entries for the causes `finder` finds.
    fn own(&self, finder: Finder) -> Baseline {
        Baseline { known: self.known.iter().filter(|k| finder.owns(&k.finding)).cloned().collect() }
    }

    /// The reason it gives for `finding`, if it lists it.
    fn reason(&self, finding: &str) -> Option<&str> {
        self.known.iter().find(|k| k.finding == finding).map(|k| k.reason.as_str())
    }

    /// How `seen` stands against it, read from `file`: each cause known by
    /// its own key (or the one it would fold into), else new; each entry
    /// no cause shows, possibly fixed.
    pub fn stand(&self, file: &Path, seen: &[Seen]) -> Standing {
        let mut standing = Standing { file: file.display().to_string(), ..Standing::default() };
        for s in seen {
            let reason = self.reason(&s.key).or_else(|| s.accepted_by.as_deref().and_then(|k| self.reason(k)));
            match reason {
                Some(reason) => standing.known.push((s.key.clone(), reason.to_owned())),
                None => standing.new.push(s.key.clone()),
            }
        }
        for k in &self.known {
            if !seen.iter().any(|s| s.shows(&k.finding)) {
                standing.possibly_fixed.push((k.finding.clone(), k.reason.clone()));
            }
        }
        standing
    }

    /// The baseline that knows the causes `seen`, keeping the reasons this
    /// one gives, and every entry of its that gives one though the run did
    /// not see it (a bounded run misses causes it would find another
    /// time); an entry with no reason that the run did not see goes.
    pub fn updated(&self, seen: &[Seen]) -> Baseline {
        let mut known: Vec<Known> = Vec::new();
        for s in seen {
            if !known.iter().any(|o| o.finding == s.key) {
                let reason = self.reason(&s.key).unwrap_or_default().to_owned();
                known.push(Known { finding: s.key.clone(), reason });
            }
        }
        let kept = self.known.iter().filter(|k| !k.reason.is_empty() && !known.iter().any(|o| o.finding == k.finding));
        known.extend(kept.cloned().collect::<Vec<_>>());
        known.sort_by(|a, b| a.finding.cmp(&b.finding));
        Baseline { known }
    }

    /// Writes it to `path` whole or not at all.
    pub fn write(&self, path: &Path, flag: &str) -> Result<()> {
        let body = toml::to_string(self).context("a baseline serializes")?;
        let text = format!("{HEADER}\n{body}");
        crate::report::write_atomically(path, text.as_bytes()).with_context(|| format!("{flag} {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(keys: &[&str]) -> Vec<Seen> {
        keys.iter().map(|k| Seen::alone(k.to_string())).collect()
    }

    fn key(check: crate::CheckId, kind: &str, what: &str) -> Distinct {
        Distinct { check, kind: kind.to_owned(), what: what.to_owned() }
    }

    #[test]
    fn a_run_stands_as_new_known_and_possibly_fixed_causes() {
        let text = r#"
[[known]]
finding = "correlation/unanswered (unparseable_line)"
reason = "the SDK drops lines it cannot parse"

[[known]]
finding = "liveness/running_after_eof"
reason = "tracked upstream"
"#;
        let b: Baseline = toml::from_str(text).unwrap();
        let run =
            seen(&["correlation/unanswered (unparseable_line)", "no-effect-on-reject/effect_of_rejected (tool_call)"]);
        let s = b.stand(Path::new("b.toml"), &run);
        assert_eq!(s.new, ["no-effect-on-reject/effect_of_rejected (tool_call)"]);
        let known =
            ("correlation/unanswered (unparseable_line)".to_owned(), "the SDK drops lines it cannot parse".to_owned());
        assert_eq!(s.known, [known]);
        assert_eq!(s.possibly_fixed, [("liveness/running_after_eof".to_owned(), "tracked upstream".to_owned())]);
    }

    #[test]
    fn an_accepted_answer_accepts_no_effect_but_an_accepted_effect_accepts_its_answer() {
        use crate::CheckId::{Correlation, NoEffectOnReject};
        let (effect, answer) =
            (key(NoEffectOnReject, "effect_of_rejected", "x"), key(Correlation, "rejected_succeeded", "x"));
        let listing = |k: &Distinct| Baseline { known: vec![Known { finding: k.to_string(), reason: "r".into() }] };
        let file = Path::new("b.toml");
        // The effect, its answer folded in, against a baseline of the answer:
        // new, and the answer's entry was seen.
        let s = listing(&answer).stand(file, &[Seen::of(&effect, std::slice::from_ref(&answer))]);
        assert_eq!(s.new, [effect.to_string()], "{s:?}");
        assert!(s.possibly_fixed.is_empty(), "{s:?}");
        // The answer alone, against a baseline of the effect: known.
        let s = listing(&effect).stand(file, &[Seen::of(&answer, &[])]);
        assert!(s.new.is_empty() && s.possibly_fixed.is_empty(), "{s:?}");
        assert_eq!(s.known, [(answer.to_string(), "r".to_owned())]);
    }

    #[test]
    fn an_update_keeps_every_reason_written_and_drops_unreasoned_causes_not_seen() {
        let b = Baseline {
            known: vec![
                Known { finding: "b/x".into(), reason: "why b".into() },
                Known { finding: "gone/y".into(), reason: "why gone".into() },
                Known { finding: "unreviewed/z".into(), reason: String::new() },
            ],
        };
        let u = b.updated(&seen(&["b/x", "a/z", "a/w"]));
        let found: Vec<(&str, &str)> = u.known.iter().map(|k| (k.finding.as_str(), k.reason.as_str())).collect();
        assert_eq!(found, [("a/w", ""), ("a/z", ""), ("b/x", "why b"), ("gone/y", "why gone")]);
        let text = format!("{HEADER}\n{}", toml::to_string(&u).unwrap());
        assert_eq!(toml::from_str::<Baseline>(&text).unwrap(), u, "it reads back as written");
    }

    #[test]
    fn each_command_judges_and_rewrites_only_its_own_causes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.toml");
        let text = "[[known]]\nfinding = \"check-stdout/verbose (2025-11-25)\"\nreason = \"a\"\n\n\
                    [[known]]\nfinding = \"correlation/unanswered (unparseable_line)\"\n";
        std::fs::write(&path, text).unwrap();
        let flags = Flags { baseline: Some(path.clone()), update_baseline: Some(path.clone()) };
        let fuzz = flags.read(Finder::Fuzz).unwrap();
        let s = fuzz.stand(&[]).unwrap();
        let fixed: Vec<&str> = s.possibly_fixed.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(fixed, ["correlation/unanswered (unparseable_line)"], "the gate's cause is not fuzz's to miss");
        assert!(fuzz.update(&seen(&["liveness/crashed"])).unwrap());
        let kept = Baseline::read(&path, "--baseline").unwrap();
        let found: Vec<&str> = kept.known.iter().map(|k| k.finding.as_str()).collect();
        assert_eq!(found, ["check-stdout/verbose (2025-11-25)", "liveness/crashed"]);
        assert_eq!(kept.known[0].reason, "a", "the gate's entry is left as it was");
    }

    #[test]
    fn a_baseline_that_is_not_one_is_refused_with_where() {
        let dir = tempfile::tempdir().unwrap();
        for (text, said) in [
            ("[[known]]\nfinding = \"a/b\"\nreason = 3\n", "line 3"),
            ("[[known]]\nfinding = \"nothing\"\n", "is no finding key"),
            ("[[known]]\nfinding = \"a/b\"\n[[known]]\nfinding = \"a/b\"\n", "listed twice"),
            ("[[knwon]]\nfinding = \"a/b\"\n", "unknown field"),
        ] {
            let path = dir.path().join("b.toml");
            std::fs::write(&path, text).unwrap();
            let e = Baseline::read(&path, "--baseline").unwrap_err().to_string();
            assert!(e.starts_with("--baseline ") && e.contains(said), "{text}: {e}");
        }
        let missing = Baseline::read(&dir.path().join("none.toml"), "--baseline").unwrap_err();
        assert!(format!("{missing:#}").contains("none.toml"), "{missing:#}");
    }
}

//! A finding: a failing session, minimized, with what shows it.

use crate::check::{CheckId, Kind, Violation};
use crate::frame::{Expect, Frame, Rule};
use crate::observation::Observation;
use crate::protocol::{Level, Policy};
use crate::script::{Script, ScriptSpec};
use crate::seam::Exit;
use std::time::Duration;

/// A failing session, minimized. Made by the hunt, `minimize` and an
/// artifact's replay, all through one constructor; fields may be added.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Finding {
    /// The check it fails.
    pub check: CheckId,
    /// Every violation of the minimized session.
    pub violations: Vec<Violation>,
    /// The minimized choices.
    pub spec: ScriptSpec,
    /// The minimized script.
    pub script: Script,
    /// What the minimized session showed.
    pub observation: Observation,
    /// How many sessions ran until the first failure, the failing one
    /// included; 0 when it was not found by a hunt (a minimized artifact).
    pub cases_until_caught: u32,
    /// The salt of the minimized session's tokens.
    pub salt: u32,
    /// The seed of the hunt.
    pub seed: u64,
    /// The policy of the hunt.
    pub policy: Policy,
    /// Whether shrinking stopped at its time bound
    /// ([`HuntConfig::max_shrink_ms`](crate::HuntConfig::max_shrink_ms)): the script may cut down further.
    pub shrink_ran_out: bool,
    /// How long after its session was judged the evidence came that shows
    /// it, when it came late (an effect or output after the session's
    /// window).
    pub late: Option<Duration>,
    /// The scripts the same process ran before this one, when a process
    /// shared between sessions showed the violation and a fresh session
    /// did not repeat it: a state-dependent finding, replayed and
    /// minimized with its history. Empty otherwise.
    pub history: Vec<Script>,
    /// Whether a session in a process of its own showed it.
    pub confirmed: bool,
    /// Under `auto`: which policy the gateway showed, and on which frame.
    pub policy_seen: Option<String>,
    /// How many search sessions showed it (the one that caught it
    /// included); 0 when it was not found by a hunt.
    pub hits: u32,
    /// How long into the hunt it was first seen.
    pub first_seen: Option<Duration>,
    /// Every rule (or attack kind, for a frame that breaks none) that
    /// showed its cause in the hunt, sorted: its evidence.
    pub rules: Vec<String>,
    /// The findings of the same behaviour to the same cause that other
    /// checks showed, folded into this one ([`Distinct::folds_into`]):
    /// its evidence too, each still saved apart.
    pub also: Vec<Distinct>,
    /// A witness of each other rule the hunt saw its cause under: the
    /// first search session that showed it, unshrunk.
    pub witnesses: Vec<Witness>,
}

/// A session that showed a finding's cause under one of its rules: its
/// choices and the salt of its tokens, which render it again against the
/// same catalogue.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Witness {
    /// The rule (or attack kind) it showed the cause under.
    pub rule: String,
    /// Its choices.
    pub spec: ScriptSpec,
    /// The salt of its tokens.
    pub salt: u32,
}

impl Witness {
    /// The witness of `rule`: `spec` rendered with tokens of `salt`.
    pub fn new(rule: String, spec: ScriptSpec, salt: u32) -> Witness {
        Witness { rule, spec, salt }
    }
}

/// What makes two findings distinct, the finding key: a root cause. Their
/// check, the kind of violation ([`Kind::name`](crate::check::Kind::name)),
/// and the class of input the frame at fault belongs to: its rule's
/// [`Cause`](crate::frame::Cause); where it breaks no rule, `valid_call`
/// for a valid call of any shape, `batch` for a batch, the method of a
/// request refused as unknown ([`method_refused_as_unknown`]), else its
/// attack kind; nothing where no frame is at fault. One server behaviour shown under several rules of
/// one class is one finding, with each rule as evidence ([`evidence`]).
/// The hunt, confirmation, `minimize`, `replay`, the artifact and the
/// SARIF fingerprint all use this one key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Distinct {
    /// The check.
    pub check: CheckId,
    /// The kind of violation's name.
    pub kind: String,
    /// What a crash said last, or the class of input ([`class_of`]): the
    /// cause of the rule, `valid_call`, `batch`, a method refused as
    /// unknown, or the attack kind; or empty.
    pub what: String,
}

impl std::fmt::Display for Distinct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.check, self.kind)?;
        match self.what.is_empty() {
            true => Ok(()),
            false => write!(f, " ({})", self.what),
        }
    }
}

/// The distinct finding violation `v` of a session of `script` that
/// showed `obs` shows: its check, kind, and the cause of its frame's rule,
/// or the class of a frame that breaks none (`valid_call`, `batch`, a
/// method refused as unknown, else its attack kind). A crash (a signal, a panic, or an
/// exit with a failure status before stdin closed) is told apart by what
/// it said last on stderr, with numbers and tokens left out, as fuzzers
/// tell crashes apart by their stack; a hang on EOF is one finding.
pub fn distinct(v: &Violation, script: &Script, obs: &Observation) -> Distinct {
    let what = match (ends(v) && crashed(obs)).then(|| crash_line(&obs.stderr)).flatten() {
        Some(line) => line,
        None if v.kind == Kind::RunningAfterEof => String::new(),
        None => match v.frame.and_then(|i| script.frames.get(i)) {
            Some(f) => missing_method(v, f).unwrap_or_else(|| class_of(v.check, f).to_owned()),
            None => String::new(),
        },
    };
    Distinct { check: v.check, kind: v.kind.name().to_owned(), what }
}

/// Where a valid request was refused as a method the server does not
/// have (-32601), the method is the cause, whatever look-alike the frame
/// carried: a server without `ping` is one finding, keyed as its plain
/// `ping` is, not one more per look-alike placed in one. Not so for the
/// methods a campaign needs served to run at all (`tools/list`,
/// `tools/call`): refused there, the look-alike is the cause.
fn missing_method(v: &Violation, f: &Frame) -> Option<String> {
    match v.kind {
        Kind::ValidRefused { code, .. } => method_refused_as_unknown(code, f),
        _ => None,
    }
}

/// [`missing_method`] of a frame answered with error `code`.
pub(crate) fn method_refused_as_unknown(code: Option<i64>, f: &Frame) -> Option<String> {
    if code != Some(crate::protocol::code::METHOD_NOT_FOUND) || !matches!(f.expect, Expect::Inert { request: true }) {
        return None;
    }
    let message: serde_json::Value = serde_json::from_slice(&f.bytes).ok()?;
    let method = message.get("method")?.as_str()?;
    (!matches!(method, "tools/list" | "tools/call")).then(|| method.replace('/', "_"))
}

/// The class of input frame `f` belongs to, a finding key's last part,
/// for a violation of `check`: the cause of its rule; where it breaks
/// none, `valid_call` for one valid call whatever its shape (its
/// encoding, size, id or placement is the evidence), `batch` for a batch
/// of them, else its attack kind. An `exactly-once` violation is about a
/// call the server took, so a frame either reading of which may act (a
/// tolerated rule's) is a `valid_call` or `batch` there too: a server
/// that loses or repeats calls is one finding, whatever carried them.
pub(crate) fn class_of(check: CheckId, f: &Frame) -> &str {
    let batch = |calls: &[crate::frame::Call]| calls.len() != 1 || f.kind == "batch";
    match (&f.expect, f.expect.rule_or_tolerated()) {
        (Expect::Tolerate(_, calls), _) if check == CheckId::ExactlyOnce && !calls.is_empty() => {
            if batch(calls) {
                "batch"
            } else {
                "valid_call"
            }
        }
        (_, Some(rule)) => rule.cause().id(),
        (Expect::Act(calls), None) if batch(calls) => "batch",
        (Expect::Act(_), None) => "valid_call",
        _ => &f.kind,
    }
}

/// What showed violation `v` of a session of `script`, within its cause:
/// the rule its frame breaks, or its attack kind where it breaks none;
/// `None` where no frame is at fault.
pub fn evidence(v: &Violation, script: &Script) -> Option<String> {
    let f = script.frames.get(v.frame?)?;
    Some(f.expect.rule_or_tolerated().map_or_else(|| f.kind.to_string(), |r| r.id().to_owned()))
}

/// Folds each of `items` whose finding ([`Distinct::folds_into`]) is
/// evidence of another's into that one: its key joins the other's `also`
/// and its rules the other's. Returns those left and those folded, in
/// their order; nothing is dropped.
pub fn fold<T>(items: Vec<T>, finding: impl Fn(&mut T) -> &mut Finding) -> (Vec<T>, Vec<T>) {
    let mut items = items;
    let keys: Vec<Distinct> = items.iter_mut().map(|i| finding(i).distinct()).collect();
    let into: Vec<Option<usize>> =
        keys.iter().map(|k| k.folds_into().and_then(|to| keys.iter().position(|o| *o == to))).collect();
    let mut evidence: Vec<(usize, Distinct, Vec<String>, Vec<Witness>)> = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        if let Some(to) = into[i] {
            let folded = finding(item);
            // Its own session witnesses the rules it shows, beside those
            // its witnesses do.
            let own = folded.own_rules().into_iter().map(|r| Witness::new(r, folded.spec.clone(), folded.salt));
            let witnesses = own.chain(folded.witnesses.iter().cloned()).collect();
            evidence.push((to, keys[i].clone(), folded.evidence(), witnesses));
        }
    }
    for (to, key, rules, witnesses) in evidence {
        let f = finding(&mut items[to]);
        let mut all = f.evidence();
        all.extend(rules);
        all.sort_unstable();
        all.dedup();
        f.rules = all;
        f.also.push(key);
        let own = f.own_rules();
        for w in witnesses {
            if !own.contains(&w.rule) && !f.witnesses.iter().any(|o| o.rule == w.rule) {
                f.witnesses.push(w);
            }
        }
        f.witnesses.sort_by(|a, b| a.rule.cmp(&b.rule));
    }
    let (mut left, mut folded) = (Vec::new(), Vec::new());
    for (i, item) in items.into_iter().enumerate() {
        match into[i] {
            Some(_) => folded.push(item),
            None => left.push(item),
        }
    }
    (left, folded)
}

/// Whether the session ended in a crash: a signal, a panic, or an exit
/// with a failure status before stdin closed.
fn crashed(obs: &Observation) -> bool {
    let failed = match &obs.exit_before_eof {
        Exit::Crashed(_) => true,
        Exit::Exited(code) => *code != 0,
        _ => false,
    };
    failed || matches!(obs.exit, Exit::Crashed(_))
}

/// Whether `v` is about how the session ended: a liveness violation, or a
/// server that ended it under keep-open.
fn ends(v: &Violation) -> bool {
    v.kind.ends()
}

/// Whether a session ended in a crash, or ended before its stdin closed
/// where it should not have (under keep-open, say), that one of its
/// `violations` is about.
pub(crate) fn ended_in_crash(violations: &[Violation], obs: &Observation) -> bool {
    (crashed(obs) || obs.exit_before_eof.ended()) && violations.iter().any(ends)
}

/// Whether a crash, or an end that should not have come, explains `v`: an
/// answer or an effect that did not come, or a line cut short, after the
/// server was gone. What did come (an effect of a rejected frame, a call
/// run twice, a wrong answer) it does not explain.
pub(crate) fn explained_by_crash(v: &Violation) -> bool {
    !ends(v) && v.kind.absent()
}

/// The `violations` a crash does not explain: all of them, unless the
/// session ended in a crash ([`ended_in_crash`]), which explains what did
/// not come after it ([`explained_by_crash`]).
pub(crate) fn beside_crash<'a>(violations: &'a [Violation], obs: &Observation) -> impl Iterator<Item = &'a Violation> {
    let crashed = ended_in_crash(violations, obs);
    violations.iter().filter(move |v| !(crashed && explained_by_crash(v)))
}

/// The last line on stderr, numbers and tokens left out, at most 80
/// characters: what tells one crash from another.
fn crash_line(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let last = text.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let tokens: Vec<&str> = crate::token::tokens_in(last).collect();
    let last = tokens.iter().fold(last.to_owned(), |line, token| line.replace(token, "TOKEN"));
    let line: String = last.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).take(80).collect();
    Some(line)
}

impl Distinct {
    /// The finding this one is evidence of where both are found: a success
    /// answer to a frame that must be rejected
    /// (`correlation/rejected_succeeded`) shows the same behaviour to the
    /// same cause as the effect that frame had
    /// (`no-effect-on-reject/effect_of_rejected`), which is what the suite
    /// exists to prove. Found alone (a tool with no effect the probes see,
    /// or a run of `correlation` alone), it stays a finding of its own.
    pub fn folds_into(&self) -> Option<Distinct> {
        let served = self.check == CheckId::Correlation && self.kind == "rejected_succeeded";
        served.then(|| Distinct {
            check: CheckId::NoEffectOnReject,
            kind: "effect_of_rejected".to_owned(),
            what: self.what.clone(),
        })
    }

    /// Whether `keys` (a baseline's accepted finding keys) list it, or the
    /// finding it would fold into ([`Distinct::folds_into`]).
    pub fn listed_in(&self, keys: &[String]) -> bool {
        let listed = |k: &Distinct| keys.iter().any(|a| *a == k.to_string());
        listed(self) || self.folds_into().is_some_and(|to| listed(&to))
    }

    /// Whether a session of `script` that showed `obs` and broke
    /// `violations` shows this finding.
    pub fn shown_in(&self, violations: &[Violation], script: &Script, obs: &Observation) -> bool {
        violations.iter().any(|v| distinct(v, script, obs) == *self)
    }

    /// Whether a session shows it, leaving out what a crash in that
    /// session explains (an answer or an effect that did not come after it).
    #[cfg(all(feature = "process", target_os = "linux"))]
    pub(crate) fn shown_beside_crash(&self, violations: &[Violation], script: &Script, obs: &Observation) -> bool {
        beside_crash(violations, obs).any(|v| distinct(v, script, obs) == *self)
    }

    /// Whether the session shows it only by time (no answer, effect or
    /// exit within a wait; [`Kind::rests_on_time`](crate::check::Kind::rests_on_time)):
    /// such a finding is reported only once a session with waits four times as long
    /// repeats it.
    pub(crate) fn rests_on_time(&self, violations: &[Violation], script: &Script, obs: &Observation) -> bool {
        violations.iter().any(|v| distinct(v, script, obs) == *self && on_time(v, script, obs))
    }
}

/// Whether `v` shows only by time in the session `obs` saw `script` run
/// ([`Distinct::rests_on_time`]).
pub(crate) fn on_time(v: &Violation, script: &Script, obs: &Observation) -> bool {
    v.kind.rests_on_time(obs.exit.ended()) || null_at_a_deadline(v, script)
}

/// Whether `v` is a missing error that may carry a null id, no more of
/// them missing than `script` has requests owed one with a readable id:
/// such a request is awaited by its id until its deadline (a server that
/// runs requests concurrently may refuse it after a later marker, or
/// cancel it at EOF before a client that did not wait), so the verdict
/// shows only at the deadline and rests on time. More missing than that
/// is shown by the lines with no id readable, on evidence.
pub(crate) fn null_at_a_deadline(v: &Violation, script: &Script) -> bool {
    let Kind::NoNullIdError { needed, came } = v.kind else { return false };
    let readable = script.frames.iter().filter(|f| f.owes_anonymous_error() && f.id.is_some()).count();
    needed.saturating_sub(came) <= readable && readable > 0
}

impl Finding {
    /// The finding `key` as one session showed it: `spec` rendered with
    /// tokens of `salt` to the script `run` holds, with what it showed and
    /// its violations (the key's first, as the report shows them), in a
    /// hunt with `seed` under `policy`. Confirmed, not late, with no
    /// history, seen once; each place that makes a finding changes what
    /// differs from that.
    pub(crate) fn shown(
        key: &Distinct,
        spec: ScriptSpec,
        run: (std::sync::Arc<Script>, Observation, Vec<Violation>),
        salt: u32,
        (seed, policy): (u64, Policy),
    ) -> Finding {
        let (script, observation, mut violations) = run;
        let script = std::sync::Arc::unwrap_or_clone(script);
        violations.sort_by_key(|v| distinct(v, &script, &observation) != *key);
        Finding {
            check: key.check,
            violations,
            spec,
            script,
            observation,
            cases_until_caught: 0,
            salt,
            seed,
            policy,
            shrink_ran_out: false,
            late: None,
            history: Vec::new(),
            confirmed: true,
            policy_seen: None,
            hits: 1,
            first_seen: None,
            rules: Vec::new(),
            also: Vec::new(),
            witnesses: Vec::new(),
        }
    }

    /// What makes it distinct: its first violation's check, kind and cause.
    pub fn distinct(&self) -> Distinct {
        let first = self.violations.iter().find(|v| v.check == self.check);
        first.map_or(Distinct { check: self.check, kind: String::new(), what: String::new() }, |v| {
            distinct(v, &self.script, &self.observation)
        })
    }

    /// What showed its cause: every rule the hunt saw it under, or,
    /// where no hunt recorded them, its own session's.
    pub fn evidence(&self) -> Vec<String> {
        match self.rules.is_empty() {
            true => self.own_rules(),
            false => self.rules.clone(),
        }
    }

    /// The rules its own session showed its key with, sorted.
    pub(crate) fn own_rules(&self) -> Vec<String> {
        let d = self.distinct();
        let own = self.violations.iter().filter(|v| distinct(v, &self.script, &self.observation) == d);
        let mut rules: Vec<String> = own.filter_map(|v| evidence(v, &self.script)).collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }

    /// The class of input its cause is about, where its key names one.
    pub fn cause(&self) -> Option<crate::frame::Cause> {
        crate::frame::Cause::from_id(&self.distinct().what)
    }

    /// One line: its cause and the rules that showed it ("a line that is
    /// no JSON, seen with 3 rules: broken_line, stray_text, truncated").
    pub fn cause_line(&self) -> Option<String> {
        let cause = self.cause()?;
        let rules = self.evidence();
        let n = crate::counted::counted(rules.len(), "rule");
        let also: Vec<String> = self.also.iter().map(|k| format!("{}/{}", k.check, k.kind)).collect();
        let also = match also.is_empty() {
            true => String::new(),
            false => format!("; also shown as {}", also.join(", ")),
        };
        Some(format!("cause: {} ({}), seen with {n}: {}{also}", cause.what(), cause.id(), rules.join(", ")))
    }

    /// The level the finding rests on: that of its first violation.
    pub fn level(&self) -> Level {
        self.violations.first().map_or(Level::Spec, |v| v.level(&self.script))
    }

    /// The rule of the frame its first violation concerns, if one.
    pub fn rule(&self) -> Option<Rule> {
        self.violations.first().and_then(|v| v.rule(&self.script))
    }
}

#[cfg(test)]
mod tests {
    use super::distinct;
    use crate::attack::{Step, jsonrpc, terminator};
    use crate::catalogue::Catalogue;
    use crate::check::{CheckId, Kind, Violation};
    use crate::frame::Expect;
    use crate::observation::Observation;
    use crate::protocol::Revision;
    use crate::script::ScriptSpec;

    /// A valid call is one class of input whatever its shape: a server
    /// that loses calls is one finding with each shape as evidence, not
    /// one per shape. A batch is a class of its own.
    #[test]
    fn valid_calls_of_every_shape_share_a_key_and_a_batch_has_its_own() {
        let pad = Step::Terminator(terminator::Terminator { kind: terminator::Kind::Padded, tool: 0 });
        let nel = Step::Terminator(terminator::Terminator { kind: terminator::Kind::NextLine, tool: 0 });
        let batch = Step::JsonRpc(jsonrpc::JsonRpc { kind: jsonrpc::Kind::Batch, tool: 0 });
        let steps = vec![Step::Control(0), pad, nel, batch];
        let script = ScriptSpec::whole(Revision::R2025_03_26, steps).render(&Catalogue::reference(), 1);
        let keys: Vec<(String, String)> = (0..script.frames.len())
            .filter(|i| matches!(script.frames[*i].expect, Expect::Act(_)))
            .map(|i| {
                let kind = Kind::NeverExecuted { id: "2".into(), refused: false };
                let v = Violation { check: CheckId::ExactlyOnce, frame: Some(i), span: None, kind };
                (script.frames[i].kind.to_string(), distinct(&v, &script, &Observation::none()).to_string())
            })
            .collect();
        let key = |k: &str| format!("exactly-once/never_executed ({k})");
        let want = [
            ("valid_call".to_owned(), key("valid_call")),
            ("padded".to_owned(), key("valid_call")),
            ("nel_in_string".to_owned(), key("valid_call")),
            ("batch".to_owned(), key("batch")),
        ];
        assert_eq!(keys, want);
    }

    /// A session that ended under keep-open (status 0, before its stdin
    /// closed) explains the answers that did not come after it: they are
    /// no finding of their own. With no end, a missing answer is one.
    #[test]
    fn answers_missing_after_an_end_under_keep_open_are_no_finding_of_their_own() {
        use crate::seam::Exit;
        let ended =
            Violation { check: CheckId::Policy, frame: Some(2), span: None, kind: Kind::EndedUnderKeepOpen { at: 9 } };
        let silent = Violation {
            check: CheckId::Correlation,
            frame: Some(3),
            span: None,
            kind: Kind::Unanswered { id: "3".into() },
        };
        let gone = Observation { exit_before_eof: Exit::Exited(0), exit: Exit::Exited(0), ..Observation::none() };
        let both = [ended.clone(), silent.clone()];
        let kept: Vec<_> = super::beside_crash(&both, &gone).map(|v| v.check).collect();
        assert_eq!(kept, [CheckId::Policy]);
        let running = Observation::none();
        assert_eq!(super::beside_crash(&[silent], &running).count(), 1);
    }

    /// A server without `ping` is one finding, however many look-alikes
    /// were placed in its requests; refused for another reason, or in a
    /// `tools/list` (which a campaign needs served), each look-alike is a
    /// cause of its own.
    #[test]
    fn a_method_refused_as_unknown_is_one_cause_whatever_was_placed_in_it() {
        use crate::attack::{lifecycle, placed};
        let place = |kind, place| Step::Placed(placed::Placed { kind, place, tool: 0, pick: 0 });
        let steps = vec![
            Step::Lifecycle(lifecycle::Lifecycle { kind: lifecycle::Kind::Ping, tool: 0 }),
            place(placed::Kind::LineSeparator, placed::Place::Ping),
            place(placed::Kind::NextLine, placed::Place::Ping),
            place(placed::Kind::NextLine, placed::Place::ToolsList),
            place(placed::Kind::LineSeparator, placed::Place::Meta),
        ];
        let script = ScriptSpec::whole(Revision::R2025_06_18, steps).render(&Catalogue::reference(), 1);
        let keys = |code: i64| -> Vec<String> {
            let placed = |f: &&crate::frame::Frame| f.family != "lifecycle" || f.kind == "ping";
            let at = script.frames.iter().enumerate().filter(|(_, f)| f.id.is_some() && placed(f));
            let kind = Kind::ValidRefused { id: "2".into(), code: Some(code) };
            at.skip(1) // the handshake's initialize
                .map(|(i, _)| Violation { check: CheckId::Correlation, frame: Some(i), span: None, kind: kind.clone() })
                .map(|v| distinct(&v, &script, &Observation::none()).what)
                .collect()
        };
        assert_eq!(keys(-32601), ["ping", "ping", "ping", "placed_next_line", "valid_call"]);
        let told = Kind::ValidRefused { id: "2".into(), code: Some(-32601) }.to_string();
        assert_eq!(told, "the valid request id 2 was answered with error -32601");
        assert_eq!(
            keys(-32602),
            ["ping", "placed_line_separator", "placed_next_line", "placed_next_line", "valid_call"]
        );
    }

    /// A frame either reading of which may act (a CR before the LF) is a
    /// valid call to `exactly-once`, which judges calls the server took,
    /// and of its rule's cause to every other check.
    #[test]
    fn a_tolerated_call_is_a_valid_call_to_exactly_once_alone() {
        let crlf = Step::Terminator(terminator::Terminator { kind: terminator::Kind::Crlf, tool: 0 });
        let script = ScriptSpec::whole(Revision::R2025_06_18, vec![crlf]).render(&Catalogue::reference(), 1);
        let at = script.frames.iter().position(|f| matches!(f.expect, Expect::Tolerate(..))).expect("a tolerated call");
        let key = |check, kind| {
            let v = Violation { check, frame: Some(at), span: None, kind };
            distinct(&v, &script, &Observation::none()).to_string()
        };
        let lost = Kind::NeverExecuted { id: "2".into(), refused: false };
        assert_eq!(key(CheckId::ExactlyOnce, lost), "exactly-once/never_executed (valid_call)");
        let silent = Kind::Unanswered { id: "2".into() };
        assert_eq!(key(CheckId::Correlation, silent), "correlation/unanswered (line_ending)");
    }
}

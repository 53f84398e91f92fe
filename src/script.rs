//! Scripts: a session's frames in order (handshake, attacks, controls,
//! optional EOF) and the write boundaries that carry them to stdin.
//!
//! A [`ScriptSpec`] is what proptest draws and shrinks and what
//! `arbitrary` builds for cargo fuzz: small choices only. [`ScriptSpec::render`]
//! turns it into a [`Script`] of exact bytes with labels.

use crate::attack::{self, Ctx, Phase, Step, line};
use crate::catalogue::{Catalogue, map_strings};
use crate::frame::{Expect, Frame, Rule};
use crate::protocol::{Id, Level, Revision};
use crate::token::salt_prefix;
use proptest::prelude::*;
use std::ops::Range;
use std::str::FromStr;

/// The choices a script is built from.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct ScriptSpec {
    /// The revision the client asks for in `initialize`.
    pub revision: Revision,
    /// The steps after the handshake (lifecycle early calls move before it).
    pub steps: Vec<Step>,
    /// Extra write boundaries, as offsets into stdin modulo its length.
    pub splits: Vec<u32>,
    /// Frame boundaries (by index, modulo their count) that are not write
    /// boundaries, so several frames go in one write.
    pub joins: Vec<u8>,
    /// Whether the client closes stdin at the end.
    pub eof: bool,
    /// The level frames are judged at: a frame breaking only a rule above
    /// it is labelled [`Expect::Unjudged`].
    #[serde(default)]
    pub level: Level,
}

/// A rendered session.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Script {
    /// The negotiated revision.
    pub revision: Revision,
    /// Every frame in order, the handshake included.
    pub frames: Vec<Frame>,
    /// End offsets of the stdin writes, ascending; the last is the total length.
    pub write_ends: Vec<usize>,
    /// Whether stdin is closed after the last write.
    pub eof: bool,
}

impl ScriptSpec {
    /// The handshake at `revision`, then `steps`, each frame a write of its
    /// own, then EOF.
    pub fn whole(revision: Revision, steps: Vec<Step>) -> ScriptSpec {
        ScriptSpec { revision, steps, splits: vec![], joins: vec![], eof: true, level: Level::default() }
    }

    /// Whether the script cannot share a process with others: it calls
    /// before the handshake, so it must begin one; its last frame is cut
    /// at EOF, so it must end one; a retry waits on what an answer handed
    /// out, which only the driver of a session of its own fills (counted
    /// here whatever the target's tools: see
    /// [`ScriptSpec::needs_own_process_with`]); or it makes a call of 8 MiB
    /// or more, which would hold a shared process while it is read.
    pub fn needs_own_process(&self) -> bool {
        self.needs_own_process_given(true)
    }

    /// [`ScriptSpec::needs_own_process`] against `catalogue`: a round trip
    /// has a retry to fill only where a tool must be confirmed.
    pub fn needs_own_process_with(&self, catalogue: &Catalogue) -> bool {
        self.needs_own_process_given(!catalogue.confirming().is_empty())
    }

    fn needs_own_process_given(&self, confirming: bool) -> bool {
        let cut = |s: &Step| matches!(s, Step::Truncate(t) if t.kind == attack::truncate::Kind::AtEof);
        let early = self.steps.iter().any(Step::before_handshake);
        // Round trips render only where the revision has no handshake.
        let round_trip = |s: &Step| matches!(s, Step::RoundTrip(r) if r.kind.adapts());
        let adapts = confirming && !self.revision.has_handshake() && self.steps.iter().any(round_trip);
        // A request of the other era (an `initialize` where the revision
        // has none, a call with the 2026-07-28 envelope where it has one)
        // may turn the connection to that era for whatever a shared process
        // runs after it: a server of both eras may answer it so.
        let other_era = |s: &Step| match s {
            Step::Lifecycle(l) => {
                l.kind == attack::lifecycle::Kind::RepeatedInitialize && !self.revision.has_handshake()
            }
            Step::Envelope(e) => e.kind == attack::envelope::Kind::ModernEnvelope && self.revision.has_handshake(),
            _ => false,
        };
        let era = self.steps.iter().any(other_era);
        // A call of 8 MiB or more holds a shared process (and every script
        // behind it) for as long as the server takes to read it, and from
        // 16 MiB wears it out at once (what a replay of its history must
        // write passes the bound): a start there too.
        let huge = |s: &Step| matches!(s, Step::Size(z) if z.kind == attack::size::Kind::Huge);
        let huge = self.steps.iter().any(huge);
        early || adapts || era || huge || self.steps.iter().rev().find(|s| !s.before_handshake()).is_some_and(cut)
    }

    /// Renders the script against a target's tools. `salt` keeps the tokens
    /// of different sessions apart.
    pub fn render(&self, catalogue: &Catalogue, salt: u32) -> Script {
        self.render_from(catalogue, salt, 1)
    }

    /// Renders with request ids from `first_id` on.
    pub fn render_from(&self, catalogue: &Catalogue, salt: u32, first_id: i64) -> Script {
        let mut ctx = Ctx::new(self.revision, catalogue, salt).with_first_id(first_id);
        let mut frames = Vec::new();
        let (early, rest): (Vec<&Step>, Vec<&Step>) = self.steps.iter().partition(|s| s.before_handshake());
        ctx.phase = Phase::BeforeInit;
        for step in early {
            frames.extend(step.render(&mut ctx));
        }
        ctx.phase = Phase::Ready;
        frames.extend(handshake(&mut ctx));
        let last = rest.len().saturating_sub(1);
        let mut eof = self.eof;
        for (i, step) in rest.into_iter().enumerate() {
            // A truncation at EOF can only be the very last thing written.
            let step = match step {
                Step::Truncate(t) if t.kind == attack::truncate::Kind::AtEof => {
                    if i == last {
                        eof = true;
                        step.clone()
                    } else {
                        Step::Truncate(attack::truncate::Truncate {
                            kind: attack::truncate::Kind::ThenValid,
                            ..t.clone()
                        })
                    }
                }
                _ => step.clone(),
            };
            frames.extend(step.render(&mut ctx));
        }
        for f in &mut frames {
            if let Expect::Reject(rule) = f.expect
                && rule.level() > self.level
            {
                f.expect = Expect::Unjudged(rule);
            }
        }
        let write_ends = self.write_ends(&frames);
        Script { revision: self.revision, frames, write_ends, eof }
    }

    fn write_ends(&self, frames: &[Frame]) -> Vec<usize> {
        let ends = frame_ends(frames);
        let total = ends.last().copied().unwrap_or(0);
        let n = ends.len();
        let joined: Vec<usize> = self.joins.iter().map(|j| *j as usize % n).filter(|j| *j + 1 < n).collect();
        let mut ends: Vec<usize> =
            ends.into_iter().enumerate().filter(|(i, _)| !joined.contains(i)).map(|(_, e)| e).collect();
        if total > 0 {
            ends.extend(self.splits.iter().map(|s| *s as usize % total).filter(|s| *s > 0));
        }
        ends.sort_unstable();
        ends.dedup();
        ends
    }
}

/// How a session of the context's revision opens: `initialize`, then
/// `notifications/initialized`; or, in a revision without a handshake,
/// `server/discover`, as a client finds out what the server speaks.
fn handshake(ctx: &mut Ctx) -> Vec<Frame> {
    handshake_frames(ctx.id(), ctx.revision)
}

fn handshake_frames(id: i64, revision: Revision) -> Vec<Frame> {
    if !revision.has_handshake() {
        return vec![Frame {
            bytes: revision.marker_with(id.into()),
            expect: Expect::Inert { request: true },
            id: Some(Id::Int(id)),
            tokens: vec![],
            family: "handshake".into(),
            kind: "discover".into(),
            fill: None,
        }];
    }
    let init = Frame {
        bytes: line(attack::lifecycle::initialize_text(id, revision)),
        expect: Expect::Inert { request: true },
        id: Some(Id::Int(id)),
        tokens: vec![],
        family: "handshake".into(),
        kind: "initialize".into(),
        fill: None,
    };
    let initialized = Frame {
        bytes: line(attack::lifecycle::INITIALIZED),
        expect: Expect::Inert { request: false },
        id: None,
        tokens: vec![],
        family: "handshake".into(),
        kind: "initialized".into(),
        fill: None,
    };
    vec![init, initialized]
}

/// The end offset of each frame in stdin: one write a frame.
fn frame_ends(frames: &[Frame]) -> Vec<usize> {
    let mut at = 0;
    frames
        .iter()
        .map(|f| {
            at += f.bytes.len();
            at
        })
        .collect()
}

/// The spans between consecutive end offsets, from 0.
fn spans(ends: &[usize]) -> Vec<Range<usize>> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let span = start..end;
            start = end;
            span
        })
        .collect()
}

impl Script {
    /// The handshake alone for `revision` (request id 1), one write a
    /// frame, stdin left open.
    pub fn handshake(revision: Revision) -> Script {
        Script::one_write_per_frame(revision, handshake_frames(1, revision), false)
    }

    /// A script of `frames`, one write a frame.
    pub fn one_write_per_frame(revision: Revision, frames: Vec<Frame>, eof: bool) -> Script {
        Script { revision, write_ends: frame_ends(&frames), frames, eof }
    }

    /// How many bytes the script writes.
    pub(crate) fn len_bytes(&self) -> usize {
        self.frames.iter().map(|f| f.bytes.len()).sum()
    }

    /// Everything written to stdin, in order.
    pub fn stdin(&self) -> Vec<u8> {
        let mut stdin = Vec::with_capacity(self.len_bytes());
        for f in &self.frames {
            stdin.extend_from_slice(&f.bytes);
        }
        stdin
    }

    /// The byte span of each frame in stdin.
    pub fn frame_spans(&self) -> Vec<Range<usize>> {
        spans(&frame_ends(&self.frames))
    }

    /// The same script with every `old` canary base (in the bytes and in the
    /// calls the labels expect) replaced by `new`: a saved script replayed
    /// against a sink on another port.
    pub fn rebase(&mut self, old: &str, new: &str) {
        self.replace_text(old, new);
    }

    /// The same script with the tokens of salt `old` (in the bytes, the
    /// labels and the calls they expect) made those of salt `new`: the same
    /// script with fresh tokens, so a server that remembers what it did
    /// (one that refuses a second entity of the same name, say) meets the
    /// script as new. Tokens have a fixed width, so every byte offset and
    /// every write boundary stays where it was.
    pub fn resalt(&mut self, old: u32, new: u32) {
        self.replace_text(&salt_prefix(old), &salt_prefix(new));
    }

    /// Every `old` in the bytes, tokens and expected calls made `new`.
    fn replace_text(&mut self, old: &str, new: &str) {
        if old == new || old.is_empty() {
            return;
        }
        let (old_b, new_b) = (old.as_bytes(), new.as_bytes());
        let swap = |s: &str| s.replace(old, new);
        for f in &mut self.frames {
            let mut out = Vec::with_capacity(f.bytes.len());
            let mut i = 0;
            while i < f.bytes.len() {
                if f.bytes[i..].starts_with(old_b) {
                    out.extend_from_slice(new_b);
                    i += old_b.len();
                } else {
                    out.push(f.bytes[i]);
                    i += 1;
                }
            }
            f.bytes = out;
            f.tokens.iter_mut().for_each(|t| *t = swap(t));
            if let Expect::Act(calls) | Expect::Tolerate(_, calls) = &mut f.expect {
                for c in calls.iter_mut() {
                    c.token = swap(&c.token);
                    c.arguments = c.arguments.iter().map(|(k, v)| (k.clone(), map_strings(v, &swap))).collect();
                }
            }
        }
        // Boundaries inside frames moved with the bytes unless the lengths
        // match; keep one per frame then.
        if old.len() != new.len() {
            self.write_ends = frame_ends(&self.frames);
        }
    }

    /// One session that replays what a persistent process ran: the
    /// handshake, each script of `history` in order, then this one, each
    /// followed by the `ping` marker the process was sent after it (the
    /// last one too: the process ran this script's marker before it was
    /// judged). Every part is a script without its handshake, as the
    /// process ran it, with its own write boundaries; frames keep their
    /// labels, and stdin is closed after the last only if this script
    /// closes it.
    pub fn with_history(&self, history: &[Script]) -> Script {
        let mut whole = Script::handshake(self.revision);
        for (n, part) in history.iter().chain([self]).enumerate() {
            let id = format!("portcullis-mark-{}", n + 1);
            let mark = Frame {
                bytes: self.revision.marker(&id),
                expect: Expect::Inert { request: true },
                id: Some(Id::Str(id)),
                tokens: vec![],
                family: "marker".into(),
                kind: self.revision.marker_method().into(),
                fill: None,
            };
            let at = whole.write_ends.last().copied().unwrap_or(0);
            whole.write_ends.extend(part.write_ends.iter().map(|e| e + at));
            whole.frames.extend(part.frames.iter().cloned());
            whole.write_ends.push(whole.write_ends.last().copied().unwrap_or(0) + mark.bytes.len());
            whole.frames.push(mark);
        }
        whole.eof = self.eof;
        whole
    }

    /// Whether the script holds the handshake (after calls made before it,
    /// if any); a script a persistent process ran does not, the process
    /// having been initialized once.
    pub fn has_handshake(&self) -> bool {
        self.frames.iter().any(|f| f.family == "handshake")
    }

    /// Every salt of the script's canary tokens, each once, in order.
    pub fn salts(&self) -> Vec<u32> {
        let mut salts = Vec::new();
        for salt in self.frames.iter().flat_map(|f| f.tokens.iter()).filter_map(|t| crate::token::salt_of(t)) {
            if !salts.contains(&salt) {
                salts.push(salt);
            }
        }
        salts
    }

    /// The script without its handshake, for a session that is already
    /// open (a shared process, a fuzz target that sends the handshake
    /// itself); `None` when something goes before the handshake. A second
    /// `initialize` stays in: it meets an initialized session either way.
    pub fn after_handshake(&self) -> Option<Script> {
        self.clone().into_after_handshake()
    }

    /// [`Script::after_handshake`], its frames moved, not copied.
    pub fn into_after_handshake(mut self) -> Option<Script> {
        let early = |f: &Frame| matches!(f.expect.rule(), Some(Rule::BeforeInitialize));
        let kinds: Vec<String> = handshake_frames(1, self.revision).into_iter().map(|f| f.kind.to_string()).collect();
        let n = kinds.len();
        let starts = self.frames.len() >= n
            && self.frames[..n].iter().zip(&kinds).all(|(f, k)| f.family == "handshake" && f.kind == *k);
        if !starts || self.frames.iter().any(early) {
            return None;
        }
        let skip: usize = self.frames[..n].iter().map(|f| f.bytes.len()).sum();
        let write_ends = self.write_ends.iter().filter(|e| **e > skip).map(|e| e - skip).collect();
        self.frames.drain(..n);
        Some(Script { revision: self.revision, frames: self.frames, write_ends, eof: self.eof })
    }

    /// Whether the last frame is cut short: what follows it would join it,
    /// so nothing may follow but EOF.
    pub fn ends_cut(&self) -> bool {
        self.frames.last().is_some_and(|f| !f.bytes.ends_with(b"\n"))
    }

    /// The writes, as spans of stdin.
    pub fn write_spans(&self) -> Vec<Range<usize>> {
        spans(&self.write_ends)
    }

    /// The bytes of each write, in order: [`Script::stdin`] cut at
    /// [`Script::write_spans`], each gathered from its frames.
    #[cfg(all(feature = "process", target_os = "linux"))]
    pub(crate) fn writes(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        let mut gather = self.gather();
        self.write_spans().into_iter().map(move |span| gather.take(span))
    }

    /// Spans of stdin gathered from the frames, in order, without the
    /// whole of stdin held beside them.
    pub(crate) fn gather(&self) -> Gather<'_> {
        Gather { frames: &self.frames, at: 0, start: 0 }
    }
}

/// Spans of a script's stdin, gathered from its frames ([`Script::gather`]).
pub(crate) struct Gather<'a> {
    frames: &'a [Frame],
    /// The first frame the next span may need, and where it begins.
    at: usize,
    start: usize,
}

impl Gather<'_> {
    /// The bytes of `span`, which begins no earlier than the spans taken
    /// before it (each frame is passed over once).
    pub(crate) fn take(&mut self, span: Range<usize>) -> Vec<u8> {
        while let Some(f) = self.frames.get(self.at).filter(|f| self.start + f.bytes.len() <= span.start) {
            self.start += f.bytes.len();
            self.at += 1;
        }
        let mut chunk = Vec::with_capacity(span.len());
        let mut at = self.start;
        for f in &self.frames[self.at..] {
            if at >= span.end {
                break;
            }
            let end = at + f.bytes.len();
            chunk.extend_from_slice(&f.bytes[span.start.max(at) - at..span.end.min(end) - at]);
            at = end;
        }
        debug_assert_eq!(chunk.len(), span.len(), "a span of stdin, {span:?}");
        chunk
    }
}

/// How often a campaign draws the scripts that need a process of their
/// own ([`ScriptSpec::needs_own_process`]). Under keep-open they cost a
/// process start each, while the rest share one process: against a server
/// that takes a second to start, they are nearly all of the campaign's time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mix {
    /// As drawn: about one script in seven.
    #[default]
    Full,
    /// One in 16 of those, the rest drawn again.
    Lean,
}

/// Under [`Mix::Lean`], one script in this many of those that need a
/// process of their own is kept.
pub(crate) const LEAN: u32 = 16;

impl Mix {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Mix::Full => "full",
            Mix::Lean => "lean",
        }
    }

    /// How many times rarer than drawn this mix makes what needs a process
    /// of its own.
    pub fn rarity(self) -> u32 {
        match self {
            Mix::Full => 1,
            Mix::Lean => LEAN,
        }
    }

    /// About how many scripts this mix draws to each one that needs a
    /// process of its own.
    pub fn own_process_every(self) -> u32 {
        7 * self.rarity()
    }
}

impl Mix {
    /// Every mix.
    pub const ALL: [Mix; 2] = [Mix::Full, Mix::Lean];
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "full" => Ok(Mix::Full),
            "lean" => Ok(Mix::Lean),
            _ => Err(format!("unknown mix {s:?} (known: full, lean)")),
        }
    }
}

/// Which of a mix's scripts a hunt draws. Under keep-open, a campaign
/// draws the scripts that need a process of their own on a lane of their
/// own, beside the search that draws the rest into a shared process: a
/// process start then holds up neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// Every script the mix draws.
    #[default]
    All,
    /// Those a shared process can run.
    Shared,
    /// Those that need a process of their own
    /// ([`ScriptSpec::needs_own_process`]).
    Own,
}

impl Part {
    /// Whether this part holds `spec`.
    pub fn holds(self, spec: &ScriptSpec) -> bool {
        match self {
            Part::All => true,
            Part::Shared => !spec.needs_own_process(),
            Part::Own => spec.needs_own_process(),
        }
    }

    /// `scripts` of this part: drawn until one falls in it, as
    /// `prop_filter` draws, but shrunk as `scripts` shrink, across the
    /// parts: a step that put a script in this part (a huge call, a call
    /// before the handshake) can still be dropped as it shrinks. The same
    /// seed draws the same scripts as such a filter.
    pub fn drawn(self, scripts: BoxedStrategy<ScriptSpec>) -> BoxedStrategy<ScriptSpec> {
        OfPart { scripts, part: self }.boxed()
    }

    /// Of `cases` the mix draws, about how many fall in this part.
    pub fn share_of(self, cases: u32, mix: Mix) -> u32 {
        let own = cases / mix.own_process_every();
        match self {
            Part::All => cases,
            Part::Shared => cases - own,
            Part::Own => own,
        }
    }
}

/// [`Part::drawn`].
#[derive(Debug)]
struct OfPart {
    scripts: BoxedStrategy<ScriptSpec>,
    part: Part,
}

impl Strategy for OfPart {
    type Tree = Box<dyn proptest::strategy::ValueTree<Value = ScriptSpec>>;
    type Value = ScriptSpec;

    fn new_tree(&self, runner: &mut proptest::test_runner::TestRunner) -> proptest::strategy::NewTree<Self> {
        loop {
            let tree = self.scripts.new_tree(runner)?;
            if self.part.holds(&tree.current()) {
                return Ok(tree);
            }
            runner.reject_local("a script of the other part")?;
        }
    }
}

/// [`scripts`] under `mix`: a script that needs a process of its own is
/// kept one time in [`Mix::rarity`], by a draw of its own that shrinks
/// toward keeping it.
pub fn scripts_mixed(
    revision: BoxedStrategy<Revision>,
    step: BoxedStrategy<Step>,
    mix: Mix,
) -> BoxedStrategy<ScriptSpec> {
    let all = scripts(revision, step);
    match mix.rarity() {
        1 => all,
        rarity => (all, 0..rarity)
            .prop_filter("a script that needs a process of its own, not kept this time", |(spec, keep)| {
                *keep == 0 || !spec.needs_own_process()
            })
            .prop_map(|(spec, _)| spec)
            .boxed(),
    }
}

/// A strategy over scripts of any revision, mixing every family with
/// controls.
pub fn any_script() -> BoxedStrategy<ScriptSpec> {
    scripts(attack::any_revision(), attack::any_step())
}

/// A strategy over scripts whose revision and steps come from the given
/// strategies: at most eight steps, mostly one write per frame.
pub fn scripts(revision: BoxedStrategy<Revision>, step: BoxedStrategy<Step>) -> BoxedStrategy<ScriptSpec> {
    let splits = prop_oneof![3 => Just(vec![]), 1 => proptest::collection::vec(any::<u32>(), 1..4)];
    let joins = prop_oneof![3 => Just(vec![]), 1 => proptest::collection::vec(any::<u8>(), 1..4)];
    // A cut at EOF must come last to be one, so it gets its own draw.
    let cut = (any::<u8>(), any::<u16>()).prop_map(|(tool, cut)| {
        Step::Truncate(attack::truncate::Truncate { kind: attack::truncate::Kind::AtEof, tool, cut })
    });
    let tail = proptest::option::weighted(0.1, cut);
    (revision, proptest::collection::vec(step, 1..8), tail, splits, joins, proptest::bool::weighted(0.9))
        .prop_map(|(revision, mut steps, tail, splits, joins, eof)| {
            steps.extend(tail);
            ScriptSpec { revision, steps, splits, joins, eof, level: Level::default() }
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_of_the_other_era_runs_in_a_process_of_its_own() {
        use crate::attack::envelope::{Envelope, Kind as EnvelopeKind};
        use crate::attack::lifecycle::{Kind as LifecycleKind, Lifecycle};
        let initialize = Step::Lifecycle(Lifecycle { kind: LifecycleKind::RepeatedInitialize, tool: 0 });
        let modern = Step::Envelope(Envelope { kind: EnvelopeKind::ModernEnvelope, tool: 0, pick: 0 });
        let own = |revision, step: &Step| ScriptSpec::whole(revision, vec![step.clone()]).needs_own_process();
        assert!(own(Revision::R2026_07_28, &initialize), "an initialize may open the handshake era");
        assert!(!own(Revision::R2025_11_25, &initialize), "a second initialize is of its own era");
        assert!(own(Revision::R2025_11_25, &modern), "a modern envelope may open 2026-07-28");
        assert!(!own(Revision::R2026_07_28, &modern));
    }

    #[test]
    fn a_call_that_would_hold_a_shared_process_runs_in_one_of_its_own() {
        use crate::attack::size::{Kind as SizeKind, Size};
        let own = |kind| {
            let step = Step::Size(Size { kind, size: 2, tool: 0 });
            ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0), step]).needs_own_process()
        };
        assert!(own(SizeKind::Huge), "an 8 to 32 MiB call holds a shared process while it is read");
        assert!(!own(SizeKind::Megabyte), "a megabyte shares a process");
        assert!(!own(SizeKind::Pipe));
    }

    #[test]
    fn a_part_is_drawn_alone_and_shrinks_into_the_other() {
        use crate::attack::size::{Kind as SizeKind, Size};
        use proptest::strategy::ValueTree;
        // 1 draws a script with a huge call (the own part), 0 one without;
        // integers shrink toward 0.
        let spec = |huge: u8| {
            let kind = if huge == 1 { SizeKind::Huge } else { SizeKind::Valid };
            ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Size(Size { kind, size: 2, tool: 0 })])
        };
        let scripts = (0..2u8).prop_map(spec).boxed();
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for _ in 0..16 {
            let mut tree = Part::Own.drawn(scripts.clone()).new_tree(&mut runner).expect("drawn");
            assert!(Part::Own.holds(&tree.current()), "drawn from its part");
            assert!(tree.simplify(), "it shrinks");
            assert!(!Part::Own.holds(&tree.current()), "to a script without the step that put it there");
        }
    }

    #[test]
    fn spans_gathered_in_order_are_stdins_across_empty_frames_and_gaps() {
        let handshake = Script::handshake(Revision::R2025_06_18);
        let frame = |b: &[u8]| Frame { bytes: b.to_vec(), ..handshake.frames[0].clone() };
        let frames = [&b"ab"[..], b"", b"cdef", b"", b"g"].map(frame).to_vec();
        let script = Script::one_write_per_frame(Revision::R2025_06_18, frames, true);
        let stdin = script.stdin();
        let n = stdin.len();
        // Two spans taken in order, each empty or not, starting or ending
        // inside a frame or at its edge, with or without a gap between
        // them (the driver skips a filled frame's span).
        for a in 0..=n {
            for b in a..=n {
                for c in b..=n {
                    for d in c..=n {
                        let mut gather = script.gather();
                        assert_eq!(gather.take(a..b), &stdin[a..b], "{a}..{b}");
                        assert_eq!(gather.take(c..d), &stdin[c..d], "{a}..{b} then {c}..{d}");
                    }
                }
            }
        }
    }

    #[cfg(all(feature = "process", target_os = "linux"))]
    #[test]
    fn each_write_gathered_from_the_frames_is_that_span_of_stdin() {
        use proptest::strategy::ValueTree;
        let revisions = proptest::sample::select(Revision::ALL.to_vec()).boxed();
        let scripts = scripts_mixed(revisions, attack::any_step(), Mix::Full);
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut split, mut joined) = (false, false);
        for salt in 0..400 {
            let whole = scripts.new_tree(&mut runner).expect("drawn").current().render(&Catalogue::reference(), salt);
            // A shared process writes a script's body, its ends shifted.
            let body = whole.clone().into_after_handshake();
            for script in std::iter::once(whole).chain(body) {
                let stdin = script.stdin();
                let spans = script.write_spans();
                let writes: Vec<Vec<u8>> = script.writes().collect();
                let cut: Vec<&[u8]> = spans.iter().map(|s| &stdin[s.clone()]).collect();
                assert_eq!(writes, cut, "{script:?}");
                let frame_ends = frame_ends(&script.frames);
                split |= spans.iter().any(|s| !frame_ends.contains(&s.end));
                joined |= spans.len() < script.frames.len();
            }
        }
        assert!(split && joined, "drawn: a write that ends inside a frame and one that holds two");
    }

    #[test]
    fn a_history_replays_as_one_session_with_its_markers() {
        let catalogue = Catalogue::reference();
        let body = |salt| {
            let spec = ScriptSpec::whole(Revision::R2025_06_18, vec![Step::Control(0)]);
            spec.render(&catalogue, salt).after_handshake().expect("a body")
        };
        let (first, last) = (body(1), body(2));
        assert!(!last.has_handshake());
        let whole = last.with_history(std::slice::from_ref(&first));
        assert!(whole.has_handshake());
        let kinds: Vec<&str> = whole.frames.iter().map(|f| &*f.kind).collect();
        assert_eq!(kinds, ["initialize", "initialized", "valid_call", "ping", "valid_call", "ping"]);
        assert_eq!(whole.frames[5].id, Some(Id::Str("portcullis-mark-2".into())));
        assert_eq!(*whole.write_ends.last().unwrap(), whole.stdin().len());
        assert!(whole.write_ends.windows(2).all(|w| w[0] < w[1]), "{:?}", whole.write_ends);
        assert_eq!(whole.eof, last.eof);
        // The first script a process ran has no history, and still its handshake.
        let alone: Vec<String> = first.with_history(&[]).frames.iter().map(|f| f.kind.to_string()).collect();
        assert_eq!(alone, ["initialize", "initialized", "valid_call", "ping"]);
    }
}

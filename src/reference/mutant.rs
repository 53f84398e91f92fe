//! The built-in catalogue of planted bugs: each mutant is the reference
//! gateway with exactly one deviation, and names the check that must catch
//! it and the policy and revisions it is hunted under.

use crate::check::CheckId;
use crate::protocol::{Policy, Revision};

macro_rules! mutants {
    ($($v:ident => $name:literal, $check:ident, $policy:ident, $what:literal;)*) => {
        /// A planted bug.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Mutant {
            $(#[doc = $what] $v,)*
        }

        impl Mutant {
            /// Every mutant.
            pub const ALL: &'static [Mutant] = &[$(Mutant::$v,)*];

            /// Stable kebab-case name.
            pub fn name(self) -> &'static str {
                match self { $(Mutant::$v => $name,)* }
            }

            /// What the deviation is.
            pub fn what(self) -> &'static str {
                match self { $(Mutant::$v => $what,)* }
            }

            /// The check that must catch it.
            pub fn expected(self) -> CheckId {
                match self { $(Mutant::$v => CheckId::$check,)* }
            }

            /// The policy it is hunted under.
            pub fn policy(self) -> Policy {
                match self { $(Mutant::$v => Policy::$policy,)* }
            }
        }
    };
}

mutants! {
    StartupBanner => "startup-banner", StdoutClean, Close, "prints a banner on stdout at startup";
    LateDiagnostic => "late-diagnostic", StdoutClean, Close, "prints a debug line on stdout after each executed call";
    SkipNonJson => "skip-non-json", Policy, Close, "skips lines that are not JSON and carries on";
    ExecuteConcatenated => "execute-concatenated", NoEffectOnReject, KeepOpen, "executes every value found on a concatenated line";
    BoolId => "bool-id", NoEffectOnReject, KeepOpen, "accepts a boolean id";
    AnyIntegerId => "any-integer-id", NoEffectOnReject, KeepOpen, "accepts integer ids past 2^53, which many readers cannot echo exactly";
    FractionalId => "fractional-id", NoEffectOnReject, KeepOpen, "accepts a fractional id";
    NullId => "null-id", NoEffectOnReject, KeepOpen, "accepts a null id as a request";
    LaxJsonrpc => "lax-jsonrpc", NoEffectOnReject, KeepOpen, "accepts a missing or wrong `jsonrpc`";
    ExecuteBeforeSchema => "execute-before-schema", NoEffectOnReject, KeepOpen, "executes before the argument schema check";
    AuthorizeAfterBuild => "authorize-after-build", NoEffectOnReject, KeepOpen, "sends the built request before authorizing it";
    RepairTruncatedAtEof => "repair-truncated-at-eof", NoEffectOnReject, KeepOpen, "repairs a truncated frame at EOF by closing its brackets";
    ChunkedRead => "chunked-read", ExactlyOnce, KeepOpen, "reads stdin 4 KiB at a time and takes a chunk with no LF for a line";
    JoinBrokenLines => "join-broken-lines", NoEffectOnReject, KeepOpen, "joins a line that ends mid-value with the next";
    LastWinsDuplicates => "last-wins-duplicates", NoEffectOnReject, KeepOpen, "lets the last of duplicate keys win";
    BatchAnyRevision => "batch-any-revision", NoEffectOnReject, KeepOpen, "executes batch elements in revisions without batches";
    CallBeforeInitialize => "call-before-initialize", NoEffectOnReject, KeepOpen, "runs tools/call before initialize";
    CarryRejectedArguments => "carry-rejected-arguments", Policy, KeepOpen, "carries a rejected call's arguments into the next call";
    ReplaceInvalidUtf8 => "replace-invalid-utf8", NoEffectOnReject, KeepOpen, "replaces invalid UTF-8 instead of rejecting it";
    IgnoreClosePolicy => "ignore-close-policy", Policy, Close, "answers a malformed frame but keeps the session open under close";
    NoExitOnEof => "no-exit-on-eof", Liveness, KeepOpen, "does not exit when stdin closes";
    RetryFetch => "retry-fetch", ExactlyOnce, KeepOpen, "retries every fetch once, executing it twice";
    CoerceStringId => "coerce-string-id", Correlation, KeepOpen, "answers a numeric-looking string id with a number";
    WrongParseErrorCode => "wrong-parse-error-code", Correlation, KeepOpen, "answers parse errors with -32603 instead of -32700";
    ServeWithoutEnvelope => "serve-without-envelope", NoEffectOnReject, KeepOpen, "serves a stateless session's call whose envelope is missing or broken";
    AnyVersion => "any-version", NoEffectOnReject, KeepOpen, "serves a stateless session's call whose envelope names another revision";
    UntypedResult => "untyped-result", StdoutClean, KeepOpen, "leaves `resultType` out of a stateless session's results";
    InheritCapability => "inherit-capability", Correlation, KeepOpen, "takes a capability an earlier request declared for one whose envelope does not";
    TrustRequestState => "trust-request-state", NoEffectOnReject, KeepOpen, "takes a `requestState` never handed out for a confirmation given";
    ReplayRequestState => "replay-request-state", NoEffectOnReject, KeepOpen, "redeems a `requestState` again after it was spent";
    UnboundRequestState => "unbound-request-state", NoEffectOnReject, KeepOpen, "redeems a `requestState` for a call other than the one it was handed out for";
}

impl Mutant {
    /// Looks a mutant up by name.
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// The revisions it is hunted under: batches only bite where they are
    /// not allowed.
    pub fn revisions(self) -> Vec<Revision> {
        match self {
            Mutant::BatchAnyRevision => Revision::ALL.into_iter().filter(|r| !r.has_batches()).collect(),
            // Envelopes bite only where the revision has them.
            Mutant::ServeWithoutEnvelope
            | Mutant::AnyVersion
            | Mutant::InheritCapability
            | Mutant::TrustRequestState
            | Mutant::ReplayRequestState
            | Mutant::UnboundRequestState => Revision::ALL.into_iter().filter(|r| r.has_envelope()).collect(),
            Mutant::UntypedResult => Revision::ALL.into_iter().filter(|r| r.has_result_type()).collect(),
            _ => Revision::ALL.to_vec(),
        }
    }
}

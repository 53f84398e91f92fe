//! The findings as SARIF 2.1.0, for code-scanning dashboards: one rule
//! per check, one result per finding, located at its saved artifact.

use super::outcome::{Context, Outcome};
use crate::CheckId;
use serde_json::json;
use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, ReportingDescriptor,
    Result as SarifResult, ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};
use std::collections::BTreeMap;

/// The outcome as a SARIF log.
pub fn log(outcome: &Outcome, context: &Context) -> Sarif {
    let rules: Vec<ReportingDescriptor> = CheckId::ALL
        .iter()
        .map(|c| {
            ReportingDescriptor::builder()
                .id(c.id())
                .short_description(MultiformatMessageString::builder().text(c.failure()).build())
                .build()
        })
        .collect();
    let driver = ToolComponent::builder()
        .name("portcullis")
        .version(env!("CARGO_PKG_VERSION"))
        .information_uri("https://github.com/portcullis-fuzz/portcullis")
        .rules(rules)
        .build();
    let results: Vec<SarifResult> = outcome
        .findings
        .iter()
        .map(|(f, path)| {
            let text = format!(
                "{}: {}{}\nReproduce with: {}",
                f.check.failure(),
                f.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; "),
                f.cause_line().map(|c| format!("\n{c}")).unwrap_or_default(),
                (context.rerun)("replay", path)
            );
            let at = ArtifactLocation::builder().uri(path.display().to_string()).build();
            let location = Location::builder()
                .physical_location(PhysicalLocation::builder().artifact_location(at).build())
                .build();
            // The same bug found again fingerprints the same: its finding
            // key (check, kind of violation, class of input).
            let d = f.distinct();
            let key = format!("{}:{}:{}", d.check.id(), d.kind, d.what);
            let fingerprint = BTreeMap::from([("portcullis/v5".to_owned(), key)]);
            // A spec finding is an error; one only hardening shows, a warning.
            let level = if f.level() == crate::Level::Hardening { ResultLevel::Warning } else { ResultLevel::Error };
            let mut result = SarifResult::builder()
                .rule_id(f.check.id())
                .level(level)
                .message(Message::builder().text(text).build())
                .locations(vec![location])
                .partial_fingerprints(fingerprint)
                .build();
            // Against a baseline: a known cause is unchanged and accepted
            // there, with its reason; any other is new.
            if let Some(s) = &outcome.standing {
                let reason = s.reason(f);
                result.baseline_state = Some(json!(if reason.is_some() { "unchanged" } else { "new" }));
                result.suppressions = reason.map(|r| {
                    let why = format!("known in baseline {}: {r}", s.file);
                    vec![
                        Suppression::builder()
                            .kind(json!("external"))
                            .status(json!("accepted"))
                            .justification(why)
                            .build(),
                    ]
                });
            }
            result
        })
        .collect();
    let run = Run::builder().tool(Tool::builder().driver(driver).build()).results(results).build();
    Sarif::builder()
        .version(serde_json::json!("2.1.0"))
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .runs(vec![run])
        .build()
}

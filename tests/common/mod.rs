//! What several test binaries share.

use portcullis::catalogue::Catalogue;
use portcullis::child::{ChildTarget, Command, Limits};
use portcullis::probe::{ProbeConfig, Probes};
use std::sync::Arc;

/// The Python test server `tests/servers/NAME` with `args`, under `limits`,
/// calling its `fetch` (the reference's) with canaries on fresh probes.
pub fn python_server(name: &str, args: &[&str], limits: Limits) -> ChildTarget {
    let probes = Arc::new(Probes::start(&ProbeConfig::default()).unwrap());
    let server = format!("{}/tests/servers/{name}", env!("CARGO_MANIFEST_DIR"));
    let args = std::iter::once(server).chain(args.iter().map(|a| a.to_string())).collect();
    let command = Command { program: "python3".into(), args, env: vec![] };
    let fetch = Catalogue::reference().tools.into_iter().filter(|t| t.name == "fetch").collect();
    ChildTarget::new(command, limits, fetch, probes)
}

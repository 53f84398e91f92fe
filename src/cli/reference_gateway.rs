//! `portcullis reference-gateway`: the reference gateway, or one of its
//! mutants, as a real stdio MCP server whose `fetch` tool performs a real
//! HTTP GET of its `url` — a target for `portcullis fuzz` whose effects can
//! only be seen out of band. So that what reaches the executor shows in the
//! effect, every request carries the call's whole arguments in an
//! `x-mcp-arguments` header; `rotate_keys` (never authorized) POSTs to its
//! `webhook`, and `purge_cache` (once confirmed) POSTs to its `url`.

use crate::reference::{Mutant, ReferenceGateway};
use crate::{Action, Catalogue, Exit, Gateway, Policy, Recorder};
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `portcullis reference-gateway`.
#[derive(clap::Args)]
pub struct Args {
    /// What to do after a malformed or invalid frame: close or keep-open.
    #[arg(long, default_value = "close", value_parser = crate::cli::one_of(&Policy::ALL))]
    policy: Policy,
    /// Plant one of the built-in bugs (see `portcullis mutants`).
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Where `write_note` writes its files; without it, it writes nothing.
    #[arg(long, value_name = "DIR")]
    notes_dir: Option<PathBuf>,
}

/// Performs the actions the gateway decided on since `done`.
struct Executor {
    /// For hosts named by address: nothing to resolve, so no timeout for
    /// resolving, which ureq would run on a thread of its own per call.
    by_address: ureq::Agent,
    /// For hosts named by name: the name lookup is bounded too.
    by_name: ureq::Agent,
    notes_dir: Option<PathBuf>,
    done: usize,
}

impl Executor {
    fn perform(&mut self, recorder: &Recorder) {
        let actions = recorder.actions_since(self.done);
        for action in &actions {
            self.one(action);
        }
        self.done += actions.len();
    }

    fn one(&self, action: &Action) {
        let arg = |k: &str| action.arguments.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        let all = encode(&action.arguments_text());
        // A body read to its end lets the agent keep the connection for the
        // next call, as a fetching tool would.
        let read = |r: Result<ureq::http::Response<ureq::Body>, ureq::Error>| {
            drop(r.and_then(|mut r| r.body_mut().read_to_vec()))
        };
        let (url, webhook) = (encode(arg("url")), encode(arg("webhook")));
        match action.tool.as_str() {
            "fetch" if arg("method") == "HEAD" => {
                read(self.agent(&url).head(&url).header("x-mcp-arguments", &all).call())
            }
            "fetch" => read(self.agent(&url).get(&url).header("x-mcp-arguments", &all).call()),
            "rotate_keys" => read(self.agent(&webhook).post(&webhook).header("x-mcp-arguments", &all).send("rotate")),
            "purge_cache" => read(self.agent(&url).post(&url).header("x-mcp-arguments", &all).send("purge")),
            "write_note" => {
                if let Some(dir) = &self.notes_dir {
                    let name = std::path::Path::new(arg("path")).file_name().unwrap_or_default();
                    let _ = std::fs::write(dir.join(name), arg("text"));
                }
            }
            _ => {}
        }
    }

    fn new(notes_dir: Option<PathBuf>) -> Self {
        let bound = Some(Duration::from_secs(2));
        let by_address = ureq::Agent::config_builder()
            .timeout_connect(bound)
            .timeout_send_request(bound)
            .timeout_send_body(bound)
            .timeout_recv_response(bound)
            .timeout_recv_body(bound)
            .build();
        let by_name = ureq::Agent::config_builder().timeout_global(bound).build();
        Executor { by_address: by_address.into(), by_name: by_name.into(), notes_dir, done: 0 }
    }

    /// The agent for `url`: by its host, an address or a name.
    fn agent(&self, url: &str) -> &ureq::Agent {
        let host = url.parse::<ureq::http::Uri>().ok().and_then(|u| u.host().map(str::to_owned));
        let address = host.is_some_and(|h| h.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().is_ok());
        if address { &self.by_address } else { &self.by_name }
    }
}

/// Percent-encodes what a URL may not carry raw (non-ASCII bytes, controls,
/// spaces), as a browser or an HTTP library's quoting would.
fn encode(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for b in url.bytes() {
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let mutant = match &args.mutant {
        Some(name) => match Mutant::from_name(name) {
            Some(m) => Some(m),
            None => bail!("unknown mutant {name:?} (see `portcullis mutants`)"),
        },
        None => None,
    };
    let recorder = Recorder::new();
    let mut gateway =
        ReferenceGateway::new(std::sync::Arc::new(Catalogue::reference()), args.policy, mutant, recorder.clone());
    let mut executor = Executor::new(args.notes_dir.clone());
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        stdout.write_all(&gateway.take_stdout()).context("writing stdout")?;
        stdout.flush().context("flushing stdout")?;
        if let Exit::Exited(code) = gateway.exit() {
            return Ok(ExitCode::from(code as u8));
        }
        let n = stdin.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        gateway.write_stdin(&buf[..n])?;
        executor.perform(&recorder);
    }
    gateway.close_stdin()?;
    executor.perform(&recorder);
    stdout.write_all(&gateway.take_stdout()).context("writing stdout")?;
    stdout.flush().context("flushing stdout")?;
    loop {
        match gateway.exit() {
            Exit::Exited(code) => return Ok(ExitCode::from(code as u8)),
            // The no-exit-on-eof mutant: linger until signalled.
            _ => std::thread::sleep(Duration::from_secs(1)),
        }
    }
}

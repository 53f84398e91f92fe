//! A small MCP gateway on rmcp, the official Rust SDK, for portcullis to
//! fuzz: one tool, `append`, whose effect is observable (it appends a line to
//! a file). Serves MCP on stdin and stdout.
//!
//!   rmcp-gateway --log FILE [--planted-bug]
//!
//! `--planted-bug` puts a "forgiving" line reader in front of the SDK, of the
//! kind written to tolerate noisy clients: a line that is not JSON is cut to
//! the span from its first `{` to its last `}` and passed on. A frame behind a
//! banner, or with trailing bytes, then reaches the tool. portcullis must
//! catch it; without the flag the gateway is the SDK as shipped.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::io::Write;
use std::path::PathBuf;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AppendRequest {
    /// The line to append to the log.
    text: String,
}

#[derive(Clone)]
struct Gateway {
    log: PathBuf,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Gateway {
    fn new(log: PathBuf) -> Self {
        Self { log, tool_router: Self::tool_router() }
    }

    /// Appends one line of text to the gateway's log file.
    #[tool]
    async fn append(&self, Parameters(AppendRequest { text }): Parameters<AppendRequest>) -> Result<String, String> {
        if text.contains('\n') {
            return Err("text must be one line".into());
        }
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).map_err(|e| e.to_string())?;
        // One write per line, so a reader never sees half of one.
        file.write_all(format!("{text}\n").as_bytes()).map_err(|e| e.to_string())?;
        Ok(format!("appended {} bytes", text.len() + 1))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The planted bug: copies stdin to `to`, line by line, "repairing" each line
/// that is not JSON to the span between its first `{` and its last `}`.
async fn forgiving_reader(mut to: tokio::io::DuplexStream) -> std::io::Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        if lines.read_until(b'\n', &mut line).await? == 0 {
            return Ok(());
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let first = body.iter().position(|&b| b == b'{');
        let last = body.iter().rposition(|&b| b == b'}');
        let repaired = match (serde_json::from_slice::<serde_json::Value>(body), first, last) {
            (Err(_), Some(a), Some(b)) if a < b => &body[a..=b],
            _ => body,
        };
        to.write_all(repaired).await?;
        to.write_all(b"\n").await?;
    }
}

fn usage() -> ! {
    eprintln!("usage: rmcp-gateway --log FILE [--planted-bug]");
    std::process::exit(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut log = None;
    let mut planted = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--log" => log = Some(PathBuf::from(args.next().unwrap_or_else(|| usage()))),
            "--planted-bug" => planted = true,
            _ => usage(),
        }
    }
    let gateway = Gateway::new(log.unwrap_or_else(|| usage()));
    let running = if planted {
        let (inner, outer) = tokio::io::duplex(1 << 16);
        tokio::spawn(forgiving_reader(outer));
        gateway.serve((inner, tokio::io::stdout())).await?
    } else {
        gateway.serve(rmcp::transport::stdio()).await?
    };
    running.waiting().await?;
    Ok(())
}

//! Adapters for the two shapes real Rust gateways have, so that a gateway
//! is put under test with a few lines of glue instead of a [`Gateway`]
//! implementation of its own. Either way the gateway acts through the
//! session's [`Recorder`] where its real executor would run.
//!
//! # A line handler
//!
//! Bytes in, bytes out: the gateway's core takes one line (with its LF, as
//! `read_until(b'\n')` gives it) and returns what to write. Return a
//! [`Flow::End`] to end the session as a server that exits would.
//!
//! ```
//! use portcullis::adapter::LineTarget;
//! use portcullis::prelude::*;
//! # mod my_gateway {
//! #     use serde_json::{Map, Value, json};
//! #     /// Trusts the first JSON value on a line: a gateway the suite catches.
//! #     pub fn handle(line: &[u8], execute: &dyn Fn(String, Map<String, Value>)) -> Vec<u8> {
//! #         let Some(Ok(msg)) = serde_json::Deserializer::from_slice(line).into_iter::<Value>().next() else { return vec![] };
//! #         let p = &msg["params"];
//! #         if msg["method"] == "tools/call" {
//! #             execute(p["name"].as_str().unwrap_or("").into(), p["arguments"].as_object().cloned().unwrap_or_default());
//! #         }
//! #         let result = json!({"protocolVersion": p["protocolVersion"], "capabilities": {"tools": {}},
//! #                             "serverInfo": {"name": "naive", "version": "0"}, "content": []});
//! #         let Some(id) = msg.get("id") else { return vec![] };
//! #         format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "result": result})).into_bytes()
//! #     }
//! # }
//!
//! let target = LineTarget::new(Catalogue::reference(), |recorder: Recorder| {
//!     move |line: &[u8]| {
//!         my_gateway::handle(line, &|tool, arguments| recorder.record(Action { tool, arguments }))
//!     }
//! });
//! let finding = hunt(&target, &HuntConfig::default().policy(Policy::KeepOpen)).unwrap();
//! assert!(finding.is_some(), "a gateway that trusts the first JSON value on a line is caught");
//! ```
//!
//! # A `run(reader, writer)` loop
//!
//! The gateway's own loop reads stdin and writes stdout until EOF; it runs
//! on a thread per session. Here the loop is the strict reference gateway
//! fed by hand, and every property holds:
//!
//! ```
//! use portcullis::adapter::StreamTarget;
//! use portcullis::prelude::*;
//! use portcullis::reference::ReferenceGateway;
//! use std::io::{Read, Write};
//! # use std::sync::Arc;
//! # fn serve(mut stdin: impl Read, mut stdout: impl Write, recorder: Recorder) -> std::io::Result<()> {
//! #     let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), Policy::KeepOpen, None, recorder);
//! #     let mut buf = [0u8; 4096];
//! #     while !gateway.exit().ended() {
//! #         match stdin.read(&mut buf)? {
//! #             0 => gateway.close_stdin().unwrap(),
//! #             n => gateway.write_stdin(&buf[..n]).unwrap(),
//! #         }
//! #         stdout.write_all(&gateway.take_stdout())?;
//! #     }
//! #     Ok(())
//! # }
//!
//! let target = StreamTarget::new(Catalogue::reference(), |recorder, stdin, stdout| serve(stdin, stdout, recorder));
//! assert_holds(&target, &HuntConfig::default().policy(Policy::KeepOpen).cases(32));
//! ```
//!
//! With the `tokio` feature, `AsyncTarget` does the same for an async
//! loop over `AsyncRead` and `AsyncWrite`:
//!
//! ```
//! # #[cfg(feature = "tokio")] {
//! use portcullis::adapter::AsyncTarget;
//! use portcullis::prelude::*;
//! use portcullis::reference::ReferenceGateway;
//! use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
//! # use std::sync::Arc;
//! # async fn serve(mut stdin: impl AsyncRead + Unpin, mut stdout: impl AsyncWrite + Unpin, recorder: Recorder)
//! #     -> std::io::Result<()> {
//! #     let mut gateway = ReferenceGateway::new(Arc::new(Catalogue::reference()), Policy::Close, None, recorder);
//! #     let mut buf = [0u8; 4096];
//! #     while !gateway.exit().ended() {
//! #         match stdin.read(&mut buf).await? {
//! #             0 => gateway.close_stdin().unwrap(),
//! #             n => gateway.write_stdin(&buf[..n]).unwrap(),
//! #         }
//! #         stdout.write_all(&gateway.take_stdout()).await?;
//! #     }
//! #     Ok(())
//! # }
//!
//! let target = AsyncTarget::new(Catalogue::reference(), |recorder, stdin, stdout| serve(stdin, stdout, recorder));
//! assert_holds(&target, &HuntConfig::default().cases(32));
//! # }
//! ```

#[cfg(feature = "tokio")]
mod asynchronous;
mod line;
mod pipe;
mod stream;

#[cfg(all(feature = "process", target_os = "linux"))]
pub(crate) use pipe::PER_MIB;

#[cfg(feature = "tokio")]
pub use asynchronous::AsyncTarget;
pub use line::{Flow, LineGateway, LineTarget};
pub use pipe::{LoopGateway, Stdin, Stdout};
pub use stream::StreamTarget;

#[cfg(doc)]
use crate::seam::{Gateway, Recorder};

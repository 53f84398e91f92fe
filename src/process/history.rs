//! The scripts a persistent process ran before one of its sessions.

use crate::script::Script;
use std::sync::{Arc, Mutex};

/// The scripts a persistent process ran before one of them: a view of
/// the process's one log, so that keeping it with every session costs
/// the same however long the process has run. Its scripts are shared with
/// the ledger's entries while it keeps them (each held once); the log
/// outlives them as long as any view of it is held.
#[derive(Clone, Debug, Default)]
pub(crate) struct History {
    log: Arc<Mutex<Vec<Arc<Script>>>>,
    pub(super) len: usize,
}

impl History {
    /// The scripts, oldest first.
    pub(crate) fn scripts(&self) -> Vec<Script> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log[..self.len].iter().map(|s| Script::clone(s)).collect()
    }

    /// The scripts, oldest first, as the log holds them.
    #[cfg(test)]
    pub(crate) fn held(&self) -> Vec<Arc<Script>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())[..self.len].to_vec()
    }

    /// The history after one more script.
    pub(super) fn push(&mut self, script: Arc<Script>) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.truncate(self.len);
        log.push(script);
        self.len = log.len();
    }
}

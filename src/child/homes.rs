//! The children's fresh HOME folders, removed off the session's path, and
//! the package cache they share.
//!
//! Removing a folder waits on the file system's journal now and then, for
//! a good part of a millisecond: on the session's path, that is a core left
//! idle after every process. A thread of the target's removes them instead,
//! in the order they are handed over, and the last holder of the target
//! waits for it, so no folder outlives the campaign.

use std::path::Path;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use tempfile::TempDir;

/// Removes HOME folders on a thread of its own, started on first use.
#[derive(Default)]
pub(crate) struct Homes {
    remover: Mutex<Option<(Sender<TempDir>, JoinHandle<()>)>>,
    cache: OnceLock<Option<TempDir>>,
}

impl Homes {
    /// The folder every child gets as its package cache (`XDG_CACHE_HOME`,
    /// npm's cache), made on first use and removed with the homes: a server
    /// run through `npx -y` or `uvx` downloads itself once, not at every
    /// start into a fresh HOME. `None` when no folder could be made.
    pub(crate) fn cache(&self) -> Option<&Path> {
        self.cache.get_or_init(|| tempfile::tempdir().ok()).as_ref().map(TempDir::path)
    }

    /// Removes `home` soon, on the remover's thread; here, if that thread
    /// cannot be started or has gone.
    pub(crate) fn remove(&self, home: TempDir) {
        let mut remover = self.remover.lock().unwrap_or_else(|e| e.into_inner());
        if remover.is_none() {
            let (tx, rx) = channel::<TempDir>();
            // Each folder is removed as it is dropped.
            let spawned =
                std::thread::Builder::new().name("portcullis-homes".into()).spawn(move || rx.iter().for_each(drop));
            *remover = spawned.ok().map(|thread| (tx, thread));
        }
        // A send that fails hands the folder back, dropped (so removed) here.
        match remover.as_ref() {
            Some((tx, _)) => drop(tx.send(home)),
            None => drop(home),
        }
    }
}

impl Drop for Homes {
    /// Waits until every folder handed over is gone.
    fn drop(&mut self) {
        let remover = self.remover.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((tx, thread)) = remover {
            drop(tx);
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_folder_handed_over_is_gone_once_the_homes_are() {
        let homes = Homes::default();
        let dirs: Vec<TempDir> = (0..20).map(|_| tempfile::tempdir().expect("a temporary folder")).collect();
        let paths: Vec<_> = dirs.iter().map(|d| d.path().to_owned()).collect();
        for (i, d) in dirs.into_iter().enumerate() {
            std::fs::write(d.path().join("file"), format!("{i}")).expect("a file in it");
            homes.remove(d);
        }
        drop(homes);
        assert!(paths.iter().all(|p| !p.exists()), "a HOME folder outlived its target");
    }
}

//! SIGINT and SIGTERM: portcullis ends every process group it started,
//! removes its temporary folders, lets the command save what it found so
//! far, and exits 130 (SIGINT) or 143 (SIGTERM).

use crate::process::end_everything;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The signal that asked portcullis to stop, or 0.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How long the command may take to save its findings once the servers
/// have ended, before portcullis exits without it.
const SAVE_WITHIN: Duration = Duration::from_secs(20);

/// Watches for SIGINT and SIGTERM on a thread of its own.
pub fn watch() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return };
    std::thread::spawn(move || {
        let Some(signal) = signals.forever().next() else { return };
        SIGNAL.store(signal, Ordering::SeqCst);
        let (groups, folders) = end_everything(Duration::from_millis(500));
        say!(
            "portcullis: {}: ended {groups} process group(s) and removed {folders} temporary folder(s); \
             saving what was found so far",
            name(signal)
        );
        // A second signal, or a command that does not come back in time,
        // exits at once.
        let second = std::thread::spawn(move || signals.forever().next());
        let deadline = std::time::Instant::now() + SAVE_WITHIN;
        while std::time::Instant::now() < deadline && !second.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
        }
        end_everything(Duration::from_millis(100));
        std::process::exit(code(signal));
    });
}

/// The signal that asked portcullis to stop, if one did.
pub fn stopped() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit code for `signal`: 128 and its number.
pub fn code(signal: i32) -> i32 {
    128 + signal
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

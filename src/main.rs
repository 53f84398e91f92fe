//! The `portcullis` binary: the command line lives in the library's
//! `cli` module (the default `cli` feature).

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    map_large_blocks_apart();
    portcullis::cli::main()
}

/// Serves every block of 4 MiB or more from a mapping of its own, given
/// back when it is freed. By default glibc raises that bound to the size
/// of each large block freed, up to 32 MiB, and then serves the size
/// family's calls of 8 and 16 MiB from its heaps, whose freed middle it
/// keeps: a long campaign's resident set and peak crept up with them. A
/// lower bound costs a page fault per page of each block mapped afresh
/// (1 MiB made campaigns against a Python server 8 to 26% slower), and
/// the heaps' top is trimmed past twice the bound, as glibc's own
/// adjustment would. A threshold the user set (`GLIBC_TUNABLES`,
/// `MALLOC_MMAP_THRESHOLD_`) stands.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn map_large_blocks_apart() {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if tunables.contains("mmap_threshold") || std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some() {
        return;
    }
    // SAFETY: sets one of the allocator's tunables; nothing else is asked
    // of it. It returns 0 where it cannot, and the default then stands.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 << 20);
    }
}

#[cfg(all(target_os = "linux", not(target_env = "gnu")))]
fn map_large_blocks_apart() {}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("portcullis: error: the command line drives child processes, which it does on Linux only");
    std::process::ExitCode::from(2)
}

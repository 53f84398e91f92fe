//! The `portcullis` binary: the command line lives in the library's
//! `cli` module (the default `cli` feature).

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    portcullis::cli::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("portcullis: error: the command line drives child processes, which it does on Linux only");
    std::process::ExitCode::from(2)
}

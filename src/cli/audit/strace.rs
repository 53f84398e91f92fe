//! What the server did at the operating system's level, from strace (a
//! Debian package): files and folders opened, connections attempted,
//! programs run, each with when. strace writes one file per process
//! (`-ff`), `-y` names the file an opened descriptor is, and each file
//! ends with how its process or thread ended (`+++ exited with 0 +++`)
//! unless strace itself was ended first. A call a signal interrupted is
//! split in two lines, `<unfinished ...>` and `<... NAME resumed>`, which
//! are joined. Its output is read here for these few calls
//! only: no maintained crate parses it.

use crate::process::Command;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What one traced call did.
#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    /// A file or folder opened (as the kernel named it).
    Open { path: PathBuf, write: bool, dir: bool },
    /// An open that failed (a file that is not there, or refused), as the
    /// server named it: listed, never judged, since runtimes probe many.
    Tried { path: PathBuf },
    /// A connection attempted, whether or not it went through.
    Connect { to: String },
    /// A socket bound to an address: a port or path the server listens on.
    Bind { to: String },
    /// A program run.
    Exec { program: PathBuf, argv: Vec<String> },
}

/// One call, with when it was made (seconds since the epoch).
#[derive(Clone, Debug)]
pub struct Event {
    pub at: f64,
    pub act: Act,
}

const CALLS: &str = "trace=open,openat,openat2,creat,execve,execveat,connect,bind";

/// Whether strace can trace here: `Err` says why not (not installed, or
/// tracing refused, as in a container without ptrace).
pub fn available() -> Result<(), String> {
    let mut probe = std::process::Command::new("strace");
    probe.args(["-f", "-qq", "-o", "/dev/null", "--", "true"]);
    probe.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    probe.stderr(std::process::Stdio::null());
    match crate::process::run_bounded(probe, Duration::from_secs(10)) {
        Ok(Some(s)) if s.success() => Ok(()),
        Ok(Some(s)) => Err(format!("strace cannot trace here ({s}; is ptrace allowed?)")),
        Ok(None) => Err("strace did not finish tracing `true` within 10 s".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("strace is not installed (the Debian package strace)".into())
        }
        Err(e) => Err(format!("strace would not start: {e}")),
    }
}

/// `cmd` run under strace, which writes its trace files as `prefix.PID`.
pub fn wrap(cmd: &Command, prefix: &Path) -> Command {
    let mut traced = cmd.clone();
    traced.program = "strace".into();
    let flags = ["-f", "-ff", "-q", "-ttt", "-y", "-s", "256", "-e", CALLS, "-o"];
    traced.args = flags.iter().map(|f| f.to_string()).collect();
    traced.args.extend([prefix.display().to_string(), "--".into(), cmd.program.clone()]);
    traced.args.extend(cmd.args.iter().cloned());
    traced
}

/// What the trace files of one process tree hold.
#[derive(Default)]
pub struct Trace {
    /// Every call listed, in time order.
    pub events: Vec<Event>,
    /// Processes and threads whose trace ends before their end: strace
    /// was ended (SIGKILL) while they ran, and what they did last is lost.
    pub cut_short: usize,
}

/// Every call in the trace files `prefix.PID`.
pub fn read(prefix: &Path) -> Trace {
    let (Some(dir), Some(stem)) = (prefix.parent(), prefix.file_name().and_then(|s| s.to_str())) else {
        return Trace::default();
    };
    let mut trace = Trace::default();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix(stem).and_then(|r| r.strip_prefix('.'));
        if pid.is_none_or(|p| p.parse::<u32>().is_err()) {
            continue;
        }
        let text = std::fs::read(entry.path()).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let ended = text.lines().last().and_then(|l| l.split_once(' ')).is_some_and(|(_, r)| r.starts_with("+++"));
        trace.cut_short += usize::from(!ended);
        trace.events.extend(joined(&text).iter().filter_map(|l| parse(l)));
    }
    trace.events.sort_by(|a, b| a.at.total_cmp(&b.at));
    trace
}

/// The lines of one process's trace, each call a signal split in two
/// (`NAME(args <unfinished ...>`, then `<... NAME resumed>rest`) joined
/// into one, stamped when it began.
/// A call never resumed in its file (an `execve` from a thread resumes in
/// another process's) is kept with its result unknown (`= ?`).
fn joined(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending: Option<&str> = None;
    let unknown = |head: &str| format!("{head}) = ?");
    for line in text.lines() {
        if let Some(head) = line.strip_suffix(" <unfinished ...>") {
            lines.extend(pending.replace(head).map(unknown));
        } else if let Some(rest) = line.split_once("<... ").and_then(|(_, r)| r.split_once(" resumed>")) {
            if let Some(head) = pending.take() {
                lines.push(format!("{head}{}", rest.1));
            }
        } else {
            lines.push(line.to_owned());
        }
    }
    lines.extend(pending.map(unknown));
    lines
}

/// One line of a trace file, when it is a call that did what we list.
fn parse(line: &str) -> Option<Event> {
    let (at, rest) = line.split_once(' ')?;
    let at: f64 = at.parse().ok()?;
    let (name, rest) = rest.split_once('(')?;
    let (args, result) = rest.rsplit_once(") = ")?;
    let failed = result.starts_with('-');
    // `?`: strace never saw the end of the call (see [`joined`]).
    let unknown = result.starts_with('?');
    let act = match name {
        "open" | "openat" | "openat2" | "creat" if failed || unknown => {
            let named = PathBuf::from(quoted(args).into_iter().next()?);
            // Relative to the folder strace named beside AT_FDCWD or the fd.
            let base =
                args.split_once('<').and_then(|(_, r)| r.split_once('>')).map(|(d, _)| PathBuf::from(unescape(d)));
            Act::Tried { path: base.filter(|_| named.is_relative()).map_or(named.clone(), |b| b.join(&named)) }
        }
        "open" | "openat" | "openat2" | "creat" => {
            // The descriptor's path (`= 3</etc/hosts>`) is the file the
            // kernel opened; the argument, as the server named it.
            let named = quoted(args).into_iter().next()?;
            let path = annotation(result).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(named));
            // The flags follow the path, which may hold any text.
            let flags = args.rsplit_once('"').map_or("", |(_, f)| f);
            let write =
                name == "creat" || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].iter().any(|f| flags.contains(f));
            Act::Open { path, write, dir: flags.contains("O_DIRECTORY") }
        }
        "execve" | "execveat" if !failed => {
            let strings = quoted(args);
            let program = PathBuf::from(strings.first()?);
            Act::Exec { program, argv: strings.into_iter().skip(1).take(8).collect() }
        }
        "connect" => Act::Connect { to: address(args)? },
        "bind" if !failed => Act::Bind { to: address(args)? },
        _ => return None,
    };
    Some(Event { at, act })
}

/// The address in a `sockaddr` strace printed, for the families that reach
/// another process: IPv4, IPv6 and Unix sockets.
fn address(args: &str) -> Option<String> {
    let port = || args.split("htons(").nth(1)?.split(')').next().map(str::to_owned);
    if args.contains("sa_family=AF_INET6") {
        let host = args.split("inet_pton(AF_INET6, ").nth(1).and_then(|r| quoted(r).into_iter().next())?;
        Some(format!("[{host}]:{}", port()?))
    } else if args.contains("sa_family=AF_INET") {
        let host = args.split("inet_addr(").nth(1).and_then(|r| quoted(r).into_iter().next())?;
        Some(format!("{host}:{}", port()?))
    } else if args.contains("sa_family=AF_UNIX") {
        let path = args.split("sun_path=").nth(1)?;
        let abstract_ = path.starts_with('@');
        let name = quoted(path).into_iter().next()?;
        Some(format!("unix:{}{name}", if abstract_ { "@" } else { "" }))
    } else {
        None
    }
}

/// The path strace put in `<...>` after a descriptor in `result`.
fn annotation(result: &str) -> Option<String> {
    let inner = result.split_once('<')?.1.rsplit_once('>')?.0;
    Some(unescape(inner))
}

/// Every C string literal in `text`, unescaped.
fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut end = None;
        let mut escaped = false;
        for (j, d) in chars.by_ref() {
            match (escaped, d) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(j);
                    break;
                }
                _ => {}
            }
        }
        match end {
            Some(j) => out.push(unescape(&text[i + 1..j])),
            None => break,
        }
    }
    out
}

/// A C string body as strace escapes it: `\n`, `\t`, `\"`, `\\`, `\xNN` and
/// octal `\NNN`; bytes that are not UTF-8 come out lossy.
fn unescape(body: &str) -> String {
    let b = body.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let (byte, used) = match b[i + 1] {
            b'n' => (b'\n', 2),
            b't' => (b'\t', 2),
            b'r' => (b'\r', 2),
            b'x' => (body.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(b'x'), 4),
            b'0'..=b'7' => {
                let digits = b[i + 1..].iter().take(3).take_while(|d| (b'0'..=b'7').contains(*d)).count();
                let n = u32::from_str_radix(&body[i + 1..i + 1 + digits], 8).unwrap_or(0);
                (n as u8, 1 + digits)
            }
            other => (other, 2),
        };
        out.push(byte);
        i += used;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_listed_are_read_and_the_rest_ignored() {
        let open =
            r#"1796164208.886776 openat(AT_FDCWD</tmp>, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache>"#;
        let e = parse(open).unwrap();
        assert_eq!(e.act, Act::Open { path: "/etc/ld.so.cache".into(), write: false, dir: false });
        assert!((e.at - 1796164208.886776).abs() < 1e-6);
        let relative = r#"1.5 openat(AT_FDCWD</srv>, "out.log", O_WRONLY|O_CREAT|O_APPEND, 0666) = 4</srv/out.log>"#;
        assert_eq!(parse(relative).unwrap().act, Act::Open { path: "/srv/out.log".into(), write: true, dir: false });
        let missing = r#"1.5 openat(AT_FDCWD</srv>, "nope", O_RDONLY) = -1 ENOENT (No such file or directory)"#;
        assert_eq!(
            parse(missing).unwrap().act,
            Act::Tried { path: "/srv/nope".into() },
            "a failed open is listed apart"
        );
        let split = "5.0 connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"10.0.0.1\")}, 16 <unfinished ...>\n\
                     5.1 --- SIGALRM {si_signo=SIGALRM} ---\n\
                     5.2 <... connect resumed>) = -1 EINTR (Interrupted system call)\n";
        let lines = joined(split);
        let acts: Vec<Act> = lines.iter().filter_map(|l| parse(l)).map(|e| e.act).collect();
        assert_eq!(acts, [Act::Connect { to: "10.0.0.1:80".into() }], "{lines:?}");
        let thread = "6.0 execve(\"/usr/bin/git\", [\"git\"], 0x7ffd /* 3 vars */ <unfinished ...>\n";
        let acts: Vec<Act> = joined(thread).iter().filter_map(|l| parse(l)).map(|e| e.act).collect();
        assert_eq!(
            acts,
            [Act::Exec { program: "/usr/bin/git".into(), argv: vec!["git".into()] }],
            "never resumed here"
        );
        let inet = r#"2.0 connect(5<socket:[99]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.1.2.3")}, 16) = -1 EINPROGRESS (Operation now in progress)"#;
        assert_eq!(parse(inet).unwrap().act, Act::Connect { to: "10.1.2.3:443".into() });
        let v6 = r#"2.0 connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0"#;
        assert_eq!(parse(v6).unwrap().act, Act::Connect { to: "[::1]:80".into() });
        let unix =
            r#"2.0 connect(5, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file)"#;
        assert_eq!(parse(unix).unwrap().act, Act::Connect { to: "unix:/var/run/nscd/socket".into() });
        let exec = r#"3.0 execve("/usr/bin/git", ["git", "status", "a \"b\""], 0x7ffd /* 39 vars */) = 0"#;
        let argv = vec!["git".to_owned(), "status".into(), "a \"b\"".into()];
        assert_eq!(parse(exec).unwrap().act, Act::Exec { program: "/usr/bin/git".into(), argv });
        assert!(parse("3.0 +++ exited with 0 +++").is_none());
        assert!(parse(r#"3.0 read(0, "x", 1) = 1"#).is_none());
        assert_eq!(unescape(r"a\x41\101\n"), "aAA\n");
    }
}

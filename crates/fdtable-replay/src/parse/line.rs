//! One physical line of an strace log: its task prefix, timestamp and body (P1).
//!
//! ```text
//! [TID | [pid TID]] [TIMESTAMP] [(+RELATIVE)] BODY [<DURATION>]
//! BODY := name(args) = ret          a complete call
//!       | name(args <unfinished ...>  the first half of a split call
//!       | <... name resumed>rest       the second half
//!       | --- SIGNAL {...} ---         a signal delivery
//!       | +++ exited with N +++ | +++ killed by SIG [(core dumped)] +++
//!       | +++ superseded by execve in pid N +++
//!       | strace: ...                  strace's own notices (stderr mode)
//! ```

use super::scan;
use std::fmt;

/// Why a line could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError(pub String);

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, LineError> {
    Err(LineError(msg.into()))
}

/// A parsed line, borrowing from the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// The task id of the prefix; `None` when the line has none (no `-f`, or stderr mode while
    /// a single task is traced).
    pub tid: Option<u32>,
    /// What the line says.
    pub body: Body<'a>,
}

/// The body of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// `name(args) = ret`: `args` is the text between the parentheses, `ret` what follows ` = `.
    Complete {
        /// Syscall name.
        name: &'a str,
        /// Argument text.
        args: &'a str,
        /// Return text.
        ret: &'a str,
    },
    /// `name(partial <unfinished ...>`.
    Unfinished {
        /// Syscall name.
        name: &'a str,
        /// The argument text printed so far (after `(`).
        partial: &'a str,
    },
    /// `<... name resumed>rest`: `rest` continues the arguments and ends with `) = ret`.
    Resumed {
        /// Syscall name.
        name: &'a str,
        /// Everything after `resumed>`.
        rest: &'a str,
    },
    /// `--- SIGCHLD {...} ---` and other signal-delivery or stop lines.
    Signal,
    /// `+++ exited with N +++`.
    Exited(i64),
    /// `+++ killed by SIGTERM +++`.
    Killed,
    /// `+++ superseded by execve in pid N +++`: this task (the leader) is replaced by N.
    Superseded(u32),
    /// `strace: ...`: a notice of strace itself; `Some(pid)` for `Process PID attached`.
    Notice(Option<u32>),
}

/// The marker strace appends to the first half of a split call.
pub const UNFINISHED: &str = " <unfinished ...>";

/// Parses one line (without its newline).
pub fn parse_line(line: &str) -> Result<Line<'_>, LineError> {
    let line = line.trim_end_matches(['\n', '\r']);
    let (tid, rest) = prefix(line)?;
    let rest = skip_brackets(skip_relative(skip_timestamp(rest)));
    Ok(Line {
        tid,
        body: body(rest)?,
    })
}

/// Splits off `TID ` or `[pid TID] `, either with `-Y`'s command name (`TID<comm> `,
/// `[pid TID<comm>] `).
fn prefix(line: &str) -> Result<(Option<u32>, &str), LineError> {
    if let Some(r) = line.strip_prefix("[pid") {
        let digits = r.trim_start_matches(' ');
        let n = digits.bytes().take_while(u8::is_ascii_digit).count();
        let after = match digits[n..].strip_prefix('<') {
            Some(comm) => comm.find(">]").map(|i| &comm[i + 1..]),
            None => Some(&digits[n..]),
        };
        let Some(close) = after.and_then(|a| a.strip_prefix(']')) else {
            return match r.find(']') {
                Some(_) => err("bad pid in `[pid N]` prefix"),
                None => err("unterminated `[pid N]` prefix"),
            };
        };
        let Ok(tid) = digits[..n].parse::<u32>() else {
            return err("bad pid in `[pid N]` prefix");
        };
        return Ok((Some(tid), close.trim_start_matches(' ')));
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let after = match line[digits..].strip_prefix('<') {
        Some(comm) if digits > 0 => comm.find("> ").map(|i| &comm[i + 1..]),
        _ => Some(&line[digits..]),
    };
    if digits > 0
        && let Some(after) = after
        && after.starts_with(' ')
    {
        let Ok(tid) = line[..digits].parse::<u32>() else {
            return err("task id out of range");
        };
        return Ok((Some(tid), after.trim_start_matches(' ')));
    }
    Ok((None, line.trim_start_matches(' ')))
}

/// Skips `-r`'s relative time when a `-t` timestamp precedes it: `(+     0.000010) `.
fn skip_relative(s: &str) -> &str {
    if let Some(r) = s.strip_prefix("(+")
        && let Some(close) = r.find(") ")
        && r[..close]
            .trim()
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.')
    {
        return r[close + 1..].trim_start_matches(' ');
    }
    s
}

/// Skips a `-t`/`-tt`/`-ttt`/`-r` timestamp: digits with `:` or `.`, then spaces.
fn skip_timestamp(s: &str) -> &str {
    let n = s
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b':' || *b == b'.')
        .count();
    if n > 0 && s.as_bytes().get(n) == Some(&b' ') && s[..n].contains([':', '.']) {
        s[n..].trim_start_matches(' ')
    } else {
        s
    }
}

/// Skips `-i`'s instruction pointer (`[00007f4a6d2d2c47] `, `[????????????????] `) and `-n`'s
/// syscall number (`[  59] `), in any order.
fn skip_brackets(mut s: &str) -> &str {
    for _ in 0..2 {
        let Some(r) = s.strip_prefix('[') else {
            break;
        };
        let Some(close) = r.find(']') else {
            break;
        };
        let inner = r[..close].trim();
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b'?') {
            break;
        }
        s = r[close + 1..].trim_start_matches(' ');
    }
    s
}

/// Removes a trailing `-T` duration ` <0.000123>`.
fn strip_duration(s: &str) -> &str {
    if let Some(open) = s.rfind(" <")
        && s.ends_with('>')
    {
        let inner = &s[open + 2..s.len() - 1];
        if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return &s[..open];
        }
    }
    s
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'?'
}

fn body(s: &str) -> Result<Body<'_>, LineError> {
    if s.starts_with("--- ") {
        return Ok(Body::Signal);
    }
    if let Some(r) = s.strip_prefix("+++ ") {
        return exit_line(r);
    }
    if let Some(r) = s.strip_prefix("strace: ") {
        let pid = r
            .strip_prefix("Process ")
            .and_then(|p| p.split(' ').next())
            .and_then(|p| p.parse().ok())
            .filter(|_| r.ends_with(" attached"));
        return Ok(Body::Notice(pid));
    }
    if let Some(r) = s.strip_prefix("<... ") {
        let Some(end) = r.find(" resumed>") else {
            return err("`<... ` without ` resumed>`");
        };
        let name = &r[..end];
        if name.is_empty() || !name.bytes().all(is_name_byte) {
            return err("bad syscall name in a resumed line");
        }
        return Ok(Body::Resumed {
            name,
            rest: strip_duration(&r[end + " resumed>".len()..]),
        });
    }
    let n = s.bytes().take_while(|&b| is_name_byte(b)).count();
    if n == 0 || s.as_bytes().get(n) != Some(&b'(') {
        return err("not a syscall, signal or exit line");
    }
    let name = &s[..n];
    let after = &s[n + 1..];
    if let Some(partial) = after.strip_suffix(UNFINISHED) {
        return Ok(Body::Unfinished { name, partial });
    }
    let (args, ret) = split_tail(strip_duration(after))?;
    Ok(Body::Complete { name, args, ret })
}

/// Splits `args) = ret` (the text after a call's `(`).
pub fn split_tail(after: &str) -> Result<(&str, &str), LineError> {
    let Some(end) = scan::find_call_end(after) else {
        return err("truncated call: no closing `)` for the argument list");
    };
    let tail = after[end + 1..].trim_start_matches(' ');
    let Some(ret) = tail.strip_prefix('=') else {
        return err("no ` = ` after the argument list");
    };
    let ret = ret.trim();
    if ret.is_empty() {
        return err("empty return value");
    }
    Ok((&after[..end], ret))
}

fn exit_line(r: &str) -> Result<Body<'_>, LineError> {
    let Some(r) = r.strip_suffix(" +++") else {
        return err("unterminated `+++` line");
    };
    if let Some(code) = r.strip_prefix("exited with ") {
        return match code.trim().parse() {
            Ok(c) => Ok(Body::Exited(c)),
            Err(_) => err("bad exit code"),
        };
    }
    if r.starts_with("killed by ") {
        return Ok(Body::Killed);
    }
    if let Some(p) = r.strip_prefix("superseded by execve in pid ") {
        return match p.trim().parse() {
            Ok(pid) => Ok(Body::Superseded(pid)),
            Err(_) => err("bad pid in `superseded` line"),
        };
    }
    err("unknown `+++` line")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names_and_relative_times() {
        // -Y: the command name after the task id; -r with -t/-tt/-ttt: `(+ REL)`.
        for line in [
            "12345<sh> close(3) = 0",
            "[pid 12345<sh>] close(3) = 0",
            "[pid 12345<a b>c>] close(3) = 0",
            "12345 12:00:00.000001 (+     0.000010) close(3) = 0",
            "12345<sh> 1795313722.370745 (+     0.000010) close(3) = 0",
        ] {
            let l = parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(l.tid, Some(12345), "{line}");
            assert!(
                matches!(l.body, Body::Complete { name: "close", .. }),
                "{line}"
            );
        }
        assert!(parse_line("[pid 12345<sh] close(3) = 0").is_err());
        assert!(parse_line("[pid x] close(3) = 0").is_err());
    }

    #[test]
    fn prefixes_and_timestamps() {
        let l = parse_line("10700 1795313722.370745 close(3</x>) = 0 <0.000079>").unwrap();
        assert_eq!(l.tid, Some(10700));
        assert_eq!(
            l.body,
            Body::Complete {
                name: "close",
                args: "3</x>",
                ret: "0"
            }
        );
        let l = parse_line("[pid  16671] close(3) = 0").unwrap();
        assert_eq!(l.tid, Some(16671));
        let l = parse_line("12:34:56.123456 close(3) = 0").unwrap();
        assert_eq!(l.tid, None);
        assert!(matches!(l.body, Body::Complete { name: "close", .. }));
        let l = parse_line("close(3)                          = 0").unwrap();
        assert!(matches!(l.body, Body::Complete { ret: "0", .. }));
        // -i (instruction pointer) and -n (syscall number), alone or together.
        for line in [
            "6904  [00007f4a6d2d2c47] close(3) = 0",
            "7132  [   3] close(3) = 0",
            "6904  12:34:56 [00007f4a6d2d2c47] [   3] close(3) = 0",
            "[00007f4a6d2d2c47] close(3) = 0",
        ] {
            let l = parse_line(line).unwrap();
            assert!(
                matches!(
                    l.body,
                    Body::Complete {
                        name: "close",
                        ret: "0",
                        ..
                    }
                ),
                "{line}"
            );
        }
        let l = parse_line("6912  [????????????????] +++ exited with 0 +++").unwrap();
        assert_eq!(l.tid, Some(6912));
        assert!(!matches!(l.body, Body::Complete { .. }));
        assert!(parse_line("6904  [pid 3] close(3) = 0").is_err());
    }

    #[test]
    fn bodies() {
        assert_eq!(
            parse_line("1 wait4(20234,  <unfinished ...>").unwrap().body,
            Body::Unfinished {
                name: "wait4",
                partial: "20234, "
            }
        );
        assert_eq!(
            parse_line("1 <... epoll_wait resumed> <unfinished ...>) = ?")
                .unwrap()
                .body,
            Body::Resumed {
                name: "epoll_wait",
                rest: " <unfinished ...>) = ?"
            }
        );
        assert_eq!(
            parse_line("1 +++ superseded by execve in pid 7 +++")
                .unwrap()
                .body,
            Body::Superseded(7)
        );
        assert_eq!(
            parse_line("1 +++ killed by SIGSEGV (core dumped) +++")
                .unwrap()
                .body,
            Body::Killed
        );
        assert_eq!(
            parse_line("strace: Process 16671 attached").unwrap().body,
            Body::Notice(Some(16671))
        );
        assert!(parse_line("1 openat(AT_FDCWD, \"/etc/hos").is_err());
        assert!(parse_line("1 openat(AT_FDCWD, \"/x\", 0)").is_err());
        assert!(parse_line("garbage").is_err());
    }
}

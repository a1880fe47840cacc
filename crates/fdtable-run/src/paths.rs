//! The paths that name descriptors: `/dev/fd/N`, `/dev/stdin` (and stdout, stderr),
//! `/proc/self/fd/N`, `/proc/thread-self/fd/N`, `/proc/<pid>/fd/N`,
//! `/proc/<pid>/task/<tid>/fd/N`, the `fdinfo` twins, and those directories themselves.
//!
//! A path that names a descriptor is rewritten to the real descriptor's path before the
//! kernel sees it; a path that names one of the directories is left alone, and the
//! descriptor it opens is marked so that listing it lists the program's descriptors.
//!
//! Only the spellings above are recognised, after collapsing repeated slashes and `.`
//! components; a path that reaches /proc/self/fd through `..` or another symbolic link is
//! not (see docs/RUN.md).

/// Whose descriptor table a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose {
    /// `/proc/self`, `/dev/fd`: the calling process (its thread-group leader's table).
    SelfProc,
    /// `/proc/thread-self`: the calling thread's table.
    ThreadSelf,
    /// `/proc/<pid>`.
    Pid(i32),
    /// `/proc/<pid>/task/<tid>`.
    Task(i32, i32),
}

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named<'a> {
    /// Nothing this module knows.
    Other,
    /// Descriptor `fd` of `whose` (`info`: in `fdinfo`), followed by `rest` (`""` or
    /// `"/..."`).
    Fd {
        /// Whose table.
        whose: Whose,
        /// `fdinfo` rather than `fd`.
        info: bool,
        /// The descriptor number.
        fd: u32,
        /// What follows the number.
        rest: &'a [u8],
    },
    /// The directory `fd` (or `fdinfo`) of `whose`.
    Dir {
        /// Whose table.
        whose: Whose,
        /// `fdinfo` rather than `fd`.
        info: bool,
    },
}

/// Collapses `//` and `/./`; keeps a trailing slash (it asks for a directory) and
/// everything else.
pub fn normalize(p: &[u8]) -> Vec<u8> {
    let absolute = p.first() == Some(&b'/');
    let trailing = p.len() > 1 && (p.ends_with(b"/") || p.ends_with(b"/."));
    let mut out: Vec<u8> = Vec::with_capacity(p.len());
    if absolute {
        out.push(b'/');
    }
    for comp in p.split(|&b| b == b'/') {
        if comp.is_empty() || comp == b"." {
            continue;
        }
        if !out.is_empty() && *out.last().unwrap() != b'/' {
            out.push(b'/');
        }
        out.extend_from_slice(comp);
    }
    if trailing && out.last() != Some(&b'/') {
        out.push(b'/');
    }
    out
}

/// A descriptor number as procfs's `name_to_int` accepts it: decimal digits, no leading
/// zero, at most `u32::MAX`... and below `INT_MAX` in practice.
pub fn parse_fd(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 10 || (s.len() > 1 && s[0] == b'0') {
        return None;
    }
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse::<u32>().ok()
}

fn parse_pid(s: &[u8]) -> Option<i32> {
    parse_fd(s).and_then(|v| i32::try_from(v).ok())
}

/// What the (normalized) absolute path `p` names.
pub fn classify(p: &[u8]) -> Named<'_> {
    // The standard streams are symbolic links to /proc/self/fd/0..2.
    let std = match p {
        b"/dev/stdin" => Some(0),
        b"/dev/stdout" => Some(1),
        b"/dev/stderr" => Some(2),
        _ => None,
    };
    if let Some(fd) = std {
        return Named::Fd {
            whose: Whose::SelfProc,
            info: false,
            fd,
            rest: b"",
        };
    }
    let (whose, tail) = if let Some(t) = p.strip_prefix(b"/dev/fd") {
        // /dev/fd -> /proc/self/fd
        return after_dir(Whose::SelfProc, false, t);
    } else if let Some(t) = p.strip_prefix(b"/proc/self/") {
        (Whose::SelfProc, t)
    } else if let Some(t) = p.strip_prefix(b"/proc/thread-self/") {
        (Whose::ThreadSelf, t)
    } else if let Some(t) = p.strip_prefix(b"/proc/") {
        let (pid, t) = split_first(t);
        let Some(pid) = parse_pid(pid) else {
            return Named::Other;
        };
        if let Some(t) = t.strip_prefix(b"task/") {
            let (tid, t) = split_first(t);
            match parse_pid(tid) {
                Some(tid) => (Whose::Task(pid, tid), t),
                None => return Named::Other,
            }
        } else {
            (Whose::Pid(pid), t)
        }
    } else {
        return Named::Other;
    };
    if let Some(t) = tail.strip_prefix(b"fdinfo") {
        after_dir(whose, true, t)
    } else if let Some(t) = tail.strip_prefix(b"fd") {
        after_dir(whose, false, t)
    } else {
        Named::Other
    }
}

/// `t` is what follows `.../fd` or `.../fdinfo`.
fn after_dir(whose: Whose, info: bool, t: &[u8]) -> Named<'_> {
    if t.is_empty() || t == b"/" {
        return Named::Dir { whose, info };
    }
    let Some(t) = t.strip_prefix(b"/") else {
        return Named::Other;
    };
    let (num, _) = split_first(t);
    match parse_fd(num) {
        Some(fd) => Named::Fd {
            whose,
            info,
            fd,
            rest: &t[num.len()..],
        },
        None => Named::Other,
    }
}

/// Splits at the first `/`: (component, what follows the slash).
fn split_first(t: &[u8]) -> (&[u8], &[u8]) {
    match t.iter().position(|&b| b == b'/') {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, b""),
    }
}

/// The path of descriptor `real` in the same table as `whose` names, followed by `rest`.
pub fn real_path(whose: Whose, info: bool, real: i32, rest: &[u8]) -> Vec<u8> {
    let dir = if info { "fdinfo" } else { "fd" };
    let head = match whose {
        Whose::SelfProc => format!("/proc/self/{dir}/{real}"),
        Whose::ThreadSelf => format!("/proc/thread-self/{dir}/{real}"),
        Whose::Pid(p) => format!("/proc/{p}/{dir}/{real}"),
        Whose::Task(p, t) => format!("/proc/{p}/task/{t}/{dir}/{real}"),
    };
    let mut v = head.into_bytes();
    v.extend_from_slice(rest);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd(whose: Whose, info: bool, fd: u32, rest: &[u8]) -> Named<'_> {
        Named::Fd {
            whose,
            info,
            fd,
            rest,
        }
    }

    #[test]
    fn names() {
        use Whose::*;
        assert_eq!(classify(b"/dev/fd/63"), fd(SelfProc, false, 63, b""));
        assert_eq!(
            classify(b"/dev/fd/3/sub/x"),
            fd(SelfProc, false, 3, b"/sub/x")
        );
        assert_eq!(classify(b"/dev/stderr"), fd(SelfProc, false, 2, b""));
        assert_eq!(classify(b"/proc/self/fd/0"), fd(SelfProc, false, 0, b""));
        assert_eq!(classify(b"/proc/self/fdinfo/7"), fd(SelfProc, true, 7, b""));
        assert_eq!(
            classify(b"/proc/thread-self/fd/1"),
            fd(ThreadSelf, false, 1, b"")
        );
        assert_eq!(classify(b"/proc/42/fd/9"), fd(Pid(42), false, 9, b""));
        assert_eq!(
            classify(b"/proc/42/task/43/fd/9"),
            fd(Task(42, 43), false, 9, b"")
        );
        assert_eq!(
            classify(b"/dev/fd"),
            Named::Dir {
                whose: SelfProc,
                info: false
            }
        );
        assert_eq!(
            classify(b"/proc/self/fd/"),
            Named::Dir {
                whose: SelfProc,
                info: false
            }
        );
        assert_eq!(
            classify(b"/proc/7/fdinfo"),
            Named::Dir {
                whose: Pid(7),
                info: true
            }
        );
        for other in [
            &b"/dev/fdx"[..],
            b"/dev/null",
            b"/proc/self/fd/03",
            b"/proc/self/fd/x",
            b"/proc/self/fds",
            b"/proc/self/maps",
            b"/proc/abc/fd/1",
            b"/proc/self/fd/99999999999",
            b"relative/fd/1",
            b"/proc/self/fdinfo7",
        ] {
            assert_eq!(
                classify(other),
                Named::Other,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn normalizes_and_rewrites() {
        assert_eq!(normalize(b"//dev///fd/./3/"), b"/dev/fd/3/");
        assert_eq!(normalize(b"/dev/fd/3/."), b"/dev/fd/3/");
        assert_eq!(classify(b"/dev/fd/3/"), fd(Whose::SelfProc, false, 3, b"/"));
        assert_eq!(normalize(b"/proc/self/./fd"), b"/proc/self/fd");
        assert_eq!(normalize(b"a//b"), b"a/b");
        assert_eq!(normalize(b"./a"), b"a");
        assert_eq!(normalize(b"/"), b"/");
        assert_eq!(
            real_path(Whose::SelfProc, false, 20003, b"/x"),
            b"/proc/self/fd/20003/x"
        );
        assert_eq!(
            real_path(Whose::Task(5, 6), true, 7, b""),
            b"/proc/5/task/6/fdinfo/7"
        );
    }
}

//! The paths that name descriptors, and the directories that list them.
//!
//! A path is resolved the way the kernel would walk it, as far as it goes through what this
//! module knows: `.`, `..` and repeated slashes; the symbolic links `/dev/fd`,
//! `/dev/stdin` (`stdout`, `stderr`), `/proc/self` and `/proc/thread-self`; the magic links
//! `/proc/<pid>/cwd` and `root` (read from the tracee's /proc); and the descriptor entries
//! `/proc/<pid>/fd/N`, `/proc/<pid>/task/<tid>/fd/N` and their `fdinfo` twins, whichever
//! spelling reached them. A relative path is resolved from its directory descriptor's or the
//! working directory's path (read from /proc) when one of its components could name a
//! descriptor.
//!
//! A path that reaches a descriptor entry of a traced task is rewritten to the entry of the
//! real descriptor in the same task (`/proc/<task>/fd/<real>`, followed by the rest of the
//! path, itself resolved from where the entry leads); a path that names one of the
//! directories is reported so that the descriptor opened on it lists the program's
//! descriptors. Any other path is left to the kernel as the program wrote it.
//!
//! What this does not see: a symbolic link the program made that points into `/proc` (see
//! docs/RUN.md), and `..` after a symbolic link of the file system (resolved lexically).

/// What the resolver needs from the supervisor.
pub trait Lookup {
    /// The calling task: (thread-group id, thread id).
    fn ids(&self) -> (i32, i32);
    /// Whether `id` is a traced task (whose descriptor table the library holds).
    fn traced(&self, id: i32) -> bool;
    /// The thread-group id of traced task `id`.
    fn tgid_of(&self, id: i32) -> Option<i32>;
    /// The real descriptor of descriptor `fd` in traced task `owner`'s table (a number that
    /// is never open if `fd` is not installed).
    fn real(&self, owner: i32, fd: u32) -> i32;
    /// The target of a link under /proc, as the supervisor reads it (`/proc/<id>/cwd`,
    /// `/proc/<id>/fd/<real>`).
    fn readlink(&self, path: &str) -> Option<Vec<u8>>;
}

/// What a path turned out to name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// The path the kernel gets instead of the program's (`None`: the program's own).
    pub path: Option<Vec<u8>>,
    /// It names the `fd` (or, `true`, `fdinfo`) directory of this traced task.
    pub dir: Option<(i32, bool)>,
}

/// How many links are followed through their targets (the kernel's limit is 40).
const MAX_DEPTH: usize = 8;

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

/// Whether a relative path could reach a descriptor entry or directory, from some
/// directory: one of its components is a number, `fd`, `fdinfo` or a standard stream's
/// name. Only then is the directory it is relative to looked up.
pub fn might_name(rel: &[u8]) -> bool {
    rel.split(|&b| b == b'/').any(|c| {
        (!c.is_empty() && c.iter().all(u8::is_ascii_digit))
            || matches!(c, b"fd" | b"fdinfo" | b"stdin" | b"stdout" | b"stderr")
    })
}

/// Whether an absolute path can be left alone without walking it: it does not start in
/// `/proc` or `/dev` and has no `..` to get there.
fn plainly_elsewhere(p: &[u8]) -> bool {
    let mut comps = p
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".");
    let first = comps.next();
    !matches!(first, Some(b"proc" | b"dev" | b"..")) && !comps.any(|c| c == b"..")
}

fn components(p: &[u8]) -> Vec<Vec<u8>> {
    p.split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(<[u8]>::to_vec)
        .collect()
}

/// Resolves `path` (see the module docs). `base` gives the absolute path of the directory a
/// relative path starts from (asked only when needed); `follow`: the call follows a
/// symbolic link in the last component (`open` without `O_NOFOLLOW`, `stat`; not
/// `readlink`, `lstat`, `unlink`).
pub fn resolve(
    path: &[u8],
    base: impl FnOnce() -> Option<Vec<u8>>,
    follow: bool,
    lk: &impl Lookup,
) -> Resolved {
    if path.is_empty() {
        return Resolved::default();
    }
    let (start, rebased) = if path[0] == b'/' {
        if plainly_elsewhere(path) {
            return Resolved::default();
        }
        (Vec::new(), false)
    } else {
        if !might_name(path) {
            return Resolved::default();
        }
        match base() {
            Some(b) if b.first() == Some(&b'/') => (components(&b), true),
            _ => return Resolved::default(),
        }
    };
    let comps: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
    walk(start, &comps, follow, lk, 0, rebased)
}

/// The task `/proc/<self>` stands for: the thread group's leader, or the caller if the
/// leader is not traced any more.
fn self_id(lk: &impl Lookup) -> i32 {
    let (tgid, tid) = lk.ids();
    if lk.traced(tgid) { tgid } else { tid }
}

fn num(v: i32) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// `/proc/<pid>/X...` or `/proc/<pid>/task/<tid>/X...`: the traced task whose table it is,
/// and what follows (`X...`).
fn proc_task<'a>(st: &'a [Vec<u8>], lk: &impl Lookup) -> Option<(i32, &'a [Vec<u8>])> {
    if st.len() < 2 || st[0] != b"proc" {
        return None;
    }
    let pid = parse_pid(&st[1])?;
    if st.len() >= 4 && st[2] == b"task" {
        let tid = parse_pid(&st[3])?;
        // /proc/<pid>/task/<tid> exists only for a thread of pid.
        (lk.traced(tid) && lk.tgid_of(tid) == Some(pid)).then_some((tid, &st[4..]))
    } else {
        lk.traced(pid).then_some((pid, &st[2..]))
    }
}

/// Expands the symbolic links this module knows, when `st` ends at one.
fn known_link(st: &[Vec<u8>], lk: &impl Lookup) -> Option<Vec<Vec<u8>>> {
    let me = || num(self_id(lk));
    let proc_ = || b"proc".to_vec();
    match st {
        [d, f] if d == b"dev" && f == b"fd" => Some(vec![proc_(), me(), b"fd".to_vec()]),
        [d, s] if d == b"dev" && matches!(&s[..], b"stdin" | b"stdout" | b"stderr") => {
            let n = match &s[..] {
                b"stdin" => b"0",
                b"stdout" => b"1",
                _ => b"2",
            };
            Some(vec![proc_(), me(), b"fd".to_vec(), n.to_vec()])
        }
        [p, s] if p == b"proc" && s == b"self" => Some(vec![proc_(), me()]),
        [p, s] if p == b"proc" && s == b"thread-self" => {
            let (tgid, tid) = lk.ids();
            Some(vec![proc_(), num(tgid), b"task".to_vec(), num(tid)])
        }
        _ => None,
    }
}

fn walk(
    mut st: Vec<Vec<u8>>,
    comps: &[&[u8]],
    follow: bool,
    lk: &impl Lookup,
    depth: usize,
    rewritten: bool,
) -> Resolved {
    let n = comps.len();
    for i in 0..n {
        let c = comps[i];
        match c {
            b"" | b"." => continue,
            b".." => {
                st.pop();
                continue;
            }
            _ => st.push(c.to_vec()),
        }
        // A component followed by anything (a trailing slash included) is followed.
        let follows = follow || i + 1 < n;
        if follows && let Some(new) = known_link(&st, lk) {
            st = new;
        }
        // The working directory and root magic links, read from the tracee's /proc.
        if follows
            && depth < MAX_DEPTH
            && let Some((task, [what])) = proc_task(&st, lk)
            && matches!(&what[..], b"cwd" | b"root")
        {
            let what = String::from_utf8_lossy(what);
            match lk.readlink(&format!("/proc/{task}/{what}")) {
                Some(t) if t.first() == Some(&b'/') => st = components(&t),
                _ => return Resolved::default(),
            }
            continue;
        }
        // A descriptor entry: the real descriptor's, in the same task.
        if let Some((owner, [dir, fd])) = proc_task(&st, lk)
            && matches!(&dir[..], b"fd" | b"fdinfo")
            && let Some(fd) = parse_fd(fd)
        {
            let info = dir == b"fdinfo";
            let real = lk.real(owner, fd);
            let dir = String::from_utf8_lossy(dir);
            let head = format!("/proc/{owner}/{dir}/{real}");
            let rest = &comps[i + 1..];
            if !info
                && depth < MAX_DEPTH
                && rest.iter().any(|c| !c.is_empty() && *c != b".")
                && let Some(t) = lk.readlink(&head)
                && t.first() == Some(&b'/')
            {
                // The rest is walked from where the entry leads, in case it names another
                // entry (`/proc/self/fd/<dir of /proc/self>/fd/3`).
                let r = walk(components(&t), rest, follow, lk, depth + 1, true);
                if r.path.is_some() {
                    return r;
                }
            }
            let mut p = head.into_bytes();
            for c in rest {
                p.push(b'/');
                p.extend_from_slice(c);
            }
            return Resolved {
                path: Some(p),
                dir: None,
            };
        }
    }
    if let Some((owner, [dir])) = proc_task(&st, lk)
        && matches!(&dir[..], b"fd" | b"fdinfo")
    {
        let info = dir == b"fdinfo";
        let dir = String::from_utf8_lossy(dir);
        return Resolved {
            path: rewritten.then(|| format!("/proc/{owner}/{dir}").into_bytes()),
            dir: Some((owner, info)),
        };
    }
    Resolved::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Process 100 (threads 100, 101), process 200 (thread 200); fd N is real N + 1000.
    struct Fake {
        me: (i32, i32),
        links: HashMap<String, &'static str>,
    }

    impl Lookup for Fake {
        fn ids(&self) -> (i32, i32) {
            self.me
        }
        fn traced(&self, id: i32) -> bool {
            matches!(id, 100 | 101 | 200)
        }
        fn tgid_of(&self, id: i32) -> Option<i32> {
            match id {
                100 | 101 => Some(100),
                200 => Some(200),
                _ => None,
            }
        }
        fn real(&self, _owner: i32, fd: u32) -> i32 {
            fd as i32 + 1000
        }
        fn readlink(&self, path: &str) -> Option<Vec<u8>> {
            self.links.get(path).map(|t| t.as_bytes().to_vec())
        }
    }

    fn fake() -> Fake {
        let mut links = HashMap::new();
        links.insert("/proc/101/cwd".to_string(), "/proc/100");
        links.insert("/proc/100/cwd".to_string(), "/home/u");
        links.insert("/proc/100/fd/1005".to_string(), "/proc/100");
        links.insert("/proc/100/fd/1006".to_string(), "/tmp/dir");
        links.insert("/proc/100/root".to_string(), "/");
        Fake {
            me: (100, 101),
            links,
        }
    }

    fn r(p: &str, follow: bool) -> Resolved {
        r_from(p, None, follow)
    }

    fn r_from(p: &str, base: Option<&str>, follow: bool) -> Resolved {
        resolve(
            p.as_bytes(),
            || base.map(|b| b.as_bytes().to_vec()),
            follow,
            &fake(),
        )
    }

    fn to(p: &str) -> Resolved {
        Resolved {
            path: Some(p.as_bytes().to_vec()),
            dir: None,
        }
    }

    fn dir(owner: i32, info: bool, path: Option<&str>) -> Resolved {
        Resolved {
            path: path.map(|p| p.as_bytes().to_vec()),
            dir: Some((owner, info)),
        }
    }

    #[test]
    fn every_spelling_of_a_descriptor_entry() {
        for p in [
            "/dev/fd/3",
            "/proc/self/fd/3",
            "//proc///self/./fd/3",
            "/proc/100/fd/3",
            "/proc/self/fd/../fd/3",
            "/proc/thread-self/../../fd/3",
            "/dev/../proc/self/fd/3",
            "/proc/self/cwd/../../proc/100/fd/3",
            "/proc/self/root/proc/self/fd/3",
            "/proc/100/root/dev/fd/3",
        ] {
            assert_eq!(r(p, true), to("/proc/100/fd/1003"), "{p}");
        }
        for p in [
            "/proc/thread-self/fd/3",
            "/proc/self/task/101/fd/3",
            "/proc/100/task/101/fd/3",
        ] {
            assert_eq!(r(p, true), to("/proc/101/fd/1003"), "{p}");
        }
        assert_eq!(r("/proc/200/fd/7", true), to("/proc/200/fd/1007"));
        assert_eq!(r("/proc/self/fdinfo/3", true), to("/proc/100/fdinfo/1003"));
        assert_eq!(
            r("/proc/thread-self/fdinfo/3", true),
            to("/proc/101/fdinfo/1003")
        );
        // What follows an entry is kept as it is, unless it names another entry.
        assert_eq!(r("/dev/fd/3/sub/x", true), to("/proc/100/fd/1003/sub/x"));
        assert_eq!(r("/proc/self/fd/3/", true), to("/proc/100/fd/1003/"));
        assert_eq!(
            r("/proc/self/fd/6/x/..", true),
            to("/proc/100/fd/1006/x/..")
        );
        // `..` after an entry is its target's parent, not the fd directory.
        assert_eq!(
            r("/proc/self/fd/4/../3", true),
            to("/proc/100/fd/1004/../3")
        );
        assert_eq!(r("/proc/self/fd/5/fd/3", true), to("/proc/100/fd/1003"));
        // The entries themselves, whether or not the call follows them.
        assert_eq!(r("/proc/self/fd/3", false), to("/proc/100/fd/1003"));
    }

    #[test]
    fn the_standard_streams_are_links_to_entries() {
        assert_eq!(r("/dev/stdin", true), to("/proc/100/fd/1000"));
        assert_eq!(r("/dev/stderr", true), to("/proc/100/fd/1002"));
        assert_eq!(r("/dev/stdout/", false), to("/proc/100/fd/1001/"));
        // readlink, lstat: the link itself, as the program wrote it.
        assert_eq!(r("/dev/stdin", false), Resolved::default());
        assert_eq!(r("/dev/fd", false), Resolved::default());
        assert_eq!(r("/proc/self", false), Resolved::default());
    }

    #[test]
    fn directories() {
        for p in [
            "/dev/fd",
            "/proc/self/fd/",
            "/proc/100/fd",
            "/proc/self/fd/../fd",
        ] {
            assert_eq!(r(p, true), dir(100, false, None), "{p}");
        }
        for p in [
            "/proc/thread-self/fd",
            "/proc/self/task/101/fd",
            "/proc/100/task/101/fd/",
        ] {
            assert_eq!(r(p, true), dir(101, false, None), "{p}");
        }
        assert_eq!(r("/proc/self/fdinfo", true), dir(100, true, None));
        // Reached through an entry: the kernel needs the real path.
        assert_eq!(
            r("/proc/self/fd/5/fd", true),
            dir(100, false, Some("/proc/100/fd"))
        );
    }

    #[test]
    fn relative_paths_start_where_the_directory_is() {
        assert_eq!(
            r_from("fd/3", Some("/proc/100"), true),
            to("/proc/100/fd/1003")
        );
        assert_eq!(
            r_from("3", Some("/proc/200/fd"), true),
            to("/proc/200/fd/1003")
        );
        assert_eq!(
            r_from("fd", Some("/proc/100"), true),
            dir(100, false, Some("/proc/100/fd"))
        );
        assert_eq!(
            r_from("../fd/3", Some("/proc/100/task"), true),
            to("/proc/100/fd/1003")
        );
        assert_eq!(r_from("stdin", Some("/dev"), true), to("/proc/100/fd/1000"));
        // Nothing that could name a descriptor: the directory is not even looked up.
        let looked = std::cell::Cell::new(false);
        let res = resolve(
            b"src/main.rs",
            || {
                looked.set(true);
                None
            },
            true,
            &fake(),
        );
        assert_eq!(res, Resolved::default());
        assert!(!looked.get());
        assert_eq!(r_from("a/b", Some("/proc/100"), true), Resolved::default());
        assert_eq!(r_from("3", Some("/home/u"), true), Resolved::default());
    }

    #[test]
    fn everything_else_is_left_alone() {
        for p in [
            "/dev/fdx",
            "/dev/null",
            "/proc/self/fd/03",
            "/proc/self/fd/x",
            "/proc/self/fds",
            "/proc/self/maps",
            "/proc/abc/fd/1",
            "/proc/300/fd/1",
            "/proc/200/task/101/fd/1",
            "/proc/self/fd/99999999999",
            "/proc/self/fdinfo7",
            "/usr/lib/x",
            "/proc/self/exe",
        ] {
            assert_eq!(r(p, true), Resolved::default(), "{p}");
        }
        assert!(plainly_elsewhere(b"/usr/lib/x"));
        assert!(!plainly_elsewhere(b"/usr/../proc/self/fd/3"));
        assert!(!plainly_elsewhere(b"//proc/x"));
        assert!(might_name(b"fd") && might_name(b"a/12/b") && might_name(b"stdin"));
        assert!(!might_name(b"a/b1/c") && !might_name(b"") && !might_name(b"fdx"));
    }
}

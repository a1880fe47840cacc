//! Syscall names the replay knows, by what they can do to a descriptor table: read from the
//! catalogue of `fdtable-syscalls`, which `fdtable run` reads too.
//!
//! Calls that never change a table ([`is_known_plain`]; anything not here and not decoded by
//! [`crate::decode`] is *unsupported*, because it might create descriptors the replay cannot
//! see), calls that may change one ([`may_touch_table`]: while one is in flight on a shared
//! table, the table's history is kept for the search), and where plain calls take descriptor
//! arguments, how the kernel looks them up and what their EBADF means ([`fd_call`], for the
//! checks of [`crate::engine::args`]).

use crate::decode::{Ebadf, Lookup};
use fdtable_syscalls::{self as cat, Effect};
use std::collections::HashMap;
use std::sync::OnceLock;

/// What the catalogue says about each name the replay may meet, built once: the x86_64 calls,
/// the other spellings strace prints (`fcntl64`, `_llseek`, ...), and `socketcall` and
/// `unsupported`, which strace prints for logs of other ABIs and for calls it cannot decode.
fn index() -> &'static HashMap<&'static str, Option<&'static cat::Syscall>> {
    static I: OnceLock<HashMap<&'static str, Option<&'static cat::Syscall>>> = OnceLock::new();
    I.get_or_init(|| {
        let mut m: HashMap<_, _> = cat::SYSCALLS.iter().map(|s| (s.name, Some(s))).collect();
        for &(alias, name) in cat::ALIASES {
            m.insert(alias, cat::by_name(name));
        }
        m.insert("socketcall", None);
        m.insert("unsupported", None);
        m
    })
}

/// Whether `name` is a known call with no table effect the replay decodes (every call the
/// catalogue knows that creates nothing: the calls with table effects are decoded before).
pub fn is_known_plain(name: &str) -> bool {
    match index().get(name) {
        Some(None) => true,
        Some(Some(s)) => !matches!(s.effect, Effect::Create(_)),
        None => false,
    }
}

/// The name of a call strace printed by number (`syscall_0x1c3`): strace 6.1 knows the
/// x86_64 calls up to 450; the catalogue names the later ones.
pub fn canonical(name: &str) -> &str {
    let Some(hex) = name.strip_prefix("syscall_0x") else {
        return name;
    };
    match u64::from_str_radix(hex, 16) {
        Ok(n) if n >= 451 => cat::by_nr(n).map_or(name, |s| s.name),
        _ => name,
    }
}

/// Whether a call of this name can change a table (it may have to be pulled forward by the
/// search, and while it is in flight the table's history must be kept): the catalogue's
/// creating, closing and duplicating calls, `fcntl`, `ioctl`, `recvmsg`, `recvmmsg`, `clone`
/// and `clone3`.
pub fn may_touch_table(name: &str) -> bool {
    let Some(Some(s)) = index().get(canonical(name)) else {
        return false;
    };
    matches!(
        s.effect,
        Effect::Create(_)
            | Effect::CreateIf(..)
            | Effect::Close
            | Effect::CloseRange
            | Effect::Dup
            | Effect::Dup2
            | Effect::Dup3
            | Effect::Fcntl
            | Effect::Ioctl
            | Effect::Recv { .. }
            | Effect::Clone
            | Effect::Clone3
    ) && s.name != "getsockopt"
}

/// What a call in flight may do to its table before it returns, for deciding whether a
/// disagreement it overlaps can be its doing: whether it may close, replace or install at a
/// number of its choosing (dup2, F_DUPFD), and how many numbers it may take or hold meanwhile
/// (`None`: no bound). Conservative: a call the catalogue does not know may do anything.
pub fn in_flight_power(name: &str) -> (bool, Option<u32>) {
    let Some(Some(s)) = index().get(canonical(name)) else {
        return (true, None);
    };
    match s.effect {
        Effect::None => (matches!(s.name, "exit" | "exit_group"), Some(0)),
        // Two numbers at most for the pairs (pipe2, socketpair); one for the others.
        Effect::Create(_) | Effect::CreateIf(..) => (false, Some(2)),
        Effect::Close | Effect::CloseRange => (true, Some(0)),
        Effect::Dup => (false, Some(1)),
        // F_DUPFD installs at any number it is given: like dup2 for what it may explain.
        Effect::Fcntl => (true, Some(1)),
        Effect::Dup2 | Effect::Dup3 => (true, Some(1)),
        // A pidfd.
        Effect::Clone | Effect::Clone3 | Effect::Fork | Effect::Vfork => (false, Some(1)),
        Effect::Ioctl | Effect::Recv { .. } => (false, None),
        _ => (true, None),
    }
}

/// Positions of descriptor arguments of plain calls (P15). `*at` calls are handled by
/// `decode::uses_at`: their dirfd counts only with a relative or empty path.
pub fn fd_positions(name: &str) -> Option<&'static [usize]> {
    fd_call(name).map(|c| c.pos)
}

/// What a plain call does with its descriptor arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdCall {
    /// Positions of the descriptor arguments (100 + i: a dirfd at i, see `decode::uses_at`).
    pub pos: &'static [usize],
    /// How the kernel looks them up.
    pub lookup: Lookup,
    /// What EBADF means.
    pub ebadf: Ebadf,
    /// Whether every errno outside [`crate::decode::EARLY`] comes after the lookups (so such a
    /// failure proves the descriptors were found).
    pub proves: bool,
}

/// The descriptor arguments of plain calls and how the kernel treats them: the catalogue's
/// `Uses` of every call whose EBADF it models.
pub fn fd_call(name: &str) -> Option<FdCall> {
    static CALLS: OnceLock<HashMap<&'static str, FdCall>> = OnceLock::new();
    let calls = CALLS.get_or_init(|| {
        let mut m = HashMap::new();
        for (&name, s) in index() {
            let Some(s) = s else { continue };
            let ebadf = match s.uses.ebadf {
                cat::Ebadf::Strict => Ebadf::Strict,
                cat::Ebadf::Other(why) => Ebadf::Other(why),
                cat::Ebadf::NotModelled => continue,
            };
            let pos: Vec<usize> = s
                .uses
                .fds
                .iter()
                .map(|f| f.arg as usize + if f.dirfd { 100 } else { 0 })
                .collect();
            let lookup = match s.uses.lookup {
                cat::Lookup::Raw => Lookup::Raw,
                cat::Lookup::NoPath => Lookup::NoPath,
            };
            m.insert(
                name,
                FdCall {
                    pos: Box::leak(pos.into_boxed_slice()),
                    lookup,
                    ebadf,
                    proves: s.uses.proves,
                },
            );
        }
        m
    });
    calls.get(name).copied()
}

pub use cat::{ACCESS_MODE, DRIVER, FCNTL_OTHER, INNER_FD, IO_URING, NOT_PIDFD, UNMODELLED};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert!(is_known_plain("futex") && is_known_plain("mmap"));
        assert!(!is_known_plain("openat") && !is_known_plain("syscall_0x1b8"));
        assert!(may_touch_table("openat") && may_touch_table("recvmsg"));
        assert!(!may_touch_table("read"));
        assert_eq!(fd_positions("epoll_ctl"), Some(&[0, 2][..]));
        let fstat = fd_call("fstat").unwrap();
        assert_eq!((fstat.lookup, fstat.ebadf), (Lookup::Raw, Ebadf::Strict));
        let read = fd_call("read").unwrap();
        assert_eq!(
            (read.lookup, read.ebadf, read.proves),
            (Lookup::NoPath, Ebadf::Other(ACCESS_MODE), true)
        );
        assert!(!fd_call("splice").unwrap().proves);
        assert_eq!(fd_call("renameat2").unwrap().pos, &[100, 102]);
        assert_eq!(canonical("syscall_0x1c3"), "cachestat");
        assert_eq!(canonical("syscall_0x1d3"), "open_tree_attr");
        assert_eq!(canonical("syscall_0x1b8"), "syscall_0x1b8");
        assert!(may_touch_table("syscall_0x1d3") && is_known_plain(canonical("syscall_0x1d5")));
    }
}

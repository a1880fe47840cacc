//! Errors are the kernel's errnos, with the kernel's numbers on every host.
//!
//! The values are Linux's (`include/uapi/asm-generic/errno-base.h` and `errno.h`, the numbering
//! of x86, Arm, RISC-V and most other architectures), not the host's: a sandbox on macOS or a
//! kernel with no libc at all gets `EBADF == 9` and `EMFILE == 24` just as Linux programs
//! expect. With the `std` feature, [`Errno`] converts to and from [`std::io::Error`], mapping
//! to the host's own numbers where the host is not Linux.

use core::fmt;

mod table;

#[cfg(feature = "std")]
mod host;

/// A Linux errno value (always positive). The C ABI returns it negated, as the kernel does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Errno(i32);

impl Errno {
    /// `EWOULDBLOCK`, the same value as [`Errno::EAGAIN`] on Linux.
    pub const EWOULDBLOCK: Errno = Errno::EAGAIN;
    /// `EDEADLOCK`, the same value as [`Errno::EDEADLK`] on Linux.
    pub const EDEADLOCK: Errno = Errno::EDEADLK;
    /// `ENOTSUP`, the same value as [`Errno::EOPNOTSUPP`] on Linux.
    pub const ENOTSUP: Errno = Errno::EOPNOTSUPP;

    /// Wraps a raw Linux errno value. Values outside `1..=4095` (the kernel's `MAX_ERRNO`
    /// range) become `EINVAL`.
    pub const fn new(raw: i32) -> Errno {
        if raw > 0 && raw < 4096 {
            Errno(raw)
        } else {
            Errno::EINVAL
        }
    }

    /// The positive errno value.
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// The kernel's return convention: `-errno`.
    pub const fn neg(self) -> i32 {
        -self.0
    }

    /// The symbolic name (`"EBADF"`), or `None` for a value this crate does not name.
    pub fn name(self) -> Option<&'static str> {
        table::TABLE
            .binary_search_by_key(&self.0, |e| e.0)
            .ok()
            .map(|i| table::TABLE[i].1)
    }

    /// The message `strerror(3)` gives for it on Linux (`"Bad file descriptor"`), or `None`
    /// for a value this crate does not name.
    pub fn description(self) -> Option<&'static str> {
        table::TABLE
            .binary_search_by_key(&self.0, |e| e.0)
            .ok()
            .map(|i| table::TABLE[i].2)
    }

    /// Looks an errno up by its symbolic name (`"EBADF"`; the aliases `EWOULDBLOCK`,
    /// `EDEADLOCK` and `ENOTSUP` too).
    pub fn from_name(name: &str) -> Option<Errno> {
        match name {
            "EWOULDBLOCK" => return Some(Errno::EWOULDBLOCK),
            "EDEADLOCK" => return Some(Errno::EDEADLOCK),
            "ENOTSUP" => return Some(Errno::ENOTSUP),
            _ => {}
        }
        table::TABLE
            .iter()
            .find(|e| e.1 == name)
            .map(|e| Errno(e.0))
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Errno({})", self.0),
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name(), self.description()) {
            (Some(n), Some(d)) => write!(f, "{n} ({d})"),
            _ => write!(f, "errno {}", self.0),
        }
    }
}

impl core::error::Error for Errno {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(Errno::EBADF.name(), Some("EBADF"));
        assert_eq!(Errno::EBADF.raw(), 9);
        assert_eq!(Errno::EMFILE.raw(), 24);
        assert_eq!(Errno::from_name("EMFILE"), Some(Errno::EMFILE));
        assert_eq!(Errno::from_name("EWOULDBLOCK"), Some(Errno::EAGAIN));
        assert_eq!(Errno::from_name("ENOPE"), None);
        assert_eq!(Errno::EBUSY.neg(), -16);
        assert_eq!(Errno::new(-3), Errno::EINVAL);
        assert_eq!(Errno::new(4096), Errno::EINVAL);
        assert_eq!(Errno::new(600).name(), None);
        assert_eq!(format!("{:?}", Errno::EINVAL), "EINVAL");
        assert_eq!(format!("{}", Errno::EBADF), "EBADF (Bad file descriptor)");
        assert_eq!(format!("{:?}", Errno::new(600)), "Errno(600)");
    }

    #[test]
    fn table_is_sorted_and_unique() {
        for w in table::TABLE.windows(2) {
            assert!(w[0].0 < w[1].0, "{:?} then {:?}", w[0], w[1]);
        }
        for e in table::TABLE {
            assert_eq!(Errno::from_name(e.1), Some(Errno(e.0)));
        }
    }

    /// On a Linux host the numbers are libc's own (x86_64 and every asm-generic architecture).
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn numbers_match_the_linux_host() {
        macro_rules! check {
            ($($n:ident),* $(,)?) => { $( assert_eq!(Errno::$n.raw(), libc::$n, stringify!($n)); )* };
        }
        table::linux_errno_names!(check);
        assert_eq!(table::TABLE.len(), 131);
    }
}

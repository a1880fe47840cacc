//! The errno numbers of Unix hosts that are not Linux, mapped to Linux's by name.
//!
//! Each table lists every errno the [`libc`](https://docs.rs/libc) crate (0.2.191) defines for
//! that host and Linux also has (`NAME = host number`), and the host's aliases of Linux errnos
//! (`ENOTSUP = 45 => EOPNOTSUPP` on macOS, where the two differ; `ENOATTR`, which Linux spells
//! `ENODATA`). The tables are plain data, compiled and unit-tested on every host; on the host
//! they describe, each number is also checked against the libc crate's constant at compile
//! time. Host errnos Linux lacks (`EAUTH`, `ENOTCAPABLE`, ...) are in no table: they map to
//! nothing, and the caller falls back to the error's [`std::io::ErrorKind`].

// Every host uses one table at most; all are compiled everywhere so that the tests check
// them all on any host.
#![allow(dead_code)]

use crate::Errno;

/// A host's numbering: slices searched in order, each entry `(host number, Linux errno)`.
/// An errno's host number is its first entry, so names come before aliases.
pub(crate) struct Numbering(pub(crate) &'static [&'static [(i32, Errno)]]);

impl Numbering {
    /// The Linux errno of a host number, if the host's errno has a Linux counterpart.
    pub(crate) fn linux_errno(&self, raw: i32) -> Option<Errno> {
        self.entries().find(|&(n, _)| n == raw).map(|(_, e)| e)
    }

    /// The host number of a Linux errno, if the host defines it.
    pub(crate) fn host_number(&self, e: Errno) -> Option<i32> {
        self.entries().find(|&(_, l)| l == e).map(|(n, _)| n)
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (i32, Errno)> {
        self.0.iter().flat_map(|part| part.iter().copied())
    }
}

/// macOS, iOS and the other Darwin systems.
pub(crate) const APPLE: Numbering = Numbering(&[BSD_44, APPLE_ONLY]);
/// FreeBSD.
pub(crate) const FREEBSD: Numbering = Numbering(&[BSD_44, FREEBSD_ONLY]);
/// DragonFly BSD.
pub(crate) const DRAGONFLY: Numbering = Numbering(&[BSD_44, DRAGONFLY_ONLY]);
/// OpenBSD.
pub(crate) const OPENBSD: Numbering = Numbering(&[BSD_44, OPENBSD_ONLY]);
/// NetBSD.
pub(crate) const NETBSD: Numbering = Numbering(&[BSD_44, NETBSD_ONLY]);
/// illumos and Solaris (System V numbering: the same as Linux's up to `ERANGE`).
pub(crate) const SOLARISH: Numbering = Numbering(&[SOLARISH_ALL]);

/// `NAME = number` or `ALIAS = number => LINUX_NAME`: a table, and on the hosts it describes,
/// a compile-time check of every number against the libc crate.
macro_rules! errnos {
    (
        $(#[$doc:meta])* $table:ident, on $host:meta,
        { $($name:ident = $num:literal $(=> $linux:ident)?),* $(,)? }
    ) => {
        $(#[$doc])*
        pub(crate) const $table: &[(i32, Errno)] =
            &[$(($num, errnos!(@linux $name $($linux)?))),*];

        #[cfg(all(feature = "std", $host))]
        const _: () = {
            $( assert!(libc::$name == $num, concat!("libc's ", stringify!($name), " differs")); )*
        };
    };
    (@linux $name:ident) => { Errno::$name };
    (@linux $name:ident $linux:ident) => { Errno::$linux };
}

errnos!(
    /// The 4.4BSD numbers every BSD and Darwin keeps (up to `ENOSYS`, 78, less those without a
    /// Linux counterpart: `EPROCLIM`, the Sun RPC errors, and 45, `EOPNOTSUPP` on most but
    /// `ENOTSUP` on Darwin).
    BSD_44,
    on any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd",
        target_os = "netbsd"
    ),
    {
        EPERM = 1, ENOENT = 2, ESRCH = 3, EINTR = 4, EIO = 5, ENXIO = 6, E2BIG = 7, ENOEXEC = 8,
        EBADF = 9, ECHILD = 10, EDEADLK = 11, ENOMEM = 12, EACCES = 13, EFAULT = 14, ENOTBLK = 15,
        EBUSY = 16, EEXIST = 17, EXDEV = 18, ENODEV = 19, ENOTDIR = 20, EISDIR = 21, EINVAL = 22,
        ENFILE = 23, EMFILE = 24, ENOTTY = 25, ETXTBSY = 26, EFBIG = 27, ENOSPC = 28, ESPIPE = 29,
        EROFS = 30, EMLINK = 31, EPIPE = 32, EDOM = 33, ERANGE = 34, EAGAIN = 35, EINPROGRESS = 36,
        EALREADY = 37, ENOTSOCK = 38, EDESTADDRREQ = 39, EMSGSIZE = 40, EPROTOTYPE = 41,
        ENOPROTOOPT = 42, EPROTONOSUPPORT = 43, ESOCKTNOSUPPORT = 44, EPFNOSUPPORT = 46,
        EAFNOSUPPORT = 47, EADDRINUSE = 48, EADDRNOTAVAIL = 49, ENETDOWN = 50, ENETUNREACH = 51,
        ENETRESET = 52, ECONNABORTED = 53, ECONNRESET = 54, ENOBUFS = 55, EISCONN = 56,
        ENOTCONN = 57, ESHUTDOWN = 58, ETOOMANYREFS = 59, ETIMEDOUT = 60, ECONNREFUSED = 61,
        ELOOP = 62, ENAMETOOLONG = 63, EHOSTDOWN = 64, EHOSTUNREACH = 65, ENOTEMPTY = 66,
        EUSERS = 68, EDQUOT = 69, ESTALE = 70, EREMOTE = 71, ENOLCK = 77, ENOSYS = 78,
    }
);

errnos!(APPLE_ONLY, on target_vendor = "apple", {
        EOVERFLOW = 84, ECANCELED = 89, EIDRM = 90, ENOMSG = 91, EILSEQ = 92, EBADMSG = 94,
        EMULTIHOP = 95, ENODATA = 96, ENOLINK = 97, ENOSR = 98, ENOSTR = 99, EPROTO = 100,
        ETIME = 101, EOPNOTSUPP = 102, ENOTRECOVERABLE = 104, EOWNERDEAD = 105,
        ENOTSUP = 45 => EOPNOTSUPP, ENOATTR = 93 => ENODATA,
});

errnos!(FREEBSD_ONLY, on target_os = "freebsd", {
        EOPNOTSUPP = 45, EIDRM = 82, ENOMSG = 83, EOVERFLOW = 84, ECANCELED = 85, EILSEQ = 86,
        EBADMSG = 89, EMULTIHOP = 90, ENOLINK = 91, EPROTO = 92, ENOTRECOVERABLE = 95,
        EOWNERDEAD = 96, ENOATTR = 87 => ENODATA,
});

errnos!(DRAGONFLY_ONLY, on target_os = "dragonfly", {
        EOPNOTSUPP = 45, EIDRM = 82, ENOMSG = 83, EOVERFLOW = 84, ECANCELED = 85, EILSEQ = 86,
        EBADMSG = 89, EMULTIHOP = 90, ENOLINK = 91, EPROTO = 92, ENOMEDIUM = 93,
        ENOTRECOVERABLE = 94, EOWNERDEAD = 95, ENOATTR = 87 => ENODATA,
});

errnos!(OPENBSD_ONLY, on target_os = "openbsd", {
        EOPNOTSUPP = 45, EILSEQ = 84, ENOMEDIUM = 85, EMEDIUMTYPE = 86, EOVERFLOW = 87,
        ECANCELED = 88, EIDRM = 89, ENOMSG = 90, EBADMSG = 92, ENOTRECOVERABLE = 93,
        EOWNERDEAD = 94, EPROTO = 95, ENOATTR = 83 => ENODATA, ENOTSUP = 91 => EOPNOTSUPP,
});

errnos!(NETBSD_ONLY, on target_os = "netbsd", {
        EOPNOTSUPP = 45, EIDRM = 82, ENOMSG = 83, EOVERFLOW = 84, EILSEQ = 85, ECANCELED = 87,
        EBADMSG = 88, ENODATA = 89, ENOSR = 90, ENOSTR = 91, ETIME = 92, EMULTIHOP = 94,
        ENOLINK = 95, EPROTO = 96, EOWNERDEAD = 97, ENOTRECOVERABLE = 98,
        ENOTSUP = 86 => EOPNOTSUPP, ENOATTR = 93 => ENODATA,
});

errnos!(SOLARISH_ALL, on any(target_os = "illumos", target_os = "solaris"), {
        EPERM = 1, ENOENT = 2, ESRCH = 3, EINTR = 4, EIO = 5, ENXIO = 6, E2BIG = 7, ENOEXEC = 8,
        EBADF = 9, ECHILD = 10, EAGAIN = 11, ENOMEM = 12, EACCES = 13, EFAULT = 14, ENOTBLK = 15,
        EBUSY = 16, EEXIST = 17, EXDEV = 18, ENODEV = 19, ENOTDIR = 20, EISDIR = 21, EINVAL = 22,
        ENFILE = 23, EMFILE = 24, ENOTTY = 25, ETXTBSY = 26, EFBIG = 27, ENOSPC = 28, ESPIPE = 29,
        EROFS = 30, EMLINK = 31, EPIPE = 32, EDOM = 33, ERANGE = 34, ENOMSG = 35, EIDRM = 36,
        ECHRNG = 37, EL2NSYNC = 38, EL3HLT = 39, EL3RST = 40, ELNRNG = 41, EUNATCH = 42,
        ENOCSI = 43, EL2HLT = 44, EDEADLK = 45, ENOLCK = 46, ECANCELED = 47, EDQUOT = 49,
        EBADE = 50, EBADR = 51, EXFULL = 52, ENOANO = 53, EBADRQC = 54, EBADSLT = 55, EBFONT = 57,
        EOWNERDEAD = 58, ENOTRECOVERABLE = 59, ENOSTR = 60, ENODATA = 61, ETIME = 62, ENOSR = 63,
        ENONET = 64, ENOPKG = 65, EREMOTE = 66, ENOLINK = 67, EADV = 68, ESRMNT = 69, ECOMM = 70,
        EPROTO = 71, EMULTIHOP = 74, EBADMSG = 77, ENAMETOOLONG = 78, EOVERFLOW = 79,
        ENOTUNIQ = 80, EBADFD = 81, EREMCHG = 82, ELIBACC = 83, ELIBBAD = 84, ELIBSCN = 85,
        ELIBMAX = 86, ELIBEXEC = 87, EILSEQ = 88, ENOSYS = 89, ELOOP = 90, ERESTART = 91,
        ESTRPIPE = 92, ENOTEMPTY = 93, EUSERS = 94, ENOTSOCK = 95, EDESTADDRREQ = 96,
        EMSGSIZE = 97, EPROTOTYPE = 98, ENOPROTOOPT = 99, EPROTONOSUPPORT = 120,
        ESOCKTNOSUPPORT = 121, EOPNOTSUPP = 122, EPFNOSUPPORT = 123, EAFNOSUPPORT = 124,
        EADDRINUSE = 125, EADDRNOTAVAIL = 126, ENETDOWN = 127, ENETUNREACH = 128, ENETRESET = 129,
        ECONNABORTED = 130, ECONNRESET = 131, ENOBUFS = 132, EISCONN = 133, ENOTCONN = 134,
        ESHUTDOWN = 143, ETOOMANYREFS = 144, ETIMEDOUT = 145, ECONNREFUSED = 146, EHOSTDOWN = 147,
        EHOSTUNREACH = 148, EALREADY = 149, EINPROGRESS = 150, ESTALE = 151,
        ENOTSUP = 48 => EOPNOTSUPP, EDEADLOCK = 56 => EDEADLK,
});

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTS: [(&str, Numbering); 6] = [
        ("apple", APPLE),
        ("freebsd", FREEBSD),
        ("dragonfly", DRAGONFLY),
        ("openbsd", OPENBSD),
        ("netbsd", NETBSD),
        ("solarish", SOLARISH),
    ];

    /// No host number means two Linux errnos, every Linux errno a host has comes back from
    /// its host number, and every entry is an errno this crate names.
    #[test]
    fn every_table_maps_both_ways() {
        for (host, table) in HOSTS {
            let entries: Vec<_> = table.entries().collect();
            for (i, &(n, e)) in entries.iter().enumerate() {
                assert!(e.name().is_some(), "{host}: {n} maps to unnamed {e:?}");
                assert!(n > 0, "{host}: {n}");
                for &(m, f) in &entries[i + 1..] {
                    assert!(n != m || e == f, "{host}: {n} is {e:?} and {f:?}");
                }
                assert_eq!(table.linux_errno(n), Some(e), "{host}: {n}");
            }
            for raw in 1..4096 {
                let e = Errno::new(raw);
                if let Some(n) = table.host_number(e) {
                    assert_eq!(table.linux_errno(n), Some(e), "{host}: {e:?} is {n}");
                }
            }
        }
    }

    #[test]
    fn the_errnos_that_differ() {
        // macOS: ENOTSUP (45) and EOPNOTSUPP (102) are one Linux errno; so are ENOATTR and
        // ENODATA. EOPNOTSUPP goes out by its own name.
        assert_eq!(APPLE.linux_errno(45), Some(Errno::EOPNOTSUPP));
        assert_eq!(APPLE.linux_errno(102), Some(Errno::EOPNOTSUPP));
        assert_eq!(APPLE.host_number(Errno::EOPNOTSUPP), Some(102));
        assert_eq!(APPLE.host_number(Errno::ENOTSUP), Some(102));
        assert_eq!(APPLE.linux_errno(93), Some(Errno::ENODATA));
        assert_eq!(APPLE.linux_errno(96), Some(Errno::ENODATA));
        assert_eq!(APPLE.host_number(Errno::ENODATA), Some(96));
        assert_eq!(APPLE.linux_errno(101), Some(Errno::ETIME));
        assert_eq!(APPLE.linux_errno(35), Some(Errno::EAGAIN));
        assert_eq!(APPLE.host_number(Errno::EAGAIN), Some(35));
        assert_eq!(APPLE.linux_errno(11), Some(Errno::EDEADLK));
        assert_eq!(APPLE.linux_errno(62), Some(Errno::ELOOP));
        assert_eq!(APPLE.linux_errno(9), Some(Errno::EBADF));
        assert_eq!(APPLE.linux_errno(80), None); // EAUTH
        assert_eq!(APPLE.linux_errno(107), None); // ENOTCAPABLE
        assert_eq!(APPLE.host_number(Errno::ECHRNG), None);

        // FreeBSD has ENOATTR but no ENODATA: Linux's ENODATA goes out as ENOATTR.
        assert_eq!(FREEBSD.linux_errno(45), Some(Errno::EOPNOTSUPP));
        assert_eq!(FREEBSD.linux_errno(87), Some(Errno::ENODATA));
        assert_eq!(FREEBSD.host_number(Errno::ENODATA), Some(87));
        assert_eq!(FREEBSD.host_number(Errno::ETIME), None);
        assert_eq!(FREEBSD.linux_errno(93), None); // ENOTCAPABLE
        assert_eq!(DRAGONFLY.linux_errno(93), Some(Errno::ENOMEDIUM));

        assert_eq!(OPENBSD.linux_errno(91), Some(Errno::EOPNOTSUPP));
        assert_eq!(OPENBSD.host_number(Errno::EOPNOTSUPP), Some(45));
        assert_eq!(OPENBSD.linux_errno(83), Some(Errno::ENODATA));

        assert_eq!(NETBSD.linux_errno(86), Some(Errno::EOPNOTSUPP));
        assert_eq!(NETBSD.linux_errno(89), Some(Errno::ENODATA));
        assert_eq!(NETBSD.linux_errno(93), Some(Errno::ENODATA));
        assert_eq!(NETBSD.host_number(Errno::ENODATA), Some(89));
        assert_eq!(NETBSD.linux_errno(92), Some(Errno::ETIME));

        // System V numbering: Linux's up to ERANGE, then its own.
        assert_eq!(SOLARISH.linux_errno(11), Some(Errno::EAGAIN));
        assert_eq!(SOLARISH.linux_errno(45), Some(Errno::EDEADLK));
        assert_eq!(SOLARISH.linux_errno(56), Some(Errno::EDEADLK));
        assert_eq!(SOLARISH.host_number(Errno::EDEADLK), Some(45));
        assert_eq!(SOLARISH.linux_errno(48), Some(Errno::EOPNOTSUPP));
        assert_eq!(SOLARISH.linux_errno(122), Some(Errno::EOPNOTSUPP));
        assert_eq!(SOLARISH.host_number(Errno::EOPNOTSUPP), Some(122));
        assert_eq!(SOLARISH.linux_errno(62), Some(Errno::ETIME));
        assert_eq!(SOLARISH.linux_errno(151), Some(Errno::ESTALE));
    }
}

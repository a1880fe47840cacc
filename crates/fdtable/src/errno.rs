//! Errors are the kernel's errnos, with the kernel's values.

use std::fmt;

/// A Linux errno value (always positive). The C ABI returns it negated, as the kernel does.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Errno(i32);

impl Errno {
    /// Operation not permitted.
    pub const EPERM: Errno = Errno(libc::EPERM);
    /// No such file or directory.
    pub const ENOENT: Errno = Errno(libc::ENOENT);
    /// Interrupted system call.
    pub const EINTR: Errno = Errno(libc::EINTR);
    /// I/O error.
    pub const EIO: Errno = Errno(libc::EIO);
    /// Bad file descriptor.
    pub const EBADF: Errno = Errno(libc::EBADF);
    /// Try again (would block).
    pub const EAGAIN: Errno = Errno(libc::EAGAIN);
    /// Out of memory.
    pub const ENOMEM: Errno = Errno(libc::ENOMEM);
    /// Permission denied.
    pub const EACCES: Errno = Errno(libc::EACCES);
    /// Bad address.
    pub const EFAULT: Errno = Errno(libc::EFAULT);
    /// Device or resource busy.
    pub const EBUSY: Errno = Errno(libc::EBUSY);
    /// File exists.
    pub const EEXIST: Errno = Errno(libc::EEXIST);
    /// Not a directory.
    pub const ENOTDIR: Errno = Errno(libc::ENOTDIR);
    /// Is a directory.
    pub const EISDIR: Errno = Errno(libc::EISDIR);
    /// Invalid argument.
    pub const EINVAL: Errno = Errno(libc::EINVAL);
    /// Too many open files in the system.
    pub const ENFILE: Errno = Errno(libc::ENFILE);
    /// Too many open files (the process's limit).
    pub const EMFILE: Errno = Errno(libc::EMFILE);
    /// Inappropriate ioctl for device.
    pub const ENOTTY: Errno = Errno(libc::ENOTTY);
    /// File too large.
    pub const EFBIG: Errno = Errno(libc::EFBIG);
    /// No space left on device.
    pub const ENOSPC: Errno = Errno(libc::ENOSPC);
    /// Illegal seek.
    pub const ESPIPE: Errno = Errno(libc::ESPIPE);
    /// Broken pipe.
    pub const EPIPE: Errno = Errno(libc::EPIPE);
    /// Result too large.
    pub const ERANGE: Errno = Errno(libc::ERANGE);
    /// File name too long.
    pub const ENAMETOOLONG: Errno = Errno(libc::ENAMETOOLONG);
    /// Function not implemented.
    pub const ENOSYS: Errno = Errno(libc::ENOSYS);
    /// Directory not empty.
    pub const ENOTEMPTY: Errno = Errno(libc::ENOTEMPTY);
    /// Value too large for defined data type.
    pub const EOVERFLOW: Errno = Errno(libc::EOVERFLOW);
    /// Socket operation on non-socket.
    pub const ENOTSOCK: Errno = Errno(libc::ENOTSOCK);
    /// Operation not supported.
    pub const EOPNOTSUPP: Errno = Errno(libc::EOPNOTSUPP);
    /// Address family not supported.
    pub const EAFNOSUPPORT: Errno = Errno(libc::EAFNOSUPPORT);
    /// Transport endpoint is not connected.
    pub const ENOTCONN: Errno = Errno(libc::ENOTCONN);
    /// Connection refused.
    pub const ECONNREFUSED: Errno = Errno(libc::ECONNREFUSED);
    /// Connection reset by peer.
    pub const ECONNRESET: Errno = Errno(libc::ECONNRESET);
    /// No such device or address.
    pub const ENXIO: Errno = Errno(libc::ENXIO);
    /// No such device.
    pub const ENODEV: Errno = Errno(libc::ENODEV);
    /// Read-only file system.
    pub const EROFS: Errno = Errno(libc::EROFS);
    /// Too many links / symlink loop.
    pub const ELOOP: Errno = Errno(libc::ELOOP);
    /// Protocol not supported.
    pub const EPROTONOSUPPORT: Errno = Errno(libc::EPROTONOSUPPORT);
    /// Text file busy.
    pub const ETXTBSY: Errno = Errno(libc::ETXTBSY);

    /// Wraps a raw errno value. Values outside `1..=4095` become `EINVAL`.
    pub const fn new(raw: i32) -> Errno {
        if raw > 0 && raw < 4096 {
            Errno(raw)
        } else {
            Errno(libc::EINVAL)
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
        NAMES.iter().find(|(v, _)| *v == self.0).map(|(_, n)| *n)
    }

    /// Looks an errno up by its symbolic name (`"EBADF"`).
    pub fn from_name(name: &str) -> Option<Errno> {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(v, _)| Errno(*v))
    }

    /// The errno of the last failed libc call on this thread.
    pub fn last_os_error() -> Errno {
        Errno::new(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    }
}

macro_rules! names {
    ($($n:ident),* $(,)?) => { &[$((libc::$n, stringify!($n))),*] };
}

static NAMES: &[(i32, &str)] = names![
    EPERM,
    ENOENT,
    ESRCH,
    EINTR,
    EIO,
    ENXIO,
    E2BIG,
    ENOEXEC,
    EBADF,
    ECHILD,
    EAGAIN,
    ENOMEM,
    EACCES,
    EFAULT,
    ENOTBLK,
    EBUSY,
    EEXIST,
    EXDEV,
    ENODEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENFILE,
    EMFILE,
    ENOTTY,
    ETXTBSY,
    EFBIG,
    ENOSPC,
    ESPIPE,
    EROFS,
    EMLINK,
    EPIPE,
    EDOM,
    ERANGE,
    EDEADLK,
    ENAMETOOLONG,
    ENOLCK,
    ENOSYS,
    ENOTEMPTY,
    ELOOP,
    ENOMSG,
    EIDRM,
    ENOSTR,
    ENODATA,
    ETIME,
    ENOSR,
    ENOLINK,
    EPROTO,
    EBADMSG,
    EOVERFLOW,
    EILSEQ,
    EUSERS,
    ENOTSOCK,
    EDESTADDRREQ,
    EMSGSIZE,
    EPROTOTYPE,
    ENOPROTOOPT,
    EPROTONOSUPPORT,
    ESOCKTNOSUPPORT,
    EOPNOTSUPP,
    EPFNOSUPPORT,
    EAFNOSUPPORT,
    EADDRINUSE,
    EADDRNOTAVAIL,
    ENETDOWN,
    ENETUNREACH,
    ENETRESET,
    ECONNABORTED,
    ECONNRESET,
    ENOBUFS,
    EISCONN,
    ENOTCONN,
    ESHUTDOWN,
    ETOOMANYREFS,
    ETIMEDOUT,
    ECONNREFUSED,
    EHOSTDOWN,
    EHOSTUNREACH,
    EALREADY,
    EINPROGRESS,
    ESTALE,
    EDQUOT,
    ECANCELED,
    EOWNERDEAD,
    ENOTRECOVERABLE,
    ERFKILL,
    EHWPOISON,
    ENOMEDIUM,
    EMEDIUMTYPE,
    ENOKEY,
    EKEYEXPIRED,
    EKEYREVOKED,
    EKEYREJECTED,
    EREMOTEIO,
    EBADFD,
    ENOTUNIQ,
    EREMCHG,
    ELIBACC,
    ELIBBAD,
    ELIBSCN,
    ELIBMAX,
    ELIBEXEC,
    ERESTART,
    ESTRPIPE,
    EUCLEAN,
    ENOTNAM,
    ENAVAIL,
    EISNAM,
    ECOMM,
    EREMOTE,
    ENOPKG,
    ENONET,
    EBADE,
    EBADR,
    EXFULL,
    ENOANO,
    EBADRQC,
    EBADSLT,
    EBFONT,
    ECHRNG,
    EL2NSYNC,
    EL3HLT,
    EL3RST,
    ELNRNG,
    EUNATCH,
    ENOCSI,
    EL2HLT,
    EADV,
    ESRMNT,
    EDOTDOT,
];

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
        let text = std::io::Error::from_raw_os_error(self.0);
        match self.name() {
            Some(n) => write!(f, "{n} ({text})"),
            None => write!(f, "errno {} ({text})", self.0),
        }
    }
}

impl std::error::Error for Errno {}

impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> Self {
        std::io::Error::from_raw_os_error(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(Errno::EBADF.name(), Some("EBADF"));
        assert_eq!(Errno::from_name("EMFILE"), Some(Errno::EMFILE));
        assert_eq!(Errno::from_name("ENOPE"), None);
        assert_eq!(Errno::EBUSY.neg(), -16);
        assert_eq!(Errno::new(-3), Errno::EINVAL);
        assert_eq!(format!("{:?}", Errno::EINVAL), "EINVAL");
    }
}

//! [`Errno`] and the host's [`std::io::Error`] (feature `std`).
//!
//! On Linux the numbers are the same and pass through. On other Unix hosts each errno that
//! the host also defines is mapped by name to the host's number (macOS's `EAGAIN` is 35, not
//! 11); on Windows, and for errnos the host lacks, the error carries the [`Errno`] itself with
//! the nearest [`std::io::ErrorKind`], and converting back recovers it exactly.

use super::Errno;
use std::io;

impl Errno {
    /// The errno of the last failed host call on this thread, as a Linux errno (`EIO` if the
    /// host reported none).
    pub fn last_os_error() -> Errno {
        Errno::from_io_error(&io::Error::last_os_error())
    }

    /// The Linux errno for a host error: the host's number mapped back to Linux's, an
    /// [`Errno`] carried by [`From<Errno> for io::Error`](#impl-From<Errno>-for-Error), or the
    /// nearest errno for the error's kind.
    pub fn from_io_error(e: &io::Error) -> Errno {
        if let Some(errno) = e.get_ref().and_then(|inner| inner.downcast_ref::<Errno>()) {
            return *errno;
        }
        if let Some(raw) = e.raw_os_error()
            && let Some(errno) = from_host(raw)
        {
            return errno;
        }
        from_kind(e.kind())
    }
}

impl From<Errno> for io::Error {
    fn from(e: Errno) -> Self {
        match to_host(e) {
            Some(raw) => io::Error::from_raw_os_error(raw),
            None => io::Error::new(kind_of(e), e),
        }
    }
}

impl From<&io::Error> for Errno {
    fn from(e: &io::Error) -> Self {
        Errno::from_io_error(e)
    }
}

impl From<io::Error> for Errno {
    fn from(e: io::Error) -> Self {
        Errno::from_io_error(&e)
    }
}

#[cfg(target_os = "linux")]
fn to_host(e: Errno) -> Option<i32> {
    Some(e.raw())
}

#[cfg(target_os = "linux")]
fn from_host(raw: i32) -> Option<Errno> {
    (raw > 0 && raw < 4096).then(|| Errno::new(raw))
}

/// Errnos that every Unix libc defines, mapped by name between Linux's numbers and the host's.
#[cfg(all(unix, not(target_os = "linux")))]
macro_rules! unix_map {
    ($($n:ident),* $(,)?) => {
        fn to_host(e: Errno) -> Option<i32> {
            $( if e == Errno::$n { return Some(libc::$n); } )*
            None
        }
        fn from_host(raw: i32) -> Option<Errno> {
            $( if raw == libc::$n { return Some(Errno::$n); } )*
            None
        }
    };
}

#[cfg(all(unix, not(target_os = "linux")))]
unix_map!(
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
    EOVERFLOW,
    EILSEQ,
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
    EBADMSG,
    EPROTO,
    EMULTIHOP,
    ENOLINK,
    EREMOTE,
    EUSERS,
);

#[cfg(not(unix))]
fn to_host(_: Errno) -> Option<i32> {
    None
}

#[cfg(not(unix))]
fn from_host(_: i32) -> Option<Errno> {
    None
}

/// The nearest [`io::ErrorKind`] of an errno, for hosts whose numbers differ.
fn kind_of(e: Errno) -> io::ErrorKind {
    use io::ErrorKind as K;
    match e {
        Errno::ENOENT => K::NotFound,
        Errno::EPERM | Errno::EACCES => K::PermissionDenied,
        Errno::ECONNREFUSED => K::ConnectionRefused,
        Errno::ECONNRESET => K::ConnectionReset,
        Errno::ECONNABORTED => K::ConnectionAborted,
        Errno::ENOTCONN => K::NotConnected,
        Errno::EADDRINUSE => K::AddrInUse,
        Errno::EADDRNOTAVAIL => K::AddrNotAvailable,
        Errno::EPIPE => K::BrokenPipe,
        Errno::EEXIST => K::AlreadyExists,
        Errno::EAGAIN => K::WouldBlock,
        Errno::EINVAL => K::InvalidInput,
        Errno::ETIMEDOUT => K::TimedOut,
        Errno::EINTR => K::Interrupted,
        Errno::ENOSYS | Errno::EOPNOTSUPP => K::Unsupported,
        Errno::ENOMEM => K::OutOfMemory,
        Errno::ENOTDIR => K::NotADirectory,
        Errno::EISDIR => K::IsADirectory,
        Errno::ENOTEMPTY => K::DirectoryNotEmpty,
        Errno::EROFS => K::ReadOnlyFilesystem,
        Errno::ESPIPE => K::NotSeekable,
        Errno::ENOSPC => K::StorageFull,
        Errno::EFBIG => K::FileTooLarge,
        Errno::EBUSY => K::ResourceBusy,
        Errno::ETXTBSY => K::ExecutableFileBusy,
        Errno::EDEADLK => K::Deadlock,
        Errno::EXDEV => K::CrossesDevices,
        Errno::EMLINK => K::TooManyLinks,
        Errno::ENAMETOOLONG => K::InvalidFilename,
        Errno::E2BIG => K::ArgumentListTooLong,
        Errno::ENETDOWN => K::NetworkDown,
        Errno::ENETUNREACH => K::NetworkUnreachable,
        Errno::EHOSTUNREACH => K::HostUnreachable,
        _ => K::Other,
    }
}

/// The nearest errno of an [`io::ErrorKind`] (errors with no number of their own).
fn from_kind(kind: io::ErrorKind) -> Errno {
    use io::ErrorKind as K;
    match kind {
        K::NotFound => Errno::ENOENT,
        K::PermissionDenied => Errno::EACCES,
        K::ConnectionRefused => Errno::ECONNREFUSED,
        K::ConnectionReset => Errno::ECONNRESET,
        K::ConnectionAborted => Errno::ECONNABORTED,
        K::NotConnected => Errno::ENOTCONN,
        K::AddrInUse => Errno::EADDRINUSE,
        K::AddrNotAvailable => Errno::EADDRNOTAVAIL,
        K::BrokenPipe => Errno::EPIPE,
        K::AlreadyExists => Errno::EEXIST,
        K::WouldBlock => Errno::EAGAIN,
        K::InvalidInput | K::InvalidData => Errno::EINVAL,
        K::TimedOut => Errno::ETIMEDOUT,
        K::Interrupted => Errno::EINTR,
        K::Unsupported => Errno::EOPNOTSUPP,
        K::OutOfMemory => Errno::ENOMEM,
        K::NotADirectory => Errno::ENOTDIR,
        K::IsADirectory => Errno::EISDIR,
        K::DirectoryNotEmpty => Errno::ENOTEMPTY,
        K::ReadOnlyFilesystem => Errno::EROFS,
        K::NotSeekable => Errno::ESPIPE,
        K::StorageFull => Errno::ENOSPC,
        K::FileTooLarge => Errno::EFBIG,
        K::ResourceBusy => Errno::EBUSY,
        K::ExecutableFileBusy => Errno::ETXTBSY,
        K::Deadlock => Errno::EDEADLK,
        K::CrossesDevices => Errno::EXDEV,
        K::TooManyLinks => Errno::EMLINK,
        K::InvalidFilename => Errno::ENAMETOOLONG,
        K::ArgumentListTooLong => Errno::E2BIG,
        K::NetworkDown => Errno::ENETDOWN,
        K::NetworkUnreachable => Errno::ENETUNREACH,
        K::HostUnreachable => Errno::EHOSTUNREACH,
        K::UnexpectedEof => Errno::EIO,
        _ => Errno::EIO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_round_trip_keeps_every_errno() {
        for raw in 1..=133 {
            let e = Errno::new(raw);
            let io: io::Error = e.into();
            assert_eq!(Errno::from_io_error(&io), e, "{e:?}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_numbers_pass_through() {
        let io: io::Error = Errno::EMFILE.into();
        assert_eq!(io.raw_os_error(), Some(24));
        assert_eq!(Errno::from(io::Error::from_raw_os_error(9)), Errno::EBADF);
    }

    #[test]
    fn kinds_without_numbers() {
        let io = io::Error::new(io::ErrorKind::NotFound, "gone");
        assert_eq!(Errno::from(&io), Errno::ENOENT);
        let io = io::Error::other("?");
        assert_eq!(Errno::from(io), Errno::EIO);
    }
}

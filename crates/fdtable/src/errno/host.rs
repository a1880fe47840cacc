//! [`Errno`] and the host's [`std::io::Error`] (feature `std`).
//!
//! On Linux the numbers are the same and pass through. On other Unix hosts each errno that
//! the host also defines is mapped by name to the host's number and back (macOS's `EAGAIN` is
//! 35, not 11; its `ENOTSUP`, 45, is Linux's `EOPNOTSUPP`, 95). A Windows error code becomes
//! the errno the C runtime gives it (`ERROR_INVALID_HANDLE` is `EBADF`), or the errno of the
//! kind std gives it. An errno the host lacks, and any errno on Windows, becomes an error
//! that carries the [`Errno`] itself with the nearest [`std::io::ErrorKind`], and converting
//! back recovers it exactly.

use super::Errno;
use std::io;

mod unix;
mod windows;

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

// Which numbering the host uses. The tables are pure data (`unix`, `windows`), compiled and
// tested on every host; only the choice among them depends on the target.

/// Linux's own numbers: asm-generic, which every Linux architecture uses but MIPS, SPARC,
/// Alpha and PA-RISC (for which Rust has no target).
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(any(
        target_arch = "mips",
        target_arch = "mips32r6",
        target_arch = "mips64",
        target_arch = "mips64r6",
        target_arch = "sparc",
        target_arch = "sparc64"
    ))
))]
mod select {
    use super::Errno;

    pub(super) fn to_host(e: Errno) -> Option<i32> {
        Some(e.raw())
    }

    pub(super) fn from_host(raw: i32) -> Option<Errno> {
        (raw > 0 && raw < 4096).then(|| Errno::new(raw))
    }
}

/// A host with a table of its own.
#[cfg(any(
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "illumos",
    target_os = "solaris"
))]
mod select {
    use super::Errno;
    use super::unix::{self, Numbering};

    #[cfg(target_vendor = "apple")]
    const HOST: Numbering = unix::APPLE;
    #[cfg(target_os = "freebsd")]
    const HOST: Numbering = unix::FREEBSD;
    #[cfg(target_os = "dragonfly")]
    const HOST: Numbering = unix::DRAGONFLY;
    #[cfg(target_os = "openbsd")]
    const HOST: Numbering = unix::OPENBSD;
    #[cfg(target_os = "netbsd")]
    const HOST: Numbering = unix::NETBSD;
    #[cfg(any(target_os = "illumos", target_os = "solaris"))]
    const HOST: Numbering = unix::SOLARISH;

    pub(super) fn to_host(e: Errno) -> Option<i32> {
        HOST.host_number(e)
    }

    pub(super) fn from_host(raw: i32) -> Option<Errno> {
        HOST.linux_errno(raw)
    }
}

/// Windows: Win32 and Winsock codes map to errnos, and no errno is a host code.
#[cfg(windows)]
mod select {
    use super::Errno;

    pub(super) fn to_host(_: Errno) -> Option<i32> {
        None
    }

    pub(super) fn from_host(raw: i32) -> Option<Errno> {
        super::windows::from_win32(raw)
    }
}

/// Errnos mapped by name through the libc crate's constants: Linux on the architectures with
/// numbers of their own (every Linux errno), and any other Unix host (the errnos every Unix
/// libc defines).
#[cfg(all(
    unix,
    not(any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd",
        target_os = "netbsd",
        target_os = "illumos",
        target_os = "solaris"
    )),
    not(all(
        any(target_os = "linux", target_os = "android"),
        not(any(
            target_arch = "mips",
            target_arch = "mips32r6",
            target_arch = "mips64",
            target_arch = "mips64r6",
            target_arch = "sparc",
            target_arch = "sparc64"
        ))
    ))
))]
mod select {
    use super::Errno;

    macro_rules! by_name {
        ($($n:ident),* $(,)?) => {
            pub(super) fn to_host(e: Errno) -> Option<i32> {
                $( if e == Errno::$n { return Some(libc::$n); } )*
                None
            }
            pub(super) fn from_host(raw: i32) -> Option<Errno> {
                $( if raw == libc::$n { return Some(Errno::$n); } )*
                None
            }
        };
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    super::super::table::linux_errno_names!(by_name);

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    by_name!(
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
}

/// No host numbers at all (neither Unix nor Windows): every error carries its [`Errno`].
#[cfg(not(any(unix, windows)))]
mod select {
    use super::Errno;

    pub(super) fn to_host(_: Errno) -> Option<i32> {
        None
    }

    pub(super) fn from_host(_: i32) -> Option<Errno> {
        None
    }
}

use select::{from_host, to_host};

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
        Errno::EDQUOT => K::QuotaExceeded,
        Errno::ESTALE => K::StaleNetworkFileHandle,
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
        K::QuotaExceeded => Errno::EDQUOT,
        K::StaleNetworkFileHandle => Errno::ESTALE,
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

    #[cfg(target_vendor = "apple")]
    #[test]
    fn macos_numbers_map() {
        assert_eq!(
            Errno::from(io::Error::from_raw_os_error(45)),
            Errno::EOPNOTSUPP
        );
        assert_eq!(
            Errno::from(io::Error::from_raw_os_error(93)),
            Errno::ENODATA
        );
        let io: io::Error = Errno::EAGAIN.into();
        assert_eq!(io.raw_os_error(), Some(35));
    }

    #[cfg(windows)]
    #[test]
    fn windows_codes_map() {
        assert_eq!(Errno::from(io::Error::from_raw_os_error(6)), Errno::EBADF);
        assert_eq!(Errno::from(io::Error::from_raw_os_error(4)), Errno::EMFILE);
        assert_eq!(
            Errno::from(io::Error::from_raw_os_error(10035)),
            Errno::EAGAIN
        );
    }

    #[test]
    fn kinds_without_numbers() {
        let io = io::Error::new(io::ErrorKind::NotFound, "gone");
        assert_eq!(Errno::from(&io), Errno::ENOENT);
        let io = io::Error::other("?");
        assert_eq!(Errno::from(io), Errno::EIO);
        let io = io::Error::from(io::ErrorKind::QuotaExceeded);
        assert_eq!(Errno::from(io), Errno::EDQUOT);
    }
}

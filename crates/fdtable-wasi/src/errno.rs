//! The one mapping from Linux errnos to WASI's.
//!
//! The descriptor table reports [`fdtable::Errno`] (Linux's numbers on every host); host I/O
//! reports [`std::io::Error`], which [`fdtable::Errno::from_io_error`] turns into the same Linux
//! errno whatever the host (macOS's `EAGAIN` 35 becomes Linux's 11 first). Both then go through
//! [`LINUX_TO_WASI`]: one table, by meaning. A Linux errno WASI has no name for becomes `Io`,
//! as wasmtime maps an unknown host error.
//!
//! One error has no errno of its own: cap-std refuses a path that leaves its directory (an
//! absolute path, too many `..`, a symbolic link pointing out) with an `io::Error` of kind
//! `PermissionDenied` that carries no OS error. That is [`WasiErrno::Notcapable`]: the
//! capability model refused it, not the file's permission bits (a real `EACCES` carries its
//! OS error and is `Acces`).

use crate::types::WasiErrno;
use fdtable::Errno;
use std::io;

/// Linux errno → WASI errno, by meaning.
pub const LINUX_TO_WASI: &[(Errno, WasiErrno)] = &[
    (Errno::E2BIG, WasiErrno::TooBig),
    (Errno::EACCES, WasiErrno::Acces),
    (Errno::EADDRINUSE, WasiErrno::Addrinuse),
    (Errno::EADDRNOTAVAIL, WasiErrno::Addrnotavail),
    (Errno::EAFNOSUPPORT, WasiErrno::Afnosupport),
    (Errno::EAGAIN, WasiErrno::Again),
    (Errno::EALREADY, WasiErrno::Already),
    (Errno::EBADF, WasiErrno::Badf),
    (Errno::EBADMSG, WasiErrno::Badmsg),
    (Errno::EBUSY, WasiErrno::Busy),
    (Errno::ECANCELED, WasiErrno::Canceled),
    (Errno::ECHILD, WasiErrno::Child),
    (Errno::ECONNABORTED, WasiErrno::Connaborted),
    (Errno::ECONNREFUSED, WasiErrno::Connrefused),
    (Errno::ECONNRESET, WasiErrno::Connreset),
    (Errno::EDEADLK, WasiErrno::Deadlk),
    (Errno::EDESTADDRREQ, WasiErrno::Destaddrreq),
    (Errno::EDOM, WasiErrno::Dom),
    (Errno::EDQUOT, WasiErrno::Dquot),
    (Errno::EEXIST, WasiErrno::Exist),
    (Errno::EFAULT, WasiErrno::Fault),
    (Errno::EFBIG, WasiErrno::Fbig),
    (Errno::EHOSTUNREACH, WasiErrno::Hostunreach),
    (Errno::EIDRM, WasiErrno::Idrm),
    (Errno::EILSEQ, WasiErrno::Ilseq),
    (Errno::EINPROGRESS, WasiErrno::Inprogress),
    (Errno::EINTR, WasiErrno::Intr),
    (Errno::EINVAL, WasiErrno::Inval),
    (Errno::EIO, WasiErrno::Io),
    (Errno::EISCONN, WasiErrno::Isconn),
    (Errno::EISDIR, WasiErrno::Isdir),
    (Errno::ELOOP, WasiErrno::Loop),
    (Errno::EMFILE, WasiErrno::Mfile),
    (Errno::EMLINK, WasiErrno::Mlink),
    (Errno::EMSGSIZE, WasiErrno::Msgsize),
    (Errno::EMULTIHOP, WasiErrno::Multihop),
    (Errno::ENAMETOOLONG, WasiErrno::Nametoolong),
    (Errno::ENETDOWN, WasiErrno::Netdown),
    (Errno::ENETRESET, WasiErrno::Netreset),
    (Errno::ENETUNREACH, WasiErrno::Netunreach),
    (Errno::ENFILE, WasiErrno::Nfile),
    (Errno::ENOBUFS, WasiErrno::Nobufs),
    (Errno::ENODEV, WasiErrno::Nodev),
    (Errno::ENOENT, WasiErrno::Noent),
    (Errno::ENOEXEC, WasiErrno::Noexec),
    (Errno::ENOLCK, WasiErrno::Nolck),
    (Errno::ENOLINK, WasiErrno::Nolink),
    (Errno::ENOMEM, WasiErrno::Nomem),
    (Errno::ENOMSG, WasiErrno::Nomsg),
    (Errno::ENOPROTOOPT, WasiErrno::Noprotoopt),
    (Errno::ENOSPC, WasiErrno::Nospc),
    (Errno::ENOSYS, WasiErrno::Nosys),
    (Errno::ENOTCONN, WasiErrno::Notconn),
    (Errno::ENOTDIR, WasiErrno::Notdir),
    (Errno::ENOTEMPTY, WasiErrno::Notempty),
    (Errno::ENOTRECOVERABLE, WasiErrno::Notrecoverable),
    (Errno::ENOTSOCK, WasiErrno::Notsock),
    (Errno::EOPNOTSUPP, WasiErrno::Notsup),
    (Errno::ENOTTY, WasiErrno::Notty),
    (Errno::ENXIO, WasiErrno::Nxio),
    (Errno::EOVERFLOW, WasiErrno::Overflow),
    (Errno::EOWNERDEAD, WasiErrno::Ownerdead),
    (Errno::EPERM, WasiErrno::Perm),
    (Errno::EPIPE, WasiErrno::Pipe),
    (Errno::EPROTO, WasiErrno::Proto),
    (Errno::EPROTONOSUPPORT, WasiErrno::Protonosupport),
    (Errno::EPROTOTYPE, WasiErrno::Prototype),
    (Errno::ERANGE, WasiErrno::Range),
    (Errno::EROFS, WasiErrno::Rofs),
    (Errno::ESPIPE, WasiErrno::Spipe),
    (Errno::ESRCH, WasiErrno::Srch),
    (Errno::ESTALE, WasiErrno::Stale),
    (Errno::ETIMEDOUT, WasiErrno::Timedout),
    (Errno::ETXTBSY, WasiErrno::Txtbsy),
    (Errno::EXDEV, WasiErrno::Xdev),
];

impl From<Errno> for WasiErrno {
    fn from(e: Errno) -> WasiErrno {
        LINUX_TO_WASI
            .iter()
            .find(|(l, _)| *l == e)
            .map_or(WasiErrno::Io, |(_, w)| *w)
    }
}

impl From<io::Error> for WasiErrno {
    fn from(e: io::Error) -> WasiErrno {
        WasiErrno::from(&e)
    }
}

impl From<&io::Error> for WasiErrno {
    fn from(e: &io::Error) -> WasiErrno {
        if e.raw_os_error().is_none()
            && e.kind() == io::ErrorKind::PermissionDenied
            && e.get_ref().is_some_and(|inner| !inner.is::<Errno>())
        {
            // cap-std's "a path led outside of the filesystem".
            return WasiErrno::Notcapable;
        }
        Errno::from_io_error(e).into()
    }
}

impl From<std::num::TryFromIntError> for WasiErrno {
    fn from(_: std::num::TryFromIntError) -> WasiErrno {
        WasiErrno::Overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_a_function_and_injective() {
        for (i, (l, w)) in LINUX_TO_WASI.iter().enumerate() {
            for (l2, w2) in &LINUX_TO_WASI[i + 1..] {
                assert_ne!(l, l2, "{l:?} mapped twice");
                assert_ne!(w, w2, "{w:?} is the image of two errnos");
            }
        }
        // Every WASI errno but success and notcapable has a Linux counterpart.
        assert_eq!(LINUX_TO_WASI.len(), 76 - 1);
    }

    #[test]
    fn core_errnos_map_by_meaning() {
        assert_eq!(WasiErrno::from(Errno::EBADF), WasiErrno::Badf);
        assert_eq!(WasiErrno::from(Errno::EMFILE), WasiErrno::Mfile);
        assert_eq!(WasiErrno::from(Errno::ENOMEM), WasiErrno::Nomem);
        assert_eq!(WasiErrno::from(Errno::EBUSY), WasiErrno::Busy);
        // A Linux errno WASI does not name.
        assert_eq!(WasiErrno::from(Errno::new(200)), WasiErrno::Io);
    }

    #[test]
    fn io_errors_map_through_the_same_table() {
        let e = io::Error::from(Errno::ENOTEMPTY);
        assert_eq!(WasiErrno::from(&e), WasiErrno::Notempty);
        let escape = io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a path led outside of the filesystem",
        );
        assert_eq!(WasiErrno::from(&escape), WasiErrno::Notcapable);
        let eacces = io::Error::from(Errno::EACCES);
        assert_eq!(WasiErrno::from(&eacces), WasiErrno::Acces);
    }
}

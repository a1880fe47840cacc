//! Windows error codes (`GetLastError`, `WSAGetLastError`) mapped to Linux errnos.
//!
//! Windows has no errno numbers of its own: `io::Error::raw_os_error` is a Win32 error code or
//! a Winsock one. The mapping follows, in this order:
//!
//! 1. the table of the Microsoft C runtime's `_dosmaperr` (the UCRT's
//!    `__acrt_errno_from_os_error`): the errno a C program on Windows sees, so code ported
//!    from there keeps its behaviour (`ERROR_SEEK_ON_DEVICE` is `EACCES` there, not `ESPIPE`);
//! 2. the codes Rust's standard library gives an [`std::io::ErrorKind`] of their own
//!    (`decode_error_kind` in std's Windows error module) and the C runtime leaves to its
//!    fallback, each with the errno std gives the same kind on Unix (`ERROR_DIRECTORY`,
//!    `NotADirectory`: `ENOTDIR`; `ERROR_CALL_NOT_IMPLEMENTED`, `Unsupported`: `ENOSYS`);
//! 3. the C runtime's ranges: the disk and sharing errors `ERROR_WRITE_PROTECT` to
//!    `ERROR_SHARING_BUFFER_EXCEEDED` are `EACCES`, the executable-format errors
//!    `ERROR_INVALID_STARTING_CODESEG` to `ERROR_INFLOOP_IN_RELOC_CHAIN` are `ENOEXEC`;
//! 4. Winsock's `WSAE*` codes, which are 10000 plus the 4.4BSD errno of the same name.
//!
//! Two codes are noted where they are mapped: `ERROR_INVALID_NAME`, whose kind's Unix errno
//! (`ENAMETOOLONG`) would misname it, and `ERROR_NOT_SUPPORTED`, which neither source maps.
//! Any other code maps to nothing (the C runtime would say `EINVAL`), and the caller falls
//! back to the error's kind: `EIO` for an error std cannot classify, rather than an invalid
//! argument the caller never passed.

// Only Windows uses this; it is compiled everywhere so that the tests check it on any host.
#![allow(dead_code)]

use crate::Errno;

/// `FACILITY_WIN32` HRESULTs (`0x8007xxxx`) carry a Win32 error code in their low 16 bits.
const HRESULT_FROM_WIN32_MASK: u32 = 0xFFFF_0000;
const HRESULT_FROM_WIN32: u32 = 0x8007_0000;

/// The Linux errno for a Windows error code, or `None` if neither the C runtime nor std give
/// the code a meaning of its own.
#[allow(
    clippy::match_overlapping_arm,
    reason = "the arms are in order of precedence: single codes before the C runtime's ranges"
)]
pub(crate) fn from_win32(code: i32) -> Option<Errno> {
    let code = if code as u32 & HRESULT_FROM_WIN32_MASK == HRESULT_FROM_WIN32 {
        code & 0xFFFF
    } else {
        code
    };
    Some(match code {
        // 1. The C runtime's table (UCRT errno.cpp, `errtable`), in its order.
        1 => Errno::EINVAL,      // ERROR_INVALID_FUNCTION
        2 => Errno::ENOENT,      // ERROR_FILE_NOT_FOUND
        3 => Errno::ENOENT,      // ERROR_PATH_NOT_FOUND
        4 => Errno::EMFILE,      // ERROR_TOO_MANY_OPEN_FILES
        5 => Errno::EACCES,      // ERROR_ACCESS_DENIED
        6 => Errno::EBADF,       // ERROR_INVALID_HANDLE
        7 => Errno::ENOMEM,      // ERROR_ARENA_TRASHED
        8 => Errno::ENOMEM,      // ERROR_NOT_ENOUGH_MEMORY
        9 => Errno::ENOMEM,      // ERROR_INVALID_BLOCK
        10 => Errno::E2BIG,      // ERROR_BAD_ENVIRONMENT
        11 => Errno::ENOEXEC,    // ERROR_BAD_FORMAT
        12 => Errno::EINVAL,     // ERROR_INVALID_ACCESS
        13 => Errno::EINVAL,     // ERROR_INVALID_DATA
        15 => Errno::ENOENT,     // ERROR_INVALID_DRIVE
        16 => Errno::EACCES,     // ERROR_CURRENT_DIRECTORY
        17 => Errno::EXDEV,      // ERROR_NOT_SAME_DEVICE
        18 => Errno::ENOENT,     // ERROR_NO_MORE_FILES
        33 => Errno::EACCES,     // ERROR_LOCK_VIOLATION
        53 => Errno::ENOENT,     // ERROR_BAD_NETPATH
        65 => Errno::EACCES,     // ERROR_NETWORK_ACCESS_DENIED
        67 => Errno::ENOENT,     // ERROR_BAD_NET_NAME
        80 => Errno::EEXIST,     // ERROR_FILE_EXISTS
        82 => Errno::EACCES,     // ERROR_CANNOT_MAKE
        83 => Errno::EACCES,     // ERROR_FAIL_I24
        87 => Errno::EINVAL,     // ERROR_INVALID_PARAMETER
        89 => Errno::EAGAIN,     // ERROR_NO_PROC_SLOTS
        108 => Errno::EACCES,    // ERROR_DRIVE_LOCKED
        109 => Errno::EPIPE,     // ERROR_BROKEN_PIPE
        112 => Errno::ENOSPC,    // ERROR_DISK_FULL
        114 => Errno::EBADF,     // ERROR_INVALID_TARGET_HANDLE
        128 => Errno::ECHILD,    // ERROR_WAIT_NO_CHILDREN
        129 => Errno::ECHILD,    // ERROR_CHILD_NOT_COMPLETE
        130 => Errno::EBADF,     // ERROR_DIRECT_ACCESS_HANDLE
        131 => Errno::EINVAL,    // ERROR_NEGATIVE_SEEK
        132 => Errno::EACCES,    // ERROR_SEEK_ON_DEVICE
        145 => Errno::ENOTEMPTY, // ERROR_DIR_NOT_EMPTY
        158 => Errno::EACCES,    // ERROR_NOT_LOCKED
        161 => Errno::ENOENT,    // ERROR_BAD_PATHNAME
        164 => Errno::EAGAIN,    // ERROR_MAX_THRDS_REACHED
        167 => Errno::EACCES,    // ERROR_LOCK_FAILED
        183 => Errno::EEXIST,    // ERROR_ALREADY_EXISTS
        206 => Errno::ENOENT,    // ERROR_FILENAME_EXCED_RANGE
        215 => Errno::EAGAIN,    // ERROR_NESTING_NOT_ALLOWED
        1113 => Errno::EILSEQ,   // ERROR_NO_UNICODE_TRANSLATION
        1816 => Errno::ENOMEM,   // ERROR_NOT_ENOUGH_QUOTA

        // 2. Codes std classifies and the C runtime leaves to its fallback.
        14 => Errno::ENOMEM,  // ERROR_OUTOFMEMORY: OutOfMemory
        19 => Errno::EROFS,   // ERROR_WRITE_PROTECT: ReadOnlyFilesystem
        39 => Errno::ENOSPC,  // ERROR_HANDLE_DISK_FULL: StorageFull
        120 => Errno::ENOSYS, // ERROR_CALL_NOT_IMPLEMENTED: Unsupported
        // ERROR_INVALID_NAME: InvalidFilename, but a name's syntax, not its length: EINVAL,
        // as the C runtime's fallback and Linux's vfat for a name it cannot hold.
        123 => Errno::EINVAL,
        170 => Errno::EBUSY,         // ERROR_BUSY: ResourceBusy
        223 => Errno::EFBIG,         // ERROR_FILE_TOO_LARGE: FileTooLarge
        232 => Errno::EPIPE,         // ERROR_NO_DATA (the pipe is being closed): BrokenPipe
        267 => Errno::ENOTDIR,       // ERROR_DIRECTORY: NotADirectory
        336 => Errno::EISDIR,        // ERROR_DIRECTORY_NOT_SUPPORTED: IsADirectory
        1131 => Errno::EDEADLK,      // ERROR_POSSIBLE_DEADLOCK: Deadlock
        1142 => Errno::EMLINK,       // ERROR_TOO_MANY_LINKS: TooManyLinks
        1231 => Errno::ENETUNREACH,  // ERROR_NETWORK_UNREACHABLE: NetworkUnreachable
        1232 => Errno::EHOSTUNREACH, // ERROR_HOST_UNREACHABLE: HostUnreachable
        1295 => Errno::EDQUOT,       // ERROR_DISK_QUOTA_EXCEEDED: QuotaExceeded
        1921 => Errno::ELOOP,        // ERROR_CANT_RESOLVE_FILENAME: FilesystemLoop
        // TimedOut: ERROR_SEM_TIMEOUT, WAIT_TIMEOUT, ERROR_DRIVER_CANCEL_TIMEOUT,
        // ERROR_OPERATION_ABORTED (std's timeouts cancel the I/O), ERROR_TIMEOUT,
        // ERROR_SERVICE_REQUEST_TIMEOUT, ERROR_COUNTER_TIMEOUT, ERROR_RESOURCE_CALL_TIMED_OUT,
        // ERROR_CTX_MODEM_RESPONSE_TIMEOUT, ERROR_CTX_CLIENT_QUERY_TIMEOUT,
        // FRS_ERR_SYSVOL_POPULATE_TIMEOUT, ERROR_DS_TIMELIMIT_EXCEEDED,
        // DNS_ERROR_RECORD_TIMED_OUT, ERROR_IPSEC_IKE_TIMED_OUT, ERROR_RUNLEVEL_SWITCH_TIMEOUT,
        // ERROR_RUNLEVEL_SWITCH_AGENT_TIMEOUT.
        121 | 258 | 594 | 995 | 1460 | 1053 | 1121 | 5910 | 7012 | 7040 | 8014 | 8226 | 9705
        | 13805 | 15402 | 15403 => Errno::ETIMEDOUT,
        // In neither: a request the device or filesystem does not support, which Linux
        // reports as EOPNOTSUPP (the C runtime would say EINVAL, Cygwin ENOSYS).
        50 => Errno::EOPNOTSUPP, // ERROR_NOT_SUPPORTED

        // 3. The C runtime's ranges.
        // ERROR_WRITE_PROTECT ..= ERROR_SHARING_BUFFER_EXCEEDED
        19..=36 => Errno::EACCES,
        // ERROR_INVALID_STARTING_CODESEG ..= ERROR_INFLOOP_IN_RELOC_CHAIN
        188..=202 => Errno::ENOEXEC,

        // 4. Winsock: 10000 + the BSD errno.
        10004 => Errno::EINTR,           // WSAEINTR
        10009 => Errno::EBADF,           // WSAEBADF
        10013 => Errno::EACCES,          // WSAEACCES
        10014 => Errno::EFAULT,          // WSAEFAULT
        10022 => Errno::EINVAL,          // WSAEINVAL
        10024 => Errno::EMFILE,          // WSAEMFILE
        10035 => Errno::EAGAIN,          // WSAEWOULDBLOCK
        10036 => Errno::EINPROGRESS,     // WSAEINPROGRESS
        10037 => Errno::EALREADY,        // WSAEALREADY
        10038 => Errno::ENOTSOCK,        // WSAENOTSOCK
        10039 => Errno::EDESTADDRREQ,    // WSAEDESTADDRREQ
        10040 => Errno::EMSGSIZE,        // WSAEMSGSIZE
        10041 => Errno::EPROTOTYPE,      // WSAEPROTOTYPE
        10042 => Errno::ENOPROTOOPT,     // WSAENOPROTOOPT
        10043 => Errno::EPROTONOSUPPORT, // WSAEPROTONOSUPPORT
        10044 => Errno::ESOCKTNOSUPPORT, // WSAESOCKTNOSUPPORT
        10045 => Errno::EOPNOTSUPP,      // WSAEOPNOTSUPP
        10046 => Errno::EPFNOSUPPORT,    // WSAEPFNOSUPPORT
        10047 => Errno::EAFNOSUPPORT,    // WSAEAFNOSUPPORT
        10048 => Errno::EADDRINUSE,      // WSAEADDRINUSE
        10049 => Errno::EADDRNOTAVAIL,   // WSAEADDRNOTAVAIL
        10050 => Errno::ENETDOWN,        // WSAENETDOWN
        10051 => Errno::ENETUNREACH,     // WSAENETUNREACH
        10052 => Errno::ENETRESET,       // WSAENETRESET
        10053 => Errno::ECONNABORTED,    // WSAECONNABORTED
        10054 => Errno::ECONNRESET,      // WSAECONNRESET
        10055 => Errno::ENOBUFS,         // WSAENOBUFS
        10056 => Errno::EISCONN,         // WSAEISCONN
        10057 => Errno::ENOTCONN,        // WSAENOTCONN
        // WSAESHUTDOWN: sending after shutdown(SD_SEND), which is EPIPE on Linux (and std's
        // BrokenPipe), not ESHUTDOWN.
        10058 => Errno::EPIPE,
        10059 => Errno::ETOOMANYREFS, // WSAETOOMANYREFS
        10060 => Errno::ETIMEDOUT,    // WSAETIMEDOUT
        10061 => Errno::ECONNREFUSED, // WSAECONNREFUSED
        10062 => Errno::ELOOP,        // WSAELOOP
        10063 => Errno::ENAMETOOLONG, // WSAENAMETOOLONG
        10064 => Errno::EHOSTDOWN,    // WSAEHOSTDOWN
        10065 => Errno::EHOSTUNREACH, // WSAEHOSTUNREACH
        10066 => Errno::ENOTEMPTY,    // WSAENOTEMPTY
        10068 => Errno::EUSERS,       // WSAEUSERS
        10069 => Errno::EDQUOT,       // WSAEDQUOT
        10070 => Errno::ESTALE,       // WSAESTALE
        10071 => Errno::EREMOTE,      // WSAEREMOTE
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errno::host::unix::BSD_44;

    #[test]
    fn the_c_runtime_table() {
        let cases = [
            (1, Errno::EINVAL),
            (2, Errno::ENOENT),
            (3, Errno::ENOENT),
            (4, Errno::EMFILE),
            (5, Errno::EACCES),
            (6, Errno::EBADF),
            (8, Errno::ENOMEM),
            (17, Errno::EXDEV),
            (18, Errno::ENOENT),
            (33, Errno::EACCES),
            (80, Errno::EEXIST),
            (87, Errno::EINVAL),
            (109, Errno::EPIPE),
            (112, Errno::ENOSPC),
            (131, Errno::EINVAL),
            (145, Errno::ENOTEMPTY),
            (183, Errno::EEXIST),
            (1816, Errno::ENOMEM),
        ];
        for (code, e) in cases {
            assert_eq!(from_win32(code), Some(e), "{code}");
        }
    }

    #[test]
    fn std_kinds_then_ranges() {
        assert_eq!(from_win32(14), Some(Errno::ENOMEM)); // ERROR_OUTOFMEMORY
        assert_eq!(from_win32(19), Some(Errno::EROFS)); // before the EACCES range
        assert_eq!(from_win32(32), Some(Errno::EACCES)); // ERROR_SHARING_VIOLATION
        assert_eq!(from_win32(35), Some(Errno::EACCES)); // undefined, in the range
        assert_eq!(from_win32(36), Some(Errno::EACCES));
        assert_eq!(from_win32(37), None);
        assert_eq!(from_win32(50), Some(Errno::EOPNOTSUPP));
        assert_eq!(from_win32(120), Some(Errno::ENOSYS));
        assert_eq!(from_win32(188), Some(Errno::ENOEXEC));
        assert_eq!(from_win32(202), Some(Errno::ENOEXEC));
        assert_eq!(from_win32(203), None);
        assert_eq!(from_win32(232), Some(Errno::EPIPE));
        assert_eq!(from_win32(258), Some(Errno::ETIMEDOUT));
        assert_eq!(from_win32(267), Some(Errno::ENOTDIR));
        assert_eq!(from_win32(336), Some(Errno::EISDIR));
        assert_eq!(from_win32(1295), Some(Errno::EDQUOT));
        assert_eq!(from_win32(0), None);
        assert_eq!(from_win32(-1), None);
        assert_eq!(from_win32(99_999), None);
    }

    #[test]
    fn hresults_unwrap() {
        assert_eq!(from_win32(0x8007_0006_u32 as i32), Some(Errno::EBADF));
        assert_eq!(from_win32(0x8007_2746_u32 as i32), Some(Errno::ECONNRESET));
        assert_eq!(from_win32(0x8004_0006_u32 as i32), None);
    }

    /// Winsock's codes are 10000 plus the 4.4BSD errno: the two tables agree, but for
    /// `WSAESHUTDOWN` (EPIPE, Linux's errno for a send after shutdown) and 45 (`EOPNOTSUPP`,
    /// which BSD_44 leaves to each system).
    #[test]
    fn winsock_is_bsd() {
        let mut mapped = 0;
        for code in 10_000..11_000 {
            let Some(e) = from_win32(code) else { continue };
            mapped += 1;
            let bsd = code - 10_000;
            let expected = match bsd {
                45 => Errno::EOPNOTSUPP,
                58 => Errno::EPIPE,
                _ => BSD_44
                    .iter()
                    .find(|&&(n, _)| n == bsd)
                    .map(|&(_, e)| e)
                    .unwrap(),
            };
            assert_eq!(e, expected, "{code}");
        }
        assert_eq!(mapped, 42);
        assert_eq!(from_win32(10_067), None); // WSAEPROCLIM
    }
}

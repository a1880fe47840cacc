// Generated from the kernel's include/uapi/asm-generic/errno-base.h and errno.h; the texts are
// glibc's strerror(3) messages. Aliases (EWOULDBLOCK, EDEADLOCK, ENOTSUP) are constants below.

use super::Errno;
impl Errno {
    /// Operation not permitted (`EPERM`, 1).
    pub const EPERM: Errno = Errno(1);
    /// No such file or directory (`ENOENT`, 2).
    pub const ENOENT: Errno = Errno(2);
    /// No such process (`ESRCH`, 3).
    pub const ESRCH: Errno = Errno(3);
    /// Interrupted system call (`EINTR`, 4).
    pub const EINTR: Errno = Errno(4);
    /// Input/output error (`EIO`, 5).
    pub const EIO: Errno = Errno(5);
    /// No such device or address (`ENXIO`, 6).
    pub const ENXIO: Errno = Errno(6);
    /// Argument list too long (`E2BIG`, 7).
    pub const E2BIG: Errno = Errno(7);
    /// Exec format error (`ENOEXEC`, 8).
    pub const ENOEXEC: Errno = Errno(8);
    /// Bad file descriptor (`EBADF`, 9).
    pub const EBADF: Errno = Errno(9);
    /// No child processes (`ECHILD`, 10).
    pub const ECHILD: Errno = Errno(10);
    /// Resource temporarily unavailable (`EAGAIN`, 11).
    pub const EAGAIN: Errno = Errno(11);
    /// Cannot allocate memory (`ENOMEM`, 12).
    pub const ENOMEM: Errno = Errno(12);
    /// Permission denied (`EACCES`, 13).
    pub const EACCES: Errno = Errno(13);
    /// Bad address (`EFAULT`, 14).
    pub const EFAULT: Errno = Errno(14);
    /// Block device required (`ENOTBLK`, 15).
    pub const ENOTBLK: Errno = Errno(15);
    /// Device or resource busy (`EBUSY`, 16).
    pub const EBUSY: Errno = Errno(16);
    /// File exists (`EEXIST`, 17).
    pub const EEXIST: Errno = Errno(17);
    /// Invalid cross-device link (`EXDEV`, 18).
    pub const EXDEV: Errno = Errno(18);
    /// No such device (`ENODEV`, 19).
    pub const ENODEV: Errno = Errno(19);
    /// Not a directory (`ENOTDIR`, 20).
    pub const ENOTDIR: Errno = Errno(20);
    /// Is a directory (`EISDIR`, 21).
    pub const EISDIR: Errno = Errno(21);
    /// Invalid argument (`EINVAL`, 22).
    pub const EINVAL: Errno = Errno(22);
    /// Too many open files in system (`ENFILE`, 23).
    pub const ENFILE: Errno = Errno(23);
    /// Too many open files (`EMFILE`, 24).
    pub const EMFILE: Errno = Errno(24);
    /// Inappropriate ioctl for device (`ENOTTY`, 25).
    pub const ENOTTY: Errno = Errno(25);
    /// Text file busy (`ETXTBSY`, 26).
    pub const ETXTBSY: Errno = Errno(26);
    /// File too large (`EFBIG`, 27).
    pub const EFBIG: Errno = Errno(27);
    /// No space left on device (`ENOSPC`, 28).
    pub const ENOSPC: Errno = Errno(28);
    /// Illegal seek (`ESPIPE`, 29).
    pub const ESPIPE: Errno = Errno(29);
    /// Read-only file system (`EROFS`, 30).
    pub const EROFS: Errno = Errno(30);
    /// Too many links (`EMLINK`, 31).
    pub const EMLINK: Errno = Errno(31);
    /// Broken pipe (`EPIPE`, 32).
    pub const EPIPE: Errno = Errno(32);
    /// Numerical argument out of domain (`EDOM`, 33).
    pub const EDOM: Errno = Errno(33);
    /// Numerical result out of range (`ERANGE`, 34).
    pub const ERANGE: Errno = Errno(34);
    /// Resource deadlock avoided (`EDEADLK`, 35).
    pub const EDEADLK: Errno = Errno(35);
    /// File name too long (`ENAMETOOLONG`, 36).
    pub const ENAMETOOLONG: Errno = Errno(36);
    /// No locks available (`ENOLCK`, 37).
    pub const ENOLCK: Errno = Errno(37);
    /// Function not implemented (`ENOSYS`, 38).
    pub const ENOSYS: Errno = Errno(38);
    /// Directory not empty (`ENOTEMPTY`, 39).
    pub const ENOTEMPTY: Errno = Errno(39);
    /// Too many levels of symbolic links (`ELOOP`, 40).
    pub const ELOOP: Errno = Errno(40);
    /// No message of desired type (`ENOMSG`, 42).
    pub const ENOMSG: Errno = Errno(42);
    /// Identifier removed (`EIDRM`, 43).
    pub const EIDRM: Errno = Errno(43);
    /// Channel number out of range (`ECHRNG`, 44).
    pub const ECHRNG: Errno = Errno(44);
    /// Level 2 not synchronized (`EL2NSYNC`, 45).
    pub const EL2NSYNC: Errno = Errno(45);
    /// Level 3 halted (`EL3HLT`, 46).
    pub const EL3HLT: Errno = Errno(46);
    /// Level 3 reset (`EL3RST`, 47).
    pub const EL3RST: Errno = Errno(47);
    /// Link number out of range (`ELNRNG`, 48).
    pub const ELNRNG: Errno = Errno(48);
    /// Protocol driver not attached (`EUNATCH`, 49).
    pub const EUNATCH: Errno = Errno(49);
    /// No CSI structure available (`ENOCSI`, 50).
    pub const ENOCSI: Errno = Errno(50);
    /// Level 2 halted (`EL2HLT`, 51).
    pub const EL2HLT: Errno = Errno(51);
    /// Invalid exchange (`EBADE`, 52).
    pub const EBADE: Errno = Errno(52);
    /// Invalid request descriptor (`EBADR`, 53).
    pub const EBADR: Errno = Errno(53);
    /// Exchange full (`EXFULL`, 54).
    pub const EXFULL: Errno = Errno(54);
    /// No anode (`ENOANO`, 55).
    pub const ENOANO: Errno = Errno(55);
    /// Invalid request code (`EBADRQC`, 56).
    pub const EBADRQC: Errno = Errno(56);
    /// Invalid slot (`EBADSLT`, 57).
    pub const EBADSLT: Errno = Errno(57);
    /// Bad font file format (`EBFONT`, 59).
    pub const EBFONT: Errno = Errno(59);
    /// Device not a stream (`ENOSTR`, 60).
    pub const ENOSTR: Errno = Errno(60);
    /// No data available (`ENODATA`, 61).
    pub const ENODATA: Errno = Errno(61);
    /// Timer expired (`ETIME`, 62).
    pub const ETIME: Errno = Errno(62);
    /// Out of streams resources (`ENOSR`, 63).
    pub const ENOSR: Errno = Errno(63);
    /// Machine is not on the network (`ENONET`, 64).
    pub const ENONET: Errno = Errno(64);
    /// Package not installed (`ENOPKG`, 65).
    pub const ENOPKG: Errno = Errno(65);
    /// Object is remote (`EREMOTE`, 66).
    pub const EREMOTE: Errno = Errno(66);
    /// Link has been severed (`ENOLINK`, 67).
    pub const ENOLINK: Errno = Errno(67);
    /// Advertise error (`EADV`, 68).
    pub const EADV: Errno = Errno(68);
    /// Srmount error (`ESRMNT`, 69).
    pub const ESRMNT: Errno = Errno(69);
    /// Communication error on send (`ECOMM`, 70).
    pub const ECOMM: Errno = Errno(70);
    /// Protocol error (`EPROTO`, 71).
    pub const EPROTO: Errno = Errno(71);
    /// Multihop attempted (`EMULTIHOP`, 72).
    pub const EMULTIHOP: Errno = Errno(72);
    /// RFS specific error (`EDOTDOT`, 73).
    pub const EDOTDOT: Errno = Errno(73);
    /// Bad message (`EBADMSG`, 74).
    pub const EBADMSG: Errno = Errno(74);
    /// Value too large for defined data type (`EOVERFLOW`, 75).
    pub const EOVERFLOW: Errno = Errno(75);
    /// Name not unique on network (`ENOTUNIQ`, 76).
    pub const ENOTUNIQ: Errno = Errno(76);
    /// File descriptor in bad state (`EBADFD`, 77).
    pub const EBADFD: Errno = Errno(77);
    /// Remote address changed (`EREMCHG`, 78).
    pub const EREMCHG: Errno = Errno(78);
    /// Can not access a needed shared library (`ELIBACC`, 79).
    pub const ELIBACC: Errno = Errno(79);
    /// Accessing a corrupted shared library (`ELIBBAD`, 80).
    pub const ELIBBAD: Errno = Errno(80);
    /// .lib section in a.out corrupted (`ELIBSCN`, 81).
    pub const ELIBSCN: Errno = Errno(81);
    /// Attempting to link in too many shared libraries (`ELIBMAX`, 82).
    pub const ELIBMAX: Errno = Errno(82);
    /// Cannot exec a shared library directly (`ELIBEXEC`, 83).
    pub const ELIBEXEC: Errno = Errno(83);
    /// Invalid or incomplete multibyte or wide character (`EILSEQ`, 84).
    pub const EILSEQ: Errno = Errno(84);
    /// Interrupted system call should be restarted (`ERESTART`, 85).
    pub const ERESTART: Errno = Errno(85);
    /// Streams pipe error (`ESTRPIPE`, 86).
    pub const ESTRPIPE: Errno = Errno(86);
    /// Too many users (`EUSERS`, 87).
    pub const EUSERS: Errno = Errno(87);
    /// Socket operation on non-socket (`ENOTSOCK`, 88).
    pub const ENOTSOCK: Errno = Errno(88);
    /// Destination address required (`EDESTADDRREQ`, 89).
    pub const EDESTADDRREQ: Errno = Errno(89);
    /// Message too long (`EMSGSIZE`, 90).
    pub const EMSGSIZE: Errno = Errno(90);
    /// Protocol wrong type for socket (`EPROTOTYPE`, 91).
    pub const EPROTOTYPE: Errno = Errno(91);
    /// Protocol not available (`ENOPROTOOPT`, 92).
    pub const ENOPROTOOPT: Errno = Errno(92);
    /// Protocol not supported (`EPROTONOSUPPORT`, 93).
    pub const EPROTONOSUPPORT: Errno = Errno(93);
    /// Socket type not supported (`ESOCKTNOSUPPORT`, 94).
    pub const ESOCKTNOSUPPORT: Errno = Errno(94);
    /// Operation not supported (`EOPNOTSUPP`, 95).
    pub const EOPNOTSUPP: Errno = Errno(95);
    /// Protocol family not supported (`EPFNOSUPPORT`, 96).
    pub const EPFNOSUPPORT: Errno = Errno(96);
    /// Address family not supported by protocol (`EAFNOSUPPORT`, 97).
    pub const EAFNOSUPPORT: Errno = Errno(97);
    /// Address already in use (`EADDRINUSE`, 98).
    pub const EADDRINUSE: Errno = Errno(98);
    /// Cannot assign requested address (`EADDRNOTAVAIL`, 99).
    pub const EADDRNOTAVAIL: Errno = Errno(99);
    /// Network is down (`ENETDOWN`, 100).
    pub const ENETDOWN: Errno = Errno(100);
    /// Network is unreachable (`ENETUNREACH`, 101).
    pub const ENETUNREACH: Errno = Errno(101);
    /// Network dropped connection on reset (`ENETRESET`, 102).
    pub const ENETRESET: Errno = Errno(102);
    /// Software caused connection abort (`ECONNABORTED`, 103).
    pub const ECONNABORTED: Errno = Errno(103);
    /// Connection reset by peer (`ECONNRESET`, 104).
    pub const ECONNRESET: Errno = Errno(104);
    /// No buffer space available (`ENOBUFS`, 105).
    pub const ENOBUFS: Errno = Errno(105);
    /// Transport endpoint is already connected (`EISCONN`, 106).
    pub const EISCONN: Errno = Errno(106);
    /// Transport endpoint is not connected (`ENOTCONN`, 107).
    pub const ENOTCONN: Errno = Errno(107);
    /// Cannot send after transport endpoint shutdown (`ESHUTDOWN`, 108).
    pub const ESHUTDOWN: Errno = Errno(108);
    /// Too many references: cannot splice (`ETOOMANYREFS`, 109).
    pub const ETOOMANYREFS: Errno = Errno(109);
    /// Connection timed out (`ETIMEDOUT`, 110).
    pub const ETIMEDOUT: Errno = Errno(110);
    /// Connection refused (`ECONNREFUSED`, 111).
    pub const ECONNREFUSED: Errno = Errno(111);
    /// Host is down (`EHOSTDOWN`, 112).
    pub const EHOSTDOWN: Errno = Errno(112);
    /// No route to host (`EHOSTUNREACH`, 113).
    pub const EHOSTUNREACH: Errno = Errno(113);
    /// Operation already in progress (`EALREADY`, 114).
    pub const EALREADY: Errno = Errno(114);
    /// Operation now in progress (`EINPROGRESS`, 115).
    pub const EINPROGRESS: Errno = Errno(115);
    /// Stale file handle (`ESTALE`, 116).
    pub const ESTALE: Errno = Errno(116);
    /// Structure needs cleaning (`EUCLEAN`, 117).
    pub const EUCLEAN: Errno = Errno(117);
    /// Not a XENIX named type file (`ENOTNAM`, 118).
    pub const ENOTNAM: Errno = Errno(118);
    /// No XENIX semaphores available (`ENAVAIL`, 119).
    pub const ENAVAIL: Errno = Errno(119);
    /// Is a named type file (`EISNAM`, 120).
    pub const EISNAM: Errno = Errno(120);
    /// Remote I/O error (`EREMOTEIO`, 121).
    pub const EREMOTEIO: Errno = Errno(121);
    /// Disk quota exceeded (`EDQUOT`, 122).
    pub const EDQUOT: Errno = Errno(122);
    /// No medium found (`ENOMEDIUM`, 123).
    pub const ENOMEDIUM: Errno = Errno(123);
    /// Wrong medium type (`EMEDIUMTYPE`, 124).
    pub const EMEDIUMTYPE: Errno = Errno(124);
    /// Operation canceled (`ECANCELED`, 125).
    pub const ECANCELED: Errno = Errno(125);
    /// Required key not available (`ENOKEY`, 126).
    pub const ENOKEY: Errno = Errno(126);
    /// Key has expired (`EKEYEXPIRED`, 127).
    pub const EKEYEXPIRED: Errno = Errno(127);
    /// Key has been revoked (`EKEYREVOKED`, 128).
    pub const EKEYREVOKED: Errno = Errno(128);
    /// Key was rejected by service (`EKEYREJECTED`, 129).
    pub const EKEYREJECTED: Errno = Errno(129);
    /// Owner died (`EOWNERDEAD`, 130).
    pub const EOWNERDEAD: Errno = Errno(130);
    /// State not recoverable (`ENOTRECOVERABLE`, 131).
    pub const ENOTRECOVERABLE: Errno = Errno(131);
    /// Operation not possible due to RF-kill (`ERFKILL`, 132).
    pub const ERFKILL: Errno = Errno(132);
    /// Memory page has hardware error (`EHWPOISON`, 133).
    pub const EHWPOISON: Errno = Errno(133);
}

/// Every errno this crate names: (value, name, message), ordered by value.
pub(crate) static TABLE: &[(i32, &str, &str)] = &[
    (1, "EPERM", "Operation not permitted"),
    (2, "ENOENT", "No such file or directory"),
    (3, "ESRCH", "No such process"),
    (4, "EINTR", "Interrupted system call"),
    (5, "EIO", "Input/output error"),
    (6, "ENXIO", "No such device or address"),
    (7, "E2BIG", "Argument list too long"),
    (8, "ENOEXEC", "Exec format error"),
    (9, "EBADF", "Bad file descriptor"),
    (10, "ECHILD", "No child processes"),
    (11, "EAGAIN", "Resource temporarily unavailable"),
    (12, "ENOMEM", "Cannot allocate memory"),
    (13, "EACCES", "Permission denied"),
    (14, "EFAULT", "Bad address"),
    (15, "ENOTBLK", "Block device required"),
    (16, "EBUSY", "Device or resource busy"),
    (17, "EEXIST", "File exists"),
    (18, "EXDEV", "Invalid cross-device link"),
    (19, "ENODEV", "No such device"),
    (20, "ENOTDIR", "Not a directory"),
    (21, "EISDIR", "Is a directory"),
    (22, "EINVAL", "Invalid argument"),
    (23, "ENFILE", "Too many open files in system"),
    (24, "EMFILE", "Too many open files"),
    (25, "ENOTTY", "Inappropriate ioctl for device"),
    (26, "ETXTBSY", "Text file busy"),
    (27, "EFBIG", "File too large"),
    (28, "ENOSPC", "No space left on device"),
    (29, "ESPIPE", "Illegal seek"),
    (30, "EROFS", "Read-only file system"),
    (31, "EMLINK", "Too many links"),
    (32, "EPIPE", "Broken pipe"),
    (33, "EDOM", "Numerical argument out of domain"),
    (34, "ERANGE", "Numerical result out of range"),
    (35, "EDEADLK", "Resource deadlock avoided"),
    (36, "ENAMETOOLONG", "File name too long"),
    (37, "ENOLCK", "No locks available"),
    (38, "ENOSYS", "Function not implemented"),
    (39, "ENOTEMPTY", "Directory not empty"),
    (40, "ELOOP", "Too many levels of symbolic links"),
    (42, "ENOMSG", "No message of desired type"),
    (43, "EIDRM", "Identifier removed"),
    (44, "ECHRNG", "Channel number out of range"),
    (45, "EL2NSYNC", "Level 2 not synchronized"),
    (46, "EL3HLT", "Level 3 halted"),
    (47, "EL3RST", "Level 3 reset"),
    (48, "ELNRNG", "Link number out of range"),
    (49, "EUNATCH", "Protocol driver not attached"),
    (50, "ENOCSI", "No CSI structure available"),
    (51, "EL2HLT", "Level 2 halted"),
    (52, "EBADE", "Invalid exchange"),
    (53, "EBADR", "Invalid request descriptor"),
    (54, "EXFULL", "Exchange full"),
    (55, "ENOANO", "No anode"),
    (56, "EBADRQC", "Invalid request code"),
    (57, "EBADSLT", "Invalid slot"),
    (59, "EBFONT", "Bad font file format"),
    (60, "ENOSTR", "Device not a stream"),
    (61, "ENODATA", "No data available"),
    (62, "ETIME", "Timer expired"),
    (63, "ENOSR", "Out of streams resources"),
    (64, "ENONET", "Machine is not on the network"),
    (65, "ENOPKG", "Package not installed"),
    (66, "EREMOTE", "Object is remote"),
    (67, "ENOLINK", "Link has been severed"),
    (68, "EADV", "Advertise error"),
    (69, "ESRMNT", "Srmount error"),
    (70, "ECOMM", "Communication error on send"),
    (71, "EPROTO", "Protocol error"),
    (72, "EMULTIHOP", "Multihop attempted"),
    (73, "EDOTDOT", "RFS specific error"),
    (74, "EBADMSG", "Bad message"),
    (75, "EOVERFLOW", "Value too large for defined data type"),
    (76, "ENOTUNIQ", "Name not unique on network"),
    (77, "EBADFD", "File descriptor in bad state"),
    (78, "EREMCHG", "Remote address changed"),
    (79, "ELIBACC", "Can not access a needed shared library"),
    (80, "ELIBBAD", "Accessing a corrupted shared library"),
    (81, "ELIBSCN", ".lib section in a.out corrupted"),
    (
        82,
        "ELIBMAX",
        "Attempting to link in too many shared libraries",
    ),
    (83, "ELIBEXEC", "Cannot exec a shared library directly"),
    (
        84,
        "EILSEQ",
        "Invalid or incomplete multibyte or wide character",
    ),
    (
        85,
        "ERESTART",
        "Interrupted system call should be restarted",
    ),
    (86, "ESTRPIPE", "Streams pipe error"),
    (87, "EUSERS", "Too many users"),
    (88, "ENOTSOCK", "Socket operation on non-socket"),
    (89, "EDESTADDRREQ", "Destination address required"),
    (90, "EMSGSIZE", "Message too long"),
    (91, "EPROTOTYPE", "Protocol wrong type for socket"),
    (92, "ENOPROTOOPT", "Protocol not available"),
    (93, "EPROTONOSUPPORT", "Protocol not supported"),
    (94, "ESOCKTNOSUPPORT", "Socket type not supported"),
    (95, "EOPNOTSUPP", "Operation not supported"),
    (96, "EPFNOSUPPORT", "Protocol family not supported"),
    (
        97,
        "EAFNOSUPPORT",
        "Address family not supported by protocol",
    ),
    (98, "EADDRINUSE", "Address already in use"),
    (99, "EADDRNOTAVAIL", "Cannot assign requested address"),
    (100, "ENETDOWN", "Network is down"),
    (101, "ENETUNREACH", "Network is unreachable"),
    (102, "ENETRESET", "Network dropped connection on reset"),
    (103, "ECONNABORTED", "Software caused connection abort"),
    (104, "ECONNRESET", "Connection reset by peer"),
    (105, "ENOBUFS", "No buffer space available"),
    (106, "EISCONN", "Transport endpoint is already connected"),
    (107, "ENOTCONN", "Transport endpoint is not connected"),
    (
        108,
        "ESHUTDOWN",
        "Cannot send after transport endpoint shutdown",
    ),
    (109, "ETOOMANYREFS", "Too many references: cannot splice"),
    (110, "ETIMEDOUT", "Connection timed out"),
    (111, "ECONNREFUSED", "Connection refused"),
    (112, "EHOSTDOWN", "Host is down"),
    (113, "EHOSTUNREACH", "No route to host"),
    (114, "EALREADY", "Operation already in progress"),
    (115, "EINPROGRESS", "Operation now in progress"),
    (116, "ESTALE", "Stale file handle"),
    (117, "EUCLEAN", "Structure needs cleaning"),
    (118, "ENOTNAM", "Not a XENIX named type file"),
    (119, "ENAVAIL", "No XENIX semaphores available"),
    (120, "EISNAM", "Is a named type file"),
    (121, "EREMOTEIO", "Remote I/O error"),
    (122, "EDQUOT", "Disk quota exceeded"),
    (123, "ENOMEDIUM", "No medium found"),
    (124, "EMEDIUMTYPE", "Wrong medium type"),
    (125, "ECANCELED", "Operation canceled"),
    (126, "ENOKEY", "Required key not available"),
    (127, "EKEYEXPIRED", "Key has expired"),
    (128, "EKEYREVOKED", "Key has been revoked"),
    (129, "EKEYREJECTED", "Key was rejected by service"),
    (130, "EOWNERDEAD", "Owner died"),
    (131, "ENOTRECOVERABLE", "State not recoverable"),
    (132, "ERFKILL", "Operation not possible due to RF-kill"),
    (133, "EHWPOISON", "Memory page has hardware error"),
];

/// Invokes `$m!` with the name of every errno Linux defines (`EWOULDBLOCK` and `EDEADLOCK`,
/// its aliases, included), for code that needs them as identifiers: the libc crate's
/// constants by name, and the test that checks the numbers against the host's. (Used only on
/// the hosts and in the builds that need it.)
#[allow(unused_macros)]
macro_rules! linux_errno_names {
    ($m:ident) => {
        $m!(
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
            ECHRNG,
            EL2NSYNC,
            EL3HLT,
            EL3RST,
            ELNRNG,
            EUNATCH,
            ENOCSI,
            EL2HLT,
            EBADE,
            EBADR,
            EXFULL,
            ENOANO,
            EBADRQC,
            EBADSLT,
            EBFONT,
            ENOSTR,
            ENODATA,
            ETIME,
            ENOSR,
            ENONET,
            ENOPKG,
            EREMOTE,
            ENOLINK,
            EADV,
            ESRMNT,
            ECOMM,
            EPROTO,
            EMULTIHOP,
            EDOTDOT,
            EBADMSG,
            EOVERFLOW,
            ENOTUNIQ,
            EBADFD,
            EREMCHG,
            ELIBACC,
            ELIBBAD,
            ELIBSCN,
            ELIBMAX,
            ELIBEXEC,
            EILSEQ,
            ERESTART,
            ESTRPIPE,
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
            EUCLEAN,
            ENOTNAM,
            ENAVAIL,
            EISNAM,
            EREMOTEIO,
            EDQUOT,
            ENOMEDIUM,
            EMEDIUMTYPE,
            ECANCELED,
            ENOKEY,
            EKEYEXPIRED,
            EKEYREVOKED,
            EKEYREJECTED,
            EOWNERDEAD,
            ENOTRECOVERABLE,
            ERFKILL,
            EHWPOISON,
            EWOULDBLOCK,
            EDEADLOCK,
            ENOTSUP,
        );
    };
}
#[allow(unused_imports)]
pub(crate) use linux_errno_names;

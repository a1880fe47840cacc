//! Steps: the atomic table effects a call is made of, each executed by the library and
//! compared with what the log says.
//!
//! Most calls are one step. A call that reserves a descriptor and fails later (an `openat`
//! that gets ENOENT, an `accept` that gets EAGAIN) is two: [`Step::Reserve`] then
//! [`Step::Release`]. Calls that take several descriptors one at a time (pipe2, socketpair,
//! SCM_RIGHTS) are one [`Step::Alloc`] per descriptor. Between the steps of one call, another
//! thread's steps may run (P3); the search in [`super::search`] exploits that.

use crate::decode::Kind;
use fdtable::{Errno, FdState, FileLike, FileRef, Files, O_CLOEXEC};
use std::fmt;

/// The open file description the replay installs: what it is and where it came from.
#[derive(Debug)]
pub struct Obj {
    /// Kind of object.
    pub kind: Kind,
    /// Opened with `O_PATH`.
    pub opath: bool,
    /// Line of the call that created it (0: initial state).
    pub line: u64,
}

impl FileLike for Obj {}

/// A descriptor table of the replay.
pub type Fdt = Files<Obj>;

/// A value compared between the library and the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// A descriptor number.
    Fd(u32),
    /// An errno.
    Err(Errno),
    /// Success without a value (close, F_SETFD, close_range).
    Ok,
    /// The close-on-exec bit (F_GETFD).
    Bit(bool),
    /// F_DUPFD_QUERY's answer.
    Same(bool),
    /// A reservation succeeded (the log's later error was not a table error).
    Reserved(u32),
    /// Expected: a reservation is possible (the table was not full).
    NotFull,
}

impl Val {
    /// Whether `got` (the library) satisfies `self` (the log).
    pub fn accepts(self, got: Val) -> bool {
        match self {
            Val::NotFull => matches!(got, Val::Reserved(_)),
            e => e == got,
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Fd(n) => write!(f, "{n}"),
            Val::Err(e) => write!(f, "{e:?}"),
            Val::Ok => f.write_str("0"),
            Val::Bit(b) => f.write_str(if *b { "FD_CLOEXEC" } else { "0" }),
            Val::Same(b) => write!(f, "{}", u8::from(*b)),
            Val::Reserved(n) => write!(f, "reserved {n}"),
            Val::NotFull => f.write_str("a free descriptor"),
        }
    }
}

/// One atomic table effect with the value the log expects from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Allocate the lowest free fd and install a new object there (`get_unused_fd_flags` +
    /// `fd_install`).
    Alloc {
        /// Close-on-exec.
        cloexec: bool,
        /// Object kind.
        kind: Kind,
        /// O_PATH.
        opath: bool,
        /// The fd the log returned, or its errno.
        expect: Val,
    },
    /// Reserve the lowest free fd and hold it until [`Step::Install`]: the first half of an
    /// open or accept, which reserve before the path walk or the wait (P3: meanwhile the
    /// number is taken, and `dup2` onto it is EBUSY).
    ReserveAt {
        /// Close-on-exec.
        cloexec: bool,
        /// The fd the log returned.
        expect: Val,
    },
    /// Install a new object at the fd this call reserved (`fd_install`).
    Install {
        /// Object kind.
        kind: Kind,
        /// O_PATH.
        opath: bool,
    },
    /// Reserve the lowest free fd and hold it (a call that fails after reserving).
    Reserve,
    /// Reserve the lowest free fd if there is one and hold it: the first fd of a pair whose
    /// second allocation then fails (EMFILE). A full table is no disagreement.
    TryReserve,
    /// Give back every fd this call holds (`put_unused_fd`).
    Release,
    /// `n` allocations must fail: the log answered a table error such as EMFILE.
    Full {
        /// How many fds the call needed.
        n: u8,
        /// The errno the log gave.
        expect: Errno,
    },
    /// `close(fd)`.
    Close {
        /// Fd.
        fd: u32,
        /// Ok or EBADF.
        expect: Val,
    },
    /// `dup(fd)`.
    Dup {
        /// Fd.
        fd: u32,
        /// New fd or errno.
        expect: Val,
    },
    /// `dup2(old, new)`.
    Dup2 {
        /// Old fd.
        old: u32,
        /// New fd.
        new: u32,
        /// Result.
        expect: Val,
    },
    /// `dup3(old, new, flags)`.
    Dup3 {
        /// Old fd.
        old: u32,
        /// New fd.
        new: u32,
        /// Flags.
        flags: u32,
        /// Result.
        expect: Val,
    },
    /// `fcntl(fd, F_DUPFD[_CLOEXEC], from)`.
    DupFd {
        /// Fd.
        fd: u32,
        /// Minimum.
        from: u32,
        /// F_DUPFD_CLOEXEC.
        cloexec: bool,
        /// Result.
        expect: Val,
    },
    /// `fcntl(fd, F_GETFD)`.
    GetFd {
        /// Fd.
        fd: u32,
        /// The bit or EBADF.
        expect: Val,
    },
    /// `fcntl(fd, F_SETFD)` or `ioctl(fd, FIOCLEX / FIONCLEX)`.
    SetFd {
        /// Fd.
        fd: u32,
        /// New bit.
        cloexec: bool,
        /// Through ioctl (`fdget`: O_PATH is EBADF).
        ioctl: bool,
        /// Ok or EBADF.
        expect: Val,
    },
    /// `fcntl(fd, F_DUPFD_QUERY, other)`.
    Query {
        /// Fd.
        fd: u32,
        /// The other fd.
        other: u32,
        /// Same / EBADF.
        expect: Val,
    },
    /// `close_range(first, last, flags)` without CLOSE_RANGE_UNSHARE.
    CloseRange {
        /// First.
        first: u32,
        /// Last.
        last: u32,
        /// Flags.
        flags: u32,
        /// Ok or EINVAL.
        expect: Val,
    },
    /// The fd must not be installed (a lookup answered EBADF).
    Closed {
        /// Fd.
        fd: u32,
        /// Looked up with `fdget`: an O_PATH file counts as absent.
        hide_opath: bool,
    },
}

/// What running a step gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// What the log says.
    pub expect: Val,
    /// What the library computed.
    pub got: Val,
    /// Whether this counts as a checked value (a reservation that succeeded is not a value).
    pub counted: bool,
}

impl Check {
    /// Whether the library agrees with the log.
    pub fn ok(&self) -> bool {
        self.expect.accepts(self.got)
    }
}

impl Step {
    /// How many values this step checks when it agrees.
    pub fn counted(&self) -> u32 {
        match self {
            Step::Reserve | Step::TryReserve | Step::Release | Step::Install { .. } => 0,
            _ => 1,
        }
    }

    /// Runs the step on `f` through the library. `held` holds the fds this call reserved;
    /// `nofile` is the caller's RLIMIT_NOFILE.
    pub fn run(&self, f: &mut Fdt, held: &mut Vec<u32>, nofile: u64, line: u64) -> Check {
        let check = |expect: Val, got: Val| Check {
            expect,
            got,
            counted: true,
        };
        let val = |r: Result<u32, Errno>| r.map_or_else(Val::Err, Val::Fd);
        let unit = |r: Result<(), Errno>| r.map_or_else(Val::Err, |()| Val::Ok);
        match *self {
            Step::Alloc {
                cloexec,
                kind,
                opath,
                expect,
            } => {
                let flags = if cloexec { O_CLOEXEC } else { 0 };
                let got = match f.get_unused_fd_flags(flags, nofile) {
                    Ok(r) => Val::Fd(r.install(FileRef::new(Obj { kind, opath, line }))),
                    Err(e) => Val::Err(e),
                };
                check(expect, got)
            }
            Step::ReserveAt { cloexec, expect } => {
                let flags = if cloexec { O_CLOEXEC } else { 0 };
                let got = match f.alloc_fd(0, nofile, flags) {
                    Ok(fd) => {
                        held.push(fd);
                        Val::Fd(fd)
                    }
                    Err(e) => Val::Err(e),
                };
                check(expect, got)
            }
            Step::Install { kind, opath } => {
                let got = match held.pop() {
                    Some(fd) => unit(f.fd_install(fd, FileRef::new(Obj { kind, opath, line }))),
                    None => Val::Err(Errno::EBADF),
                };
                Check {
                    expect: Val::Ok,
                    got,
                    counted: got != Val::Ok,
                }
            }
            Step::Reserve => {
                let got = match f.alloc_fd(0, nofile, 0) {
                    Ok(fd) => {
                        held.push(fd);
                        Val::Reserved(fd)
                    }
                    Err(e) => Val::Err(e),
                };
                Check {
                    expect: Val::NotFull,
                    got,
                    counted: !matches!(got, Val::Reserved(_)),
                }
            }
            Step::TryReserve => {
                if let Ok(fd) = f.alloc_fd(0, nofile, 0) {
                    held.push(fd);
                }
                Check {
                    expect: Val::Ok,
                    got: Val::Ok,
                    counted: false,
                }
            }
            Step::Release => {
                for fd in held.drain(..) {
                    f.put_unused_fd(fd);
                }
                Check {
                    expect: Val::Ok,
                    got: Val::Ok,
                    counted: false,
                }
            }
            Step::Full { n, expect } => {
                let mut got = None;
                let mut taken = Vec::new();
                for _ in 0..n {
                    match f.alloc_fd(0, nofile, 0) {
                        Ok(fd) => taken.push(fd),
                        Err(e) => {
                            got = Some(Val::Err(e));
                            break;
                        }
                    }
                }
                for &fd in &taken {
                    f.put_unused_fd(fd);
                }
                let got = got.unwrap_or_else(|| Val::Fd(taken.first().copied().unwrap_or(0)));
                check(Val::Err(expect), got)
            }
            Step::Close { fd, expect } => check(expect, unit(f.close_fd(fd))),
            Step::Dup { fd, expect } => check(expect, val(f.dup(fd, nofile))),
            Step::Dup2 { old, new, expect } => check(expect, val(f.dup2(old, new, nofile))),
            Step::Dup3 {
                old,
                new,
                flags,
                expect,
            } => check(expect, val(f.dup3(old, new, flags, nofile))),
            Step::DupFd {
                fd,
                from,
                cloexec,
                expect,
            } => check(expect, val(f.dupfd(fd, from, cloexec, nofile))),
            Step::GetFd { fd, expect } => check(
                expect,
                f.get_close_on_exec(fd).map_or_else(Val::Err, Val::Bit),
            ),
            Step::SetFd {
                fd,
                cloexec,
                ioctl,
                expect,
            } => {
                // ioctl looks the fd up with `fdget`, which hides O_PATH files.
                let hidden = ioctl && f.fget(fd).is_some_and(|file| file.opath);
                let got = if hidden {
                    Val::Err(Errno::EBADF)
                } else {
                    unit(f.set_close_on_exec(fd, cloexec))
                };
                check(expect, got)
            }
            Step::Query { fd, other, expect } => check(
                expect,
                f.dupfd_query(fd, other).map_or_else(Val::Err, Val::Same),
            ),
            Step::CloseRange {
                first,
                last,
                flags,
                expect,
            } => check(expect, unit(f.close_range(first, last, flags))),
            Step::Closed { fd, hide_opath } => {
                let got = match f.fd_state(fd) {
                    FdState::Installed { .. }
                        if hide_opath && f.fget(fd).is_some_and(|file| file.opath) =>
                    {
                        Val::Err(Errno::EBADF)
                    }
                    FdState::Installed { .. } => Val::Ok,
                    _ => Val::Err(Errno::EBADF),
                };
                check(Val::Err(Errno::EBADF), got)
            }
        }
    }
}

/// A copy of `f` that behaves the same for every later operation: `fork` (a private copy
/// sharing the open files) plus the reservations, which `fork` leaves out of a child.
pub fn duplicate(f: &Fdt) -> Result<Fdt, Errno> {
    let c = f.fork()?;
    let mut from = 0;
    while let Some(fd) = f.next_reserved_fd(from) {
        c.alloc_fd(fd, u64::from(fd) + 1, 0)?;
        from = fd + 1;
    }
    Ok(c)
}

/// A fingerprint of a table's descriptor state (installed fds with their close-on-exec bits,
/// and reserved fds), for the search's memo.
pub fn fingerprint(f: &Fdt) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for o in f.iter() {
        (o.fd, o.cloexec).hash(&mut h);
    }
    0xffff_ffffu64.hash(&mut h);
    let mut from = 0;
    while let Some(fd) = f.next_reserved_fd(from) {
        fd.hash(&mut h);
        from = fd + 1;
    }
    h.finish()
}

/// Installs a new object at exactly `fd` (bypassing the limit), for initial descriptors and
/// resyncs. Closes what was there first. Descriptors at or beyond the library's `nr_open`
/// (`fs.nr_open`: no table holds them) are refused before they get here: results by
/// [`super::plan::plan`], initial descriptors by the meta file's checks.
pub fn force_install(f: &mut Fdt, fd: u32, kind: Kind, line: u64) {
    if fd as usize >= fdtable::nr_open() {
        return;
    }
    match f.fd_state(fd) {
        FdState::Installed { .. } => {
            let _ = f.close_fd(fd);
        }
        FdState::Reserved => f.put_unused_fd(fd),
        FdState::Free => {}
    }
    if let Ok(got) = f.alloc_fd(fd, u64::from(fd) + 1, 0) {
        let _ = f.fd_install(
            got,
            FileRef::new(Obj {
                kind,
                opath: false,
                line,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keeps_reservations_and_fingerprint_sees_them() {
        let mut f = Fdt::new();
        force_install(&mut f, 0, Kind::Inherited, 0);
        let mut held = vec![];
        let chk = Step::Reserve.run(&mut f, &mut held, 1024, 1);
        assert_eq!(chk.got, Val::Reserved(1));
        let g = duplicate(&f).unwrap();
        assert_eq!(g.fd_state(1), FdState::Reserved);
        assert_eq!(fingerprint(&f), fingerprint(&g));
        Step::Release.run(&mut f, &mut held, 1024, 1);
        assert_ne!(fingerprint(&f), fingerprint(&g));
    }

    #[test]
    fn force_install_reaches_nr_open() {
        let mut f = Fdt::new();
        let top = fdtable::nr_open() as u32 - 1;
        for fd in [70_000, top] {
            force_install(&mut f, fd, Kind::Inherited, 0);
            assert!(matches!(f.fd_state(fd), FdState::Installed { .. }), "{fd}");
        }
    }

    #[test]
    fn steps_compare_library_and_log() {
        let mut f = Fdt::new();
        let mut held = vec![];
        let open = Step::Alloc {
            cloexec: true,
            kind: Kind::File,
            opath: false,
            expect: Val::Fd(0),
        };
        assert!(open.run(&mut f, &mut held, 1024, 1).ok());
        let getfd = Step::GetFd {
            fd: 0,
            expect: Val::Bit(false),
        };
        let chk = getfd.run(&mut f, &mut held, 1024, 2);
        assert_eq!((chk.ok(), chk.got), (false, Val::Bit(true)));
        let full = Step::Full {
            n: 1,
            expect: Errno::EMFILE,
        };
        assert!(full.run(&mut f, &mut held, 1, 3).ok());
        assert!(!full.run(&mut f, &mut held, 2, 3).ok());
    }
}

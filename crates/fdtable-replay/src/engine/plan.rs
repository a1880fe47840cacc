//! From a decoded call and its logged result to the steps the library must replay (P9, P13).
//!
//! The rule everywhere: the library computes every descriptor-layer result (fd numbers,
//! EBADF, EMFILE, EINVAL, EBUSY, close-on-exec bits) and the log's value is what it is
//! compared with; errors only the kernel's other layers can know (ENOENT, ECONNREFUSED,
//! EAGAIN...) are taken from the log, in the order the kernel checks them:
//!
//! - `openat` and `accept` reserve their descriptor before the path walk or the wait, so a
//!   full table gives EMFILE whatever the path, and a failure later held a number meanwhile;
//! - `socket`, `eventfd` and most other creators build their object first, so its errors win
//!   over EMFILE and a failure never touched the table;
//! - `socketpair` reserves both descriptors before creating the sockets;
//! - `close` frees the descriptor even when it reports EINTR or EIO.
//!
//! Interrupted calls (`? ERESTART*`) installed nothing (P9).

use super::step::{Step, Val};
use crate::decode::{Alloc, Kind, Op};
use crate::parse::Ret;
use fdtable::Errno;

/// What to do with a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Replay these steps (possibly none: an injected error that never reached the table).
    Steps(Vec<Step>),
    /// Not replayable: why.
    Skip(&'static str),
    /// A result no kernel can return (a descriptor above INT_MAX or beyond `fs.nr_open`): the
    /// line is bad.
    Bad(String),
}

fn table_err(e: Errno, table: &[Errno]) -> bool {
    table.contains(&e)
}

/// The steps of a table operation. `args` are the call's descriptor arguments as the kernel
/// sees them (for accept's listening fd and an ioctl's fd; negative values included).
///
/// A descriptor the log says a call returned must be below the library's `nr_open` (no
/// table grows past it, and the kernel's `fs.nr_open` is at most INT_MAX): anything else
/// is [`Plan::Bad`], so that a corrupt result costs neither time nor memory.
pub fn plan(op: &Op, ret: Ret, args: &[u32]) -> Plan {
    let p = plan_steps(op, ret, args);
    if let Plan::Steps(steps) = &p {
        let max = fdtable::nr_open();
        for s in steps {
            if let Step::Alloc {
                expect: Val::Fd(fd),
                ..
            }
            | Step::ReserveAt {
                expect: Val::Fd(fd),
                ..
            }
            | Step::Dup {
                expect: Val::Fd(fd),
                ..
            }
            | Step::DupFd {
                expect: Val::Fd(fd),
                ..
            }
            | Step::Dup2 {
                expect: Val::Fd(fd),
                ..
            }
            | Step::Dup3 {
                expect: Val::Fd(fd),
                ..
            } = s
                && *fd as usize >= max
            {
                return Plan::Bad(format!(
                    "descriptor {fd} is beyond fs.nr_open ({max}), the largest table there is"
                ));
            }
        }
    }
    p
}

/// A logged value as a descriptor: 0 to INT_MAX.
fn fd_value(v: i64) -> Result<u32, Plan> {
    match i32::try_from(v) {
        Ok(fd) if fd >= 0 => Ok(fd as u32),
        _ => Err(Plan::Bad(format!("result {v} is not a descriptor"))),
    }
}

fn plan_steps(op: &Op, ret: Ret, args: &[u32]) -> Plan {
    use Plan::*;
    let one = |s: Step| Steps(vec![s]);
    match op {
        Op::NewFd {
            alloc,
            cloexec,
            kind,
            opath,
        } => {
            let alloc_step = |expect| Step::Alloc {
                cloexec: *cloexec,
                kind: *kind,
                opath: *opath,
                expect,
            };
            match (ret, alloc) {
                (Ret::Val(v), Alloc::ReserveFirst | Alloc::Accept | Alloc::Ioctl) => {
                    match fd_value(v) {
                        Ok(fd) => Steps(vec![
                            Step::ReserveAt {
                                cloexec: *cloexec,
                                expect: Val::Fd(fd),
                            },
                            Step::Install {
                                kind: *kind,
                                opath: *opath,
                            },
                        ]),
                        Err(bad) => bad,
                    }
                }
                (Ret::Val(v), Alloc::CreateFirst) => match fd_value(v) {
                    Ok(fd) => one(alloc_step(Val::Fd(fd))),
                    Err(bad) => bad,
                },
                (Ret::Err(Errno::EMFILE), _) => one(Step::Full {
                    n: 1,
                    expect: Errno::EMFILE,
                }),
                // Both look their descriptor up with `fdget`: O_PATH is EBADF too.
                (Ret::Err(Errno::EBADF), Alloc::Accept | Alloc::Ioctl) => match args.first() {
                    Some(&fd) => one(Step::Closed {
                        fd,
                        hide_opath: true,
                    }),
                    None => Steps(vec![]),
                },
                // Errors found before the descriptor is reserved.
                (Ret::Err(Errno::EINVAL | Errno::EFAULT | Errno::ENAMETOOLONG), _) => Steps(vec![]),
                (Ret::Err(_) | Ret::Restart, Alloc::ReserveFirst | Alloc::Accept) => {
                    Steps(vec![Step::Reserve, Step::Release])
                }
                (Ret::Err(_) | Ret::Restart, Alloc::CreateFirst | Alloc::Ioctl) => Steps(vec![]),
                // The task died blocked in the call (an accept, a FIFO's open): the number
                // it reserved at entry was held until then (red team 35, N10).
                (Ret::Unknown, Alloc::ReserveFirst | Alloc::Accept) => {
                    Steps(vec![Step::Reserve, Step::Release])
                }
                (Ret::Unknown, _) => Skip("no result (the task died in the call)"),
            }
        }
        Op::Pair {
            fds,
            cloexec,
            reserve_first,
        } => match ret {
            Ret::Val(_) => match fds {
                Some([a, b]) => Steps(
                    [*a, *b]
                        .into_iter()
                        .map(|fd| Step::Alloc {
                            cloexec: *cloexec,
                            kind: Kind::Anon,
                            opath: false,
                            expect: Val::Fd(fd),
                        })
                        .collect(),
                ),
                None => Skip("descriptor numbers not printed"),
            },
            // The first number is taken if there is one, the second fails, the first is
            // given back: meanwhile the first was held (red team 35, N4).
            Ret::Err(Errno::EMFILE) => Steps(vec![
                Step::TryReserve,
                Step::Full {
                    n: 1,
                    expect: Errno::EMFILE,
                },
                Step::Release,
            ]),
            // Both numbers are taken before the copy-out fails, then given back.
            Ret::Err(Errno::EFAULT) => Steps(vec![Step::Reserve, Step::Reserve, Step::Release]),
            Ret::Err(Errno::EINVAL) => Steps(vec![]),
            Ret::Err(_) if *reserve_first => {
                Steps(vec![Step::Reserve, Step::Reserve, Step::Release])
            }
            Ret::Err(_) | Ret::Restart => Steps(vec![]),
            Ret::Unknown => Skip("no result (the task died in the call)"),
        },
        Op::Close(fd) => match ret {
            Ret::Err(Errno::EBADF) => one(Step::Close {
                fd: *fd,
                expect: Val::Err(Errno::EBADF),
            }),
            // EINTR, EIO, ENOSPC...: reported by ->flush, the descriptor is gone anyway.
            Ret::Val(_) | Ret::Err(_) | Ret::Restart => one(Step::Close {
                fd: *fd,
                expect: Val::Ok,
            }),
            Ret::Unknown => Skip("no result (the task died in the call)"),
        },
        Op::Dup(fd) => fd_result(ret, &[Errno::EBADF, Errno::EMFILE], |expect| Step::Dup {
            fd: *fd,
            expect,
        }),
        Op::Dup2(old, new) => fd_result(
            ret,
            &[Errno::EBADF, Errno::EBUSY, Errno::EMFILE],
            |expect| Step::Dup2 {
                old: *old,
                new: *new,
                expect,
            },
        ),
        Op::Dup3(old, new, flags) => fd_result(
            ret,
            &[Errno::EBADF, Errno::EBUSY, Errno::EMFILE, Errno::EINVAL],
            |expect| Step::Dup3 {
                old: *old,
                new: *new,
                flags: *flags,
                expect,
            },
        ),
        Op::DupFd { fd, from, cloexec } => fd_result(
            ret,
            &[Errno::EBADF, Errno::EMFILE, Errno::EINVAL],
            |expect| Step::DupFd {
                fd: *fd,
                from: *from,
                cloexec: *cloexec,
                expect,
            },
        ),
        Op::GetFd(fd) => match ret {
            Ret::Val(v) => one(Step::GetFd {
                fd: *fd,
                expect: Val::Bit(v & 1 != 0),
            }),
            Ret::Err(Errno::EBADF) => one(Step::GetFd {
                fd: *fd,
                expect: Val::Err(Errno::EBADF),
            }),
            _ => Skip("no table result"),
        },
        Op::SetFd { fd, cloexec, ioctl } => match ret {
            Ret::Val(_) => one(Step::SetFd {
                fd: *fd,
                cloexec: *cloexec,
                ioctl: *ioctl,
                expect: Val::Ok,
            }),
            Ret::Err(Errno::EBADF) => one(Step::SetFd {
                fd: *fd,
                cloexec: *cloexec,
                ioctl: *ioctl,
                expect: Val::Err(Errno::EBADF),
            }),
            _ => Skip("no table result"),
        },
        Op::DupFdQuery(fd, other) => match ret {
            Ret::Val(v) => one(Step::Query {
                fd: *fd,
                other: *other,
                expect: Val::Same(v == 1),
            }),
            Ret::Err(Errno::EBADF) => one(Step::Query {
                fd: *fd,
                other: *other,
                expect: Val::Err(Errno::EBADF),
            }),
            _ => Skip("F_DUPFD_QUERY unknown to the traced kernel"),
        },
        Op::CloseRange { first, last, flags } => match ret {
            Ret::Val(_) => one(Step::CloseRange {
                first: *first,
                last: *last,
                flags: *flags,
                expect: Val::Ok,
            }),
            Ret::Err(Errno::EINVAL) => one(Step::CloseRange {
                first: *first,
                last: *last,
                flags: *flags,
                expect: Val::Err(Errno::EINVAL),
            }),
            _ => Skip("no table result"),
        },
        Op::Recv { fds, cloexec } => match (ret, fds) {
            (Ret::Val(_), Some(fds)) => Steps(
                fds.iter()
                    .map(|&fd| Step::Alloc {
                        cloexec: *cloexec,
                        kind: Kind::Received,
                        opath: false,
                        expect: Val::Fd(fd),
                    })
                    .collect(),
            ),
            (Ret::Val(_), None) => Skip(
                "SCM_RIGHTS array truncated (strace's -s limits arrays too: record with \
                 `fdtable record`, or strace -s 256 or more)",
            ),
            _ => Steps(vec![]),
        },
        Op::Clone {
            pidfd: Some(fd), ..
        } if ret.is_ok() => one(Step::Alloc {
            cloexec: true,
            // A pidfd of the child (pidfd_getfd's target).
            kind: ret
                .ok()
                .and_then(|v| u32::try_from(v).ok())
                .map_or(Kind::Anon, Kind::Pidfd),
            opath: false,
            expect: Val::Fd(*fd),
        }),
        _ => Steps(vec![]),
    }
}

/// A call returning a new fd or a table errno; other errnos are injected (no steps).
fn fd_result(ret: Ret, table: &[Errno], step: impl Fn(Val) -> Step) -> Plan {
    match ret {
        Ret::Val(v) => match fd_value(v) {
            Ok(fd) => Plan::Steps(vec![step(Val::Fd(fd))]),
            Err(bad) => bad,
        },
        Ret::Err(e) if table_err(e, table) => Plan::Steps(vec![step(Val::Err(e))]),
        Ret::Err(_) | Ret::Restart => Plan::Steps(vec![]),
        Ret::Unknown => Plan::Skip("no result (the task died in the call)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_that_cannot_be_descriptors_are_bad() {
        let open = Op::NewFd {
            alloc: Alloc::ReserveFirst,
            cloexec: false,
            kind: Kind::File,
            opath: false,
        };
        for v in [1 << 31, 1 << 32, i64::MAX, fdtable::nr_open() as i64] {
            assert!(matches!(plan(&open, Ret::Val(v), &[]), Plan::Bad(_)), "{v}");
            assert!(
                matches!(plan(&Op::Dup(0), Ret::Val(v), &[]), Plan::Bad(_)),
                "{v}"
            );
        }
        let top = fdtable::nr_open() as i64 - 1;
        assert!(matches!(
            plan(&Op::Dup(0), Ret::Val(top), &[]),
            Plan::Steps(_)
        ));
        let pipe = Op::Pair {
            fds: Some([3, fdtable::nr_open() as u32]),
            cloexec: false,
            reserve_first: false,
        };
        assert!(matches!(plan(&pipe, Ret::Val(0), &[]), Plan::Bad(_)));
    }

    #[test]
    fn precedence() {
        let open = Op::NewFd {
            alloc: Alloc::ReserveFirst,
            cloexec: false,
            kind: Kind::File,
            opath: false,
        };
        assert_eq!(
            plan(&open, Ret::Err(Errno::ENOENT), &[]),
            Plan::Steps(vec![Step::Reserve, Step::Release])
        );
        let sock = Op::NewFd {
            alloc: Alloc::CreateFirst,
            cloexec: false,
            kind: Kind::Anon,
            opath: false,
        };
        assert_eq!(
            plan(&sock, Ret::Err(Errno::EAFNOSUPPORT), &[]),
            Plan::Steps(vec![])
        );
        assert_eq!(
            plan(&Op::Close(3), Ret::Err(Errno::EINTR), &[]),
            Plan::Steps(vec![Step::Close {
                fd: 3,
                expect: Val::Ok
            }])
        );
        assert_eq!(
            plan(&open, Ret::Restart, &[]),
            Plan::Steps(vec![Step::Reserve, Step::Release])
        );
    }
}

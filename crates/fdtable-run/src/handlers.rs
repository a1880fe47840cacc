//! What each traced call does, at its seccomp stop ([`Supervisor::decide`]) and, when it
//! needs one, at its syscall-exit stop ([`Supervisor::finish`]).
//!
//! The rules, in the order they matter:
//!
//! 1. **The library decides.** Every table operation (open, close, the dup family, fcntl's
//!    descriptor commands, close-on-exec, close_range, fork/share/unshare/exec) runs through
//!    `fdtable::Files`, and its number or errno is what the program gets. The kernel runs the
//!    same operation on the real descriptors so the real table mirrors the library's, one real
//!    descriptor per installed number.
//! 2. **Arguments are translated, never passed through.** A descriptor argument becomes the
//!    real descriptor of the library's installed number, or [`BADF`] (never open) if the
//!    number is free or reserved, so the kernel answers EBADF in its own order of checks;
//!    negative values (`AT_FDCWD`, `-1`) keep their meaning. Paths naming descriptors are
//!    rewritten; descriptors inside memory (poll and select sets, SCM_RIGHTS) are copied to
//!    scratch memory and translated there.
//! 3. **Registers are restored.** A call whose registers were changed stops again at its exit,
//!    where the original (virtual) arguments go back: the program's compiled code may keep
//!    using them, and a call the kernel restarts must arrive translated afresh.

use crate::mem::{self, msghdr};
use crate::paths;
use crate::procfs;
use crate::sup::{BADF, Inject, Supervisor};
use crate::syscalls::{self, Arg, Cloexec, Kind, Order, Special};
use crate::table::{Desc, DescKind, Origin, Slot};
use fdtable::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, Errno, FileRef, O_CLOEXEC};
use nix::unistd::Pid;
use std::rc::Rc;

/// What to do with a call at its seccomp stop.
#[derive(Debug)]
pub enum Decision {
    /// Let it run as it is; no exit stop.
    Pass,
    /// Do not run it; it returns this.
    Return(i64),
    /// Refuse it with this errno and note why.
    Refuse(i32, String),
    /// The task needs a scratch mapping first; the call then starts over.
    NeedScratch,
    /// Run these calls in the tracee instead; the call returns this.
    InjectReturn(Vec<Inject>, i64),
    /// Run it with these changes, and stop at its exit.
    Run {
        /// A different call number.
        nr: Option<u64>,
        /// New argument values.
        edits: [Option<u64>; 6],
        /// What the exit does.
        then: Then,
    },
}

/// What a call's exit stop does (after restoring the registers).
#[derive(Debug)]
pub enum Then {
    /// Nothing more.
    Restore,
    /// The result is a new real descriptor: install it at the reserved number, or at the
    /// lowest free one (EMFILE: the real one is closed).
    Install {
        /// Reserved at the entry (the opens).
        reserved: Option<u32>,
        /// Close-on-exec.
        cloexec: bool,
        /// What it is.
        kind: DescKind,
        /// The call, for `--track-fds`.
        origin: String,
    },
    /// pipe, pipe2, socketpair: two real descriptors at `ptr`, for the reserved numbers.
    Pair {
        /// Where the kernel wrote them.
        ptr: u64,
        /// The reserved numbers.
        reserved: [u32; 2],
        /// The call.
        origin: String,
    },
    /// A dup into a number the library already installed: the result is its real descriptor.
    Fill {
        /// The number.
        vfd: u32,
        /// The pending slot's token.
        token: u64,
    },
    /// The result is the real descriptor of `vfd`: return `vfd`.
    Same {
        /// The number.
        vfd: u32,
    },
    /// ioctl(FIOCLEX / FIONCLEX) succeeded: set the library's bit.
    SetCloexec {
        /// The number.
        vfd: u32,
        /// The bit.
        on: bool,
    },
    /// recvmsg / recvmmsg: install the descriptors received with SCM_RIGHTS / SCM_PIDFD.
    Recv {
        /// The msghdr (or mmsghdr array).
        msg: u64,
        /// MSG_CMSG_CLOEXEC.
        cloexec: bool,
        /// recvmmsg.
        mmsg: bool,
    },
    /// getsockopt(SO_PEERPIDFD): install the pidfd written at `optval`.
    PeerPidfd {
        /// Where.
        optval: u64,
    },
    /// poll / ppoll: copy the results back from scratch.
    Poll {
        /// The program's array.
        user: u64,
        /// The translated copy.
        scratch: u64,
        /// Entries.
        nfds: usize,
    },
    /// select / pselect6: translate the result sets back.
    Select {
        /// The program's `nfds`, clamped.
        n: usize,
        /// The program's sets (0: NULL).
        user: [u64; 3],
        /// The real sets in scratch (0: NULL).
        real: [u64; 3],
        /// Words in each real set.
        real_words: usize,
        /// (number, real descriptor) of every descriptor in the sets.
        pairs: Vec<(u32, i32)>,
    },
    /// sendmmsg from a scratch copy: copy the `msg_len` fields back.
    MsgLenBack {
        /// The program's array.
        user: u64,
        /// The copy.
        scratch: u64,
    },
    /// clone/clone3 with CLONE_PIDFD: install the pidfd at the reserved number.
    Clone {
        /// (reserved number, where the kernel writes the pidfd).
        pidfd: Option<(u32, u64)>,
    },
    /// execve with a rewritten path: restore it if the exec failed.
    Exec,
    /// unshare(CLONE_FILES).
    Unshare,
    /// A stat of `owner`'s fd directory: its size is the number of open descriptors.
    FdDirSize {
        /// The program's `struct stat` or `struct statx`.
        buf: u64,
        /// `struct statx`.
        statx: bool,
        /// Whose directory.
        owner: i32,
    },
}

/// The task needs something before the call can be decided.
enum Need {
    Scratch,
}

type Res = Result<Decision, Need>;

/// Translated arguments: the edits, what a path names if it is a descriptor directory, and
/// the first path as read.
type Translated = ([Option<u64>; 6], Option<DescKind>, Option<Vec<u8>>);

/// A bump allocator over the task's scratch mapping, for one call.
struct Scratch {
    base: Option<u64>,
    used: u64,
}

impl Scratch {
    fn alloc(&mut self, len: usize) -> Result<u64, Need> {
        let base = self.base.ok_or(Need::Scratch)?;
        let len = (len as u64 + 15) & !15;
        if self.used + len > crate::sup::SCRATCH {
            // More than a scratch mapping holds: the call is refused below.
            return Err(Need::Scratch);
        }
        let at = base + self.used;
        self.used += len;
        Ok(at)
    }
}

/// A path argument, read and translated.
struct PathArg {
    /// The new pointer, if rewritten.
    ptr: Option<u64>,
    /// It names a descriptor directory: what the descriptor opened on it is.
    dir: Option<DescKind>,
    /// The path as read (`None`: unreadable or too long; the kernel will say so).
    text: Option<Vec<u8>>,
}

const X86_MSG_CMSG_CLOEXEC: u64 = 0x4000_0000;

/// The largest control buffer whose descriptors are translated; `fdtable run` refuses to
/// start if `net.core.optmem_max` (the kernel's own bound) is larger.
pub const MAX_CONTROL: usize = 512 << 10;

fn edits_of(list: &[(usize, u64)]) -> [Option<u64>; 6] {
    let mut e = [None; 6];
    for &(i, v) in list {
        e[i] = Some(v);
    }
    e
}

fn run(edits: [Option<u64>; 6], then: Then) -> Decision {
    Decision::Run {
        nr: None,
        edits,
        then,
    }
}

fn neg(e: Errno) -> i64 {
    -(e.raw() as i64)
}

/// Whether the call would change nothing: no edit differs from the original.
fn no_change(edits: &[Option<u64>; 6], args: &[u64; 6]) -> bool {
    edits
        .iter()
        .zip(args)
        .all(|(e, a)| e.is_none_or(|v| v == *a))
}

fn quote(p: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(p))
}

fn open_flags(f: u64) -> String {
    let mut v = vec![
        match f & 3 {
            0 => "O_RDONLY",
            1 => "O_WRONLY",
            _ => "O_RDWR",
        }
        .to_string(),
    ];
    for (bit, name) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_NOCTTY, "O_NOCTTY"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_NONBLOCK, "O_NONBLOCK"),
        (libc::O_DIRECTORY, "O_DIRECTORY"),
        (libc::O_NOFOLLOW, "O_NOFOLLOW"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
        (libc::O_PATH, "O_PATH"),
    ] {
        if f & bit as u64 != 0 {
            v.push(name.to_string());
        }
    }
    v.join("|")
}

impl Supervisor {
    fn pid(tid: i32) -> Pid {
        Pid::from_raw(tid)
    }

    /// The real descriptor for argument value `raw` in `tid`'s table (see the module docs).
    pub fn tr_fd(&self, tid: i32, raw: u64) -> u64 {
        let v = raw as u32 as i32;
        if v < 0 {
            return raw;
        }
        let Some(t) = self.tasks.get(&tid) else {
            return BADF as u64;
        };
        if t.files.fdget(v as u32).is_none() {
            return BADF as u64;
        }
        t.map.borrow().real(v as u32).unwrap_or(BADF) as u64
    }

    /// The description behind `v` in `tid`'s table.
    fn desc(&self, tid: i32, v: u64) -> Option<FileRef<Desc>> {
        let v = v as u32 as i32;
        if v < 0 {
            return None;
        }
        self.tasks.get(&tid)?.files.fget(v as u32)
    }

    /// The absolute path of the directory a relative path of `tid` starts from: its
    /// directory descriptor's (`dirfd`, the raw argument), or its working directory's.
    fn base_dir(&self, tid: i32, dirfd: Option<u64>) -> Option<Vec<u8>> {
        let link = match dirfd.map(|d| d as u32 as i32) {
            None | Some(libc::AT_FDCWD) => format!("/proc/{tid}/cwd"),
            Some(d) => {
                if let Some(DescKind::FdDir { tid: t, info }) =
                    self.desc(tid, d as u64).map(|d| d.kind)
                {
                    let dir = if info { "fdinfo" } else { "fd" };
                    return Some(format!("/proc/{t}/{dir}").into_bytes());
                }
                let real = self.tr_fd(tid, d as u64) as i32;
                if real < 0 || real == BADF {
                    return None;
                }
                format!("/proc/{tid}/fd/{real}")
            }
        };
        procfs::read_link(&link)
    }

    /// Reads and translates a path argument (`dirfd`: the raw directory argument before it;
    /// `follow`: the call follows a symbolic link in the last component).
    fn tr_path(
        &self,
        tid: i32,
        dirfd: Option<u64>,
        ptr: u64,
        follow: bool,
        scr: &mut Scratch,
    ) -> Result<PathArg, Need> {
        let mut out = PathArg {
            ptr: None,
            dir: None,
            text: None,
        };
        if ptr == 0 {
            return Ok(out);
        }
        let Some(raw) = mem::read_cstr(Self::pid(tid), ptr, libc::PATH_MAX as usize - 1) else {
            return Ok(out);
        };
        let lk = TaskLookup { sup: self, tid };
        let r = paths::resolve(&raw, || self.base_dir(tid, dirfd), follow, &lk);
        out.dir = r.dir.map(|(t, info)| DescKind::FdDir { tid: t, info });
        if let Some(mut p) = r.path {
            if p.len() >= libc::PATH_MAX as usize {
                // Longer than the kernel takes: it answers ENAMETOOLONG to the program's.
                out.text = Some(raw);
                return Ok(out);
            }
            p.push(0);
            let at = scr.alloc(p.len())?;
            if mem::write(Self::pid(tid), at, &p) {
                out.ptr = Some(at);
            }
        }
        out.text = Some(raw);
        Ok(out)
    }

    /// Whether descriptor `v` of `tid` lists a descriptor directory, whatever path opened
    /// it: `FdDir` if the library knew from the path, else what the real descriptor's own
    /// path says (read once per open file description, at its first listing).
    fn listing_kind(&self, tid: i32, d: &Desc, v: u64) -> Option<DescKind> {
        if let k @ DescKind::FdDir { .. } = d.kind {
            return Some(k);
        }
        *d.listed.get_or_init(|| {
            let real = self.tr_fd(tid, v) as i32;
            if real < 0 || real == BADF {
                return None;
            }
            let target = procfs::read_link(&format!("/proc/{tid}/fd/{real}"))?;
            let lk = TaskLookup { sup: self, tid };
            paths::resolve(&target, || None, true, &lk)
                .dir
                .map(|(t, info)| DescKind::FdDir { tid: t, info })
        })
    }

    /// Translates the arguments `spec` names; returns the edits and, if a path names a
    /// descriptor directory, what it is.
    fn tr_args(
        &self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        spec: &[(u8, Arg)],
        scr: &mut Scratch,
    ) -> Result<Translated, Need> {
        let mut edits = [None; 6];
        let mut dir = None;
        let mut text = None;
        for &(i, a) in spec {
            let i = i as usize;
            match a {
                Arg::Fd | Arg::DirFd => edits[i] = Some(self.tr_fd(tid, args[i])),
                Arg::Path => {
                    let dirfd =
                        (i > 0 && spec.contains(&((i - 1) as u8, Arg::DirFd))).then(|| args[i - 1]);
                    let follow =
                        syscalls::name(nr).is_none_or(|name| syscalls::follows_last(name, args, i));
                    let p = self.tr_path(tid, dirfd, args[i], follow, scr)?;
                    if let Some(ptr) = p.ptr {
                        edits[i] = Some(ptr);
                    }
                    dir = dir.or(p.dir);
                    if text.is_none() {
                        text = p.text;
                    }
                }
            }
        }
        Ok((edits, dir, text))
    }

    fn name(nr: u64) -> String {
        syscalls::name(nr).map_or_else(|| format!("syscall {nr}"), str::to_string)
    }

    /// Decides what happens to call `nr` of `tid`.
    pub fn decide(&mut self, tid: i32, nr: u64, args: [u64; 6]) -> Decision {
        let mut scr = Scratch {
            base: self.tasks.get(&tid).and_then(|t| t.scratch),
            used: 0,
        };
        let has_scratch = scr.base.is_some();
        let r = match syscalls::kind(nr) {
            Kind::Allow => Ok(Decision::Pass),
            Kind::Unknown => Ok(Decision::Refuse(
                libc::ENOSYS,
                format!(
                    "refused {}: unknown to the supervisor, it may take or create descriptors (ENOSYS)",
                    Self::name(nr)
                ),
            )),
            Kind::Refuse { errno, why } => Ok(Decision::Refuse(
                errno,
                format!(
                    "refused {}: {why} ({})",
                    Self::name(nr),
                    Errno::new(errno).name().unwrap_or("?")
                ),
            )),
            Kind::Plain(spec) => self.plain(tid, nr, &args, spec, &mut scr),
            Kind::NewFd {
                args: spec,
                order,
                cloexec,
            } => self.new_fd(tid, nr, &args, spec, order, cloexec, &mut scr),
            Kind::Special(s) => self.special(tid, nr, &args, s, &mut scr),
        };
        match r {
            Ok(d) => d,
            Err(Need::Scratch) if !has_scratch => Decision::NeedScratch,
            Err(Need::Scratch) => Decision::Refuse(
                libc::ENOMEM,
                format!(
                    "refused a {} whose arguments do not fit the supervisor's scratch memory (ENOMEM)",
                    Self::name(nr)
                ),
            ),
        }
    }

    fn plain(
        &self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        spec: &[(u8, Arg)],
        scr: &mut Scratch,
    ) -> Res {
        let (edits, dir, text) = self.tr_args(tid, nr, args, spec, scr)?;
        if let Some(then) = self.fd_dir_stat(tid, nr, args, dir, text.as_deref()) {
            return Ok(run(edits, then));
        }
        if no_change(&edits, args) {
            return Ok(Decision::Pass);
        }
        Ok(run(edits, Then::Restore))
    }

    /// A stat of a descriptor directory: procfs reports the number of open descriptors as
    /// its size, which must be the library's count, not the real table's.
    fn fd_dir_stat(
        &self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        dir: Option<DescKind>,
        text: Option<&[u8]>,
    ) -> Option<Then> {
        const AT_EMPTY_PATH: u64 = 0x1000;
        let empty = |flags: u64| flags & AT_EMPTY_PATH != 0 && text == Some(b"");
        let (buf, statx, fd) = match syscalls::name(nr)? {
            "stat" | "lstat" => (args[1], false, None),
            "fstat" => (args[1], false, Some(args[0])),
            "newfstatat" => (args[2], false, empty(args[3]).then_some(args[0])),
            "statx" => (args[4], true, empty(args[2]).then_some(args[0])),
            _ => return None,
        };
        let kind = match fd {
            // Known from the path that opened it, or from a listing (never probed here:
            // fstat is frequent).
            Some(v) => {
                let d = self.desc(tid, v)?;
                match d.kind {
                    k @ DescKind::FdDir { .. } => Some(k),
                    DescKind::Plain => d.listed.get().copied().flatten(),
                }
            }
            None => dir,
        };
        match kind {
            Some(DescKind::FdDir {
                tid: owner,
                info: false,
            }) => Some(Then::FdDirSize { buf, statx, owner }),
            _ => None,
        }
    }

    fn origin(&self, text: impl FnOnce() -> String) -> String {
        if self.cfg.track_fds {
            text()
        } else {
            String::new()
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_fd(
        &mut self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        spec: &[(u8, Arg)],
        order: Order,
        cloexec: Cloexec,
        scr: &mut Scratch,
    ) -> Res {
        let (edits, dir, text) = self.tr_args(tid, nr, args, spec, scr)?;
        let cloexec = match cloexec {
            Cloexec::Never => false,
            Cloexec::Always => true,
            Cloexec::Flag(i, bit) => args[i as usize] & bit != 0,
        };
        let origin = self.origin(|| match &text {
            Some(t) => format!("{}({}, ...)", Self::name(nr), quote(t)),
            None => format!("{}()", Self::name(nr)),
        });
        let kind = dir.unwrap_or(DescKind::Plain);
        let reserved = match order {
            Order::CreateFirst => None,
            Order::ReserveFirst => Some(match self.reserve(tid, cloexec) {
                Ok(v) => v,
                Err(e) => return Ok(Decision::Return(neg(e))),
            }),
        };
        Ok(run(
            edits,
            Then::Install {
                reserved,
                cloexec,
                kind,
                origin,
            },
        ))
    }

    /// Reserves the lowest free number (the open's `get_unused_fd_flags`).
    fn reserve(&self, tid: i32, cloexec: bool) -> Result<u32, Errno> {
        let t = &self.tasks[&tid];
        t.files
            .alloc_fd(0, t.nofile(), if cloexec { O_CLOEXEC } else { 0 })
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    fn special(
        &mut self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        s: Special,
        scr: &mut Scratch,
    ) -> Res {
        use Special as S;
        let pid = Self::pid(tid);
        match s {
            S::Open => self.open(tid, nr, args, None, 0, args[1], scr),
            S::Openat => self.open(tid, nr, args, Some(0), 1, args[2], scr),
            S::Creat => self.open(
                tid,
                nr,
                args,
                None,
                0,
                (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
                scr,
            ),
            S::Openat2 => {
                // struct open_how { u64 flags, mode, resolve }.
                let flags = if args[3] >= 8 {
                    mem::read_u64(pid, args[2])
                } else {
                    None
                };
                match flags {
                    Some(f) => self.open(tid, nr, args, Some(0), 1, f, scr),
                    None => {
                        // The kernel answers EFAULT or EINVAL; if it opens something after
                        // all, it is installed then.
                        let (edits, _, _) =
                            self.tr_args(tid, nr, args, &[(0, Arg::DirFd), (1, Arg::Path)], scr)?;
                        Ok(run(
                            edits,
                            Then::Install {
                                reserved: None,
                                cloexec: false,
                                kind: DescKind::Plain,
                                origin: String::new(),
                            },
                        ))
                    }
                }
            }
            S::Close => Ok(self.close(tid, args[0])),
            S::Dup => Ok(self.dup(tid, args)),
            S::Dup2 | S::Dup3 => Ok(self.dup3(tid, args, s == S::Dup3)),
            S::Fcntl => self.fcntl(tid, args, scr),
            S::Ioctl => self.ioctl(tid, args, scr),
            S::CloseRange => Ok(self.close_range(tid, args)),
            S::Pipe | S::Pipe2 | S::Socketpair => Ok(self.pair(tid, nr, args, s)),
            S::Accept | S::Accept4 => {
                let flags = if s == S::Accept4 { args[3] } else { 0 };
                let valid = flags & !((libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64) == 0;
                let edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
                let installed = self.tasks[&tid].files.fdget(args[0] as u32).is_some();
                if valid && installed {
                    // EBADF, then EMFILE before waiting for a connection.
                    match self.reserve(tid, false) {
                        Err(e) => return Ok(Decision::Return(neg(e))),
                        Ok(v) => self.tasks[&tid].files.put_unused_fd(v),
                    }
                }
                let origin = self.origin(|| format!("{}({})", Self::name(nr), args[0] as i32));
                Ok(run(
                    edits,
                    Then::Install {
                        reserved: None,
                        cloexec: flags & libc::SOCK_CLOEXEC as u64 != 0,
                        kind: DescKind::Plain,
                        origin,
                    },
                ))
            }
            S::Signalfd | S::Signalfd4 => {
                if args[0] as u32 as i32 == -1 {
                    let cloexec = s == S::Signalfd4 && args[3] & libc::O_CLOEXEC as u64 != 0;
                    let origin = self.origin(|| format!("{}(-1)", Self::name(nr)));
                    Ok(run(
                        [None; 6],
                        Then::Install {
                            reserved: None,
                            cloexec,
                            kind: DescKind::Plain,
                            origin,
                        },
                    ))
                } else {
                    let edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
                    Ok(run(
                        edits,
                        Then::Same {
                            vfd: args[0] as u32,
                        },
                    ))
                }
            }
            S::PidfdGetfd => {
                let rpidfd = self.tr_fd(tid, args[0]);
                let mut target_fd = args[1];
                if (rpidfd as i32) >= 0 && rpidfd as i32 != BADF {
                    let target = crate::procfs::fdinfo_field(tid, rpidfd as i32, "Pid:")
                        .and_then(|p| p.parse::<i32>().ok());
                    if let Some(t) = target.filter(|t| self.tasks.contains_key(t)) {
                        target_fd = self.tr_fd(t, args[1]);
                    }
                }
                let origin =
                    self.origin(|| format!("pidfd_getfd({}, {})", args[0] as i32, args[1] as i32));
                Ok(run(
                    edits_of(&[(0, rpidfd), (1, target_fd)]),
                    Then::Install {
                        reserved: None,
                        cloexec: true,
                        kind: DescKind::Plain,
                        origin,
                    },
                ))
            }
            S::LandlockCreateRuleset => {
                if args[2] != 0 {
                    // LANDLOCK_CREATE_RULESET_VERSION / _ERRATA return numbers.
                    return Ok(Decision::Pass);
                }
                let origin = self.origin(|| "landlock_create_ruleset()".into());
                Ok(run(
                    [None; 6],
                    Then::Install {
                        reserved: None,
                        cloexec: true,
                        kind: DescKind::Plain,
                        origin,
                    },
                ))
            }
            S::LandlockAddRule => {
                let mut edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
                // LANDLOCK_RULE_PATH_BENEATH: { u64 allowed_access; s32 parent_fd } (packed).
                if args[1] == 1
                    && let Some(mut attr) = mem::read(pid, args[2], 12)
                {
                    let parent = mem::get_u32(&attr, 8) as u64;
                    mem::put_u32(&mut attr, 8, self.tr_fd(tid, parent) as u32);
                    let at = scr.alloc(12)?;
                    if mem::write(pid, at, &attr) {
                        edits[2] = Some(at);
                    }
                }
                Ok(run(edits, Then::Restore))
            }
            S::PerfEventOpen => {
                let mut list = vec![(3, self.tr_fd(tid, args[3]))];
                if args[4] & 4 != 0 {
                    // PERF_FLAG_PID_CGROUP: the pid argument is a cgroup directory's fd.
                    list.push((1, self.tr_fd(tid, args[1])));
                }
                let origin = self.origin(|| "perf_event_open()".into());
                Ok(run(
                    edits_of(&list),
                    Then::Install {
                        reserved: None,
                        cloexec: args[4] & 8 != 0,
                        kind: DescKind::Plain,
                        origin,
                    },
                ))
            }
            S::Recvmsg | S::Recvmmsg => {
                let flags = if s == S::Recvmsg { args[2] } else { args[3] };
                Ok(run(
                    edits_of(&[(0, self.tr_fd(tid, args[0]))]),
                    Then::Recv {
                        msg: args[1],
                        cloexec: flags & X86_MSG_CMSG_CLOEXEC != 0,
                        mmsg: s == S::Recvmmsg,
                    },
                ))
            }
            S::Sendmsg => self.sendmsg(tid, args, scr),
            S::Sendmmsg => self.sendmmsg(tid, args, scr),
            S::Poll | S::Ppoll => self.poll(tid, args, scr),
            S::Select | S::Pselect6 => self.select(tid, args, scr),
            S::Getdents | S::Getdents64 => {
                if let Some(d) = self.desc(tid, args[0])
                    && let Some(DescKind::FdDir { tid: t, info }) =
                        self.listing_kind(tid, &d, args[0])
                {
                    return Ok(Decision::Return(self.list_fd_dir(
                        tid,
                        &d,
                        t,
                        info,
                        args[1],
                        args[2] as u32 as usize,
                        s == S::Getdents64,
                    )));
                }
                self.plain(tid, nr, args, &[(0, Arg::Fd)], scr)
            }
            S::Lseek => {
                // An emulated listing's position is the supervisor's (a descriptor not
                // listed yet has none to keep).
                if let Some(d) = self.desc(tid, args[0])
                    && (matches!(d.kind, DescKind::FdDir { .. })
                        || matches!(d.listed.get(), Some(Some(DescKind::FdDir { .. }))))
                {
                    let mut pos = d.pos.lock().unwrap();
                    let new = match args[2] {
                        0 => args[1] as i64,
                        1 => *pos + args[1] as i64,
                        _ => -1,
                    };
                    if new < 0 {
                        return Ok(Decision::Return(-(libc::EINVAL as i64)));
                    }
                    *pos = new;
                    return Ok(Decision::Return(new));
                }
                self.plain(tid, nr, args, &[(0, Arg::Fd)], scr)
            }
            S::Clone | S::Clone3 | S::Fork | S::Vfork => self.clone_entry(tid, nr, args, s, scr),
            S::Execve | S::Execveat => {
                let spec: &[(u8, Arg)] = if s == S::Execve {
                    &[(0, Arg::Path)]
                } else {
                    &[(0, Arg::DirFd), (1, Arg::Path)]
                };
                let (edits, _, _) = self.tr_args(tid, nr, args, spec, scr)?;
                if no_change(&edits, args) {
                    return Ok(Decision::Pass);
                }
                Ok(run(edits, Then::Exec))
            }
            S::Unshare => {
                if args[0] & libc::CLONE_FILES as u64 == 0 {
                    return Ok(Decision::Pass);
                }
                Ok(run([None; 6], Then::Unshare))
            }
            S::Getrlimit | S::Setrlimit | S::Prlimit64 => Ok(self.rlimit(tid, args, s)),
            S::Prctl => {
                // PR_SET_MM, PR_SET_MM_EXE_FILE, fd.
                if args[0] == libc::PR_SET_MM as u64 && args[1] == 13 {
                    return self.plain(tid, nr, args, &[(2, Arg::Fd)], scr);
                }
                // PR_SET_MM, PR_SET_MM_MAP, struct prctl_mm_map (104 bytes; anything else is
                // EINVAL), whose u32 exe_fd at 100 is a descriptor unless it is -1.
                if args[0] == libc::PR_SET_MM as u64
                    && args[1] == 14
                    && args[3] == 104
                    && let Some(mut map) = mem::read(pid, args[2], 104)
                {
                    let exe = mem::get_u32(&map, 100);
                    if exe != u32::MAX {
                        mem::put_u32(&mut map, 100, self.tr_fd(tid, exe as u64) as u32);
                        let at = scr.alloc(104)?;
                        if mem::write(pid, at, &map) {
                            return Ok(run(edits_of(&[(2, at)]), Then::Restore));
                        }
                    }
                }
                Ok(Decision::Pass)
            }
            S::ClockFd => {
                let Some(fd) = syscalls::clock_fd(args[0] as u32 as i32) else {
                    return Ok(Decision::Pass);
                };
                // A number that names nothing becomes the largest a clock id can carry,
                // never open: the kernel answers EINVAL, as it does for the program's.
                let real = self.tr_fd(tid, fd as u64) as i32;
                let real = match u32::try_from(real) {
                    Ok(r) if r <= syscalls::CLOCK_FD_MAX => r,
                    _ => syscalls::CLOCK_FD_MAX,
                };
                let id = syscalls::fd_clock(real);
                if id == args[0] as u32 as i32 {
                    return Ok(Decision::Pass);
                }
                Ok(run(edits_of(&[(0, id as i64 as u64)]), Then::Restore))
            }
            S::Keyctl => {
                // KEYCTL_WATCH_KEY(key, watch_queue_fd, watch_id).
                if args[0] == 32 {
                    return self.plain(tid, nr, args, &[(2, Arg::Fd)], scr);
                }
                Ok(Decision::Pass)
            }
            S::Waitid => {
                if args[0] == 3 {
                    return self.plain(tid, nr, args, &[(1, Arg::Fd)], scr);
                }
                Ok(Decision::Pass)
            }
            S::Kcmp => {
                match args[2] {
                    // KCMP_FILE: idx1 in pid1's table, idx2 in pid2's.
                    0 => {
                        let mut edits = [None; 6];
                        for (p, i) in [(0usize, 3usize), (1, 4)] {
                            let owner = args[p] as i32;
                            if self.tasks.contains_key(&owner) {
                                edits[i] = Some(self.tr_fd(owner, args[i]));
                            }
                        }
                        if no_change(&edits, args) {
                            return Ok(Decision::Pass);
                        }
                        Ok(run(edits, Then::Restore))
                    }
                    7 => Ok(Decision::Refuse(
                        libc::ENOSYS,
                        "refused kcmp(KCMP_EPOLL_TFD): its slot names a descriptor in another process's memory (ENOSYS)".into(),
                    )),
                    _ => Ok(Decision::Pass),
                }
            }
            S::Setsockopt => {
                let mut edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
                // SO_ATTACH_BPF, SO_ATTACH_REUSEPORT_EBPF: an int fd in optval.
                if args[1] == libc::SOL_SOCKET as u64
                    && (args[2] == 50 || args[2] == 52)
                    && args[4] >= 4
                    && let Some(v) = mem::read_u32(pid, args[3])
                {
                    let at = scr.alloc(4)?;
                    let r = self.tr_fd(tid, v as u64) as u32;
                    if mem::write(pid, at, &r.to_le_bytes()) {
                        edits[3] = Some(at);
                    }
                }
                Ok(run(edits, Then::Restore))
            }
            S::Getsockopt => {
                let edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
                // SO_PEERPIDFD: a new pidfd in optval.
                if args[1] == libc::SOL_SOCKET as u64 && args[2] == 77 {
                    return Ok(run(edits, Then::PeerPidfd { optval: args[3] }));
                }
                Ok(run(edits, Then::Restore))
            }
            S::Fsconfig => {
                let spec: &[(u8, Arg)] = match args[1] {
                    // FSCONFIG_SET_FD: aux is a descriptor.
                    5 => &[(0, Arg::Fd), (4, Arg::Fd)],
                    // FSCONFIG_SET_PATH, _EMPTY: aux is the directory of the path in value.
                    3 | 4 => &[(0, Arg::Fd), (4, Arg::Fd)],
                    _ => &[(0, Arg::Fd)],
                };
                let (mut edits, _, _) = self.tr_args(tid, nr, args, spec, scr)?;
                if matches!(args[1], 3 | 4) {
                    let p = self.tr_path(tid, Some(args[4]), args[3], true, scr)?;
                    if let Some(ptr) = p.ptr {
                        edits[3] = Some(ptr);
                    }
                }
                Ok(run(edits, Then::Restore))
            }
            S::Seccomp => {
                // SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_NEW_LISTENER.
                if args[0] == 1 && args[1] & 8 != 0 {
                    return Ok(Decision::Refuse(
                        libc::ENOSYS,
                        "refused seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): a listener installs descriptors into other processes (ENOSYS)".into(),
                    ));
                }
                Ok(Decision::Pass)
            }
            S::MountRequest => {
                // struct mnt_id_req { u32 size; u32 mnt_ns_fd (spare before 6.18); ... }.
                match mem::read_u32(pid, args[0].wrapping_add(4)) {
                    Some(v) if v != 0 => Ok(Decision::Refuse(
                        libc::ENOSYS,
                        format!(
                            "refused {} with a mount namespace descriptor (ENOSYS)",
                            Self::name(nr)
                        ),
                    )),
                    _ => Ok(Decision::Pass),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        dirfd: Option<usize>,
        path: usize,
        flags: u64,
        scr: &mut Scratch,
    ) -> Res {
        let mut edits = [None; 6];
        if let Some(d) = dirfd {
            edits[d] = Some(self.tr_fd(tid, args[d]));
        }
        let follow = flags & libc::O_NOFOLLOW as u64 == 0;
        let p = self.tr_path(tid, dirfd.map(|d| args[d]), args[path], follow, scr)?;
        if let Some(ptr) = p.ptr {
            edits[path] = Some(ptr);
        }
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        let origin = self.origin(|| {
            let path = p.text.as_deref().map_or("?".to_string(), quote);
            match dirfd {
                Some(d) if args[d] as u32 as i32 == libc::AT_FDCWD => {
                    format!(
                        "{}(AT_FDCWD, {path}, {})",
                        Self::name(nr),
                        open_flags(flags)
                    )
                }
                Some(d) => format!(
                    "{}({}, {path}, {})",
                    Self::name(nr),
                    args[d] as i32,
                    open_flags(flags)
                ),
                None => format!("{}({path}, {})", Self::name(nr), open_flags(flags)),
            }
        });
        let kind = p.dir.unwrap_or(DescKind::Plain);
        // Errors the kernel finds before reserving (an unreadable, empty or too long path)
        // are its own; then the reservation (EMFILE), then everything else.
        let reserved = match &p.text {
            Some(t) if !t.is_empty() => match self.reserve(tid, cloexec) {
                Ok(v) => Some(v),
                Err(e) => return Ok(Decision::Return(neg(e))),
            },
            _ => None,
        };
        Ok(run(
            edits,
            Then::Install {
                reserved,
                cloexec,
                kind,
                origin,
            },
        ))
    }

    fn close(&mut self, tid: i32, raw: u64) -> Decision {
        let v = raw as u32;
        let t = self.tasks.get_mut(&tid).unwrap();
        if let Err(e) = t.files.close_fd(v) {
            return Decision::Return(neg(e));
        }
        match t.map.borrow_mut().take(v) {
            Some(Slot::Real { real, .. }) => run(edits_of(&[(0, real as u64)]), Then::Restore),
            // A dup in flight fills it: it will find the slot gone and close its result.
            _ => Decision::Return(0),
        }
    }

    fn dup(&mut self, tid: i32, args: &[u64; 6]) -> Decision {
        let v = args[0] as u32;
        let t = &self.tasks[&tid];
        let Some(real) = t.map.borrow().real(v) else {
            return Decision::Return(-(libc::EBADF as i64));
        };
        match t.files.dup(v, t.nofile()) {
            Err(e) => Decision::Return(neg(e)),
            Ok(w) => {
                let token = self.token();
                let origin = self.origin(|| format!("dup({})", v as i32));
                self.set_pending(tid, w, token, origin, v);
                run(edits_of(&[(0, real as u64)]), Then::Fill { vfd: w, token })
            }
        }
    }

    /// The origin of a duplicate of `src` made by `call`.
    fn dup_origin(&self, tid: i32, src: u32, call: String) -> Rc<Origin> {
        let t = &self.tasks[&tid];
        let from = t.map.borrow().get(src).map(|s| s.origin().root());
        Rc::new(Origin {
            call,
            pid: t.tgid(),
            from,
        })
    }

    fn set_pending(&mut self, tid: i32, vfd: u32, token: u64, call: String, src: u32) {
        let origin = self.dup_origin(tid, src, call);
        self.tasks[&tid]
            .map
            .borrow_mut()
            .set(vfd, Slot::Pending { token, origin });
    }

    fn dup3(&mut self, tid: i32, args: &[u64; 6], three: bool) -> Decision {
        let (o, n) = (args[0] as u32, args[1] as u32);
        let flags = args[2] as u32;
        let t = self.tasks.get_mut(&tid).unwrap();
        let nofile = t.nofile();
        if o == n || (three && flags & !O_CLOEXEC != 0) {
            let r = if three {
                t.files.dup3(o, n, flags, nofile)
            } else {
                t.files.dup2(o, n, nofile)
            };
            return Decision::Return(r.map_or_else(neg, |v| v as i64));
        }
        let real_o = t.map.borrow().real(o);
        let real_n = t.map.borrow().real(n);
        if t.files.fdget(o).is_some() && real_o.is_none() {
            // Installed by a dup still in flight: not usable yet.
            return Decision::Return(-(libc::EBADF as i64));
        }
        let r = if three {
            t.files.dup3(o, n, flags, nofile)
        } else {
            t.files.dup2(o, n, nofile)
        };
        if let Err(e) = r {
            return Decision::Return(neg(e));
        }
        let Some(real_o) = real_o.map(|r| r as u64) else {
            // Not reachable: the library found `o` installed, and it was not pending.
            return Decision::Return(-(libc::EBADF as i64));
        };
        let name = if three { "dup3" } else { "dup2" };
        let call = self.origin(|| format!("{name}({}, {})", o as i32, n as i32));
        match real_n {
            Some(rn) => {
                let origin = self.dup_origin(tid, o, call);
                self.tasks[&tid]
                    .map
                    .borrow_mut()
                    .set(n, Slot::Real { real: rn, origin });
                let mut edits = edits_of(&[(0, real_o), (1, rn as u64)]);
                let nr = if three {
                    edits[2] = Some(flags as u64);
                    libc::SYS_dup3
                } else {
                    libc::SYS_dup2
                };
                Decision::Run {
                    nr: Some(nr as u64),
                    edits,
                    then: Then::Same { vfd: n },
                }
            }
            None => {
                let token = self.token();
                self.set_pending(tid, n, token, call, o);
                let cmd = if three && flags & O_CLOEXEC != 0 {
                    libc::F_DUPFD_CLOEXEC
                } else {
                    libc::F_DUPFD
                };
                Decision::Run {
                    nr: Some(libc::SYS_fcntl as u64),
                    edits: edits_of(&[(0, real_o), (1, cmd as u64), (2, 0)]),
                    then: Then::Fill { vfd: n, token },
                }
            }
        }
    }

    fn fcntl(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let v = args[0] as u32;
        let cmd = args[1] as u32 as i32;
        let t = &self.tasks[&tid];
        match cmd {
            libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
                let cloexec = cmd == libc::F_DUPFD_CLOEXEC;
                let Some(real) = t.map.borrow().real(v) else {
                    return Ok(Decision::Return(-(libc::EBADF as i64)));
                };
                let from = u32::try_from(args[2]).unwrap_or(u32::MAX);
                match t.files.dupfd(v, from, cloexec, t.nofile()) {
                    Err(e) => Ok(Decision::Return(neg(e))),
                    Ok(w) => {
                        let token = self.token();
                        let name = if cloexec {
                            "F_DUPFD_CLOEXEC"
                        } else {
                            "F_DUPFD"
                        };
                        let call = self.origin(|| format!("fcntl({}, {name}, {from})", v as i32));
                        self.set_pending(tid, w, token, call, v);
                        Ok(run(
                            edits_of(&[(0, real as u64), (2, 0)]),
                            Then::Fill { vfd: w, token },
                        ))
                    }
                }
            }
            libc::F_GETFD => Ok(Decision::Return(
                t.files.get_close_on_exec(v).map_or_else(neg, |c| c as i64),
            )),
            libc::F_SETFD => {
                if let Err(e) = t.files.set_close_on_exec(v, args[2] & 1 != 0) {
                    return Ok(Decision::Return(neg(e)));
                }
                match t.map.borrow().real(v) {
                    Some(r) => Ok(run(edits_of(&[(0, r as u64)]), Then::Restore)),
                    None => Ok(Decision::Return(0)),
                }
            }
            // F_DUPFD_QUERY: whether both refer to the same open file (EBADF if either is
            // not installed), from the library's references.
            1027 => Ok(Decision::Return(
                match (t.files.fget(v), t.files.fget(args[2] as u32)) {
                    (Some(a), Some(b)) => FileRef::ptr_eq(&a, &b) as i64,
                    _ => -(libc::EBADF as i64),
                },
            )),
            _ => self.plain(tid, libc::SYS_fcntl as u64, args, &[(0, Arg::Fd)], scr),
        }
    }

    fn ioctl(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let cmd = args[1] as u32;
        let fd = self.tr_fd(tid, args[0]);
        let pid = Self::pid(tid);
        let new = |cloexec: bool, name: &str, me: &Self| {
            let origin = me.origin(|| format!("ioctl({}, {name})", args[0] as i32));
            run(
                edits_of(&[(0, fd)]),
                Then::Install {
                    reserved: None,
                    cloexec,
                    kind: DescKind::Plain,
                    origin,
                },
            )
        };
        Ok(match cmd {
            // FIOCLEX, FIONCLEX: the kernel's fdget first (an O_PATH fd answers EBADF).
            0x5451 | 0x5450 => run(
                edits_of(&[(0, fd)]),
                Then::SetCloexec {
                    vfd: args[0] as u32,
                    on: cmd == 0x5451,
                },
            ),
            // TIOCGPTPEER, USERFAULTFD_IOC_NEW: the argument holds the new fd's flags.
            0x5441 | 0xaa00 => new(args[2] & libc::O_CLOEXEC as u64 != 0, "TIOCGPTPEER", self),
            // Namespace, pidfd, KVM and VFIO commands that return descriptors.
            0x54e3
            | 0x894c
            | 0xb701
            | 0xb702
            | 0xae01
            | 0xae41
            | 0xaece
            | 0x3b6a
            | 0xff01..=0xff0a => new(true, &format!("{cmd:#x}"), self),
            // FICLONE, LOOP_SET_FD, LOOP_CHANGE_FD: the argument is a descriptor.
            0x4004_9409 | 0x4c00 | 0x4c06 => run(
                edits_of(&[(0, fd), (2, self.tr_fd(tid, args[2]))]),
                Then::Restore,
            ),
            // FICLONERANGE: struct file_clone_range { s64 src_fd; u64 offset, length, dest }.
            0x4020_940d => {
                let mut edits = edits_of(&[(0, fd)]);
                if let Some(mut b) = mem::read(pid, args[2], 32) {
                    let src = mem::get_u64(&b, 0);
                    mem::put_u64(&mut b, 0, self.tr_fd(tid, src) as u32 as i32 as i64 as u64);
                    let at = scr.alloc(32)?;
                    if mem::write(pid, at, &b) {
                        edits[2] = Some(at);
                    }
                }
                run(edits, Then::Restore)
            }
            // Commands whose argument structures carry descriptors that are not translated.
            0xc018_9436 | 0x4c0a | 0x4020_ae76 | 0x4040_ae79 | 0x8004_54e0 | 0x8004_54e1
            | 0x4018_2103 => Decision::Refuse(
                libc::EOPNOTSUPP,
                format!(
                    "refused ioctl {cmd:#x}: its argument carries descriptors the supervisor does not translate (EOPNOTSUPP)"
                ),
            ),
            _ => {
                let edits = edits_of(&[(0, fd)]);
                if no_change(&edits, args) {
                    Decision::Pass
                } else {
                    run(edits, Then::Restore)
                }
            }
        })
    }

    fn close_range(&mut self, tid: i32, args: &[u64; 6]) -> Decision {
        let (first, last, flags) = (args[0] as u32, args[1] as u32, args[2] as u32);
        let t = self.tasks.get_mut(&tid).unwrap();
        let shared = t.files.is_shared();
        let in_range: Vec<u32> = t
            .map
            .borrow()
            .iter()
            .map(|(fd, _)| fd)
            .filter(|&fd| fd >= first && fd <= last)
            .collect();
        if let Err(e) = t.files.close_range(first, last, flags) {
            return Decision::Return(neg(e));
        }
        let mut calls = Vec::new();
        if flags & CLOSE_RANGE_UNSHARE != 0 && shared {
            let copy = t.map.borrow().clone();
            t.map = Rc::new(std::cell::RefCell::new(copy));
            calls.push(Inject {
                nr: libc::SYS_unshare,
                args: [libc::CLONE_FILES as u64, 0, 0, 0, 0, 0],
            });
        }
        let mut map = t.map.borrow_mut();
        if flags & CLOSE_RANGE_CLOEXEC != 0 {
            map.cloexec_unsynced |= !in_range.is_empty();
        } else {
            let mut reals = Vec::new();
            for fd in in_range {
                if let Some(Slot::Real { real, .. }) = map.take(fd) {
                    reals.push(real);
                }
            }
            let kept = map.reals();
            calls.extend(close_calls(reals, &kept));
        }
        drop(map);
        if calls.is_empty() {
            Decision::Return(0)
        } else {
            Decision::InjectReturn(calls, 0)
        }
    }

    fn pair(&mut self, tid: i32, nr: u64, args: &[u64; 6], s: Special) -> Decision {
        let (flags, ptr, valid) = match s {
            Special::Pipe => (0, args[0], true),
            Special::Pipe2 => {
                let ok =
                    (libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_DIRECT | libc::O_EXCL) as u64;
                (args[1], args[0], args[1] & !ok == 0)
            }
            _ => {
                let ok = (0xf | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
                (args[1], args[3], args[1] & !ok == 0)
            }
        };
        if !valid {
            // EINVAL from the kernel, before anything is allocated.
            return Decision::Pass;
        }
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        let a = match self.reserve(tid, cloexec) {
            Ok(a) => a,
            Err(e) => return Decision::Return(neg(e)),
        };
        let b = match self.reserve(tid, cloexec) {
            Ok(b) => b,
            Err(e) => {
                self.tasks[&tid].files.put_unused_fd(a);
                return Decision::Return(neg(e));
            }
        };
        let origin = self.origin(|| format!("{}()", Self::name(nr)));
        run(
            [None; 6],
            Then::Pair {
                ptr,
                reserved: [a, b],
                origin,
            },
        )
    }

    fn sendmsg(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let pid = Self::pid(tid);
        let mut edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
        if let Some(hdr) = mem::read(pid, args[1], msghdr::SIZE)
            && let Some((hdr, ctl)) = self.tr_msghdr(tid, &hdr)
        {
            let at = scr.alloc(msghdr::SIZE + ctl.len())?;
            let mut h = hdr;
            mem::put_u64(&mut h, msghdr::CONTROL, at + msghdr::SIZE as u64);
            let mut all = h;
            all.extend_from_slice(&ctl);
            if mem::write(pid, at, &all) {
                edits[1] = Some(at);
            }
        }
        Ok(run(edits, Then::Restore))
    }

    /// A msghdr whose control messages carry descriptors: the header and a translated copy
    /// of the control buffer. `None` if there is nothing to translate (or it cannot be read:
    /// the kernel answers EFAULT).
    fn tr_msghdr(&self, tid: i32, hdr: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        let ctl_ptr = mem::get_u64(hdr, msghdr::CONTROL);
        let ctl_len = mem::get_u64(hdr, msghdr::CONTROLLEN) as usize;
        // Past MAX_CONTROL the kernel refuses the buffer (ENOBUFS: it is above
        // net.core.optmem_max, checked at startup) before it reads a descriptor from it.
        if ctl_ptr == 0 || !(mem::CMSG_HDR..=MAX_CONTROL).contains(&ctl_len) {
            return None;
        }
        let mut ctl = mem::read(Self::pid(tid), ctl_ptr, ctl_len)?;
        let mut any = false;
        for c in mem::cmsgs(&ctl) {
            if c.level == mem::SOL_SOCKET && c.ty == mem::SCM_RIGHTS {
                any = true;
                for j in 0..c.len / 4 {
                    let at = c.data + 4 * j;
                    let v = mem::get_u32(&ctl, at) as u64;
                    mem::put_u32(&mut ctl, at, self.tr_fd(tid, v) as u32);
                }
            }
        }
        any.then(|| (hdr.to_vec(), ctl))
    }

    fn sendmmsg(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let pid = Self::pid(tid);
        let mut edits = edits_of(&[(0, self.tr_fd(tid, args[0]))]);
        let vlen = (args[2] as u32).min(1024) as usize;
        let Some(vec) = mem::read(pid, args[1], vlen * msghdr::MMSG_SIZE) else {
            return Ok(run(edits, Then::Restore));
        };
        let mut translated = Vec::new();
        for i in 0..vlen {
            let h = &vec[i * msghdr::MMSG_SIZE..][..msghdr::SIZE];
            translated.push(self.tr_msghdr(tid, h).map(|(_, c)| c));
        }
        if translated.iter().all(Option::is_none) {
            return Ok(run(edits, Then::Restore));
        }
        let ctl_total: usize = translated
            .iter()
            .flatten()
            .map(|c| (c.len() + 15) & !15)
            .sum();
        let at = scr.alloc(vec.len() + ctl_total)?;
        let mut out = vec.clone();
        let mut ctl_at = at + vec.len() as u64;
        let mut ctls = Vec::new();
        for (i, c) in translated.iter().enumerate() {
            if let Some(c) = c {
                mem::put_u64(&mut out, i * msghdr::MMSG_SIZE + msghdr::CONTROL, ctl_at);
                let mut c = c.clone();
                c.resize((c.len() + 15) & !15, 0);
                ctl_at += c.len() as u64;
                ctls.extend_from_slice(&c);
            }
        }
        out.extend_from_slice(&ctls);
        if !mem::write(pid, at, &out) {
            return Ok(run(edits, Then::Restore));
        }
        edits[1] = Some(at);
        Ok(run(
            edits,
            Then::MsgLenBack {
                user: args[1],
                scratch: at,
            },
        ))
    }

    fn poll(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let nfds = args[1] as u32 as u64;
        if nfds > self.tasks[&tid].nofile() {
            return Ok(Decision::Return(-(libc::EINVAL as i64)));
        }
        if nfds == 0 {
            return Ok(Decision::Pass);
        }
        let pid = Self::pid(tid);
        let Some(mut fds) = mem::read(pid, args[0], nfds as usize * 8) else {
            return Ok(Decision::Pass);
        };
        for i in 0..nfds as usize {
            let v = mem::get_u32(&fds, i * 8) as u64;
            mem::put_u32(&mut fds, i * 8, self.tr_fd(tid, v) as u32);
        }
        let at = scr.alloc(fds.len())?;
        if !mem::write(pid, at, &fds) {
            return Ok(Decision::Pass);
        }
        Ok(run(
            edits_of(&[(0, at)]),
            Then::Poll {
                user: args[0],
                scratch: at,
                nfds: nfds as usize,
            },
        ))
    }

    fn select(&mut self, tid: i32, args: &[u64; 6], scr: &mut Scratch) -> Res {
        let n = args[0] as u32 as i32;
        if n < 0 {
            return Ok(Decision::Pass);
        }
        let pid = Self::pid(tid);
        let t = &self.tasks[&tid];
        let n = (n as usize).min(t.files.max_fds());
        let words = n.div_ceil(64);
        let mut sets: [Option<Vec<u8>>; 3] = [None, None, None];
        for k in 0..3 {
            if args[1 + k] != 0 {
                match mem::read(pid, args[1 + k], words * 8) {
                    Some(b) => sets[k] = Some(b),
                    // EFAULT from the kernel.
                    None => return Ok(Decision::Pass),
                }
            }
        }
        let bit = |b: &[u8], i: usize| b[i / 8] & (1 << (i % 8)) != 0;
        let mut pairs = Vec::new();
        for v in 0..n {
            if !sets.iter().flatten().any(|s| bit(s, v)) {
                continue;
            }
            match t.files.fd_state(v as u32) {
                fdtable::FdState::Free => return Ok(Decision::Return(-(libc::EBADF as i64))),
                // A reserved fd is open for select but has no file: no events.
                fdtable::FdState::Reserved => {}
                fdtable::FdState::Installed { .. } => {
                    if let Some(r) = t.map.borrow().real(v as u32) {
                        pairs.push((v as u32, r));
                    }
                }
            }
        }
        let real_n = pairs
            .iter()
            .map(|&(_, r)| r as usize + 1)
            .max()
            .unwrap_or(0);
        let real_words = real_n.div_ceil(64);
        let mut edits = edits_of(&[(0, real_n as u64)]);
        let mut real = [0u64; 3];
        for k in 0..3 {
            let Some(s) = &sets[k] else { continue };
            let mut rs = vec![0u8; real_words * 8];
            for &(v, r) in &pairs {
                if bit(s, v as usize) {
                    rs[r as usize / 8] |= 1 << (r % 8);
                }
            }
            let at = scr.alloc(rs.len().max(8))?;
            if !mem::write(pid, at, &rs) {
                return Ok(Decision::Pass);
            }
            real[k] = at;
            edits[1 + k] = Some(at);
        }
        Ok(run(
            edits,
            Then::Select {
                n,
                user: [args[1], args[2], args[3]],
                real,
                real_words,
                pairs,
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn list_fd_dir(
        &self,
        tid: i32,
        desc: &Desc,
        owner: i32,
        info: bool,
        buf: u64,
        count: usize,
        d64: bool,
    ) -> i64 {
        let mut entries: Vec<(i64, String, u8)> = vec![
            (0, ".".into(), libc::DT_DIR),
            (1, "..".into(), libc::DT_DIR),
        ];
        if let Some(t) = self.tasks.get(&owner) {
            for (fd, _) in t.map.borrow().iter() {
                if t.files.fdget(fd).is_some() {
                    let ty = if info { libc::DT_REG } else { libc::DT_LNK };
                    entries.push((fd as i64 + 2, fd.to_string(), ty));
                }
            }
        }
        let mut pos = desc.pos.lock().unwrap();
        let start = *pos;
        let mut out: Vec<u8> = Vec::new();
        for (p, name, ty) in entries.iter().filter(|e| e.0 >= start) {
            let ino = 0x1000 + *p as u64;
            let rec = if d64 {
                (19 + name.len() + 1 + 7) & !7
            } else {
                (18 + name.len() + 2 + 7) & !7
            };
            if out.len() + rec > count {
                if out.is_empty() {
                    return -(libc::EINVAL as i64);
                }
                break;
            }
            let mut e = vec![0u8; rec];
            mem::put_u64(&mut e, 0, ino);
            mem::put_u64(&mut e, 8, (*p + 1) as u64);
            e[16..18].copy_from_slice(&(rec as u16).to_le_bytes());
            if d64 {
                e[18] = *ty;
                e[19..19 + name.len()].copy_from_slice(name.as_bytes());
            } else {
                e[18..18 + name.len()].copy_from_slice(name.as_bytes());
                e[rec - 1] = *ty;
            }
            out.extend_from_slice(&e);
            *pos = p + 1;
        }
        if !mem::write(Self::pid(tid), buf, &out) {
            return -(libc::EFAULT as i64);
        }
        out.len() as i64
    }

    fn clone_entry(
        &mut self,
        tid: i32,
        nr: u64,
        args: &[u64; 6],
        s: Special,
        scr: &mut Scratch,
    ) -> Res {
        let pid = Self::pid(tid);
        let mut edits = [None; 6];
        let (flags, pidfd_ptr) = match s {
            Special::Fork => (libc::SIGCHLD as u64, 0),
            Special::Vfork => (
                (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64,
                0,
            ),
            Special::Clone => (args[0], args[2]),
            _ => {
                // struct clone_args { u64 flags, pidfd, child_tid, parent_tid, exit_signal,
                // stack, stack_size, tls, set_tid, set_tid_size, cgroup }.
                let size = (args[1] as usize).min(88);
                let Some(mut ca) = mem::read(pid, args[0], size).filter(|b| b.len() >= 8) else {
                    return Ok(Decision::Pass);
                };
                let flags = mem::get_u64(&ca, 0);
                let pidfd = if ca.len() >= 16 {
                    mem::get_u64(&ca, 8)
                } else {
                    0
                };
                // CLONE_INTO_CGROUP: cgroup is a descriptor.
                if flags & 0x2_0000_0000 != 0 && ca.len() >= 88 {
                    let cg = mem::get_u64(&ca, 80);
                    mem::put_u64(&mut ca, 80, self.tr_fd(tid, cg) as u32 as u64);
                    let at = scr.alloc(ca.len())?;
                    if mem::write(pid, at, &ca) {
                        edits[0] = Some(at);
                    }
                }
                (flags, pidfd)
            }
        };
        let _ = nr;
        let t = self.tasks.get_mut(&tid).unwrap();
        t.clone_flags = Some(flags);
        let pidfd = if flags & libc::CLONE_PIDFD as u64 != 0 && pidfd_ptr != 0 {
            // The pidfd is reserved before the child is created: the child's copy of the
            // table does not have it.
            match t.files.alloc_fd(0, t.nofile(), O_CLOEXEC) {
                Ok(v) => Some((v, pidfd_ptr)),
                Err(e) => {
                    t.clone_flags = None;
                    return Ok(Decision::Return(neg(e)));
                }
            }
        } else {
            None
        };
        if pidfd.is_none() && edits[0].is_none() {
            return Ok(Decision::Pass);
        }
        Ok(run(edits, Then::Clone { pidfd }))
    }

    fn rlimit(&mut self, tid: i32, args: &[u64; 6], s: Special) -> Decision {
        let pid = Self::pid(tid);
        let (target, res, new, old) = match s {
            Special::Getrlimit => (0, args[0], 0, args[1]),
            Special::Setrlimit => (0, args[0], args[1], 0),
            _ => (args[0] as u32 as i32, args[1], args[2], args[3]),
        };
        if res as u32 != libc::RLIMIT_NOFILE {
            return Decision::Pass;
        }
        let owner = if target == 0 {
            tid
        } else if self.tasks.contains_key(&target) {
            target
        } else {
            // Another process's limit: the kernel's business.
            return Decision::Pass;
        };
        let proc_ = self.tasks[&owner].proc_.clone();
        let cur = proc_.borrow().nofile;
        let mut want = None;
        if new != 0 {
            let Some(b) = mem::read(pid, new, 16) else {
                return Decision::Return(-(libc::EFAULT as i64));
            };
            let (soft, hard) = (mem::get_u64(&b, 0), mem::get_u64(&b, 8));
            if soft > hard {
                return Decision::Return(-(libc::EINVAL as i64));
            }
            if hard > self.cfg.nr_open {
                return Decision::Return(-(libc::EPERM as i64));
            }
            // CAP_SYS_RESOURCE (24) to raise the hard limit.
            if hard > cur.1 && !crate::procfs::has_capability(tid, 24) {
                return Decision::Return(-(libc::EPERM as i64));
            }
            want = Some((soft, hard));
        }
        if let Some(w) = want {
            proc_.borrow_mut().nofile = w;
            // The real table must hold as many real descriptors as the new soft limit lets
            // the program have: placeholders in the way are closed at the next stop.
            let map = &self.tasks[&owner].map;
            let mut m = map.borrow_mut();
            let above = self
                .cfg
                .real_limit
                .saturating_sub(m.placeholders.max(0) as u64);
            if w.0.saturating_add(crate::sup::SLACK) > above {
                let keep = self
                    .cfg
                    .real_limit
                    .saturating_sub(w.0.saturating_add(crate::sup::SLACK))
                    as i32;
                let to = m.shrink_to.map_or(keep, |t| t.min(keep));
                if to < m.placeholders {
                    m.shrink_to = Some(to);
                }
            }
        }
        if old != 0 {
            let mut b = [0u8; 16];
            mem::put_u64(&mut b, 0, cur.0);
            mem::put_u64(&mut b, 8, cur.1);
            if !mem::write(pid, old, &b) {
                return Decision::Return(-(libc::EFAULT as i64));
            }
        }
        Decision::Return(0)
    }

    // === exits ===

    /// Undoes what a call's entry did, when the kernel is going to restart it.
    pub fn undo(&mut self, tid: i32, then: Then) {
        let Some(t) = self.tasks.get(&tid) else {
            return;
        };
        match then {
            Then::Install {
                reserved: Some(v), ..
            } => t.files.put_unused_fd(v),
            Then::Pair { reserved, .. } => {
                t.files.put_unused_fd(reserved[0]);
                t.files.put_unused_fd(reserved[1]);
            }
            Then::Clone {
                pidfd: Some((v, _)),
            } => t.files.put_unused_fd(v),
            _ => {}
        }
    }

    /// Installs real descriptor `real` (reserved number, or the lowest free); on failure the
    /// caller closes `real`.
    fn try_install(
        &mut self,
        tid: i32,
        real: i32,
        reserved: Option<u32>,
        cloexec: bool,
        kind: DescKind,
        call: &str,
    ) -> Result<u32, Errno> {
        let t = &self.tasks[&tid];
        let file = FileRef::new(Desc::new(kind));
        let v = match reserved {
            Some(v) => {
                t.files.fd_install(v, file)?;
                v
            }
            None => t
                .files
                .install(file, if cloexec { O_CLOEXEC } else { 0 }, t.nofile())?,
        };
        let pid = t.tgid();
        t.map.borrow_mut().set(
            v,
            Slot::Real {
                real,
                origin: Rc::new(Origin {
                    call: call.to_string(),
                    pid,
                    from: None,
                }),
            },
        );
        Ok(v)
    }

    /// The exit of a call that stopped there: the value the program gets.
    pub fn finish(&mut self, tid: i32, then: Then, ret: i64) -> i64 {
        let pid = Self::pid(tid);
        match then {
            Then::Restore | Then::Exec => ret,
            Then::Install {
                reserved,
                cloexec,
                kind,
                origin,
            } => {
                if ret < 0 {
                    if let Some(v) = reserved {
                        self.tasks[&tid].files.put_unused_fd(v);
                    }
                    return ret;
                }
                match self.try_install(tid, ret as i32, reserved, cloexec, kind, &origin) {
                    Ok(v) => v as i64,
                    Err(e) => {
                        self.close_reals(tid, &[ret as i32]);
                        neg(e)
                    }
                }
            }
            Then::Pair {
                ptr,
                reserved,
                origin,
            } => {
                let t = &self.tasks[&tid];
                let reals = (ret == 0).then(|| mem::read(pid, ptr, 8)).flatten();
                let Some(b) = reals else {
                    t.files.put_unused_fd(reserved[0]);
                    t.files.put_unused_fd(reserved[1]);
                    return ret;
                };
                let r = [mem::get_u32(&b, 0) as i32, mem::get_u32(&b, 4) as i32];
                for k in 0..2 {
                    let _ = self.try_install(
                        tid,
                        r[k],
                        Some(reserved[k]),
                        false,
                        DescKind::Plain,
                        &origin,
                    );
                }
                let mut out = [0u8; 8];
                mem::put_u32(&mut out, 0, reserved[0]);
                mem::put_u32(&mut out, 4, reserved[1]);
                mem::write(pid, ptr, &out);
                0
            }
            Then::Fill { vfd, token } => {
                let t = &self.tasks[&tid];
                let mut map = t.map.borrow_mut();
                let ours =
                    matches!(map.get(vfd), Some(Slot::Pending { token: k, .. }) if *k == token);
                if ret >= 0 {
                    if ours {
                        let origin = map.get(vfd).unwrap().origin().clone();
                        map.set(
                            vfd,
                            Slot::Real {
                                real: ret as i32,
                                origin,
                            },
                        );
                        return vfd as i64;
                    }
                    // Closed (or replaced) by another thread meanwhile.
                    drop(map);
                    self.close_reals(tid, &[ret as i32]);
                    return vfd as i64;
                }
                if ours {
                    map.take(vfd);
                    drop(map);
                    let _ = self.tasks.get_mut(&tid).unwrap().files.file_close_fd(vfd);
                }
                ret
            }
            Then::Same { vfd } => {
                if ret >= 0 {
                    vfd as i64
                } else {
                    ret
                }
            }
            Then::SetCloexec { vfd, on } => {
                if ret == 0 {
                    let _ = self.tasks[&tid].files.set_close_on_exec(vfd, on);
                }
                ret
            }
            Then::Recv { msg, cloexec, mmsg } => {
                if ret < 0 {
                    return ret;
                }
                let n = if mmsg { ret as usize } else { 1 };
                for i in 0..n {
                    self.recv_one(tid, msg + (i * msghdr::MMSG_SIZE) as u64, cloexec);
                }
                ret
            }
            Then::PeerPidfd { optval } => {
                if ret != 0 {
                    return ret;
                }
                let Some(r) = mem::read_u32(pid, optval) else {
                    return ret;
                };
                let call = self.origin(|| "getsockopt(SO_PEERPIDFD)".into());
                match self.try_install(tid, r as i32, None, true, DescKind::Plain, &call) {
                    Ok(v) => {
                        mem::write(pid, optval, &v.to_le_bytes());
                        0
                    }
                    Err(e) => {
                        self.close_reals(tid, &[r as i32]);
                        neg(e)
                    }
                }
            }
            Then::Poll {
                user,
                scratch,
                nfds,
            } => {
                // The kernel writes every revents back, also when interrupted.
                if (ret >= 0 || ret == -(libc::EINTR as i64))
                    && let (Some(real), Some(mut mine)) = (
                        mem::read(pid, scratch, nfds * 8),
                        mem::read(pid, user, nfds * 8),
                    )
                {
                    for i in 0..nfds {
                        mine[i * 8 + 6..i * 8 + 8].copy_from_slice(&real[i * 8 + 6..i * 8 + 8]);
                    }
                    mem::write(pid, user, &mine);
                }
                ret
            }
            Then::Select {
                n,
                user,
                real,
                real_words,
                pairs,
            } => {
                if ret < 0 {
                    return ret;
                }
                let words = n.div_ceil(64);
                for k in 0..3 {
                    if user[k] == 0 || real[k] == 0 {
                        continue;
                    }
                    let Some(rs) = mem::read(pid, real[k], real_words * 8) else {
                        continue;
                    };
                    let mut vs = vec![0u8; words * 8];
                    for &(v, r) in &pairs {
                        if rs[r as usize / 8] & (1 << (r % 8)) != 0 {
                            vs[v as usize / 8] |= 1 << (v % 8);
                        }
                    }
                    mem::write(pid, user[k], &vs);
                }
                ret
            }
            Then::MsgLenBack { user, scratch } => {
                for i in 0..ret.max(0) as usize {
                    let off = (i * msghdr::MMSG_SIZE + msghdr::MMSG_LEN) as u64;
                    if let Some(v) = mem::read_u32(pid, scratch + off) {
                        mem::write(pid, user + off, &v.to_le_bytes());
                    }
                }
                ret
            }
            Then::Clone { pidfd } => {
                let Some((v, ptr)) = pidfd else {
                    return ret;
                };
                let t = &self.tasks[&tid];
                if ret <= 0 {
                    t.files.put_unused_fd(v);
                    return ret;
                }
                match mem::read_u32(pid, ptr) {
                    Some(r) => {
                        let call = self.origin(|| "clone(CLONE_PIDFD)".into());
                        if self
                            .try_install(tid, r as i32, Some(v), true, DescKind::Plain, &call)
                            .is_ok()
                        {
                            mem::write(pid, ptr, &v.to_le_bytes());
                        }
                    }
                    None => t.files.put_unused_fd(v),
                }
                ret
            }
            Then::FdDirSize { buf, statx, owner } => {
                if ret != 0 {
                    return ret;
                }
                let n = self.tasks.get(&owner).map_or(0, |t| {
                    t.map
                        .borrow()
                        .iter()
                        .filter(|&(fd, _)| t.files.fdget(fd).is_some())
                        .count()
                }) as u64;
                // st_size at 48 in struct stat; stx_size at 40 in struct statx, when its
                // mask (at 0) has STATX_SIZE.
                let at = if statx {
                    match mem::read_u32(pid, buf) {
                        Some(mask) if mask & 0x200 != 0 => Some(40),
                        _ => None,
                    }
                } else {
                    Some(48)
                };
                if let Some(at) = at {
                    mem::write(pid, buf + at, &n.to_le_bytes());
                }
                ret
            }
            Then::Unshare => {
                if ret != 0 {
                    return ret;
                }
                let t = self.tasks.get_mut(&tid).unwrap();
                let shared = t.files.is_shared();
                if let Err(e) = t.files.unshare() {
                    return neg(e);
                }
                if shared {
                    let copy = t.map.borrow().clone();
                    t.map = Rc::new(std::cell::RefCell::new(copy));
                    self.reconcile(tid);
                }
                ret
            }
        }
    }

    /// Installs the descriptors one received message carries, rewriting their numbers in
    /// the program's control buffer; those past the limit are closed and the message marked
    /// MSG_CTRUNC, as the kernel does.
    fn recv_one(&mut self, tid: i32, msg: u64, cloexec: bool) {
        let pid = Self::pid(tid);
        let Some(mut hdr) = mem::read(pid, msg, msghdr::SIZE) else {
            return;
        };
        let ctl_ptr = mem::get_u64(&hdr, msghdr::CONTROL);
        let ctl_len = mem::get_u64(&hdr, msghdr::CONTROLLEN) as usize;
        if ctl_ptr == 0 || !(mem::CMSG_HDR..=1 << 16).contains(&ctl_len) {
            return;
        }
        let Some(mut ctl) = mem::read(pid, ctl_ptr, ctl_len) else {
            return;
        };
        let mut excess = Vec::new();
        let mut truncated = false;
        let call = self.origin(|| "recvmsg(SCM_RIGHTS)".into());
        for c in mem::cmsgs(&ctl) {
            if !mem::carries_fds(&c) {
                continue;
            }
            let mut kept = 0;
            for j in 0..c.len / 4 {
                let at = c.data + 4 * j;
                let r = mem::get_u32(&ctl, at) as i32;
                if truncated {
                    excess.push(r);
                    continue;
                }
                match self.try_install(tid, r, None, cloexec, DescKind::Plain, &call) {
                    Ok(v) => {
                        mem::put_u32(&mut ctl, at, v);
                        kept += 1;
                    }
                    Err(_) => {
                        truncated = true;
                        excess.push(r);
                    }
                }
            }
            if truncated {
                mem::put_u64(&mut ctl, c.at, (mem::CMSG_HDR + 4 * kept) as u64);
            }
        }
        mem::write(pid, ctl_ptr, &ctl);
        if truncated {
            let flags = mem::get_u32(&hdr, msghdr::FLAGS) | libc::MSG_CTRUNC as u32;
            mem::put_u32(&mut hdr, msghdr::FLAGS, flags);
            mem::write(
                pid,
                msg + msghdr::FLAGS as u64,
                &hdr[msghdr::FLAGS..msghdr::FLAGS + 4],
            );
            self.close_reals(tid, &excess);
        }
    }
}

/// The resolver's view of the supervisor, from task `tid`.
struct TaskLookup<'a> {
    sup: &'a Supervisor,
    tid: i32,
}

impl paths::Lookup for TaskLookup<'_> {
    fn ids(&self) -> (i32, i32) {
        let tgid = self.sup.tasks.get(&self.tid).map_or(self.tid, |t| t.tgid());
        (tgid, self.tid)
    }

    fn traced(&self, id: i32) -> bool {
        self.sup.tasks.contains_key(&id)
    }

    fn tgid_of(&self, id: i32) -> Option<i32> {
        self.sup.tasks.get(&id).map(|t| t.tgid())
    }

    fn real(&self, owner: i32, fd: u32) -> i32 {
        self.sup.tr_fd(owner, fd as u64) as i32
    }

    fn readlink(&self, path: &str) -> Option<Vec<u8>> {
        procfs::read_link(path)
    }
}

/// Injected calls closing `reals`: runs of them with no kept descriptor in between become one
/// `close_range`.
pub fn close_calls(mut reals: Vec<i32>, kept: &[i32]) -> Vec<Inject> {
    reals.sort_unstable();
    reals.dedup();
    let mut kept = kept.to_vec();
    kept.sort_unstable();
    let mut out = Vec::new();
    let mut i = 0;
    while i < reals.len() {
        let lo = reals[i];
        let mut hi = lo;
        while i + 1 < reals.len() {
            let next = reals[i + 1];
            // No kept descriptor strictly between hi and next.
            let k = kept.partition_point(|&x| x <= hi);
            if k < kept.len() && kept[k] < next {
                break;
            }
            hi = next;
            i += 1;
        }
        out.push(if lo == hi {
            Inject::close(lo)
        } else {
            Inject {
                nr: libc::SYS_close_range,
                args: [lo as u64, hi as u64, 0, 0, 0, 0],
            }
        });
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_runs_with_close_range() {
        let c = close_calls(vec![105, 100, 101, 102, 110], &[103, 200]);
        let desc: Vec<(i64, u64, u64)> = c.iter().map(|c| (c.nr, c.args[0], c.args[1])).collect();
        assert_eq!(
            desc,
            vec![
                (libc::SYS_close_range, 100, 102),
                (libc::SYS_close_range, 105, 110),
            ]
        );
        assert_eq!(close_calls(vec![7], &[]).len(), 1);
        assert!(close_calls(vec![], &[1]).is_empty());
    }
}

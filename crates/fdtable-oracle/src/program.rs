//! The operation language: [`Op`] trees as written and generated, flattened into a
//! [`Program`] of fixed-size [`Rec`]ords that both executors interpret.
//!
//! A program is flat so that the kernel executor can place it in shared memory before it
//! forks and read it afterwards without allocating. A [`Op::Fork`] or [`Op::Share`] record
//! is followed by its body; `len` says how many records the body spans, so a process runs one
//! contiguous range of records and every record runs at most once, in one process. Record
//! indices are therefore unique names for executed operations, and execution order is record
//! order.

use std::fmt;

/// How many recently returned fds a process remembers for [`FdArg::Recent`].
pub const RING: usize = 8;

/// The `RLIMIT_NOFILE` hard limit of every process the kernel executor runs; soft limits are
/// clamped to it. Far above the fds the generator reaches, so that the dynamic loader of an
/// exec'd probe always finds a free fd below it.
pub const HARD_NOFILE: u64 = 8192;

/// The identity of the files that exist before the first operation: fds 0, 1 and 2.
pub const STD_IDS: [u64; 3] = [1, 2, 3];
/// The identity of every FIFO read end (a completed reservation).
pub const ID_FIFO_R: u64 = 4;
/// The identity of every FIFO write end (the open that completes a reservation).
pub const ID_FIFO_W: u64 = 5;
/// The identity the kernel executor reports for a file it cannot identify.
pub const ID_UNKNOWN: u64 = 6;

/// The identity of the `i`-th file created by record `rec` (an eventfd's counter on the
/// kernel side, so it must fit in 32 bits).
pub fn file_id(rec: usize, i: u64) -> u64 {
    16 + rec as u64 * 4096 + i
}

/// A descriptor argument, resolved when the operation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FdArg {
    /// This number, as the kernel's `unsigned int` (so `u32::MAX` is C's `-1`).
    Lit(u32),
    /// The `k`-th most recently returned fd in this process (0 = the latest); 0 if none.
    Recent(u8),
    /// The process's current soft `RLIMIT_NOFILE` plus this (wrapping to `unsigned int`).
    Limit(i32),
    /// One past the highest fd any process of the run has been handed, plus this.
    Hi(i32),
}

/// A limit argument for [`Op::SetNofile`] and [`Op::Share`]; always clamped to
/// `0..=HARD_NOFILE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LimitArg {
    /// This value.
    Abs(u32),
    /// The process's current soft limit plus this.
    Rel(i32),
    /// One past the highest fd handed out so far, plus this: a limit near the fds in use.
    Hi(i32),
}

/// One operation of a sequence, as the caller of a descriptor table performs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Create a new file at the lowest free fd (kernel: `eventfd2`, optionally `EFD_CLOEXEC`).
    Open {
        /// `O_CLOEXEC`.
        cloexec: bool,
    },
    /// `count` [`Op::Open`]s, stopping at the first failure.
    OpenMany {
        /// How many files to create.
        count: u16,
        /// `O_CLOEXEC` for every one.
        cloexec: bool,
    },
    /// `close(fd)`.
    Close(FdArg),
    /// `dup(fd)`.
    Dup(FdArg),
    /// `dup2(oldfd, newfd)`.
    Dup2(FdArg, FdArg),
    /// `dup3(oldfd, newfd, flags)`.
    Dup3(FdArg, FdArg, u32),
    /// `fcntl(fd, F_DUPFD or F_DUPFD_CLOEXEC, from)`.
    DupFd {
        /// The fd to duplicate.
        fd: FdArg,
        /// The lowest acceptable new fd.
        from: FdArg,
        /// `F_DUPFD_CLOEXEC`.
        cloexec: bool,
    },
    /// `fcntl(fd, F_GETFD)`.
    GetFd(FdArg),
    /// `fcntl(fd, F_SETFD, arg)`.
    SetFd(FdArg, u32),
    /// `fcntl(fd, F_DUPFD_QUERY, other)`.
    DupFdQuery(FdArg, FdArg),
    /// `close_range(first, last, flags)`.
    CloseRange {
        /// First fd.
        first: FdArg,
        /// Last fd (inclusive).
        last: FdArg,
        /// `CLOSE_RANGE_*` flags, unknown bits included.
        flags: u32,
    },
    /// `setrlimit(RLIMIT_NOFILE)` of the soft limit (the hard limit stays [`HARD_NOFILE`]).
    SetNofile(LimitArg),
    /// Observe the table's size (kernel: `FDSize` in `/proc/<pid>/status`, read by the
    /// parent test process; library: `Files::max_fds`).
    FdSize,
    /// `fork()`: the child runs the body on a copy of the table, then exits; the parent waits.
    Fork(Vec<Op>),
    /// `clone(CLONE_FILES)`: the child shares the table, sets its own soft limit, runs the
    /// body, then exits; the parent waits.
    Share {
        /// The child's soft `RLIMIT_NOFILE`.
        nofile: LimitArg,
        /// What the child does.
        ops: Vec<Op>,
    },
    /// `unshare(CLONE_FILES)`.
    Unshare,
    /// `execve`: the process re-executes the probe binary, which reports its fds and runs the
    /// rest of the process's operations.
    Exec,
    /// Start an open that stays in progress: a process sharing the table blocks in
    /// `open(fifo, O_RDONLY)` after reserving the lowest free fd. Top level only; at most one
    /// at a time.
    ReserveBegin {
        /// `O_CLOEXEC` on the reserving open.
        cloexec: bool,
    },
    /// Open the FIFO's write end (a new fd), which lets the reserving open install its file.
    ReserveEnd {
        /// `O_CLOEXEC` on the write end.
        cloexec: bool,
    },
    /// Kill the reserving process: its open fails and gives the reserved fd back.
    ReserveAbort,
    /// Install `src`'s file at `fd` (library: `replace_fd(fd, fget(src), flags)`; kernel:
    /// `dup2(src, fd)` then `fcntl(fd, F_SETFD)`, what `replace_fd` does in fs/file.c).
    ReplaceFd {
        /// The fd whose file is installed.
        src: FdArg,
        /// Where.
        fd: FdArg,
        /// `O_CLOEXEC`.
        cloexec: bool,
    },
    /// Move a file (library: `renumber(from, to)`; kernel: `dup2(from, to)` then
    /// `close(from)` when they differ).
    Renumber(FdArg, FdArg),
}

/// Record kinds.
pub(crate) mod kind {
    pub const OPEN: u64 = 1;
    pub const OPEN_MANY: u64 = 2;
    pub const CLOSE: u64 = 3;
    pub const DUP: u64 = 4;
    pub const DUP2: u64 = 5;
    pub const DUP3: u64 = 6;
    pub const DUPFD: u64 = 7;
    pub const GETFD: u64 = 8;
    pub const SETFD: u64 = 9;
    pub const QUERY: u64 = 10;
    pub const CLOSE_RANGE: u64 = 11;
    pub const SET_NOFILE: u64 = 12;
    pub const FD_SIZE: u64 = 13;
    pub const FORK: u64 = 14;
    pub const SHARE: u64 = 15;
    pub const UNSHARE: u64 = 16;
    pub const EXEC: u64 = 17;
    pub const RESV_BEGIN: u64 = 18;
    pub const RESV_END: u64 = 19;
    pub const RESV_ABORT: u64 = 20;
    pub const REPLACE_FD: u64 = 21;
    pub const RENUMBER: u64 = 22;
}

/// One flattened operation: a kind and up to three encoded arguments; `len` is the body
/// length of a `Fork`/`Share`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rec {
    /// One of the record kinds (`kind::*`).
    pub kind: u64,
    /// First argument.
    pub a: u64,
    /// Second argument.
    pub b: u64,
    /// Third argument.
    pub c: u64,
    /// Body length (records) of a `Fork` or `Share`.
    pub len: u64,
}

/// Words per record in shared memory.
pub(crate) const REC_WORDS: usize = 5;

impl Rec {
    pub(crate) fn to_words(self) -> [u64; REC_WORDS] {
        [self.kind, self.a, self.b, self.c, self.len]
    }
    pub(crate) fn from_words(w: [u64; REC_WORDS]) -> Rec {
        Rec {
            kind: w[0],
            a: w[1],
            b: w[2],
            c: w[3],
            len: w[4],
        }
    }
}

impl FdArg {
    /// Packs the argument into one word.
    pub fn encode(self) -> u64 {
        let (tag, v) = match self {
            FdArg::Lit(v) => (0u64, v),
            FdArg::Recent(k) => (1, k as u32),
            FdArg::Limit(d) => (2, d as u32),
            FdArg::Hi(d) => (3, d as u32),
        };
        tag << 32 | v as u64
    }

    /// Unpacks [`FdArg::encode`].
    pub fn decode(w: u64) -> FdArg {
        let v = w as u32;
        match w >> 32 {
            1 => FdArg::Recent(v as u8),
            2 => FdArg::Limit(v as i32),
            3 => FdArg::Hi(v as i32),
            _ => FdArg::Lit(v),
        }
    }

    /// The fd number this argument denotes in `frame`'s process, given the run's `hi`.
    pub fn resolve(self, frame: &Frame, hi: u64) -> u32 {
        match self {
            FdArg::Lit(v) => v,
            FdArg::Recent(k) => frame.recent(k as usize),
            FdArg::Limit(d) => (frame.nofile as i64).wrapping_add(d as i64) as u32,
            FdArg::Hi(d) => (hi as i64).wrapping_add(d as i64) as u32,
        }
    }
}

impl LimitArg {
    /// Packs the argument into one word.
    pub fn encode(self) -> u64 {
        let (tag, v) = match self {
            LimitArg::Abs(v) => (0u64, v),
            LimitArg::Rel(d) => (1, d as u32),
            LimitArg::Hi(d) => (2, d as u32),
        };
        tag << 32 | v as u64
    }

    /// Unpacks [`LimitArg::encode`].
    pub fn decode(w: u64) -> LimitArg {
        let v = w as u32;
        match w >> 32 {
            1 => LimitArg::Rel(v as i32),
            2 => LimitArg::Hi(v as i32),
            _ => LimitArg::Abs(v),
        }
    }

    /// The soft limit this argument denotes, clamped to `0..=HARD_NOFILE`.
    pub fn resolve(self, frame: &Frame, hi: u64) -> u64 {
        let v = match self {
            LimitArg::Abs(v) => v as i64,
            LimitArg::Rel(d) => frame.nofile as i64 + d as i64,
            LimitArg::Hi(d) => hi as i64 + d as i64,
        };
        v.clamp(0, HARD_NOFILE as i64) as u64
    }
}

/// Per-process interpreter state. Plain data: the kernel executor copies it into a child by
/// forking and through shared memory across `execve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The process's soft `RLIMIT_NOFILE`.
    pub nofile: u64,
    /// Recently returned fds, most recent at `ring[(ring_n - 1) % RING]`.
    pub ring: [u32; RING],
    /// How many fds were ever pushed.
    pub ring_n: u64,
    /// Whether this is the first process of the run (the only one that may reserve).
    pub root: bool,
    /// Whether a reservation is in progress (root only).
    pub resv: bool,
    /// The record index of the reservation in progress.
    pub resv_rec: u64,
}

impl Frame {
    /// The state of the first process.
    pub fn root(nofile: u64) -> Frame {
        Frame {
            nofile,
            ring: [0; RING],
            ring_n: 0,
            root: true,
            resv: false,
            resv_rec: 0,
        }
    }

    /// The `k`-th most recent fd, or 0.
    pub fn recent(&self, k: usize) -> u32 {
        if (k as u64) < self.ring_n.min(RING as u64) {
            self.ring[((self.ring_n - 1 - k as u64) % RING as u64) as usize]
        } else {
            0
        }
    }

    /// Remembers a returned fd.
    pub fn push(&mut self, fd: u32) {
        self.ring[(self.ring_n % RING as u64) as usize] = fd;
        self.ring_n += 1;
    }

    pub(crate) fn to_words(self) -> [u64; FRAME_WORDS] {
        let mut w = [0u64; FRAME_WORDS];
        w[0] = self.nofile;
        w[1] = self.ring_n;
        w[2] = self.root as u64 | (self.resv as u64) << 1;
        w[3] = self.resv_rec;
        for (i, fd) in self.ring.iter().enumerate() {
            w[4 + i] = *fd as u64;
        }
        w
    }

    pub(crate) fn from_words(w: [u64; FRAME_WORDS]) -> Frame {
        let mut ring = [0u32; RING];
        for (i, fd) in ring.iter_mut().enumerate() {
            *fd = w[4 + i] as u32;
        }
        Frame {
            nofile: w[0],
            ring,
            ring_n: w[1],
            root: w[2] & 1 != 0,
            resv: w[2] & 2 != 0,
            resv_rec: w[3],
        }
    }
}

/// Words of an encoded [`Frame`].
pub(crate) const FRAME_WORDS: usize = 4 + RING;

/// A whole test case: the first process's soft limit and what it does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    /// The first process's soft `RLIMIT_NOFILE` (clamped to [`HARD_NOFILE`]).
    pub nofile: u64,
    /// The operations.
    pub ops: Vec<Op>,
}

/// A flattened [`Case`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The first process's soft limit.
    pub nofile: u64,
    /// The records.
    pub recs: Vec<Rec>,
}

impl Case {
    /// A case with these operations and limit.
    pub fn new(nofile: u64, ops: Vec<Op>) -> Case {
        Case { nofile, ops }
    }

    /// Flattens the operation tree.
    pub fn program(&self) -> Program {
        let mut recs = Vec::new();
        flatten(&self.ops, &mut recs);
        Program {
            nofile: self.nofile.min(HARD_NOFILE),
            recs,
        }
    }

    /// The number of operations, bodies included.
    pub fn op_count(&self) -> usize {
        self.program().recs.len()
    }
}

fn flatten(ops: &[Op], out: &mut Vec<Rec>) {
    use kind::*;
    for op in ops {
        let b = |k: bool| k as u64;
        let rec = |kind, a, b, c| Rec {
            kind,
            a,
            b,
            c,
            len: 0,
        };
        match op {
            Op::Open { cloexec } => out.push(rec(OPEN, b(*cloexec), 0, 0)),
            Op::OpenMany { count, cloexec } => {
                out.push(rec(OPEN_MANY, *count as u64, b(*cloexec), 0))
            }
            Op::Close(fd) => out.push(rec(CLOSE, fd.encode(), 0, 0)),
            Op::Dup(fd) => out.push(rec(DUP, fd.encode(), 0, 0)),
            Op::Dup2(o, n) => out.push(rec(DUP2, o.encode(), n.encode(), 0)),
            Op::Dup3(o, n, f) => out.push(rec(DUP3, o.encode(), n.encode(), *f as u64)),
            Op::DupFd { fd, from, cloexec } => {
                out.push(rec(DUPFD, fd.encode(), from.encode(), b(*cloexec)))
            }
            Op::GetFd(fd) => out.push(rec(GETFD, fd.encode(), 0, 0)),
            Op::SetFd(fd, arg) => out.push(rec(SETFD, fd.encode(), *arg as u64, 0)),
            Op::DupFdQuery(a, o) => out.push(rec(QUERY, a.encode(), o.encode(), 0)),
            Op::CloseRange { first, last, flags } => out.push(rec(
                CLOSE_RANGE,
                first.encode(),
                last.encode(),
                *flags as u64,
            )),
            Op::SetNofile(l) => out.push(rec(SET_NOFILE, l.encode(), 0, 0)),
            Op::ReplaceFd { src, fd, cloexec } => {
                out.push(rec(REPLACE_FD, src.encode(), fd.encode(), b(*cloexec)))
            }
            Op::Renumber(from, to) => out.push(rec(RENUMBER, from.encode(), to.encode(), 0)),
            Op::FdSize => out.push(rec(FD_SIZE, 0, 0, 0)),
            Op::Fork(body) | Op::Share { ops: body, .. } => {
                let at = out.len();
                let (k, a) = match op {
                    Op::Share { nofile, .. } => (SHARE, nofile.encode()),
                    _ => (FORK, 0),
                };
                out.push(rec(k, a, 0, 0));
                flatten(body, out);
                out[at].len = (out.len() - at - 1) as u64;
            }
            Op::Unshare => out.push(rec(UNSHARE, 0, 0, 0)),
            Op::Exec => out.push(rec(EXEC, 0, 0, 0)),
            Op::ReserveBegin { cloexec } => out.push(rec(RESV_BEGIN, b(*cloexec), 0, 0)),
            Op::ReserveEnd { cloexec } => out.push(rec(RESV_END, b(*cloexec), 0, 0)),
            Op::ReserveAbort => out.push(rec(RESV_ABORT, 0, 0, 0)),
        }
    }
}

impl fmt::Display for FdArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FdArg::Lit(v) if v >= 0x8000_0000 => write!(f, "{}", v as i32),
            FdArg::Lit(v) => write!(f, "{v}"),
            FdArg::Recent(k) => write!(f, "recent[{k}]"),
            FdArg::Limit(0) => write!(f, "nofile"),
            FdArg::Limit(d) => write!(f, "nofile{d:+}"),
            FdArg::Hi(0) => write!(f, "hi"),
            FdArg::Hi(d) => write!(f, "hi{d:+}"),
        }
    }
}

impl fmt::Display for LimitArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LimitArg::Abs(v) => write!(f, "{v}"),
            LimitArg::Rel(d) => write!(f, "nofile{d:+}"),
            LimitArg::Hi(d) => write!(f, "hi{d:+}"),
        }
    }
}

/// Writes one record as a call, with the resolved values of its arguments when known.
pub(crate) fn describe(rec: &Rec, resolved: Option<[u64; 2]>) -> String {
    use kind::*;
    let fa = |w: u64, i: usize| {
        let arg = FdArg::decode(w);
        match (arg, resolved) {
            (FdArg::Lit(_), _) | (_, None) => arg.to_string(),
            (_, Some(r)) => format!("{arg}={}", r[i] as u32 as i32),
        }
    };
    let la = |w: u64, i: usize| {
        let arg = LimitArg::decode(w);
        match (arg, resolved) {
            (LimitArg::Abs(_), _) | (_, None) => arg.to_string(),
            (_, Some(r)) => format!("{arg}={}", r[i]),
        }
    };
    let cx = |v: u64| if v != 0 { "O_CLOEXEC" } else { "0" };
    match rec.kind {
        OPEN => format!("open({})", cx(rec.a)),
        OPEN_MANY => format!("open×{}({})", rec.a, cx(rec.b)),
        CLOSE => format!("close({})", fa(rec.a, 0)),
        DUP => format!("dup({})", fa(rec.a, 0)),
        DUP2 => format!("dup2({}, {})", fa(rec.a, 0), fa(rec.b, 1)),
        DUP3 => format!("dup3({}, {}, {:#x})", fa(rec.a, 0), fa(rec.b, 1), rec.c),
        DUPFD => format!(
            "fcntl({}, {}, {})",
            fa(rec.a, 0),
            if rec.c != 0 {
                "F_DUPFD_CLOEXEC"
            } else {
                "F_DUPFD"
            },
            fa(rec.b, 1)
        ),
        GETFD => format!("fcntl({}, F_GETFD)", fa(rec.a, 0)),
        REPLACE_FD => format!(
            "replace_fd({}, file of {}, {})",
            fa(rec.b, 1),
            fa(rec.a, 0),
            cx(rec.c)
        ),
        RENUMBER => format!("renumber({}, {})", fa(rec.a, 0), fa(rec.b, 1)),
        SETFD => format!("fcntl({}, F_SETFD, {:#x})", fa(rec.a, 0), rec.b),
        QUERY => format!("fcntl({}, F_DUPFD_QUERY, {})", fa(rec.a, 0), fa(rec.b, 1)),
        CLOSE_RANGE => format!(
            "close_range({}, {}, {})",
            fa(rec.a, 0),
            fa(rec.b, 1),
            close_range_flags(rec.c as u32)
        ),
        SET_NOFILE => format!("setrlimit(NOFILE, {})", la(rec.a, 0)),
        FD_SIZE => "fdsize()".to_string(),
        FORK => format!("fork() {{ {} ops }}", rec.len),
        SHARE => format!(
            "clone(CLONE_FILES, nofile={}) {{ {} ops }}",
            la(rec.a, 0),
            rec.len
        ),
        UNSHARE => "unshare(CLONE_FILES)".to_string(),
        EXEC => "execve(probe)".to_string(),
        RESV_BEGIN => format!("reserve: open(fifo, O_RDONLY|{}) blocks", cx(rec.a)),
        RESV_END => format!("reserve end: open(fifo, O_WRONLY|{})", cx(rec.a)),
        RESV_ABORT => "reserve abort: kill the opener".to_string(),
        k => format!("<unknown record kind {k}>"),
    }
}

fn close_range_flags(flags: u32) -> String {
    let mut parts = Vec::new();
    if flags & fdtable::CLOSE_RANGE_UNSHARE != 0 {
        parts.push("UNSHARE".to_string());
    }
    if flags & fdtable::CLOSE_RANGE_CLOEXEC != 0 {
        parts.push("CLOEXEC".to_string());
    }
    let rest = flags & !(fdtable::CLOSE_RANGE_UNSHARE | fdtable::CLOSE_RANGE_CLOEXEC);
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    if parts.is_empty() {
        "0".to_string()
    } else {
        parts.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        for a in [
            FdArg::Lit(0),
            FdArg::Lit(u32::MAX),
            FdArg::Recent(7),
            FdArg::Limit(-1),
            FdArg::Limit(i32::MIN),
            FdArg::Hi(5),
        ] {
            assert_eq!(FdArg::decode(a.encode()), a);
        }
        for l in [LimitArg::Abs(64), LimitArg::Rel(-3), LimitArg::Hi(1)] {
            assert_eq!(LimitArg::decode(l.encode()), l);
        }
    }

    #[test]
    fn flatten_nests_bodies() {
        let case = Case::new(
            64,
            vec![
                Op::Open { cloexec: false },
                Op::Fork(vec![
                    Op::Close(FdArg::Lit(3)),
                    Op::Share {
                        nofile: LimitArg::Abs(5),
                        ops: vec![Op::Exec],
                    },
                ]),
                Op::Unshare,
            ],
        );
        let p = case.program();
        let kinds: Vec<u64> = p.recs.iter().map(|r| r.kind).collect();
        use kind::*;
        assert_eq!(kinds, [OPEN, FORK, CLOSE, SHARE, EXEC, UNSHARE]);
        assert_eq!(p.recs[1].len, 3);
        assert_eq!(p.recs[3].len, 1);
    }

    #[test]
    fn frame_ring_and_words() {
        let mut f = Frame::root(10);
        assert_eq!(f.recent(0), 0);
        for fd in 0..10 {
            f.push(fd);
        }
        assert_eq!(f.recent(0), 9);
        assert_eq!(f.recent(7), 2);
        assert_eq!(f.recent(8), 0);
        f.resv = true;
        f.resv_rec = 12;
        assert_eq!(Frame::from_words(f.to_words()), f);
        assert_eq!(FdArg::Limit(-1).resolve(&Frame::root(0), 3), u32::MAX);
        assert_eq!(LimitArg::Rel(-20).resolve(&f, 3), 0);
        assert_eq!(LimitArg::Abs(1 << 30).resolve(&f, 3), HARD_NOFILE);
    }
}

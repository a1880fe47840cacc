//! # fdtable-syscalls
//!
//! What every x86_64 Linux system call does to a descriptor table, written once as data and
//! read by `fdtable run` (which calls its seccomp filter lets run, which reach the
//! supervisor, and what the supervisor does with them) and by `fdtable replay` (how it decodes
//! a call of an strace log). The facts are Linux 6.18's (and 6.19's one new call, `listns`);
//! the comments name the kernel functions they come from.
//!
//! - [`SYSCALLS`]: one [`Syscall`] per call number, with its [`Effect`] on the table and the
//!   descriptor arguments it looks up ([`Uses`]);
//! - [`fcntl::COMMANDS`] and [`ioctl`]: the commands of the two multiplexers that create
//!   descriptors, change close-on-exec bits or report them;
//! - [`bpf::CREATING`]: which `bpf(2)` commands return a new descriptor.
//!
//! A new descriptor-creating call is one row of [`SYSCALLS`]: its [`Create`] says how many
//! descriptors it installs, whether it reserves them before its other checks, and where
//! their close-on-exec bit comes from.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bpf;
pub mod consts;
pub mod fcntl;
pub mod ioctl;
mod table;

pub use table::SYSCALLS;

/// One system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syscall {
    /// Its x86_64 number.
    pub nr: u32,
    /// Its name (the kernel's `sys_` name without the prefix, as strace prints it).
    pub name: &'static str,
    /// What it does to the caller's descriptor table.
    pub effect: Effect,
    /// The descriptor arguments it looks up, and what its EBADF means.
    pub uses: Uses,
}

/// What a call does to a descriptor table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing: it creates, closes, duplicates and reports no descriptor (it may use some,
    /// see [`Uses`]).
    None,
    /// Creates descriptors.
    Create(Create),
    /// Creates descriptors when every condition holds; otherwise [`Effect::None`].
    CreateIf(&'static [Cond], Create),
    /// `close(fd)`.
    Close,
    /// `close_range(first, last, flags)`.
    CloseRange,
    /// `dup(fd)`: the lowest free number.
    Dup,
    /// `dup2(old, new)`.
    Dup2,
    /// `dup3(old, new, flags)`.
    Dup3,
    /// `fcntl(fd, cmd, arg)`: by command, see [`fcntl::COMMANDS`].
    Fcntl,
    /// `ioctl(fd, cmd, arg)`: by command, see [`ioctl`].
    Ioctl,
    /// `recvmsg`/`recvmmsg`: descriptors received with `SCM_RIGHTS` (and a pidfd with
    /// `SCM_PIDFD`) are installed at the lowest free numbers inside the call; how many only
    /// the message says. `MSG_CMSG_CLOEXEC` in argument `flags_arg` sets their close-on-exec
    /// bit.
    Recv {
        /// The argument holding the flags.
        flags_arg: u8,
    },
    /// `clone(flags, ...)`: the flags are argument 0; `CLONE_PIDFD` installs a pidfd
    /// (close-on-exec) in the parent's table after the child's copy was taken.
    Clone,
    /// `clone3(args, size)`: as [`Effect::Clone`], its flags in memory.
    Clone3,
    /// `fork()`: the child gets a copy of the table.
    Fork,
    /// `vfork()`: as `fork`.
    Vfork,
    /// `execve`, `execveat`: the table is unshared, close-on-exec descriptors are closed
    /// (`do_close_on_exec`), and a `binfmt_misc` interpreter with the open-binary flag gets
    /// one new descriptor.
    Exec,
    /// `unshare(flags)`: `CLONE_FILES` gives the caller a private copy of its table.
    Unshare,
    /// `getrlimit`, `setrlimit`, `prlimit64`: `RLIMIT_NOFILE` bounds every allocation.
    Rlimit(Rlimit),
    /// `ptrace`: makes the caller a tracer.
    Trace,
    /// Operations submitted earlier create, use and close descriptors asynchronously
    /// (`io_uring_enter`, `io_uring_register`).
    Async,
    /// Not implemented on x86_64 (always ENOSYS).
    Obsolete,
}

/// How a call creates descriptors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Create {
    /// When the number is reserved, against the call's other failures.
    pub order: Order,
    /// How many descriptors one successful call installs.
    pub count: Count,
    /// Where the new descriptors' close-on-exec bit comes from.
    pub cloexec: Cloexec,
    /// What the descriptor created may do to the table later.
    pub later: Later,
}

/// When a creating call reserves its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Before anything that can fail on the object (the opens, after copying the path;
    /// `socketpair`): a full table answers EMFILE whatever the path.
    ReserveFirst,
    /// After creating the object: its errors win over EMFILE.
    CreateFirst,
    /// `accept`: the listening descriptor's lookup (EBADF), then the reservation (EMFILE),
    /// then the socket's own errors, held while it waits for a connection.
    Accept,
}

/// How many descriptors one successful call installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// One, returned as the call's result.
    One,
    /// One, written to memory at this argument (`clone`'s pidfd, `SO_PEERPIDFD`).
    OneAt(u8),
    /// Two, written to the `int[2]` at this argument (`pipe`, `socketpair`), both or none.
    Pair(u8),
}

/// Where a new descriptor's close-on-exec bit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloexec {
    /// Never set.
    Never,
    /// Always set (pidfds, namespace descriptors, BPF objects, message queues, ...).
    Always,
    /// Set when argument `arg` has `bit` (named `name` by strace).
    Flag {
        /// The argument.
        arg: u8,
        /// The bit.
        bit: u64,
        /// Its name.
        name: &'static str,
    },
    /// Set when field `field` of the structure argument `arg` points to has `bit`: known
    /// only from memory (`openat2`'s `open_how.flags`).
    Field {
        /// The argument (a pointer).
        arg: u8,
        /// The field's name, as strace prints the structure.
        field: &'static str,
        /// The bit.
        bit: u64,
        /// Its name.
        name: &'static str,
    },
}

/// What a created descriptor may do to its table later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Later {
    /// Nothing.
    Nothing,
    /// An io_uring: operations submitted to it open, accept, receive and close descriptors
    /// asynchronously, with no further system call of the program.
    Ring,
    /// A fanotify group: every `read()` installs a descriptor per event, unless the group
    /// reports file handles (`FAN_REPORT_FID` and friends) and no pidfd
    /// (`FAN_REPORT_PIDFD`); see [`consts::fanotify_read_installs`].
    ReadInstalls,
    /// A userfaultfd: with `UFFD_FEATURE_EVENT_FORK` enabled (by `UFFDIO_API`), `read()`
    /// installs a descriptor per fork event.
    ForkEvents,
}

/// A condition on one argument's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// The argument (as a 32-bit int) is `value`, named `name`.
    Is {
        /// The argument.
        arg: u8,
        /// Its value.
        value: i64,
        /// Its name (strace's), or "" for a plain number.
        name: &'static str,
    },
    /// The argument has every bit of `bits` (named `name`).
    HasAll {
        /// The argument.
        arg: u8,
        /// The bits.
        bits: u64,
        /// Their name.
        name: &'static str,
    },
    /// The argument has none of `bits` (named `names`).
    HasNone {
        /// The argument.
        arg: u8,
        /// The bits.
        bits: u64,
        /// Their names.
        names: &'static [&'static str],
    },
    /// The argument is one of these values (each with its name).
    OneOf {
        /// The argument.
        arg: u8,
        /// The values.
        values: &'static [(u64, &'static str)],
    },
}

impl Cond {
    /// Whether the condition holds for these argument registers.
    pub fn holds(&self, args: &[u64; 6]) -> bool {
        match *self {
            Cond::Is { arg, value, .. } => args[arg as usize] as u32 as i32 as i64 == value,
            Cond::HasAll { arg, bits, .. } => args[arg as usize] & bits == bits,
            Cond::HasNone { arg, bits, .. } => args[arg as usize] & bits == 0,
            Cond::OneOf { arg, values } => {
                let v = args[arg as usize] as u32 as u64;
                values.iter().any(|&(x, _)| x == v)
            }
        }
    }

    /// The argument the condition reads.
    pub fn arg(&self) -> u8 {
        match *self {
            Cond::Is { arg, .. }
            | Cond::HasAll { arg, .. }
            | Cond::HasNone { arg, .. }
            | Cond::OneOf { arg, .. } => arg,
        }
    }
}

/// Whether every condition holds.
pub fn all_hold(conds: &[Cond], args: &[u64; 6]) -> bool {
    conds.iter().all(|c| c.holds(args))
}

/// The arguments of an `RLIMIT_*` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimit {
    /// The target process (`prlimit64`; 0 means the caller).
    pub pid: Option<u8>,
    /// The resource.
    pub resource: u8,
    /// The new limit (a pointer; NULL: none).
    pub new: Option<u8>,
    /// Where the old limit is written (a pointer; NULL: nowhere).
    pub old: Option<u8>,
}

/// The descriptor arguments a call looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uses {
    /// The arguments.
    pub fds: &'static [FdArg],
    /// How the kernel looks them up.
    pub lookup: Lookup,
    /// What its EBADF says about them.
    pub ebadf: Ebadf,
    /// Whether every errno other than the early ones (argument checks, copies, allocation
    /// failures, and what seccomp filters answer) comes after the lookups, so that such a
    /// failure proves the descriptors were found.
    pub proves: bool,
}

impl Uses {
    /// No descriptor argument.
    pub const NONE: Uses = Uses {
        fds: &[],
        lookup: Lookup::Raw,
        ebadf: Ebadf::NotModelled,
        proves: false,
    };
}

/// One descriptor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdArg {
    /// Its index.
    pub arg: u8,
    /// A directory descriptor that starts the walk of the path in the next argument: looked
    /// up only when that path is relative or empty; `AT_FDCWD` is none.
    pub dirfd: bool,
}

/// How the kernel looks a descriptor argument up (fs/file.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// `fdget_raw`, or the start of a path walk: an `O_PATH` descriptor will do.
    Raw,
    /// `fdget`: an `O_PATH` descriptor is EBADF, as if closed.
    NoPath,
}

/// What a call's EBADF says about its descriptor arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ebadf {
    /// Only the lookups answer EBADF: one of the arguments was bad.
    Strict,
    /// EBADF may also come from elsewhere (why).
    Other(&'static str),
    /// Not modelled (the call's own decoding says, or nothing does).
    NotModelled,
}

/// EBADF may come from the open file's access mode (`read` on a write-only file).
pub const ACCESS_MODE: &str = "EBADF may come from the file's access mode";
/// EBADF may come from a descriptor inside the arguments (SCM_RIGHTS, a BPF program, a
/// mark's dirfd, an ioctl's argument).
pub const INNER_FD: &str = "EBADF may come from a descriptor inside the arguments";
/// EBADF may mean the descriptor is not a pidfd.
pub const NOT_PIDFD: &str = "EBADF may mean the descriptor is no pidfd";
/// io_uring calls may name a registered ring by index.
pub const IO_URING: &str = "io_uring: the argument may be a registered ring's index";
/// The call's lookup is not modelled.
pub const UNMODELLED: &str = "the call's descriptor lookup is not modelled";
/// An ioctl command whose driver may answer EBADF itself.
pub const DRIVER: &str = "EBADF may come from the ioctl command's driver";
/// fcntl commands that answer EBADF for other reasons (lock type vs access mode, not a pipe).
pub const FCNTL_OTHER: &str = "EBADF may come from the fcntl command (lock type, not a pipe)";

/// The call numbered `nr`, if x86_64 has one.
pub fn by_nr(nr: u64) -> Option<&'static Syscall> {
    let i = SYSCALLS.binary_search_by_key(&nr, |s| s.nr as u64).ok()?;
    Some(&SYSCALLS[i])
}

/// The call named `name` (a linear search: callers that look names up often build their own
/// index).
pub fn by_name(name: &str) -> Option<&'static Syscall> {
    SYSCALLS.iter().find(|s| s.name == name)
}

/// Other spellings of x86_64 calls that strace prints for other ABIs' logs (`fcntl64`,
/// `_llseek`, ...): (spelling, the x86_64 call with the same table effect).
pub const ALIASES: &[(&str, &str)] = &[
    ("fcntl64", "fcntl"),
    ("_llseek", "lseek"),
    ("fstatat64", "newfstatat"),
    ("mmap2", "mmap"),
    ("ugetrlimit", "getrlimit"),
];

/// One past the largest number of [`SYSCALLS`].
pub const NR_END: u32 = 471;

#[cfg(test)]
mod tests;

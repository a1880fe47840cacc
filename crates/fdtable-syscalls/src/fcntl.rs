//! `fcntl(2)` commands (argument 1): what each does to the table, and how it looks its
//! descriptor up (fs/fcntl.c: `fdget_raw`, then EBADF for an `O_PATH` file unless
//! `check_fcntl_cmd` allows the command).

use crate::{Ebadf, FCNTL_OTHER, Lookup};

/// What an fcntl command does to the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// `F_DUPFD`, `F_DUPFD_CLOEXEC`: the lowest free number >= argument 2.
    DupFd {
        /// `F_DUPFD_CLOEXEC`.
        cloexec: bool,
    },
    /// `F_GETFD`: reports the close-on-exec bit.
    GetFd,
    /// `F_SETFD`: sets it from `FD_CLOEXEC` in argument 2.
    SetFd,
    /// `F_DUPFD_QUERY`: whether argument 2 refers to the same file (uses two descriptors).
    DupFdQuery,
    /// Only uses the descriptor.
    None,
}

/// One command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its value.
    pub cmd: u32,
    /// Its name.
    pub name: &'static str,
    /// What it does.
    pub effect: Effect,
    /// How it looks the descriptor up.
    pub lookup: Lookup,
    /// What its EBADF means.
    pub ebadf: Ebadf,
}

const fn cmd(
    cmd: u32,
    name: &'static str,
    effect: Effect,
    lookup: Lookup,
    ebadf: Ebadf,
) -> Command {
    Command {
        cmd,
        name,
        effect,
        lookup,
        ebadf,
    }
}

const fn used(c: u32, name: &'static str, lookup: Lookup, ebadf: Ebadf) -> Command {
    cmd(c, name, Effect::None, lookup, ebadf)
}

use Ebadf::Strict;
use Lookup::{NoPath, Raw};

/// Every command Linux 6.18 knows (and the 32-bit `*64` lock commands strace prints), by
/// value. Commands that take table effects look their descriptor up raw; `do_fcntl`'s own
/// EBADFs are the lock types against the file's access mode and the pipe commands on other
/// files.
pub const COMMANDS: &[Command] = &[
    cmd(0, "F_DUPFD", Effect::DupFd { cloexec: false }, Raw, Strict),
    cmd(1, "F_GETFD", Effect::GetFd, Raw, Strict),
    cmd(2, "F_SETFD", Effect::SetFd, Raw, Strict),
    used(3, "F_GETFL", Raw, Strict),
    used(4, "F_SETFL", NoPath, Strict),
    used(5, "F_GETLK", NoPath, Strict),
    used(6, "F_SETLK", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(7, "F_SETLKW", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(8, "F_SETOWN", NoPath, Strict),
    used(9, "F_GETOWN", NoPath, Strict),
    used(10, "F_SETSIG", NoPath, Strict),
    used(11, "F_GETSIG", NoPath, Strict),
    used(12, "F_GETLK64", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(13, "F_SETLK64", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(14, "F_SETLKW64", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(15, "F_SETOWN_EX", NoPath, Strict),
    used(16, "F_GETOWN_EX", NoPath, Strict),
    used(17, "F_GETOWNER_UIDS", NoPath, Strict),
    used(36, "F_OFD_GETLK", NoPath, Strict),
    used(37, "F_OFD_SETLK", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(38, "F_OFD_SETLKW", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(1024, "F_SETLEASE", NoPath, Strict),
    used(1025, "F_GETLEASE", NoPath, Strict),
    used(1026, "F_NOTIFY", NoPath, Strict),
    cmd(1027, "F_DUPFD_QUERY", Effect::DupFdQuery, Raw, Strict),
    used(1028, "F_CREATED_QUERY", Raw, Strict),
    cmd(
        1030,
        "F_DUPFD_CLOEXEC",
        Effect::DupFd { cloexec: true },
        Raw,
        Strict,
    ),
    used(1031, "F_SETPIPE_SZ", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(1032, "F_GETPIPE_SZ", NoPath, Ebadf::Other(FCNTL_OTHER)),
    used(1033, "F_ADD_SEALS", NoPath, Strict),
    used(1034, "F_GET_SEALS", NoPath, Strict),
    used(1035, "F_GET_RW_HINT", NoPath, Strict),
    used(1036, "F_SET_RW_HINT", NoPath, Strict),
];

/// The command of value `c`.
pub fn by_value(c: u32) -> Option<&'static Command> {
    COMMANDS.iter().find(|x| x.cmd == c)
}

/// The command named `name`.
pub fn by_name(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|x| x.name == name)
}

/// Whether command `c` changes or reports the table (a command this catalogue does not know
/// only uses its descriptor: the kernel answers EINVAL).
pub fn touches_table(c: u32) -> bool {
    by_value(c).is_some_and(|x| !matches!(x.effect, Effect::None | Effect::DupFdQuery))
}

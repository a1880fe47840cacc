//! `ioctl(2)` commands (argument 1) that change or report the table, and the command types
//! whose commands never do.
//!
//! A command is `_IOC(dir, type, nr, size)`: `dir << 30 | size << 16 | type << 8 | nr`
//! (legacy terminal commands are plain `type << 8 | nr`). Every descriptor a driver installs
//! takes the lowest free number (`get_unused_fd_flags`, `anon_inode_getfd`), so an unknown
//! command that creates descriptors can be found afterwards by probing the lowest free
//! numbers.

use crate::consts::O_CLOEXEC;
use crate::{Cloexec, Later};

/// What a command does to the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Returns a new descriptor (lowest free, after the command's own checks).
    Create(Cloexec),
    /// Writes a new descriptor into the structure argument 2 points to.
    CreateInStruct(Cloexec),
    /// Sets (`FIOCLEX`) or clears (`FIONCLEX`) the close-on-exec bit.
    SetCloexec(bool),
    /// May make the descriptor install others later.
    Later(Later),
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
}

const fn c(cmd: u32, name: &'static str, effect: Effect) -> Command {
    Command { cmd, name, effect }
}

const ALWAYS: Effect = Effect::Create(Cloexec::Always);
/// The new descriptor's `O_CLOEXEC` comes from the flags in argument 2.
const FROM_ARG: Effect = Effect::Create(Cloexec::Flag {
    arg: 2,
    bit: O_CLOEXEC,
    name: "O_CLOEXEC",
});

/// The commands that create descriptors, change close-on-exec bits or enable later
/// installations, by value.
pub const COMMANDS: &[Command] = &[
    // fs/ioctl.c.
    c(0x5450, "FIONCLEX", Effect::SetCloexec(false)),
    c(0x5451, "FIOCLEX", Effect::SetCloexec(true)),
    // drivers/tty/pty.c: the flags are the new descriptor's open flags.
    c(0x5441, "TIOCGPTPEER", FROM_ARG),
    // drivers/net/tun.c, net/socket.c, fs/nsfs.c: `open_related_ns` (close-on-exec).
    c(0x54e3, "TUNGETDEVNETNS", ALWAYS),
    c(0x894c, "SIOCGSKNS", ALWAYS),
    c(0xb701, "NS_GET_USERNS", ALWAYS),
    c(0xb702, "NS_GET_PARENT", ALWAYS),
    c(0x8010_b70b, "NS_MNT_GET_NEXT", ALWAYS),
    c(0x8010_b70c, "NS_MNT_GET_PREV", ALWAYS),
    // virt/kvm/kvm_main.c: anonymous inodes, close-on-exec.
    c(0xae01, "KVM_CREATE_VM", ALWAYS),
    c(0xae41, "KVM_CREATE_VCPU", ALWAYS),
    c(0xaece, "KVM_GET_STATS_FD", ALWAYS),
    c(
        0xc00c_aee0,
        "KVM_CREATE_DEVICE",
        Effect::CreateInStruct(Cloexec::Always),
    ),
    // drivers/vfio/group.c.
    c(0x3b6a, "VFIO_GROUP_GET_DEVICE_FD", ALWAYS),
    // fs/userfaultfd.c (/dev/userfaultfd): the flags are the new userfaultfd's.
    c(0xaa00, "USERFAULTFD_IOC_NEW", FROM_ARG),
    c(0xc018_aa3f, "UFFDIO_API", Effect::Later(Later::ForkEvents)),
    // kernel/pid.c (pidfd_ioctl): `open_namespace`, close-on-exec.
    c(0xff01, "PIDFD_GET_CGROUP_NAMESPACE", ALWAYS),
    c(0xff02, "PIDFD_GET_IPC_NAMESPACE", ALWAYS),
    c(0xff03, "PIDFD_GET_MNT_NAMESPACE", ALWAYS),
    c(0xff04, "PIDFD_GET_NET_NAMESPACE", ALWAYS),
    c(0xff05, "PIDFD_GET_PID_NAMESPACE", ALWAYS),
    c(0xff06, "PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE", ALWAYS),
    c(0xff07, "PIDFD_GET_TIME_NAMESPACE", ALWAYS),
    c(0xff08, "PIDFD_GET_TIME_FOR_CHILDREN_NAMESPACE", ALWAYS),
    c(0xff09, "PIDFD_GET_USER_NAMESPACE", ALWAYS),
    c(0xff0a, "PIDFD_GET_UTS_NAMESPACE", ALWAYS),
];

/// Command types (`(cmd >> 8) & 0xff`) none of whose commands creates or closes a
/// descriptor, besides the ones in [`COMMANDS`]: (type, what they are).
pub const USE_ONLY_TYPES: &[(u8, &str)] = &[
    (0x54, "terminals, tun, FIO*"),
    (0x89, "sockets (SIOC*)"),
    (0x66, "files (FS_IOC_*)"),
    (0x76, "FS_IOC_GETVERSION"),
    (0x12, "block devices"),
    (0x94, "FICLONE, btrfs"),
    (
        0x24,
        "perf events (PERF_EVENT_IOC_SET_OUTPUT uses a descriptor)",
    ),
    (
        0x4c,
        "loop devices (LOOP_SET_FD, LOOP_CONFIGURE use a descriptor)",
    ),
    (0x45, "input event devices"),
    (0x8b, "wireless extensions"),
];

/// Ranges of a use-only type whose commands each protocol or driver defines for itself
/// (inclusive): what they do depends on the socket, so they are treated as unknown
/// commands (`SIOCPROTOPRIVATE`: KCM's `SIOCKCMCLONE`, 0x89e2, installs a descriptor).
pub const PRIVATE: &[(u32, u32, &str)] = &[
    (0x89e0, 0x89ef, "SIOCPROTOPRIVATE"),
    (0x89f0, 0x89ff, "SIOCDEVPRIVATE"),
];

/// Commands of a use-only type that set a file's `SIGIO`/`SIGURG` owner from a pid in
/// memory (`FIOSETOWN`, `SIOCSPGRP`): they create nothing, but name a process.
pub const SETS_OWNER: &[u32] = &[0x8901, 0x8902];

/// Single commands of other types that never create or close a descriptor and are hot.
pub const USE_ONLY: &[(u32, &str)] = &[(0xae80, "KVM_RUN")];

/// The type byte of a command.
pub const fn type_of(cmd: u32) -> u8 {
    (cmd >> 8) as u8
}

/// The command of value `cmd`.
pub fn by_value(cmd: u32) -> Option<&'static Command> {
    COMMANDS.iter().find(|x| x.cmd == cmd)
}

/// The command named `name`.
pub fn by_name(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|x| x.name == name)
}

/// Whether command `cmd` is known to only use its descriptor.
pub fn use_only(cmd: u32) -> bool {
    by_value(cmd).is_none()
        && !PRIVATE.iter().any(|&(lo, hi, _)| (lo..=hi).contains(&cmd))
        && (USE_ONLY.iter().any(|&(v, _)| v == cmd)
            || USE_ONLY_TYPES.iter().any(|&(t, _)| t == type_of(cmd)))
}

//! The kernel's flag values, used as-is.

/// `O_CLOEXEC`: the only flag the table itself looks at in `alloc_fd`/`dup3` flags.
pub const O_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
/// `FD_CLOEXEC`, the `F_GETFD`/`F_SETFD` bit.
pub const FD_CLOEXEC: u32 = libc::FD_CLOEXEC as u32;
/// `CLOSE_RANGE_UNSHARE` (`1 << 1`).
pub const CLOSE_RANGE_UNSHARE: u32 = 1 << 1;
/// `CLOSE_RANGE_CLOEXEC` (`1 << 2`).
pub const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

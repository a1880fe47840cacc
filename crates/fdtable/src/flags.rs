//! The kernel's flag values, with Linux's numbers on every host
//! (`include/uapi/asm-generic/fcntl.h`, `include/uapi/linux/close_range.h`).

/// `O_CLOEXEC` (`02000000`): the only flag the table itself looks at in `alloc_fd`/`dup3`.
pub const O_CLOEXEC: u32 = 0o2_000_000;
/// `FD_CLOEXEC`, the `F_GETFD`/`F_SETFD` bit.
pub const FD_CLOEXEC: u32 = 1;
/// `CLOSE_RANGE_UNSHARE` (`1 << 1`).
pub const CLOSE_RANGE_UNSHARE: u32 = 1 << 1;
/// `CLOSE_RANGE_CLOEXEC` (`1 << 2`).
pub const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    #[test]
    fn numbers_match_the_linux_host() {
        assert_eq!(super::O_CLOEXEC, libc::O_CLOEXEC as u32);
        assert_eq!(super::FD_CLOEXEC, libc::FD_CLOEXEC as u32);
    }
}

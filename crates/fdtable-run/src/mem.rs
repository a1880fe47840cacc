//! Reading and writing a tracee's memory (`process_vm_readv` / `process_vm_writev`), and the
//! layouts of the structures that carry descriptors: `struct msghdr`, control messages,
//! `struct pollfd`, `fd_set`.
//!
//! A read that faults returns `None`; callers then let the kernel run the call unchanged, so
//! that the program gets the kernel's own EFAULT.

use nix::sys::uio::{RemoteIoVec, process_vm_readv, process_vm_writev};
use nix::unistd::Pid;
use std::io::{IoSlice, IoSliceMut};

const PAGE: u64 = 4096;

/// Reads `len` bytes at `addr`.
pub fn read(pid: Pid, addr: u64, len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    if addr == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    let remote = [RemoteIoVec {
        base: addr as usize,
        len,
    }];
    match process_vm_readv(pid, &mut [IoSliceMut::new(&mut buf)], &remote) {
        Ok(n) if n == len => Some(buf),
        _ => None,
    }
}

/// Writes `data` at `addr`; false if it faulted.
pub fn write(pid: Pid, addr: u64, data: &[u8]) -> bool {
    if data.is_empty() {
        return true;
    }
    if addr == 0 {
        return false;
    }
    let remote = [RemoteIoVec {
        base: addr as usize,
        len: data.len(),
    }];
    matches!(process_vm_writev(pid, &[IoSlice::new(data)], &remote), Ok(n) if n == data.len())
}

/// Reads a NUL-terminated string of at most `max` bytes (without the NUL). `None` if it
/// faults or is longer.
pub fn read_cstr(pid: Pid, addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() <= max {
        // Never cross a page in one read: the next page may be unmapped.
        let chunk = (PAGE - at % PAGE).min(256) as usize;
        let part = read(pid, at, chunk)?;
        if let Some(i) = part.iter().position(|&b| b == 0) {
            out.extend_from_slice(&part[..i]);
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(&part);
        at += chunk as u64;
    }
    None
}

/// Reads a little-endian `u32`.
pub fn read_u32(pid: Pid, addr: u64) -> Option<u32> {
    read(pid, addr, 4).map(|b| u32::from_le_bytes(b[..4].try_into().unwrap()))
}

/// Reads a little-endian `u64`.
pub fn read_u64(pid: Pid, addr: u64) -> Option<u64> {
    read(pid, addr, 8).map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
}

/// Reads a little-endian `u64` at byte `off` of `b`.
pub fn get_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

/// Reads a little-endian `u32` at byte `off` of `b`.
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

/// Writes a little-endian `u64` at byte `off` of `b`.
pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// Writes a little-endian `u32` at byte `off` of `b`.
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// `struct msghdr` (x86_64): offsets of the fields the supervisor reads.
pub mod msghdr {
    /// `sizeof(struct msghdr)`.
    pub const SIZE: usize = 56;
    /// `msg_control`.
    pub const CONTROL: usize = 32;
    /// `msg_controllen`.
    pub const CONTROLLEN: usize = 40;
    /// `msg_flags`.
    pub const FLAGS: usize = 48;
    /// `sizeof(struct mmsghdr)`: a msghdr and `msg_len`, padded.
    pub const MMSG_SIZE: usize = 64;
    /// `msg_len` in `struct mmsghdr`.
    pub const MMSG_LEN: usize = 56;
}

/// `SOL_SOCKET`.
pub const SOL_SOCKET: u32 = 1;
/// `SCM_RIGHTS`.
pub const SCM_RIGHTS: u32 = 1;
/// `SCM_PIDFD`: a pidfd the kernel installs on receive (`SO_PASSPIDFD`).
pub const SCM_PIDFD: u32 = 4;
/// `sizeof(struct cmsghdr)`: `cmsg_len` (u64), `cmsg_level`, `cmsg_type` (i32).
pub const CMSG_HDR: usize = 16;

/// `CMSG_ALIGN` (saturating: a garbage length must not wrap around to a small one).
pub fn cmsg_align(n: usize) -> usize {
    n.saturating_add(7) & !7
}

/// One control message in a control buffer: where it starts, its level, type, and the range
/// of its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmsg {
    /// Offset of the header in the buffer.
    pub at: usize,
    /// `cmsg_level`.
    pub level: u32,
    /// `cmsg_type`.
    pub ty: u32,
    /// Offset of the data.
    pub data: usize,
    /// Length of the data (`cmsg_len - CMSG_LEN(0)`), clipped to the buffer.
    pub len: usize,
}

/// The control messages of a buffer of `len` valid bytes, as `CMSG_FIRSTHDR`/`CMSG_NXTHDR`
/// walk them.
pub fn cmsgs(buf: &[u8]) -> Vec<Cmsg> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + CMSG_HDR <= buf.len() {
        let clen = get_u64(buf, at) as usize;
        if clen < CMSG_HDR {
            break;
        }
        let level = get_u32(buf, at + 8);
        let ty = get_u32(buf, at + 12);
        let end = (at.saturating_add(clen)).min(buf.len());
        out.push(Cmsg {
            at,
            level,
            ty,
            data: at + CMSG_HDR,
            len: end - (at + CMSG_HDR),
        });
        if clen > buf.len() - at {
            break;
        }
        at += cmsg_align(clen);
    }
    out
}

/// Whether a control message carries descriptors.
pub fn carries_fds(c: &Cmsg) -> bool {
    c.level == SOL_SOCKET && (c.ty == SCM_RIGHTS || c.ty == SCM_PIDFD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_control_messages() {
        let mut b = vec![0u8; 64];
        // SCM_RIGHTS with two fds: cmsg_len = 16 + 8 = 24, aligned 24.
        put_u64(&mut b, 0, 24);
        put_u32(&mut b, 8, SOL_SOCKET);
        put_u32(&mut b, 12, SCM_RIGHTS);
        put_u32(&mut b, 16, 5);
        put_u32(&mut b, 20, 6);
        // SCM_CREDENTIALS (type 2), 12 bytes of data: cmsg_len 28, aligned 32.
        put_u64(&mut b, 24, 28);
        put_u32(&mut b, 32, SOL_SOCKET);
        put_u32(&mut b, 36, 2);
        let c = cmsgs(&b[..56]);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].data, c[0].len), (16, 8));
        assert!(carries_fds(&c[0]) && !carries_fds(&c[1]));
        assert_eq!(c[1].at, 24);
        // Garbage lengths end the walk instead of looping.
        put_u64(&mut b, 0, 3);
        assert!(cmsgs(&b).is_empty());
        put_u64(&mut b, 0, u64::MAX);
        assert_eq!(cmsgs(&b).len(), 1);
    }
}

//! Reading the program's memory (`process_vm_readv`), for what is shown and never for what is
//! decided: the paths in `--track-fds` reports, and a `UFFDIO_API` request (whose effect the
//! kernel's table is then checked for).
//!
//! A read that faults returns `None`.

use nix::sys::uio::{RemoteIoVec, process_vm_readv};
use nix::unistd::Pid;
use std::io::IoSliceMut;

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

/// Reads a little-endian `u64`.
pub fn read_u64(pid: Pid, addr: u64) -> Option<u64> {
    read(pid, addr, 8).map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])))
}

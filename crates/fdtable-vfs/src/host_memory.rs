//! [`HostMemory`]: the caller's own address space as ioctl memory. Nothing in it is specific to
//! an operating system (it copies bytes within this process), so the `host` feature provides
//! it on every host, unlike `HostFile`, which wraps Linux descriptors. Its `unsafe` code is the
//! raw copies that the constructor's contract makes valid.

#![allow(unsafe_code)]

use crate::uaccess::UserMemory;
use fdtable::Errno;

/// The caller's own address space as ioctl memory: guest addresses are real pointers. `NULL`
/// is `EFAULT`; every other address is trusted.
#[derive(Debug)]
pub struct HostMemory {
    _private: (),
}

impl HostMemory {
    /// # Safety
    ///
    /// Every non-zero address later passed through this value (the `arg` of an ioctl whose
    /// command reads or writes memory) must be valid for reads or writes of the command's size
    /// for the duration of the call, and not aliased by a live Rust reference.
    pub unsafe fn new() -> HostMemory {
        HostMemory { _private: () }
    }
}

impl UserMemory for HostMemory {
    fn copy_from_user(&mut self, addr: usize, dst: &mut [u8]) -> Result<(), Errno> {
        if addr == 0 {
            return Err(Errno::EFAULT);
        }
        // SAFETY: the constructor's contract: `addr` is valid for `dst.len()` bytes of reads
        // and does not overlap `dst`, which is a live Rust buffer.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn copy_to_user(&mut self, addr: usize, src: &[u8]) -> Result<(), Errno> {
        if addr == 0 {
            return Err(Errno::EFAULT);
        }
        // SAFETY: the constructor's contract: `addr` is valid for `src.len()` bytes of writes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), addr as *mut u8, src.len()) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uaccess::{get_user_i32, put_user_i32};

    #[test]
    fn host_memory_copies_and_faults_on_null() {
        let mut n = 0i32;
        let addr = &mut n as *mut i32 as usize;
        // SAFETY: `addr` is `n`, valid for 4 bytes of reads and writes while `mem` is used,
        // and no reference to `n` is live until the last access through `mem`.
        let mut mem = unsafe { HostMemory::new() };
        assert_eq!(put_user_i32(&mut mem, addr, 42), Ok(()));
        assert_eq!(get_user_i32(&mut mem, addr), Ok(42));
        assert_eq!(put_user_i32(&mut mem, 0, 1), Err(Errno::EFAULT));
        assert_eq!(get_user_i32(&mut mem, 0), Err(Errno::EFAULT));
        assert_eq!(n, 42);
    }
}

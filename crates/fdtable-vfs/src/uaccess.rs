//! Guest memory for the ioctl argument: the kernel's `copy_from_user` / `copy_to_user`.
//!
//! Read, write and friends take slices, so they never touch guest memory through an address.
//! `ioctl` is different: its argument is a raw `unsigned long` that some commands treat as a
//! pointer (`FIONBIO` reads an `int`, `FIONREAD` writes one, `FIOQSIZE` writes a `loff_t`) and
//! others as a plain number. The caller says how addresses map to memory by passing a
//! [`UserMemory`]; the layer and drivers access it only through that trait, so a bad address is
//! `EFAULT`, never undefined behaviour.
//!
//! - [`LinearMemory`]: a guest address space that is one byte slice mapped at a base address
//!   (a WebAssembly linear memory, an emulator's RAM). Out of range is `EFAULT`.
//! - [`NoMemory`]: no guest memory at all; every access is `EFAULT`.
//! - [`HostMemory`](crate::HostMemory): the caller's own address space (addresses are real
//!   pointers), for a sandbox that runs the guest in-process; `NULL` is `EFAULT` and every
//!   other address must be valid, which its `unsafe` constructor makes the caller promise.

use fdtable::Errno;

/// A guest address space, as `copy_from_user`/`copy_to_user` see it.
pub trait UserMemory {
    /// Copies `dst.len()` bytes from guest address `addr`. `EFAULT` if any byte is unmapped.
    fn copy_from_user(&mut self, addr: usize, dst: &mut [u8]) -> Result<(), Errno>;
    /// Copies `src` to guest address `addr`. `EFAULT` if any byte is unmapped.
    fn copy_to_user(&mut self, addr: usize, src: &[u8]) -> Result<(), Errno>;
}

/// `get_user` of an `int`.
pub fn get_user_i32(mem: &mut dyn UserMemory, addr: usize) -> Result<i32, Errno> {
    let mut b = [0u8; 4];
    mem.copy_from_user(addr, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

/// `get_user` of a `u64`.
pub fn get_user_u64(mem: &mut dyn UserMemory, addr: usize) -> Result<u64, Errno> {
    let mut b = [0u8; 8];
    mem.copy_from_user(addr, &mut b)?;
    Ok(u64::from_ne_bytes(b))
}

/// `put_user` of an `int`.
pub fn put_user_i32(mem: &mut dyn UserMemory, addr: usize, v: i32) -> Result<(), Errno> {
    mem.copy_to_user(addr, &v.to_ne_bytes())
}

/// `put_user` of a 64-bit value (`loff_t`, `u64`).
pub fn put_user_i64(mem: &mut dyn UserMemory, addr: usize, v: i64) -> Result<(), Errno> {
    mem.copy_to_user(addr, &v.to_ne_bytes())
}

/// A guest address space made of one byte slice mapped at `base`: guest address `a` is
/// `bytes[a - base]`. Addresses outside `base..base + len` (in particular `NULL` when `base` is
/// not 0) are `EFAULT`.
#[derive(Debug)]
pub struct LinearMemory<'a> {
    base: usize,
    bytes: &'a mut [u8],
}

impl<'a> LinearMemory<'a> {
    /// Maps `bytes` at guest address `base`.
    pub fn new(base: usize, bytes: &'a mut [u8]) -> Self {
        LinearMemory { base, bytes }
    }

    /// The guest address of `bytes[offset]`.
    pub fn addr_of(&self, offset: usize) -> usize {
        self.base.wrapping_add(offset)
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }

    fn range(&self, addr: usize, len: usize) -> Result<std::ops::Range<usize>, Errno> {
        let start = addr.checked_sub(self.base).ok_or(Errno::EFAULT)?;
        let end = start.checked_add(len).ok_or(Errno::EFAULT)?;
        if end > self.bytes.len() {
            return Err(Errno::EFAULT);
        }
        Ok(start..end)
    }
}

impl UserMemory for LinearMemory<'_> {
    fn copy_from_user(&mut self, addr: usize, dst: &mut [u8]) -> Result<(), Errno> {
        let r = self.range(addr, dst.len())?;
        dst.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    fn copy_to_user(&mut self, addr: usize, src: &[u8]) -> Result<(), Errno> {
        let r = self.range(addr, src.len())?;
        self.bytes[r].copy_from_slice(src);
        Ok(())
    }
}

/// No guest memory: every access is `EFAULT`. For callers whose ioctls take no pointer.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoMemory;

impl UserMemory for NoMemory {
    fn copy_from_user(&mut self, _addr: usize, _dst: &mut [u8]) -> Result<(), Errno> {
        Err(Errno::EFAULT)
    }
    fn copy_to_user(&mut self, _addr: usize, _src: &[u8]) -> Result<(), Errno> {
        Err(Errno::EFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_memory_bounds() {
        let mut buf = [0u8; 16];
        let mut m = LinearMemory::new(0x1000, &mut buf);
        assert_eq!(put_user_i32(&mut m, 0x1000, -2), Ok(()));
        assert_eq!(get_user_i32(&mut m, 0x1000), Ok(-2));
        assert_eq!(put_user_i64(&mut m, 0x1008, 7), Ok(()));
        assert_eq!(get_user_u64(&mut m, 0x1008), Ok(7));
        assert_eq!(put_user_i64(&mut m, 0x1009, 7), Err(Errno::EFAULT));
        assert_eq!(get_user_i32(&mut m, 0), Err(Errno::EFAULT));
        assert_eq!(get_user_i32(&mut m, usize::MAX - 1), Err(Errno::EFAULT));
        assert_eq!(m.addr_of(3), 0x1003);
    }

    #[test]
    fn no_memory_faults() {
        assert_eq!(get_user_i32(&mut NoMemory, 0x1000), Err(Errno::EFAULT));
        assert_eq!(put_user_i32(&mut NoMemory, 0x1000, 1), Err(Errno::EFAULT));
    }
}

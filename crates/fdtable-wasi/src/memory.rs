//! Guest memory: bounds- and alignment-checked access to the instance's linear memory.
//!
//! Every pointer a guest passes is a 32-bit offset. An access that does not fit in the memory,
//! or a misaligned pointer to a structure, is a [`MemoryError`]. Following witx's rules ("if an
//! out-of-bounds or misaligned pointer is passed to a function and the function needs to
//! dereference it, the function shall trap"), the host call that meets one traps the instance
//! with a message naming the call and the pointer, as wasmtime's own host does; it never
//! panics and never touches memory outside the guest's.

use crate::types::WasiErrno;

/// A guest pointer that cannot be dereferenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// `ptr..ptr + len` is not inside the memory.
    OutOfBounds {
        /// The guest pointer.
        ptr: u32,
        /// The length accessed.
        len: u64,
    },
    /// `ptr` is not aligned to `align` bytes.
    Misaligned {
        /// The guest pointer.
        ptr: u32,
        /// The alignment the structure needs.
        align: u32,
    },
}

impl core::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MemoryError::OutOfBounds { ptr, len } => write!(
                f,
                "guest pointer {ptr:#x} with length {len} is out of bounds of linear memory"
            ),
            MemoryError::Misaligned { ptr, align } => {
                write!(f, "guest pointer {ptr:#x} is not aligned to {align} bytes")
            }
        }
    }
}

impl std::error::Error for MemoryError {}

/// What a host call fails with: an errno for the guest, or a trap (a bad pointer, `proc_exit`).
#[derive(Debug)]
pub enum CallError {
    /// Returned to the guest.
    Errno(WasiErrno),
    /// Ends the instance.
    Trap(wasmtime::Error),
}

impl From<WasiErrno> for CallError {
    #[inline]
    fn from(e: WasiErrno) -> Self {
        CallError::Errno(e)
    }
}

impl From<MemoryError> for CallError {
    #[cold]
    fn from(e: MemoryError) -> Self {
        CallError::Trap(wasmtime::Error::new(e))
    }
}

impl From<fdtable::Errno> for CallError {
    #[inline]
    fn from(e: fdtable::Errno) -> Self {
        CallError::Errno(e.into())
    }
}

impl From<std::io::Error> for CallError {
    fn from(e: std::io::Error) -> Self {
        CallError::Errno(e.into())
    }
}

impl From<std::num::TryFromIntError> for CallError {
    fn from(_: std::num::TryFromIntError) -> Self {
        CallError::Errno(WasiErrno::Overflow)
    }
}

/// A host call's result.
pub type CallResult<T = ()> = Result<T, CallError>;

/// The guest's linear memory, for the duration of one host call.
pub struct GuestMemory<'a> {
    bytes: &'a mut [u8],
}

impl<'a> GuestMemory<'a> {
    /// Wraps the memory's bytes.
    pub fn new(bytes: &'a mut [u8]) -> Self {
        GuestMemory { bytes }
    }

    /// The memory's size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the memory is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The byte range `ptr..ptr + len`, checked.
    #[inline]
    fn range(&self, ptr: u32, len: u64) -> Result<core::ops::Range<usize>, MemoryError> {
        let start = ptr as u64;
        match start.checked_add(len) {
            Some(end) if end <= self.bytes.len() as u64 => Ok(start as usize..end as usize),
            _ => Err(MemoryError::OutOfBounds { ptr, len }),
        }
    }

    /// Checks that `ptr` may hold a structure of `size` bytes aligned to `align`.
    #[inline]
    pub fn check(&self, ptr: u32, size: u32, align: u32) -> Result<(), MemoryError> {
        if !ptr.is_multiple_of(align) {
            return Err(MemoryError::Misaligned { ptr, align });
        }
        self.range(ptr, size as u64).map(|_| ())
    }

    /// `len` bytes at `ptr`.
    #[inline]
    pub fn slice(&self, ptr: u32, len: u32) -> Result<&[u8], MemoryError> {
        let r = self.range(ptr, len as u64)?;
        Ok(&self.bytes[r])
    }

    /// `len` writable bytes at `ptr`.
    #[inline]
    pub fn slice_mut(&mut self, ptr: u32, len: u32) -> Result<&mut [u8], MemoryError> {
        let r = self.range(ptr, len as u64)?;
        Ok(&mut self.bytes[r])
    }

    /// `N` bytes at `ptr`, aligned to `align`.
    #[inline]
    fn array<const N: usize>(&self, ptr: u32, align: u32) -> Result<[u8; N], MemoryError> {
        if !ptr.is_multiple_of(align) {
            return Err(MemoryError::Misaligned { ptr, align });
        }
        let r = self.range(ptr, N as u64)?;
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[r]);
        Ok(out)
    }

    /// A `u8` at `ptr`.
    pub fn read_u8(&self, ptr: u32) -> Result<u8, MemoryError> {
        Ok(self.array::<1>(ptr, 1)?[0])
    }

    /// A `u16` at `ptr`.
    pub fn read_u16(&self, ptr: u32) -> Result<u16, MemoryError> {
        Ok(u16::from_le_bytes(self.array(ptr, 2)?))
    }

    /// A `u32` at `ptr`.
    #[inline]
    pub fn read_u32(&self, ptr: u32) -> Result<u32, MemoryError> {
        Ok(u32::from_le_bytes(self.array(ptr, 4)?))
    }

    /// A `u64` at `ptr`.
    pub fn read_u64(&self, ptr: u32) -> Result<u64, MemoryError> {
        Ok(u64::from_le_bytes(self.array(ptr, 8)?))
    }

    /// Writes `bytes` at `ptr` (no alignment).
    #[inline]
    pub fn write_bytes(&mut self, ptr: u32, bytes: &[u8]) -> Result<(), MemoryError> {
        let r = self.range(ptr, bytes.len() as u64)?;
        self.bytes[r].copy_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn write_aligned(&mut self, ptr: u32, align: u32, bytes: &[u8]) -> Result<(), MemoryError> {
        if !ptr.is_multiple_of(align) {
            return Err(MemoryError::Misaligned { ptr, align });
        }
        self.write_bytes(ptr, bytes)
    }

    /// Writes a `u8` at `ptr`.
    pub fn write_u8(&mut self, ptr: u32, v: u8) -> Result<(), MemoryError> {
        self.write_aligned(ptr, 1, &[v])
    }

    /// Writes a `u16` at `ptr`.
    pub fn write_u16(&mut self, ptr: u32, v: u16) -> Result<(), MemoryError> {
        self.write_aligned(ptr, 2, &v.to_le_bytes())
    }

    /// Writes a `u32` at `ptr`.
    #[inline]
    pub fn write_u32(&mut self, ptr: u32, v: u32) -> Result<(), MemoryError> {
        self.write_aligned(ptr, 4, &v.to_le_bytes())
    }

    /// Writes a `u64` at `ptr`.
    pub fn write_u64(&mut self, ptr: u32, v: u64) -> Result<(), MemoryError> {
        self.write_aligned(ptr, 8, &v.to_le_bytes())
    }

    /// The guest string at `ptr` (`len` bytes of UTF-8): `Ilseq` if it is not UTF-8.
    pub fn str(&self, ptr: u32, len: u32) -> CallResult<&str> {
        let bytes = self.slice(ptr, len)?;
        core::str::from_utf8(bytes).map_err(|_| CallError::Errno(WasiErrno::Ilseq))
    }

    /// A path, or a symbolic link's target, the guest passes: shorter than `PATH_MAX` with its
    /// terminating NUL (`nametoolong` from 4,096 bytes on, as the kernel's `getname` answers),
    /// and UTF-8 (`ilseq`).
    pub fn path(&self, ptr: u32, len: u32) -> CallResult<&str> {
        /// Linux's `PATH_MAX`, the NUL included.
        const PATH_MAX: u32 = 4096;
        self.slice(ptr, len)?;
        if len >= PATH_MAX {
            return Err(CallError::Errno(WasiErrno::Nametoolong));
        }
        self.str(ptr, len)
    }

    /// The `(buf, buf_len)` pairs of an iovec array of `count` entries at `ptr`.
    pub fn iovecs(
        &self,
        ptr: u32,
        count: u32,
    ) -> Result<impl Iterator<Item = (u32, u32)> + '_, MemoryError> {
        let len = count as u64 * crate::types::layout::IOVEC_SIZE as u64;
        if !ptr.is_multiple_of(4) {
            return Err(MemoryError::Misaligned { ptr, align: 4 });
        }
        let r = self.range(ptr, len)?;
        Ok(self.bytes[r].chunks_exact(8).map(|c| {
            (
                u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_alignment() {
        let mut bytes = vec![0u8; 16];
        let mut m = GuestMemory::new(&mut bytes);
        m.write_u32(12, 7).unwrap();
        assert_eq!(m.read_u32(12).unwrap(), 7);
        assert_eq!(
            m.write_u32(13, 1),
            Err(MemoryError::Misaligned { ptr: 13, align: 4 })
        );
        assert_eq!(
            m.read_u32(16),
            Err(MemoryError::OutOfBounds { ptr: 16, len: 4 })
        );
        assert_eq!(
            m.slice(u32::MAX, 2).err(),
            Some(MemoryError::OutOfBounds {
                ptr: u32::MAX,
                len: 2
            })
        );
        assert!(m.iovecs(0, u32::MAX).is_err());
        m.write_bytes(0, &[0xff, b'a']).unwrap();
        assert!(matches!(
            m.str(0, 2),
            Err(CallError::Errno(WasiErrno::Ilseq))
        ));
        assert_eq!(m.str(1, 1).unwrap(), "a");
    }
}

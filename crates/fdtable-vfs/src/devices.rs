//! Character devices (drivers/char/mem.c): [`DevNull`], [`DevZero`], and [`TestDevice`], a
//! driver with its own ioctls for the ioctl benchmark (`unlocked_ioctl`).

use crate::file::File;
use crate::ops::{FileOperations, Kstat};
use crate::uaccess::{UserMemory, get_user_u64, put_user_i64};
use crate::uapi::*;
use fdtable::Errno;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A character-device driver: a device node ([`MemFs::mknod_chr`](crate::MemFs::mknod_chr))
/// opens through it (`chrdev_open` → the driver's `->open`).
pub trait CharDevice: Send + Sync {
    /// Opens the device with the open flags `flags`; returns the new file's operations.
    fn open(&self, flags: u32) -> Result<Arc<dyn FileOperations>, Errno>;
    /// The device number (`st_rdev`).
    fn rdev(&self) -> u64 {
        0
    }
}

/// `makedev(major, minor)` as glibc encodes it for small numbers.
const fn makedev(major: u64, minor: u64) -> u64 {
    (major << 8) | minor
}

fn chr_stat(rdev: u64) -> Kstat {
    Kstat {
        mode: S_IFCHR | 0o666,
        ino: 0,
        nlink: 1,
        size: 0,
        blksize: PAGE_SIZE as u32,
        blocks: 0,
        rdev,
    }
}

const MEM_FMODE: u32 = FMODE_CAN_READ | FMODE_CAN_WRITE | FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE;

/// `/dev/null` (1:3): reads see end of file, writes succeed and vanish.
#[derive(Debug, Default, Clone, Copy)]
pub struct DevNull;

/// `/dev/zero` (1:5): reads fill the buffer with zeros, writes vanish.
#[derive(Debug, Default, Clone, Copy)]
pub struct DevZero;

impl CharDevice for DevNull {
    fn open(&self, _flags: u32) -> Result<Arc<dyn FileOperations>, Errno> {
        Ok(Arc::new(DevNull))
    }
    fn rdev(&self) -> u64 {
        makedev(1, 3)
    }
}

impl CharDevice for DevZero {
    fn open(&self, _flags: u32) -> Result<Arc<dyn FileOperations>, Errno> {
        Ok(Arc::new(DevZero))
    }
    fn rdev(&self) -> u64 {
        makedev(1, 5)
    }
}

impl FileOperations for DevNull {
    fn never_blocks(&self) -> bool {
        true
    }

    fn fmode(&self) -> u32 {
        MEM_FMODE | FMODE_CAN_SPLICE_READ
    }
    fn getattr(&self) -> Kstat {
        chr_stat(makedev(1, 3))
    }
    /// `read_null`.
    fn read(&self, _: &File, _buf: &mut [u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        Ok(0)
    }
    /// `write_null`.
    fn write(&self, _: &File, buf: &[u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        Ok(buf.len())
    }
    /// `null_lseek`: always 0.
    fn llseek(&self, _: &File, _cur: i64, _offset: i64, _whence: i32) -> Result<i64, Errno> {
        Ok(0)
    }
}

impl FileOperations for DevZero {
    fn never_blocks(&self) -> bool {
        true
    }

    fn fmode(&self) -> u32 {
        MEM_FMODE | FMODE_CAN_SPLICE_READ
    }
    fn getattr(&self) -> Kstat {
        chr_stat(makedev(1, 5))
    }
    /// `read_zero`: the whole buffer, position untouched.
    fn read(&self, _: &File, buf: &mut [u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        buf.fill(0);
        Ok(buf.len())
    }
    /// `write_zero` is `write_null`.
    fn write(&self, _: &File, buf: &[u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        Ok(buf.len())
    }
    /// `zero_lseek` is `null_lseek`.
    fn llseek(&self, _: &File, _cur: i64, _offset: i64, _whence: i32) -> Result<i64, Errno> {
        Ok(0)
    }
}

/// [`TestDevice`]'s ioctl type byte.
pub const TESTDEV_IOC_MAGIC: u8 = b'q';
/// `_IO('q', 0)`: does nothing, returns 0 (pure dispatch cost).
pub const TESTDEV_IOC_NOP: u32 = io(TESTDEV_IOC_MAGIC, 0);
/// `_IOR('q', 1, u64)`: writes this open file's value to `*arg`.
pub const TESTDEV_IOC_GET: u32 = ior(TESTDEV_IOC_MAGIC, 1, 8);
/// `_IOW('q', 2, u64)`: reads this open file's new value from `*arg`.
pub const TESTDEV_IOC_SET: u32 = iow(TESTDEV_IOC_MAGIC, 2, 8);
/// `_IO('q', 3)`: returns `arg` itself (a number, not a pointer; a compat caller gets its
/// 32-bit argument back raw).
pub const TESTDEV_IOC_ECHO: u32 = io(TESTDEV_IOC_MAGIC, 3);

/// A driver with its own ioctls and no global lock (`->unlocked_ioctl`): each open
/// file has its own value, so threads that each open the device never share a cache line.
/// Commands: [`TESTDEV_IOC_NOP`], [`TESTDEV_IOC_GET`], [`TESTDEV_IOC_SET`],
/// [`TESTDEV_IOC_ECHO`]; anything else is "not mine" (`ENOTTY` to the caller).
#[derive(Debug, Default)]
pub struct TestDevice {
    opens: AtomicU64,
}

impl TestDevice {
    /// The device number it reports (`10:240`, a misc-device minor).
    pub const RDEV: u64 = makedev(10, 240);

    /// A new device.
    pub fn new() -> TestDevice {
        TestDevice::default()
    }

    /// How many times it was opened.
    pub fn opens(&self) -> u64 {
        // ORDERING: Relaxed; a statistic.
        self.opens.load(Ordering::Relaxed)
    }
}

impl CharDevice for TestDevice {
    fn open(&self, _flags: u32) -> Result<Arc<dyn FileOperations>, Errno> {
        // ORDERING: Relaxed; a statistic.
        self.opens.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(TestDeviceFile::default()))
    }
    fn rdev(&self) -> u64 {
        Self::RDEV
    }
}

/// An open [`TestDevice`].
#[derive(Debug, Default)]
pub struct TestDeviceFile {
    value: AtomicU64,
}

impl FileOperations for TestDeviceFile {
    fn never_blocks(&self) -> bool {
        true
    }

    fn fmode(&self) -> u32 {
        FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE
    }

    fn getattr(&self) -> Kstat {
        chr_stat(TestDevice::RDEV)
    }

    fn unlocked_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        match cmd {
            TESTDEV_IOC_NOP => Ok(0),
            TESTDEV_IOC_GET => {
                // ORDERING: Relaxed; the value is the whole message, nothing else is published.
                put_user_i64(mem, arg, self.value.load(Ordering::Relaxed) as i64)?;
                Ok(0)
            }
            TESTDEV_IOC_SET => {
                let v = get_user_u64(mem, arg)?;
                // ORDERING: Relaxed; see GET.
                self.value.store(v, Ordering::Relaxed);
                Ok(0)
            }
            TESTDEV_IOC_ECHO => Ok(arg as i64),
            _ => Err(ENOIOCTLCMD),
        }
    }

    /// `compat_ptr_ioctl`: every command is layout-compatible; the argument is widened.
    fn compat_ioctl(
        &self,
        file: &File,
        cmd: u32,
        arg: u32,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        self.unlocked_ioctl(file, cmd, arg as usize, mem)
    }

    fn llseek(&self, _: &File, cur: i64, _offset: i64, _whence: i32) -> Result<i64, Errno> {
        Ok(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uaccess::LinearMemory;

    #[test]
    fn null_and_zero() {
        let z = File::new(O_RDWR, DevZero.open(O_RDWR).unwrap());
        let mut buf = [7u8; 5];
        assert_eq!(z.ops().read(&z, &mut buf, Some(&mut 3)), Ok(5));
        assert_eq!(buf, [0; 5]);
        assert_eq!(z.ops().write(&z, b"abc", None), Ok(3));
        let n = File::new(O_RDWR, DevNull.open(O_RDWR).unwrap());
        assert_eq!(n.ops().read(&n, &mut buf, Some(&mut 0)), Ok(0));
        assert_eq!(n.ops().llseek(&n, 5, 10, SEEK_SET), Ok(0));
        assert_eq!(n.file_type(), S_IFCHR);
        assert_eq!(DevNull.rdev(), 0x103);
    }

    #[test]
    fn test_device_ioctls() {
        let dev = TestDevice::new();
        let f = File::new(O_RDWR, dev.open(O_RDWR).unwrap());
        assert_eq!(dev.opens(), 1);
        let mut raw = [0u8; 16];
        let mut mem = LinearMemory::new(0x1000, &mut raw);
        mem.copy_to_user(0x1000, &42u64.to_ne_bytes()).unwrap();
        let ops = f.ops();
        assert_eq!(
            ops.unlocked_ioctl(&f, TESTDEV_IOC_SET, 0x1000, &mut mem),
            Ok(0)
        );
        assert_eq!(
            ops.unlocked_ioctl(&f, TESTDEV_IOC_GET, 0x1008, &mut mem),
            Ok(0)
        );
        assert_eq!(get_user_u64(&mut mem, 0x1008), Ok(42));
        assert_eq!(
            ops.unlocked_ioctl(&f, TESTDEV_IOC_GET, 0, &mut mem),
            Err(Errno::EFAULT)
        );
        assert_eq!(ops.unlocked_ioctl(&f, TESTDEV_IOC_NOP, 0, &mut mem), Ok(0));
        assert_eq!(ops.compat_ioctl(&f, TESTDEV_IOC_ECHO, 77, &mut mem), Ok(77));
        assert_eq!(
            ops.unlocked_ioctl(&f, io(b'z', 9), 0, &mut mem),
            Err(ENOIOCTLCMD)
        );
    }
}

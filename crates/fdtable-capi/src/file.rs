//! `struct fdt_file`: open file descriptions made from C callbacks (`struct fdt_file_ops`),
//! and their reference counting.

use crate::consts::FDT_FILE_STREAM;
use crate::guard::{from_callback, guard, long};
use fdtable::{Errno, FileRef};
use fdtable_vfs::uapi::{
    FMODE_ATOMIC_POS, FMODE_CAN_READ, FMODE_CAN_WRITE, FMODE_LSEEK, FMODE_PREAD, FMODE_PWRITE,
    FMODE_STREAM,
};
use fdtable_vfs::{File, FileOperations, Kstat, UserMemory};
use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::Arc;

/// An open file description (the kernel's `struct file`): access mode, status flags,
/// position, and the callbacks and `private_data` given to `fdt_file_new`. Opaque and
/// reference-counted: every `struct fdt_file *` a function hands to the caller "with a
/// reference" must be given back exactly once, to `fdt_file_put` or to a call documented to
/// consume it (`fdt_install`, `fdt_fd_install`).
pub struct fdt_file {
    _opaque: [u8; 0],
}

/// The operations of a file made by `fdt_file_new`: the kernel's `struct file_operations`
/// reduced to what a descriptor layer dispatches. Any member may be NULL; then the caller of
/// the corresponding call gets the kernel's answer for a missing operation.
///
/// Every callback gets the `private_data` given to `fdt_file_new`. Callbacks run on the
/// thread that made the call, with no lock of the library held, possibly concurrently on
/// several threads for one file (a shared table, or a file installed in several tables):
/// protect your own state. A callback must not call into the table handle whose call is
/// running it (it may use other handles and `fdt_file_get` / `fdt_file_put`), and must not
/// unwind or `longjmp` out (a C++ exception thrown through it aborts the process).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct fdt_file_ops {
    /// Reads up to `count` bytes into `buf` at `*pos`, advancing `*pos` by what it read;
    /// `pos` is NULL for an `FDT_FILE_STREAM` file. Returns the bytes read (0: end of file)
    /// or `-errno`. `buf` is never NULL. NULL member: `fdt_read` fails with `-EINVAL`.
    pub read: Option<
        unsafe extern "C" fn(
            private_data: *mut c_void,
            buf: *mut c_void,
            count: usize,
            pos: *mut i64,
        ) -> libc::ssize_t,
    >,
    /// Writes up to `count` bytes from `buf` at `*pos`, as `read`. NULL: `-EINVAL`.
    pub write: Option<
        unsafe extern "C" fn(
            private_data: *mut c_void,
            buf: *const c_void,
            count: usize,
            pos: *mut i64,
        ) -> libc::ssize_t,
    >,
    /// `unlocked_ioctl`: a command the generic layer did not answer (everything but
    /// `FIOCLEX`, `FIONCLEX`, `FIONBIO`, `FIOASYNC`, `FIOQSIZE`, `FIGETBSZ`), with `arg` as the
    /// caller passed it. A result in -4095..-1 is `-errno`; anything else is returned as is.
    /// Return `-ENOTTY` for a command you do not know. NULL: `-ENOTTY`.
    pub ioctl: Option<
        unsafe extern "C" fn(private_data: *mut c_void, cmd: c_uint, arg: c_ulong) -> c_long,
    >,
    /// `compat_ioctl`, for a 32-bit caller (`fdt_compat_ioctl`): `arg` is the 32-bit value,
    /// zero-extended. NULL: `-ENOTTY`.
    pub compat_ioctl: Option<
        unsafe extern "C" fn(private_data: *mut c_void, cmd: c_uint, arg: c_ulong) -> c_long,
    >,
    /// Called on every close of a descriptor that refers to the file (`fdt_close`, the file
    /// `fdt_dup2` displaces, `fdt_close_range`, `fdt_exec`, the last `fdt_files_put`).
    /// Returns 0 or `-errno`; `fdt_close` returns it, and the descriptor is closed either way.
    pub flush: Option<unsafe extern "C" fn(private_data: *mut c_void) -> c_int>,
    /// Called exactly once, when the last reference to the file goes (from whichever call
    /// dropped it, on that call's thread). Free `private_data` here.
    pub release: Option<unsafe extern "C" fn(private_data: *mut c_void)>,
    /// (Not in the minimal surface.) The new position for (`offset`, `whence`) given the
    /// current position `pos` (0 for a stream file); `whence` is `SEEK_SET`..`SEEK_HOLE`.
    /// Returns the position (stored as the file's) or `-errno`. NULL: `fdt_lseek` fails with
    /// `-ESPIPE`, as for a file without `llseek` in Linux.
    pub llseek: Option<
        unsafe extern "C" fn(
            private_data: *mut c_void,
            pos: i64,
            offset: i64,
            whence: c_int,
        ) -> i64,
    >,
    /// (Not in the minimal surface.) `FDT_FILE_STREAM` or 0; other bits make `fdt_file_new`
    /// fail. 0 is a file with a position: `read`/`write` get one, `fdt_pread`/`fdt_pwrite`
    /// work, and calls on a shared file serialise their use of it (`FMODE_ATOMIC_POS`).
    pub flags: c_uint,
}

/// The callbacks as a [`FileOperations`] implementation. `release` runs in `Drop`, which runs
/// when the [`File`] holding the only `Arc` to this value is dropped: at the last `FileRef`.
pub(crate) struct CFile {
    ops: fdt_file_ops,
    pub(crate) private_data: *mut c_void,
}

// SAFETY: `private_data` is only ever passed back to the C callbacks, whose contract
// (documented on `fdt_file_ops`) is that they may be called from any thread, concurrently.
unsafe impl Send for CFile {}
// SAFETY: as above.
unsafe impl Sync for CFile {}

/// A `read`/`write` callback's `ssize_t` as a byte count.
fn from_rw_callback(r: isize) -> Result<usize, Errno> {
    if r >= 0 {
        Ok(r as usize)
    } else if r >= -4095 {
        Err(Errno::new(-(r as i32)))
    } else {
        Err(Errno::EIO)
    }
}

fn pos_ptr(pos: Option<&mut i64>) -> *mut i64 {
    pos.map_or(ptr::null_mut(), |p| p as *mut i64)
}

impl FileOperations for CFile {
    fn fmode(&self) -> u32 {
        let mut m = 0;
        if self.ops.read.is_some() {
            m |= FMODE_CAN_READ;
        }
        if self.ops.write.is_some() {
            m |= FMODE_CAN_WRITE;
        }
        if self.ops.llseek.is_some() {
            m |= FMODE_LSEEK;
        }
        if self.ops.flags & FDT_FILE_STREAM != 0 {
            m |= FMODE_STREAM;
        } else {
            m |= FMODE_PREAD | FMODE_PWRITE | FMODE_ATOMIC_POS;
        }
        m
    }

    fn getattr(&self) -> Kstat {
        Kstat::default()
    }

    fn read(&self, _file: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let Some(read) = self.ops.read else {
            return Err(Errno::EINVAL);
        };
        // SAFETY: the callback's contract: `buf` is valid for `buf.len()` bytes of writes (a
        // slice the layer holds for the call; see `io::user_buf_mut`), `pos` is NULL or a live
        // local.
        let r = unsafe {
            read(
                self.private_data,
                buf.as_mut_ptr().cast(),
                buf.len(),
                pos_ptr(pos),
            )
        };
        from_rw_callback(r)
    }

    fn write(&self, _file: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let Some(write) = self.ops.write else {
            return Err(Errno::EINVAL);
        };
        // SAFETY: as in `read`, for reads of `buf`.
        let r = unsafe {
            write(
                self.private_data,
                buf.as_ptr().cast(),
                buf.len(),
                pos_ptr(pos),
            )
        };
        from_rw_callback(r)
    }

    fn llseek(&self, _file: &File, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        let Some(llseek) = self.ops.llseek else {
            return Err(Errno::ESPIPE);
        };
        // SAFETY: the callback gets its own `private_data` and plain integers.
        from_callback(unsafe { llseek(self.private_data, cur, offset, whence) })
    }

    fn unlocked_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: usize,
        _mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let Some(ioctl) = self.ops.ioctl else {
            return Err(Errno::ENOTTY);
        };
        // SAFETY: the callback gets its own `private_data` and the caller's raw argument.
        from_callback(long(unsafe {
            ioctl(self.private_data, cmd, arg as c_ulong)
        }))
    }

    fn compat_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: u32,
        _mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let Some(ioctl) = self.ops.compat_ioctl else {
            return Err(Errno::ENOTTY);
        };
        // SAFETY: as in `unlocked_ioctl`.
        from_callback(long(unsafe {
            ioctl(self.private_data, cmd, c_ulong::from(arg))
        }))
    }

    fn flush(&self, _file: &File) -> Result<(), Errno> {
        let Some(flush) = self.ops.flush else {
            return Ok(());
        };
        // SAFETY: the callback gets its own `private_data`.
        let r = unsafe { flush(self.private_data) };
        if r < 0 {
            Err(Errno::new(r.wrapping_neg()))
        } else {
            Ok(())
        }
    }
}

impl Drop for CFile {
    fn drop(&mut self) {
        if let Some(release) = self.ops.release {
            // SAFETY: `Drop` runs once, so the callback runs exactly once, with its own
            // `private_data`, which nothing uses afterwards.
            unsafe { release(self.private_data) }
        }
    }
}

/// The [`File`] behind a file pointer.
///
/// # Safety
///
/// `file` is a live `struct fdt_file *` (some reference keeps it alive for `'a`).
#[inline(always)]
pub(crate) unsafe fn file_ref<'a>(file: *const fdt_file) -> &'a File {
    // SAFETY: a `struct fdt_file *` is the address of a `File` (`FileRef::into_raw`).
    unsafe { &*file.cast::<File>() }
}

/// A counted reference as the pointer the C side holds.
#[inline(always)]
pub(crate) fn into_c(f: FileRef<File>) -> *mut fdt_file {
    FileRef::into_raw(f).cast_mut().cast()
}

/// Takes back a reference the C side gave up.
///
/// # Safety
///
/// `file` is non-NULL and carries one reference that the caller hands over.
#[inline(always)]
pub(crate) unsafe fn from_c(file: *mut fdt_file) -> FileRef<File> {
    // SAFETY: per the contract; the pointer came from `into_c`.
    unsafe { FileRef::from_raw(file.cast_const().cast()) }
}

/// Makes an open file description whose operations are `*ops` (copied: the caller's struct
/// may be freed or changed afterwards) with `private_data` handed to every callback, opened
/// with `open_flags` (`FDT_O_RDONLY` / `FDT_O_WRONLY` / `FDT_O_RDWR`, plus status flags such
/// as `FDT_O_APPEND`, `FDT_O_NONBLOCK`; `FDT_O_PATH` makes a location-only file). Reading
/// needs read access and a `read` callback, writing write access and a `write` callback.
///
/// Ownership: returns one reference, owned by the caller: install it (`fdt_install`,
/// `fdt_fd_install`, which take it over) or drop it with `fdt_file_put`. `release` runs when
/// the last reference goes. `private_data` belongs to the file from then on, to be freed by
/// `release`.
///
/// Returns NULL if `ops` is NULL or `ops->flags` has an unknown bit; nothing was made then,
/// `release` is not called and `private_data` stays the caller's.
///
/// # Safety
///
/// `ops` is NULL or valid for a read of a `struct fdt_file_ops`, whose callbacks follow that
/// struct's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_new(
    ops: *const fdt_file_ops,
    private_data: *mut c_void,
    open_flags: c_uint,
) -> *mut fdt_file {
    // SAFETY: the caller's contract.
    let Some(&ops) = (unsafe { ops.as_ref() }) else {
        return ptr::null_mut();
    };
    if ops.flags & !FDT_FILE_STREAM != 0 {
        return ptr::null_mut();
    }
    // Nothing below can panic (allocation failure aborts), so `release` cannot run for a
    // NULL result; the guard only proves nothing unwinds.
    guard(ptr::null_mut(), || {
        let cfile = Arc::new(CFile { ops, private_data });
        into_c(FileRef::new(File::new(open_flags, cfile)))
    })
}

/// Takes another reference to `file` (the kernel's `get_file`).
///
/// Ownership: the caller owns the new reference and must give it back (`fdt_file_put`, or a
/// call that consumes one). NULL is ignored.
///
/// # Safety
///
/// `file` is NULL or a live file: the caller holds a reference to it, or got it from a light
/// lookup that is still valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_get(file: *mut fdt_file) {
    if file.is_null() {
        return;
    }
    // SAFETY: a live file pointer (the caller's contract), from `into_c`.
    unsafe { FileRef::<File>::increment_raw(file.cast_const().cast()) }
}

/// Drops one reference to `file` (the kernel's `fput`). If it was the last, the file's
/// `release` runs now, on this thread.
///
/// Ownership: consumes one reference the caller owns. NULL is ignored.
///
/// # Safety
///
/// `file` is NULL or a file on which the caller owns a reference, which it does not use
/// again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_put(file: *mut fdt_file) {
    if file.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: the caller hands over one reference.
        drop(unsafe { from_c(file) })
    })
}

/// The `private_data` given to `fdt_file_new` for `file`, or NULL if `file` is NULL.
///
/// Ownership: borrows `file`; the result belongs to the file (freed by its `release`).
///
/// # Safety
///
/// `file` is NULL or a live file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_private_data(file: *const fdt_file) -> *mut c_void {
    if file.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: a live file (the caller's contract).
    let f = unsafe { file_ref(file) };
    f.ops_as::<CFile>()
        .map_or(ptr::null_mut(), |c| c.private_data)
}

/// The number of references to `file` now (the kernel's `file_count`: racy by nature, for
/// diagnostics and tests). Each descriptor referring to the file holds one. Returns
/// `-EINVAL` if `file` is NULL.
///
/// # Safety
///
/// `file` is NULL or a live file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_count(file: *const fdt_file) -> c_long {
    if file.is_null() {
        return Errno::EINVAL.neg() as c_long;
    }
    // SAFETY: a live file; reconstructed without taking or dropping a reference.
    let r = ManuallyDrop::new(unsafe { FileRef::<File>::from_raw(file.cast()) });
    FileRef::count(&r) as c_long
}

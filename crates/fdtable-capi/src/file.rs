//! `struct fdt_file`: open file descriptions made from C callbacks (`struct fdt_file_ops`),
//! and their reference counting.

use crate::consts::{FDT_FILE_NEVER_BLOCKS, FDT_FILE_STREAM};
use crate::files::put_out;
use crate::guard::{PANICKED, from_callback, guard, long};
use fdtable::{Errno, FileRef};
use fdtable_vfs::uapi::{
    DEFAULT_POLLMASK, FMODE_ATOMIC_POS, FMODE_CAN_READ, FMODE_CAN_WRITE, FMODE_LSEEK, FMODE_PREAD,
    FMODE_PWRITE, FMODE_STREAM,
};
use fdtable_vfs::{File, FileOperations, Kstat, UserMemory};
use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use std::mem::{ManuallyDrop, offset_of};
use std::ptr;
use std::sync::Arc;

/// An open file description (the kernel's `struct file`): access mode, status flags,
/// position, and the callbacks and `private_data` given to `fdt_file_new2`. Opaque and
/// reference-counted: every `struct fdt_file *` a function hands to the caller "with a
/// reference" must be given back exactly once, to `fdt_file_put` or to a call documented to
/// consume it (`fdt_install`, `fdt_install_at`, `fdt_fd_install2`).
pub struct fdt_file {
    _opaque: [u8; 0],
}

/// The operations of a file made by `fdt_file_new2`: the kernel's `struct file_operations`
/// reduced to what a descriptor layer dispatches. Any member may be NULL; then the caller of
/// the corresponding call gets the kernel's answer for a missing operation. Zero the whole
/// struct before setting members (a designated initializer or `= {0}` does), so that members
/// a later header adds are NULL.
///
/// The struct grows at its end only (see GROWTH in the header's introduction): pass
/// `sizeof(struct fdt_file_ops)` to `fdt_file_new2`. `fdt_file_new` (legacy) reads only the
/// members up to `flags` (`FDT_FILE_OPS_SIZE_VER0` bytes).
///
/// Every callback gets the `private_data` given to `fdt_file_new2`. Callbacks run on the
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
    /// `FIOCLEX`, `FIONCLEX`, `FIONBIO`, `FIOASYNC`, `FIOQSIZE`, `FIGETBSZ`, and `FIONREAD` on
    /// a regular file: see `getattr`), with `arg` as the caller passed it. A result in
    /// -4095..-1 is `-errno`; anything else is returned as is. Return `-ENOTTY` for a command
    /// you do not know. NULL: `-ENOTTY`.
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
    /// (Not in the minimal surface.) `FDT_FILE_STREAM`, `FDT_FILE_NEVER_BLOCKS` (since 0.5),
    /// both or 0; other bits make `fdt_file_new2` fail. Without `FDT_FILE_STREAM` the file has
    /// a position: `read`/`write` get one, `fdt_pread`/`fdt_pwrite` work, and calls on a
    /// shared file serialise their use of it (`FMODE_ATOMIC_POS`).
    pub flags: c_uint,
    /// (Since 0.2; read by `fdt_file_new2` only.) `->poll` without waiting: the events ready
    /// now, a mask of `FDT_POLLIN`, `FDT_POLLOUT`, `FDT_POLLERR`, `FDT_POLLHUP`... (bits
    /// above 0xffff are ignored). `fdt_poll` keeps those asked for, plus `FDT_POLLERR` and
    /// `FDT_POLLHUP`. NULL: `FDT_POLLIN | FDT_POLLOUT | FDT_POLLRDNORM | FDT_POLLWRNORM`, as
    /// for a Linux file without `->poll`.
    pub poll: Option<unsafe extern "C" fn(private_data: *mut c_void) -> c_uint>,
    /// (Since 0.2; read by `fdt_file_new2` only.) `->getattr`: fills `*st` (zeroed by the
    /// library; leave the reserved members alone) and returns 0, or returns `-errno`.
    /// `fdt_fstat` returns it. Also called once by `fdt_file_new2` to fix the file's type
    /// (`st->mode & FDT_S_IFMT`), and by the generic ioctls: for a regular file
    /// (`FDT_S_IFREG`) `FDT_FIONREAD` is answered as `size` minus the position and
    /// `FIOQSIZE` as `blocks * 512` without calling `ioctl`; `FIGETBSZ` answers `blksize`. A
    /// failed call counts as all zeros there. NULL: `fdt_fstat` reports all zeros (a file of
    /// no type, as Linux's anonymous files).
    pub getattr:
        Option<unsafe extern "C" fn(private_data: *mut c_void, st: *mut fdt_stat) -> c_int>,
}

/// A file's attributes, as `fdt_fstat` reports them and a `getattr` callback fills them (the
/// kernel's `struct kstat`, the members this layer uses). 128 bytes on every platform, which
/// stays so: attributes added later take reserved members, which are zero until then.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct fdt_stat {
    /// `st_mode`: the file type (`FDT_S_IFREG`, `FDT_S_IFIFO`, ...: one of the `FDT_S_IF*`
    /// values under `FDT_S_IFMT`) and permission bits.
    pub mode: u32,
    /// `st_nlink`.
    pub nlink: u32,
    /// `st_ino`.
    pub ino: u64,
    /// `st_size` (`i_size`).
    pub size: i64,
    /// `st_blocks`, in 512-byte units.
    pub blocks: u64,
    /// `st_rdev`, for device files.
    pub rdev: u64,
    /// `st_blksize`, also what `FIGETBSZ` answers (0: `-EINVAL`).
    pub blksize: u32,
    /// Reserved: zero.
    pub reserved0: u32,
    /// Reserved: zero.
    pub reserved: [u64; 10],
}

impl From<fdt_stat> for Kstat {
    fn from(st: fdt_stat) -> Kstat {
        Kstat {
            mode: st.mode,
            ino: st.ino,
            nlink: st.nlink,
            size: st.size,
            blksize: st.blksize,
            blocks: st.blocks,
            rdev: st.rdev,
        }
    }
}

impl From<Kstat> for fdt_stat {
    fn from(k: Kstat) -> fdt_stat {
        fdt_stat {
            mode: k.mode,
            nlink: k.nlink,
            ino: k.ino,
            size: k.size,
            blocks: k.blocks,
            rdev: k.rdev,
            blksize: k.blksize,
            ..fdt_stat::default()
        }
    }
}

/// The callbacks as a [`FileOperations`] implementation. `release` runs in `Drop`, which runs
/// when the [`File`] holding the only `Arc` to this value is dropped: at the last `FileRef`.
pub(crate) struct CFile {
    ops: fdt_file_ops,
    pub(crate) private_data: *mut c_void,
    /// The address of the caller's `struct fdt_file_ops`, kept to compare only
    /// (`fdt_file_has_ops`); never dereferenced after `fdt_file_new2`.
    ops_addr: *const fdt_file_ops,
}

// SAFETY: `private_data` is only ever passed back to the C callbacks, whose contract
// (documented on `fdt_file_ops`) is that they may be called from any thread, concurrently;
// `ops_addr` is only compared, never dereferenced.
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

impl CFile {
    /// The `getattr` callback's answer (all zeros without one).
    pub(crate) fn stat(&self) -> Result<fdt_stat, Errno> {
        let mut st = fdt_stat::default();
        if let Some(getattr) = self.ops.getattr {
            // SAFETY: the callback gets its own `private_data` and a zeroed local to fill.
            let r = unsafe { getattr(self.private_data, &mut st) };
            if r < 0 {
                return Err(Errno::new(r.wrapping_neg()));
            }
        }
        Ok(st)
    }
}

impl FileOperations for CFile {
    fn never_blocks(&self) -> bool {
        self.ops.flags & FDT_FILE_NEVER_BLOCKS != 0
    }

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
        Kstat::from(self.stat().unwrap_or_default())
    }

    fn poll(&self, _file: &File) -> u16 {
        match self.ops.poll {
            // SAFETY: the callback gets its own `private_data`. The mask is 16 bits wide, as
            // `struct pollfd`'s.
            Some(poll) => (unsafe { poll(self.private_data) }) as u16,
            None => DEFAULT_POLLMASK,
        }
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

/// The size of the members of `struct fdt_file_ops` that version 0.1 had (`read` to `flags`,
/// with the padding after `flags`): what `fdt_file_new` reads.
pub(crate) const OPS_SIZE_VER0: usize = offset_of!(fdt_file_ops, poll);

/// The sizes `ops_size` may have up to the struct this library knows: the end of the
/// version-0 members, then the end of each member added since.
const OPS_SIZES: [usize; 3] = [
    OPS_SIZE_VER0,
    offset_of!(fdt_file_ops, poll) + size_of::<*const c_void>(),
    offset_of!(fdt_file_ops, getattr) + size_of::<*const c_void>(),
];

/// The largest `ops_size` accepted (the kernel's `copy_struct_from_user` callers cap theirs
/// at a page too).
const OPS_SIZE_MAX: usize = 4096;

/// Reads the caller's `struct fdt_file_ops` of `size` bytes, as the kernel reads an
/// extensible struct (`copy_struct_from_user`): members this library knows are copied,
/// members the caller's header did not have are NULL, and members a later header added must
/// be zero (`E2BIG` otherwise: the caller wants a callback this library cannot call).
///
/// # Safety
///
/// `ops` is non-NULL and valid for reads of `size` bytes.
unsafe fn read_ops(ops: *const fdt_file_ops, size: usize) -> Result<fdt_file_ops, Errno> {
    let known = size_of::<fdt_file_ops>();
    if size > OPS_SIZE_MAX {
        return Err(Errno::E2BIG);
    }
    if size > known {
        // SAFETY: `known..size` is within the `size` readable bytes (the contract).
        let tail = unsafe { std::slice::from_raw_parts(ops.cast::<u8>().add(known), size - known) };
        if tail.iter().any(|&b| b != 0) {
            return Err(Errno::E2BIG);
        }
    } else if !OPS_SIZES.contains(&size) {
        // Smaller than version 0, or ending inside a member (a torn callback pointer).
        return Err(Errno::EINVAL);
    }
    let mut out = fdt_file_ops::default();
    // SAFETY: copies whole members (`size` is a member end, or `known`) from the caller's
    // struct, valid for that many bytes, into `out`, a `fdt_file_ops` of `known` bytes. Each
    // copied callback is NULL or a function with the member's signature (the caller's
    // contract), and any `flags` value is an integer; the rest of `out` stays NULL.
    unsafe {
        ptr::copy_nonoverlapping(
            ops.cast::<u8>(),
            (&raw mut out).cast::<u8>(),
            size.min(known),
        )
    };
    Ok(out)
}

/// Makes an open file description whose operations are `*ops` (copied: the caller's struct
/// may be freed or changed afterwards) with `private_data` handed to every callback, opened
/// with `open_flags` (`FDT_O_RDONLY` / `FDT_O_WRONLY` / `FDT_O_RDWR`, plus status flags such
/// as `FDT_O_APPEND`, `FDT_O_NONBLOCK`; `FDT_O_PATH` makes a location-only file), and stores
/// it in `*file`. Reading needs read access and a `read` callback, writing write access and
/// a `write` callback. The `getattr` callback, if any, runs once here (the file's type).
///
/// `ops_size` is `sizeof(struct fdt_file_ops)` as the caller compiled it (its header's
/// version of the struct): members the library knows and the caller's struct lacks are
/// NULL; members the caller's struct has and the library does not know must be zero.
///
/// Ownership: `*file` is one reference, owned by the caller: install it (`fdt_install`,
/// `fdt_install_at`, `fdt_fd_install2`, which take it over) or drop it with `fdt_file_put`.
/// `release` runs when the last reference goes. `private_data` belongs to the file from then
/// on, to be freed by `release`.
///
/// Returns 0; `-EINVAL` if `ops` or `file` is NULL, `ops->flags` has an unknown bit, or
/// `ops_size` is smaller than `FDT_FILE_OPS_SIZE_VER0` or does not end a member; `-E2BIG` if
/// the caller's struct sets a member this library does not know (a callback added by a later
/// version: it could not be called) or `ops_size` is above 4096. On failure `*file` is set to
/// NULL, nothing was made, `release` is not called and `private_data` stays the caller's.
///
/// # Safety
///
/// `ops` is NULL or valid for reads of `ops_size` bytes, a `struct fdt_file_ops` whose
/// callbacks follow that struct's contract; `file` is NULL or valid for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_new2(
    ops: *const fdt_file_ops,
    ops_size: usize,
    private_data: *mut c_void,
    open_flags: c_uint,
    file: *mut *mut fdt_file,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(file, ptr::null_mut()) };
    if ops.is_null() || file.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: non-NULL and valid for `ops_size` bytes (the caller's contract).
    let copied = match unsafe { read_ops(ops, ops_size) } {
        Ok(o) => o,
        Err(e) => return e.neg(),
    };
    if copied.flags & !(FDT_FILE_STREAM | FDT_FILE_NEVER_BLOCKS) != 0 {
        return Errno::EINVAL.neg();
    }
    // Nothing below can panic (allocation failure aborts), so `release` cannot run for a
    // failed call; the guard only proves nothing unwinds.
    guard(PANICKED.neg(), || {
        let cfile = Arc::new(CFile {
            ops: copied,
            private_data,
            ops_addr: ops,
        });
        let f = into_c(FileRef::new(File::new(open_flags, cfile)));
        // SAFETY: `file` is non-NULL and valid for a write (the caller's contract).
        unsafe { file.write(f) };
        0
    })
}

/// Legacy form of `fdt_file_new2` (deprecated): reads only the version-0 members of `*ops`
/// (`read` to `flags`: `FDT_FILE_OPS_SIZE_VER0` bytes, what the 0.1 header's struct had; later
/// members such as `poll` are ignored) and returns the file, or NULL (without setting
/// `errno`) where `fdt_file_new2` fails.
///
/// # Safety
///
/// `ops` is NULL or valid for reads of `FDT_FILE_OPS_SIZE_VER0` bytes, whose callbacks follow
/// `struct fdt_file_ops`'s contract.
#[deprecated(
    note = "use fdt_file_new2, which takes sizeof(struct fdt_file_ops) and returns -errno"
)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_new(
    ops: *const fdt_file_ops,
    private_data: *mut c_void,
    open_flags: c_uint,
) -> *mut fdt_file {
    let mut f = ptr::null_mut();
    // SAFETY: the caller's contract, for the version-0 size; `f` is a local.
    unsafe { fdt_file_new2(ops, OPS_SIZE_VER0, private_data, open_flags, &mut f) };
    f
}

/// Whether `file` was made from the operations at `ops` (the address given to
/// `fdt_file_new2` or `fdt_file_new`, as a kernel driver tests `file->f_op == &my_fops`): how
/// a runtime recognises its own files among the descriptors before using their
/// `fdt_file_private_data`. Addresses are compared, not contents: give every kind of file
/// one `struct fdt_file_ops` that outlives its files (a `static const` one).
///
/// Returns 1 if it was, 0 if not, `-EINVAL` if `file` or `ops` is NULL.
///
/// # Safety
///
/// `file` is NULL or a live file. `ops` is only compared, never read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_file_has_ops(
    file: *const fdt_file,
    ops: *const fdt_file_ops,
) -> c_int {
    if file.is_null() || ops.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: a live file (the caller's contract).
    let f = unsafe { file_ref(file) };
    f.ops_as::<CFile>()
        .is_some_and(|c| ptr::eq(c.ops_addr, ops))
        .into()
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

/// The `private_data` given to `fdt_file_new2` for `file`, or NULL if `file` is NULL. Check
/// with `fdt_file_has_ops` that the file is of the kind whose `private_data` you expect.
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

//! Probe files: C callbacks (for `fdt_file_new`) and an equivalent Rust
//! [`FileOperations`] (for a mirror `Task`), both counting flushes and releases. The behaviour
//! lives in plain functions shared by both, so the two worlds must answer alike.

use fdtable::{Errno, FileRef};
use fdtable_capi::*;
use fdtable_vfs::uapi::*;
use fdtable_vfs::{File, FileOperations, Kstat, UserMemory};
use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Which callbacks a probe file has (bits), and its behaviour switches.
pub const K_READ: u16 = 1;
pub const K_WRITE: u16 = 2;
pub const K_IOCTL: u16 = 4;
pub const K_COMPAT: u16 = 8;
pub const K_FLUSH: u16 = 16;
pub const K_LLSEEK: u16 = 32;
pub const K_STREAM: u16 = 64;
/// `flush` fails with `EIO`.
pub const K_FLUSH_FAILS: u16 = 128;
/// A `poll` callback (since 0.2).
pub const K_POLL: u16 = 256;
/// A `getattr` callback (since 0.2).
pub const K_GETATTR: u16 = 512;
/// `FDT_FILE_NEVER_BLOCKS` (since 0.5): lent by `fdt_fdget_rcu` on a shared table.
pub const K_NEVER_BLOCKS: u16 = 1024;
/// Every kind: the bits above.
pub const KINDS: usize = 2048;

/// The ioctl command the probe answers (with `arg + 1`).
pub const PROBE_IOC: c_uint = 0x1234;

/// One logical file's counters.
#[derive(Debug, Default)]
pub struct Probe {
    pub id: usize,
    pub kind: u16,
    pub flushes: AtomicUsize,
    pub releases: AtomicUsize,
}

impl Probe {
    pub fn new(id: usize, kind: u16) -> Arc<Probe> {
        Arc::new(Probe {
            id,
            kind,
            ..Probe::default()
        })
    }
    pub fn flushes(&self) -> usize {
        self.flushes.load(SeqCst)
    }
    pub fn releases(&self) -> usize {
        self.releases.load(SeqCst)
    }
    fn released(&self) {
        let before = self.releases.fetch_add(1, SeqCst);
        assert_eq!(before, 0, "file {} released twice", self.id);
    }
}

// The behaviour, shared by both worlds.

fn b_read(p: &Probe, buf: &mut [u8], pos: Option<&mut i64>) -> isize {
    let start = pos.as_deref().copied().unwrap_or(0);
    let n = buf.len().min(5);
    for (i, b) in buf[..n].iter_mut().enumerate() {
        *b = (start as u8).wrapping_add(i as u8) ^ (p.id as u8);
    }
    if let Some(pos) = pos {
        *pos = pos.wrapping_add(n as i64);
    }
    n as isize
}

fn b_write(buf: &[u8], pos: Option<&mut i64>) -> isize {
    let n = buf.len().min(3);
    if let Some(pos) = pos {
        *pos = pos.wrapping_add(n as i64);
    }
    n as isize
}

fn b_ioctl(cmd: c_uint, arg: c_ulong) -> c_long {
    if cmd == PROBE_IOC {
        arg.wrapping_add(1) as c_long
    } else {
        -(libc::ENOTTY as c_long)
    }
}

fn b_compat(arg: c_ulong) -> c_long {
    arg as c_long
}

fn b_flush(p: &Probe) -> c_int {
    p.flushes.fetch_add(1, SeqCst);
    if p.kind & K_FLUSH_FAILS != 0 {
        -libc::EIO
    } else {
        0
    }
}

/// The events a probe is ready for: one of five masks, by id.
fn b_poll(p: &Probe) -> u16 {
    [
        POLLIN | POLLRDNORM,
        POLLOUT | POLLWRNORM,
        POLLIN | POLLHUP,
        POLLERR | POLLOUT,
        0,
    ][p.id % 5]
}

/// A probe's attributes: a regular file, a pipe or a character device, by id.
fn b_getattr(p: &Probe) -> Kstat {
    let id = p.id as u64;
    Kstat {
        mode: [S_IFREG | 0o644, S_IFIFO | 0o600, S_IFCHR | 0o666][p.id % 3],
        ino: 1000 + id,
        nlink: 1,
        size: 100 + id as i64,
        blksize: if id.is_multiple_of(2) { 4096 } else { 0 },
        blocks: id,
        rdev: if p.id % 3 == 2 { 0x105 } else { 0 },
    }
}

fn b_llseek(pos: i64, offset: i64, whence: c_int) -> i64 {
    let r = match whence {
        0 => Some(offset),
        1 => pos.checked_add(offset),
        2 => offset.checked_add(100),
        _ => None,
    };
    match r {
        Some(p) if p >= 0 => p,
        _ => -(libc::EINVAL as i64),
    }
}

// The C side.

/// # Safety
///
/// `pd` is a probe's `Arc::into_raw`, alive until `c_release`.
unsafe fn probe<'a>(pd: *mut c_void) -> &'a Probe {
    // SAFETY: per the contract.
    unsafe { &*(pd as *const Probe) }
}

/// `read` callback.
///
/// # Safety
///
/// Called by the library: `pd` is a live probe, `buf` valid for `count` bytes, `pos` NULL or live.
unsafe extern "C" fn c_read(
    pd: *mut c_void,
    buf: *mut c_void,
    count: usize,
    pos: *mut i64,
) -> isize {
    // SAFETY: the library passes a buffer valid for `count` bytes and a live or NULL `pos`.
    let (buf, pos) = unsafe {
        (
            std::slice::from_raw_parts_mut(buf.cast::<u8>(), count),
            pos.as_mut(),
        )
    };
    // SAFETY: our private data.
    b_read(unsafe { probe(pd) }, buf, pos)
}

/// `write` callback.
///
/// # Safety
///
/// As [`c_read`], for reads of `buf`.
unsafe extern "C" fn c_write(
    _pd: *mut c_void,
    buf: *const c_void,
    count: usize,
    pos: *mut i64,
) -> isize {
    // SAFETY: as in `c_read`.
    let (buf, pos) = unsafe {
        (
            std::slice::from_raw_parts(buf.cast::<u8>(), count),
            pos.as_mut(),
        )
    };
    b_write(buf, pos)
}

/// `ioctl` callback.
///
/// # Safety
///
/// Called by the library; touches no pointer.
unsafe extern "C" fn c_ioctl(_pd: *mut c_void, cmd: c_uint, arg: c_ulong) -> c_long {
    b_ioctl(cmd, arg)
}

/// `compat_ioctl` callback.
///
/// # Safety
///
/// Called by the library; touches no pointer.
unsafe extern "C" fn c_compat(_pd: *mut c_void, _cmd: c_uint, arg: c_ulong) -> c_long {
    b_compat(arg)
}

/// `flush` callback.
///
/// # Safety
///
/// Called by the library: `pd` is a live probe.
unsafe extern "C" fn c_flush(pd: *mut c_void) -> c_int {
    // SAFETY: our private data.
    b_flush(unsafe { probe(pd) })
}

/// `release` callback.
///
/// # Safety
///
/// Called once by the library: `pd` is the `Arc::into_raw` of [`c_file`].
unsafe extern "C" fn c_release(pd: *mut c_void) {
    // SAFETY: the reference `c_file` leaked, reclaimed once (release runs once).
    let p = unsafe { Arc::from_raw(pd as *const Probe) };
    p.released();
}

/// `llseek` callback.
///
/// # Safety
///
/// Called by the library; touches no pointer.
unsafe extern "C" fn c_llseek(_pd: *mut c_void, pos: i64, offset: i64, whence: c_int) -> i64 {
    b_llseek(pos, offset, whence)
}

/// `poll` callback.
///
/// # Safety
///
/// Called by the library: `pd` is a live probe.
unsafe extern "C" fn c_poll(pd: *mut c_void) -> c_uint {
    // SAFETY: our private data.
    c_uint::from(b_poll(unsafe { probe(pd) }))
}

/// `getattr` callback.
///
/// # Safety
///
/// Called by the library: `pd` is a live probe, `st` a live, zeroed struct.
unsafe extern "C" fn c_getattr(pd: *mut c_void, st: *mut fdt_stat) -> c_int {
    // SAFETY: our private data, and the library's struct.
    let (p, st) = unsafe { (probe(pd), &mut *st) };
    assert_eq!(*st, fdt_stat::default(), "zeroed by the library");
    let k = b_getattr(p);
    st.mode = k.mode;
    st.ino = k.ino;
    st.nlink = k.nlink;
    st.size = k.size;
    st.blksize = k.blksize;
    st.blocks = k.blocks;
    st.rdev = k.rdev;
    0
}

/// The callbacks of a probe of `kind`.
pub fn c_ops(kind: u16) -> fdt_file_ops {
    fdt_file_ops {
        read: (kind & K_READ != 0).then_some(c_read as _),
        write: (kind & K_WRITE != 0).then_some(c_write as _),
        ioctl: (kind & K_IOCTL != 0).then_some(c_ioctl as _),
        compat_ioctl: (kind & K_COMPAT != 0).then_some(c_compat as _),
        flush: (kind & K_FLUSH != 0).then_some(c_flush as _),
        release: Some(c_release),
        llseek: (kind & K_LLSEEK != 0).then_some(c_llseek as _),
        flags: if kind & K_STREAM != 0 {
            FDT_FILE_STREAM
        } else {
            0
        } | if kind & K_NEVER_BLOCKS != 0 {
            FDT_FILE_NEVER_BLOCKS
        } else {
            0
        },
        poll: (kind & K_POLL != 0).then_some(c_poll as _),
        getattr: (kind & K_GETATTR != 0).then_some(c_getattr as _),
    }
}

/// One `struct fdt_file_ops` per kind, for the program's life: what `c_file` gives
/// `fdt_file_new2`, so that `fdt_file_has_ops(f, static_ops(kind))` recognises a probe's kind.
pub fn static_ops(kind: u16) -> &'static fdt_file_ops {
    static OPS: std::sync::LazyLock<Vec<fdt_file_ops>> =
        std::sync::LazyLock::new(|| (0..KINDS as u16).map(c_ops).collect());
    &OPS[usize::from(kind) % KINDS]
}

/// A C-side file for `probe`, with one reference owned by the caller (`fdt_file_new2`).
pub fn c_file(probe: &Arc<Probe>, open_flags: c_uint) -> *mut fdt_file {
    let pd = Arc::into_raw(probe.clone()) as *mut c_void;
    let mut f = std::ptr::null_mut();
    // SAFETY: a valid struct whose callbacks honour the contract, of its own size.
    let r = unsafe {
        fdt_file_new2(
            static_ops(probe.kind),
            size_of::<fdt_file_ops>(),
            pd,
            open_flags,
            &mut f,
        )
    };
    assert_eq!(r, 0);
    assert!(!f.is_null());
    f
}

/// As [`c_file`], through the legacy `fdt_file_new`, which reads the 0.1 members only (a
/// probe whose `poll`/`getattr` bits are set loses those callbacks).
#[allow(deprecated)]
pub fn c_file_legacy(probe: &Arc<Probe>, open_flags: c_uint) -> *mut fdt_file {
    let pd = Arc::into_raw(probe.clone()) as *mut c_void;
    // SAFETY: a valid struct whose callbacks honour the contract.
    let f = unsafe { fdt_file_new(static_ops(probe.kind), pd, open_flags) };
    assert!(!f.is_null());
    f
}

/// The probe behind a C-side file.
///
/// # Safety
///
/// `f` is a live file made by [`c_file`].
pub unsafe fn c_probe<'a>(f: *const fdt_file) -> &'a Probe {
    // SAFETY: per the contract; its private data is a live probe.
    unsafe { probe(fdt_file_private_data(f)) }
}

// The mirror side.

/// The same behaviour as a Rust [`FileOperations`].
pub struct MirrorOps {
    pub probe: Arc<Probe>,
}

impl Drop for MirrorOps {
    fn drop(&mut self) {
        self.probe.released();
    }
}

fn rw(r: isize) -> Result<usize, Errno> {
    if r < 0 {
        Err(Errno::new(-r as i32))
    } else {
        Ok(r as usize)
    }
}

fn long(r: i64) -> Result<i64, Errno> {
    if (-4095..0).contains(&r) {
        Err(Errno::new(-r as i32))
    } else {
        Ok(r)
    }
}

impl FileOperations for MirrorOps {
    fn never_blocks(&self) -> bool {
        self.probe.kind & K_NEVER_BLOCKS != 0
    }

    fn fmode(&self) -> u32 {
        let k = self.probe.kind;
        let mut m = 0;
        if k & K_READ != 0 {
            m |= FMODE_CAN_READ;
        }
        if k & K_WRITE != 0 {
            m |= FMODE_CAN_WRITE;
        }
        if k & K_LLSEEK != 0 {
            m |= FMODE_LSEEK;
        }
        if k & K_STREAM != 0 {
            m |= FMODE_STREAM;
        } else {
            m |= FMODE_PREAD | FMODE_PWRITE | FMODE_ATOMIC_POS;
        }
        m
    }
    fn getattr(&self) -> Kstat {
        if self.probe.kind & K_GETATTR == 0 {
            return Kstat::default();
        }
        b_getattr(&self.probe)
    }
    fn poll(&self, _f: &File) -> u16 {
        if self.probe.kind & K_POLL == 0 {
            return DEFAULT_POLLMASK;
        }
        b_poll(&self.probe)
    }
    fn read(&self, _f: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        if self.probe.kind & K_READ == 0 {
            return Err(Errno::EINVAL);
        }
        rw(b_read(&self.probe, buf, pos))
    }
    fn write(&self, _f: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        if self.probe.kind & K_WRITE == 0 {
            return Err(Errno::EINVAL);
        }
        rw(b_write(buf, pos))
    }
    fn llseek(&self, _f: &File, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        long(b_llseek(cur, offset, whence))
    }
    fn unlocked_ioctl(
        &self,
        _f: &File,
        cmd: u32,
        arg: usize,
        _m: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        if self.probe.kind & K_IOCTL == 0 {
            return Err(Errno::ENOTTY);
        }
        long(b_ioctl(cmd, arg as c_ulong))
    }
    fn compat_ioctl(
        &self,
        _f: &File,
        _cmd: u32,
        arg: u32,
        _m: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        if self.probe.kind & K_COMPAT == 0 {
            return Err(Errno::ENOTTY);
        }
        long(b_compat(c_ulong::from(arg)))
    }
    fn flush(&self, _f: &File) -> Result<(), Errno> {
        if self.probe.kind & K_FLUSH == 0 {
            return Ok(());
        }
        match b_flush(&self.probe) {
            0 => Ok(()),
            e => Err(Errno::new(-e)),
        }
    }
}

/// A mirror-side file for `probe`.
pub fn m_file(probe: &Arc<Probe>, open_flags: u32) -> FileRef<File> {
    FileRef::new(File::new(
        open_flags,
        Arc::new(MirrorOps {
            probe: probe.clone(),
        }),
    ))
}

/// The probe id behind a mirror-side file.
pub fn m_id(f: &File) -> usize {
    f.ops_as::<MirrorOps>().expect("a mirror file").probe.id
}

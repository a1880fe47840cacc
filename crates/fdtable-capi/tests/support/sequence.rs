//! Call sequences through the C ABI, decoded from bytes (the fuzz target's input, and the
//! proptest generator's output), with arbitrary and invalid arguments: NULL handles, negative
//! and huge descriptors, unknown flags and commands, NULL buffers.
//!
//! Every call runs twice: through the `extern "C"` functions on C-side probe files, and
//! directly on a mirror [`Task`] holding equivalent Rust files. The results (return values,
//! bytes read, which file a lookup found, whether a light lookup took a reference) must be
//! equal. At the end every handle and reference is put, and every file must have been
//! released exactly once on both sides, with the same number of flushes.
//!
//! Each legacy call (`fdt_files_fork`, `fdt_fdget`, ...) and its `...2` form take turns (by
//! the call count, so no input byte decides), and every error the library itself returns
//! must be one of [`LIBRARY_ERRNOS`], the values every Unix numbers alike.

use super::probe::*;
use fdtable::FdState;
use fdtable::{FileRef, Files, OwnedFdReservation, RcuFdEnd};
use fdtable_capi::*;
use fdtable_vfs::uapi::*;
use fdtable_vfs::{DEFAULT_NOFILE, File, HostMemory, MemFs, NoMemory, PollFd, Task};
use std::ffi::{c_int, c_short, c_ulong};
use std::sync::Arc;

/// What the library itself may answer (the header says so): numbered alike on every Unix.
pub const LIBRARY_ERRNOS: [c_int; 14] = [
    libc::EPERM,
    libc::ENOENT,
    libc::EIO,
    libc::ENXIO,
    libc::E2BIG,
    libc::EBADF,
    libc::ENOMEM,
    libc::EFAULT,
    libc::EBUSY,
    libc::EISDIR,
    libc::EINVAL,
    libc::EMFILE,
    libc::ENOTTY,
    libc::ESPIPE,
];

/// Fails unless `r` is a success or one of [`LIBRARY_ERRNOS`], negated.
pub fn check_errno(r: i64, what: &str) {
    if r < 0 {
        assert!(
            LIBRARY_ERRNOS.iter().any(|&e| i64::from(-e) == r),
            "{what}: {r} is not an errno the header lists"
        );
    }
}

/// Bounds that keep one input fast.
const MAX_HANDLES: usize = 6;
const MAX_REFS: usize = 12;
const MAX_FILES: usize = 48;
const MAX_OPS: usize = 400;
const MAX_RESERVATIONS: usize = 4;

/// The mirror of a C table: a task whose table keeps a `u64` per descriptor, as the C one.
type MTask = Task<u64>;

/// The bytes of one input.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }
    /// A descriptor: mostly small ones, sometimes an edge.
    fn fd(&mut self) -> c_int {
        const EDGES: [c_int; 16] = [
            -1,
            -2,
            c_int::MIN,
            c_int::MAX,
            63,
            64,
            65,
            127,
            128,
            1023,
            1024,
            1025,
            4095,
            4096,
            65536,
            1 << 20,
        ];
        let b = self.u8();
        if b < 224 {
            c_int::from(b % 24)
        } else {
            EDGES[usize::from(b - 224) % EDGES.len()]
        }
    }
    /// An `unsigned int` range bound for close_range.
    fn bound(&mut self) -> u32 {
        match self.u8() % 8 {
            0 => u32::MAX,
            1 => u32::MAX - 1,
            2 => self.u32(),
            _ => u32::from(self.u8() % 40),
        }
    }
    fn limit(&mut self) -> c_ulong {
        const L: [c_ulong; 12] = [0, 1, 2, 3, 5, 8, 24, 64, 1024, 4096, 1 << 20, c_ulong::MAX];
        let b = self.u8();
        if b < 200 {
            L[usize::from(b) % L.len()]
        } else {
            c_ulong::from(b)
        }
    }
    fn open_flags(&mut self) -> u32 {
        const F: [u32; 8] = [
            O_RDONLY,
            O_WRONLY,
            O_RDWR,
            O_RDWR | O_APPEND,
            O_RDWR | O_NONBLOCK,
            3,
            O_PATH,
            O_RDWR | O_CLOEXEC,
        ];
        F[usize::from(self.u8()) % F.len()]
    }
    /// A payload: small values (so that compare-and-swap sometimes matches), or any.
    fn payload(&mut self) -> u64 {
        match self.u8() % 4 {
            0 => self.u64(),
            1 => u64::MAX,
            _ => u64::from(self.u8() % 4),
        }
    }
    fn fd_flags(&mut self) -> u32 {
        match self.u8() % 4 {
            0 => 0,
            1 => O_CLOEXEC,
            2 => O_CLOEXEC | O_RDWR,
            _ => self.u32(),
        }
    }
}

/// The two worlds side by side.
pub struct World {
    /// C handles (entries may be null after a failed share/fork).
    c: Vec<*mut fdt_files>,
    m: Vec<MTask>,
    /// Owned reservations, C and mirror.
    c_res: Vec<*mut fdt_reservation>,
    m_res: Vec<OwnedFdReservation<File, u64>>,
    c_refs: Vec<*mut fdt_file>,
    m_refs: Vec<FileRef<File>>,
    probes: Vec<(Arc<Probe>, Arc<Probe>)>,
    pub calls: usize,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    pub fn new() -> World {
        World {
            c: Vec::new(),
            m: Vec::new(),
            c_res: Vec::new(),
            m_res: Vec::new(),
            c_refs: Vec::new(),
            m_refs: Vec::new(),
            probes: Vec::new(),
            calls: 0,
        }
    }

    /// A handle index: `None` is the NULL handle (or no handle exists).
    fn pick_handle(&self, b: &mut Bytes<'_>) -> Option<usize> {
        let v = usize::from(b.u8());
        if self.c.is_empty() || v % 8 == 7 {
            None
        } else {
            Some(v % self.c.len())
        }
    }

    fn c_handle(&self, h: Option<usize>) -> *mut fdt_files {
        h.map_or(std::ptr::null_mut(), |i| self.c[i])
    }

    fn pick_ref(&self, b: &mut Bytes<'_>) -> Option<usize> {
        let v = usize::from(b.u8());
        (!self.c_refs.is_empty()).then(|| v % self.c_refs.len())
    }

    fn new_handle(&mut self) {
        // SAFETY: no arguments.
        let c = fdt_files_new();
        assert!(!c.is_null());
        self.c.push(c);
        self.m
            .push(Task::with_fd_payload(MemFs::new(), DEFAULT_NOFILE));
    }

    /// Decodes and runs one call. Returns false when the input is used up.
    fn step(&mut self, b: &mut Bytes<'_>) -> bool {
        if b.done() {
            return false;
        }
        self.calls += 1;
        let op = b.u8() % 45;
        // Legacy call or its `...2` form: they take turns.
        let legacy = self.calls.is_multiple_of(2);
        match op {
            0 if self.c.len() < MAX_HANDLES => self.new_handle(),
            1 => {
                if let Some(h) = self.pick_handle(b) {
                    // SAFETY: a live handle, removed from the world.
                    unsafe { fdt_files_put(self.c.swap_remove(h)) };
                    drop(self.m.swap_remove(h));
                } else {
                    // SAFETY: NULL is allowed.
                    unsafe { fdt_files_put(std::ptr::null_mut()) };
                }
            }
            2 | 3 if self.c.len() < MAX_HANDLES => {
                let h = self.pick_handle(b);
                let share = op == 3;
                let ch = self.c_handle(h);
                let c = if legacy {
                    // SAFETY: a live handle or NULL.
                    unsafe {
                        if share {
                            fdt_files_share(ch)
                        } else {
                            fdt_files_fork(ch)
                        }
                    }
                } else {
                    let mut out = std::ptr::dangling_mut();
                    // SAFETY: a live handle or NULL; `out` is a local.
                    let r = unsafe {
                        if share {
                            fdt_files_share2(ch, &mut out)
                        } else {
                            fdt_files_fork2(ch, &mut out)
                        }
                    };
                    check_errno(r.into(), "fork2/share2");
                    assert_eq!(r == 0, !out.is_null(), "NULL exactly on failure");
                    out
                };
                match h {
                    None => assert!(c.is_null()),
                    Some(i) => {
                        let m = if share {
                            self.m[i].clone(CLONE_FILES)
                        } else {
                            self.m[i].fork()
                        };
                        assert_eq!(c.is_null(), m.is_err(), "share/fork {share}");
                        if let Ok(m) = m {
                            self.c.push(c);
                            self.m.push(m);
                        }
                    }
                }
            }
            4 => {
                let h = self.pick_handle(b);
                let r = match h {
                    Some(i) => {
                        let mut p = self.c[i];
                        // SAFETY: a live handle.
                        let r = unsafe { fdt_unshare(&mut p) };
                        assert_eq!(p, self.c[i]);
                        assert_eq!(r, neg(self.m[i].unshare(CLONE_FILES)));
                        r
                    }
                    None => {
                        let mut p = std::ptr::null_mut();
                        // SAFETY: NULL inner pointer, and NULL outer pointer.
                        let (a, z) =
                            unsafe { (fdt_unshare(&mut p), fdt_unshare(std::ptr::null_mut())) };
                        assert_eq!(z, -libc::EINVAL);
                        a
                    }
                };
                let _ = r;
            }
            5 => {
                let h = self.pick_handle(b);
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_exec(self.c_handle(h)) };
                self.expect_mut(h, r, |t| neg(t.exec()));
            }
            6 => {
                let h = self.pick_handle(b);
                let (soft, hard) = (b.limit(), b.limit());
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_set_nofile(self.c_handle(h), soft, hard) };
                self.expect(h, r, |t| neg(t.setrlimit_nofile(soft as u64, hard as u64)));
                let (mut s, mut hh) = (0, 0);
                // SAFETY: valid out-pointers.
                let r = unsafe { fdt_get_nofile(self.c_handle(h), &mut s, &mut hh) };
                if let Some(i) = h {
                    assert_eq!(r, 0);
                    assert_eq!((s as u64, hh as u64), self.m[i].getrlimit_nofile());
                }
            }
            7 if self.probes.len() < MAX_FILES && self.c_refs.len() < MAX_REFS => {
                let (kind, flags) = (u16::from(b.u8()), b.open_flags());
                let id = self.probes.len();
                // `poll`, `getattr` and `FDT_FILE_NEVER_BLOCKS` by id, so that no input byte
                // changes meaning.
                let kind = kind
                    | ((id % 4) as u16) << 8
                    | if id.is_multiple_of(2) {
                        K_NEVER_BLOCKS
                    } else {
                        0
                    };
                let (pc, pm) = (Probe::new(id, kind), Probe::new(id, kind));
                let old = kind & (K_POLL | K_GETATTR) == 0 && legacy;
                self.c_refs.push(if old {
                    c_file_legacy(&pc, flags)
                } else {
                    c_file(&pc, flags)
                });
                self.m_refs.push(m_file(&pm, flags));
                self.probes.push((pc, pm));
            }
            8 => {
                if let Some(r) = self.pick_ref(b)
                    && self.c_refs.len() < MAX_REFS
                {
                    // SAFETY: a reference we hold.
                    unsafe { fdt_file_get(self.c_refs[r]) };
                    self.c_refs.push(self.c_refs[r]);
                    self.m_refs.push(self.m_refs[r].clone());
                }
            }
            9 => {
                if let Some(r) = self.pick_ref(b) {
                    // SAFETY: a reference we hold, given up.
                    unsafe { fdt_file_put(self.c_refs.swap_remove(r)) };
                    drop(self.m_refs.swap_remove(r));
                }
            }
            10 => {
                let h = self.pick_handle(b);
                let flags = b.fd_flags();
                if let Some(r) = self.pick_ref(b) {
                    let (cf, mf) = (self.c_refs.swap_remove(r), self.m_refs.swap_remove(r));
                    // SAFETY: a live handle or NULL; a reference we hand over.
                    let res = unsafe { fdt_install(self.c_handle(h), cf, flags) };
                    match h {
                        Some(i) => {
                            let t = &self.m[i];
                            let m = t.files().install(mf, flags & O_CLOEXEC, t.nofile());
                            assert_eq!(res, int(m.map(|fd| fd as i32)), "install");
                        }
                        None => assert_eq!(res, -libc::EINVAL),
                    }
                } else {
                    // SAFETY: NULL file.
                    let r = unsafe { fdt_install(self.c_handle(h), std::ptr::null_mut(), flags) };
                    assert_eq!(r, -libc::EINVAL);
                }
            }
            11 => {
                let h = self.pick_handle(b);
                let flags = b.fd_flags();
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_get_unused_fd(self.c_handle(h), flags) };
                self.expect(h, r, |t| {
                    int(t
                        .files()
                        .alloc_fd(0, t.nofile(), flags & O_CLOEXEC)
                        .map(|f| f as i32))
                });
            }
            12 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                if self.owned_reserved(fd) {
                    // The number is a reservation's (giving it back is the reservation's).
                } else if legacy {
                    // SAFETY: a live handle or NULL.
                    unsafe { fdt_put_unused_fd(self.c_handle(h), fd) };
                    if let Some(i) = h {
                        self.m[i].files().put_unused_fd(fd as u32);
                    }
                } else {
                    // SAFETY: a live handle or NULL.
                    let r = unsafe { fdt_put_unused_fd2(self.c_handle(h), fd) };
                    self.expect(h, r, |t| {
                        if t.files().fd_state(fd as u32) != FdState::Reserved {
                            return -libc::EBADF;
                        }
                        t.files().put_unused_fd(fd as u32);
                        0
                    });
                }
            }
            13 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                if self.owned_reserved(fd) {
                    // As op 12: the reservation installs there.
                } else if let Some(r) = self.pick_ref(b) {
                    let (cf, mf) = (self.c_refs.swap_remove(r), self.m_refs.swap_remove(r));
                    if legacy {
                        // SAFETY: a live handle or NULL; a reference we hand over.
                        unsafe { fdt_fd_install(self.c_handle(h), fd, cf) };
                        if let Some(i) = h {
                            let _ = self.m[i].files().fd_install(fd as u32, mf);
                        }
                    } else {
                        // SAFETY: a live handle or NULL; a reference we hand over.
                        let r = unsafe { fdt_fd_install2(self.c_handle(h), fd, cf) };
                        self.expect(h, r, |t| neg(t.files().fd_install(fd as u32, mf)));
                    }
                }
            }
            14 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_close(self.c_handle(h), fd) };
                self.expect_mut(h, r, |t| neg(t.close(fd)));
            }
            15 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_dup(self.c_handle(h), fd) };
                self.expect(h, r, |t| int(t.dup(fd)));
            }
            16 | 17 => {
                let h = self.pick_handle(b);
                let (a, z) = (b.fd(), b.fd());
                let flags = b.fd_flags() as c_int;
                let ch = self.c_handle(h);
                // SAFETY: a live handle or NULL.
                let r = unsafe {
                    if op == 16 {
                        fdt_dup2(ch, a, z)
                    } else {
                        fdt_dup3(ch, a, z, flags)
                    }
                };
                self.expect_mut(h, r, |t| {
                    int(if op == 16 {
                        t.dup2(a, z)
                    } else {
                        t.dup3(a, z, flags as u32)
                    })
                });
            }
            18 => {
                const CMDS: [c_int; 11] = [
                    F_DUPFD,
                    F_DUPFD_CLOEXEC,
                    F_GETFD,
                    F_SETFD,
                    F_GETFL,
                    F_SETFL,
                    F_DUPFD_QUERY,
                    F_CREATED_QUERY,
                    F_GETPIPE_SZ,
                    9999,
                    -1,
                ];
                let h = self.pick_handle(b);
                let fd = b.fd();
                let cmd = CMDS[usize::from(b.u8()) % CMDS.len()];
                let arg = match b.u8() % 4 {
                    0 => b.fd() as c_ulong,
                    1 => c_ulong::from(b.u32()),
                    2 => b.u64() as c_ulong,
                    _ => c_ulong::from(b.u8() % 4),
                };
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_fcntl(self.c_handle(h), fd, cmd, arg) };
                self.expect(h, r, |t| {
                    int(t.fcntl(fd, cmd, arg as u64).map(|v| v as i32))
                });
            }
            19 => {
                let h = self.pick_handle(b);
                let (first, last) = (b.bound(), b.bound());
                let flags = match b.u8() % 5 {
                    0 => 0,
                    1 => FDT_CLOSE_RANGE_CLOEXEC,
                    2 => FDT_CLOSE_RANGE_UNSHARE,
                    3 => FDT_CLOSE_RANGE_CLOEXEC | FDT_CLOSE_RANGE_UNSHARE,
                    _ => b.u32(),
                };
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_close_range(self.c_handle(h), first, last, flags) };
                self.expect_mut(h, r, |t| neg(t.close_range(first, last, flags)));
            }
            20 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let f = if legacy {
                    // SAFETY: a live handle or NULL.
                    unsafe { fdt_fdget(self.c_handle(h), fd) }
                } else {
                    let mut f = fdt_fd {
                        file: std::ptr::dangling_mut(),
                        flags: 7,
                    };
                    // SAFETY: a live handle or NULL; `f` is a local.
                    let r = unsafe { fdt_fdget2(self.c_handle(h), fd, &mut f) };
                    let want = match h {
                        None => -libc::EINVAL,
                        Some(_) if f.file.is_null() => -libc::EBADF,
                        Some(_) => 0,
                    };
                    assert_eq!(r, want, "fdget2");
                    if r != 0 {
                        assert_eq!(f.flags, 0, "the empty result");
                    }
                    f
                };
                let file = fdt_fd_file(f);
                // SAFETY: a light lookup's file is live until `fdt_fdput`.
                let c_id = (!file.is_null()).then(|| unsafe { c_probe(file) }.id);
                match h {
                    Some(i) => {
                        let m = self.m[i].fdget(fd).ok();
                        assert_eq!(c_id, m.as_ref().map(|f| m_id(f)), "fdget({fd})");
                        if let Some(m) = &m {
                            assert_eq!(f.flags == FDT_FDPUT_FPUT, m.needs_put(), "fdget owned");
                            assert_eq!(m.needs_put(), Files::is_shared(self.m[i].files()));
                        }
                    }
                    None => assert!(file.is_null()),
                }
                // SAFETY: the unchanged result, put once.
                unsafe { fdt_fdput(f) };
            }
            21 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let f = if legacy {
                    // SAFETY: a live handle or NULL.
                    unsafe { fdt_fget(self.c_handle(h), fd) }
                } else {
                    let mut f = std::ptr::dangling_mut();
                    // SAFETY: a live handle or NULL; `f` is a local.
                    let r = unsafe { fdt_fget2(self.c_handle(h), fd, &mut f) };
                    check_errno(r.into(), "fget2");
                    assert_eq!(r == 0, !f.is_null());
                    if h.is_none() {
                        assert_eq!(r, -libc::EINVAL);
                    }
                    f
                };
                let m = h.and_then(|i| {
                    self.m[i]
                        .files()
                        .fget(fd as u32)
                        .filter(|f| f.f_mode() & FMODE_PATH == 0)
                });
                let c_id = (!f.is_null()).then(|| {
                    // SAFETY: `f` is a reference we own.
                    unsafe { c_probe(f) }.id
                });
                assert_eq!(c_id, m.as_ref().map(|f| m_id(f)));
                if let Some(m) = m {
                    if self.c_refs.len() < MAX_REFS {
                        self.c_refs.push(f);
                        self.m_refs.push(m);
                    } else {
                        // SAFETY: our reference.
                        unsafe { fdt_file_put(f) };
                    }
                }
            }
            22 | 23 => self.read(b, op == 23),
            24 | 25 => self.write(b, op == 25),
            26 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let off = match b.u8() % 4 {
                    0 => i64::from(b.u8()),
                    1 => -i64::from(b.u8()),
                    2 => b.u64() as i64,
                    _ => i64::MAX - i64::from(b.u8()),
                };
                let whence = c_int::from(b.u8() % 7) - 1;
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_lseek(self.c_handle(h), fd, off, whence) };
                check_errno(r, "lseek");
                match h {
                    Some(i) => assert_eq!(
                        r,
                        self.m[i]
                            .lseek(fd, off, whence)
                            .unwrap_or_else(|e| i64::from(e.neg()))
                    ),
                    None => assert_eq!(r, -i64::from(libc::EINVAL)),
                }
            }
            27 | 28 => self.ioctl(b, op == 28),
            30 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_next_open_fd(self.c_handle(h), fd) };
                self.expect(h, r, |t| match u32::try_from(fd) {
                    Err(_) => -libc::EINVAL,
                    Ok(from) => t
                        .files()
                        .next_open_fd(from)
                        .map_or(-libc::ENOENT, |n| n as c_int),
                });
            }
            31 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let flags = b.fd_flags();
                if let Some(r) = self.pick_ref(b) {
                    let (cf, mf) = (self.c_refs.swap_remove(r), self.m_refs.swap_remove(r));
                    // SAFETY: a live handle or NULL; a reference we hand over.
                    let res = unsafe { fdt_install_at(self.c_handle(h), fd, cf, flags) };
                    self.expect_mut(h, res, |t| {
                        if flags & !O_CLOEXEC != 0 {
                            return -libc::EINVAL;
                        }
                        let nofile = t.nofile();
                        int(t
                            .files_mut()
                            .replace_fd(fd as u32, mf, flags, nofile)
                            .map(|fd| fd as i32))
                    });
                } else {
                    // SAFETY: NULL file.
                    let r =
                        unsafe { fdt_install_at(self.c_handle(h), fd, std::ptr::null_mut(), 0) };
                    assert_eq!(r, -libc::EINVAL);
                }
            }
            32 => {
                let h = self.pick_handle(b);
                let n = usize::from(b.u8() % 6);
                let mut c: Vec<fdt_pollfd> = (0..n)
                    .map(|_| fdt_pollfd {
                        fd: b.fd(),
                        events: (b.u8() as c_short) | ((b.u8() as c_short) << 8),
                        revents: 0x5a5a,
                    })
                    .collect();
                let null = n > 0 && b.u8().is_multiple_of(8);
                let p = if null {
                    std::ptr::null_mut()
                } else {
                    c.as_mut_ptr()
                };
                // SAFETY: a live handle or NULL; `p` is NULL or valid for `n` entries.
                let r = unsafe { fdt_poll(self.c_handle(h), p, n) };
                match h {
                    Some(i) => {
                        let t = &self.m[i];
                        let mut m: Vec<PollFd> = c
                            .iter()
                            .map(|e| PollFd {
                                fd: e.fd,
                                events: e.events as u16,
                                revents: 0,
                            })
                            .collect();
                        let want = if null {
                            if n as u64 > t.nofile() {
                                -libc::EINVAL
                            } else {
                                -libc::EFAULT
                            }
                        } else {
                            int(t.poll(&mut m).map(|n| n as i32))
                        };
                        assert_eq!(r, want, "poll");
                        if r >= 0 {
                            let got: Vec<u16> = c.iter().map(|e| e.revents as u16).collect();
                            let want: Vec<u16> = m.iter().map(|e| e.revents).collect();
                            assert_eq!(got, want, "revents");
                        }
                    }
                    None => assert_eq!(r, -libc::EINVAL),
                }
                check_errno(r.into(), "poll");
            }
            33 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let null = b.u8().is_multiple_of(8);
                let mut st = fdt_stat {
                    mode: 0xdead,
                    ..fdt_stat::default()
                };
                let p = if null {
                    std::ptr::null_mut()
                } else {
                    &raw mut st
                };
                // SAFETY: a live handle or NULL; `p` is NULL or a local.
                let r = unsafe { fdt_fstat(self.c_handle(h), fd, p) };
                self.expect(h, r, |t| match t.fstat(fd) {
                    Err(e) => e.neg(),
                    Ok(_) if null => -libc::EFAULT,
                    Ok(k) => {
                        assert_eq!(st, fdt_stat::from(k), "fstat({fd})");
                        0
                    }
                });
                if r != 0 {
                    assert_eq!(st.mode, 0xdead, "written only on success");
                }
            }
            34 => {
                let kind = u16::from(b.u8()) | (u16::from(b.u8() % 4) << 8);
                if let Some(r) = self.pick_ref(b) {
                    let f = self.c_refs[r];
                    // SAFETY: a reference we hold.
                    let (mine, other) = unsafe {
                        let p = c_probe(f);
                        (
                            fdt_file_has_ops(f, static_ops(p.kind)),
                            fdt_file_has_ops(f, static_ops(kind)),
                        )
                    };
                    // SAFETY: as above.
                    let pk = unsafe { c_probe(f) }.kind;
                    assert_eq!(mine, 1);
                    assert_eq!(other, c_int::from(kind == pk));
                    // SAFETY: NULL ops / NULL file.
                    unsafe {
                        assert_eq!(fdt_file_has_ops(f, std::ptr::null()), -libc::EINVAL);
                        assert_eq!(
                            fdt_file_has_ops(std::ptr::null(), static_ops(pk)),
                            -libc::EINVAL
                        );
                    }
                }
            }
            36 => {
                let h = self.pick_handle(b);
                let (a, z) = (b.fd(), b.fd());
                let onto = b.u8() % 2 == 1;
                let ch = self.c_handle(h);
                // SAFETY: a live handle or NULL.
                let r = unsafe {
                    if onto {
                        fdt_renumber_onto(ch, a, z)
                    } else {
                        fdt_renumber(ch, a, z)
                    }
                };
                self.expect_mut(h, r, |t| {
                    let nofile = t.nofile();
                    let f = t.files_mut();
                    int(if onto {
                        f.renumber_onto(a as u32, z as u32, nofile)
                    } else {
                        f.renumber(a as u32, z as u32, nofile)
                    }
                    .map(|fd| fd as i32))
                });
            }
            37 => self.payload(b),
            38..=40 => self.install_with(b, op),
            41 => {
                let h = self.pick_handle(b);
                let fd = b.fd();
                let mut f = fdt_fd {
                    file: std::ptr::dangling_mut(),
                    flags: 7,
                };
                let mut p = 0xdead_u64;
                // SAFETY: a live handle or NULL; `f` and `p` are locals.
                let r = unsafe { fdt_fdget_with_payload(self.c_handle(h), fd, &mut f, &mut p) };
                check_errno(r.into(), "fdget_with_payload");
                let file = fdt_fd_file(f);
                // SAFETY: a light lookup's file is live until `fdt_fdput`.
                let c = (!file.is_null()).then(|| (unsafe { c_probe(file) }.id, p));
                match h {
                    Some(i) => {
                        let t = &self.m[i];
                        let m = t
                            .files()
                            .fdget_with_payload(fd as u32)
                            .filter(|(f, _)| f.f_mode() & FMODE_PATH == 0);
                        assert_eq!(
                            c,
                            m.as_ref().map(|(f, p)| (m_id(f), *p)),
                            "fdget_with_payload({fd})"
                        );
                        if let Some((m, _)) = &m {
                            assert_eq!(f.flags == FDT_FDPUT_FPUT, m.needs_put(), "owned");
                        } else {
                            assert_eq!((r, p, f.flags), (-libc::EBADF, 0, 0));
                        }
                    }
                    None => assert_eq!((r, p, f.flags), (-libc::EINVAL, 0, 0)),
                }
                // SAFETY: the unchanged result, put once.
                unsafe { fdt_fdput(f) };
            }
            42 => {
                let h = self.pick_handle(b);
                let flags = b.fd_flags();
                let full = self.c_res.len() >= MAX_RESERVATIONS;
                let mut out = std::ptr::dangling_mut();
                let ch = self.c_handle(h);
                // SAFETY: a live handle or NULL; `out` is a local, or NULL when no more
                // reservations may be kept (then the call must refuse).
                let r = unsafe {
                    if full {
                        fdt_reserve_owned(ch, flags, std::ptr::null_mut())
                    } else {
                        fdt_reserve_owned(ch, flags, &mut out)
                    }
                };
                check_errno(r.into(), "reserve_owned");
                match h {
                    Some(_) if full => assert_eq!(r, -libc::EINVAL),
                    Some(i) => {
                        let t = &mut self.m[i];
                        let nofile = t.nofile();
                        let m = t.files_mut().reserve_owned(flags & O_CLOEXEC, nofile);
                        assert_eq!(r, int(m.as_ref().map(|m| m.fd() as i32).map_err(|e| *e)));
                        assert_eq!(r >= 0, !out.is_null(), "NULL exactly on failure");
                        if let Ok(m) = m {
                            // SAFETY: the reservation just made.
                            assert_eq!(unsafe { fdt_reservation_fd(out) }, r);
                            self.c_res.push(out);
                            self.m_res.push(m);
                        }
                    }
                    None => {
                        assert_eq!(r, -libc::EINVAL);
                        assert!(full || out.is_null());
                    }
                }
            }
            43 => self.end_reservation(b),
            44 => {
                // fdt_fdget_rcu (0.5): the lookup of fdt_fdget2, with an RCU section where
                // the file is lent (a probe with FDT_FILE_NEVER_BLOCKS, looked up often on a
                // shared table). The C lookup and the Rust one each count their lookups, so
                // they lend at the same call. The C one ends before the Rust one begins: a
                // lookup nested in another section takes the slow path, which may make a
                // handle left alone on its table light again, a change the other would miss.
                let h = self.pick_handle(b);
                let fd = b.fd();
                register_rcu_thread();
                let mut f = fdt_fd {
                    file: std::ptr::dangling_mut(),
                    flags: 7,
                };
                // SAFETY: a live handle or NULL; `f` is a local.
                let r = unsafe { fdt_fdget_rcu(self.c_handle(h), fd, &mut f) };
                let file = fdt_fd_file(f);
                // SAFETY: a lookup's file is live until `fdt_fdput`.
                let c_id = (!file.is_null()).then(|| unsafe { c_probe(file) }.id);
                let mut k = std::ptr::null_mut();
                // SAFETY: the result, not ended yet; `k` is a local.
                let kr = unsafe { fdt_fd_get_file(f, &mut k) };
                assert_eq!(kr, if r == 0 { 0 } else { -libc::EBADF }, "keep");
                let flags = f.flags;
                // SAFETY: the unchanged result, put once, on this thread.
                unsafe { fdt_fdput(f) };
                if !k.is_null() {
                    // SAFETY: the reference taken above.
                    unsafe { fdt_file_put(k) };
                }
                match h {
                    Some(i) => {
                        let m = self.m[i].files().fdget_rcu(fd as u32);
                        let m = m.filter(|f| f.f_mode() & fdtable_vfs::uapi::FMODE_PATH == 0);
                        assert_eq!(c_id, m.as_ref().map(|f| m_id(f)), "fdget_rcu({fd})");
                        assert_eq!(r, if m.is_some() { 0 } else { -libc::EBADF });
                        // The kind of borrow: the Rust call's, split as the C one is.
                        let want = match m.map(|m| m.into_raw()) {
                            None | Some((_, RcuFdEnd::Light)) => 0,
                            Some((p, RcuFdEnd::Counted)) => {
                                // SAFETY: the reference the lookup took, given back once.
                                drop(unsafe { FileRef::from_raw(p) });
                                FDT_FDPUT_FPUT
                            }
                            Some((p, RcuFdEnd::Section)) => {
                                // SAFETY: inside the Rust lookup's section, on this thread.
                                let k = unsafe {
                                    fdtable::RcuFd::<fdtable_vfs::File>::upgrade_raw(
                                        p,
                                        RcuFdEnd::Section,
                                    )
                                };
                                assert!(k.is_some(), "a lent file still installed");
                                drop(k);
                                // SAFETY: the Rust lookup's section, ended once, here.
                                let ended = unsafe {
                                    fdtable::RcuFd::<fdtable_vfs::File>::end_raw_section()
                                };
                                assert!(ended);
                                FDT_FDPUT_RCU
                            }
                        };
                        assert_eq!(flags, want, "fdget_rcu flags");
                    }
                    None => {
                        assert_eq!(r, -libc::EINVAL);
                        assert!(file.is_null());
                    }
                }
            }
            35 => self.out_params(b),
            29 => {
                if let Some(r) = self.pick_ref(b) {
                    // SAFETY: a reference we hold.
                    let (c, pd) = unsafe {
                        (
                            fdt_file_count(self.c_refs[r]),
                            fdt_file_private_data(self.c_refs[r]),
                        )
                    };
                    assert_eq!(c as usize, FileRef::count(&self.m_refs[r]));
                    // SAFETY: as above.
                    assert_eq!(unsafe { c_probe(self.c_refs[r]) }.id, m_id(&self.m_refs[r]));
                    assert!(!pd.is_null());
                }
            }
            _ => {}
        }
        true
    }

    fn read(&mut self, b: &mut Bytes<'_>, positional: bool) {
        let h = self.pick_handle(b);
        let fd = b.fd();
        let count = [0usize, 1, 4, 9, 64][usize::from(b.u8()) % 5];
        let null = b.u8().is_multiple_of(6);
        let off = i64::from(b.u8()) - 8;
        let (mut cbuf, mut mbuf) = (vec![0u8; count], vec![0u8; count]);
        let p = if null {
            std::ptr::null_mut()
        } else {
            cbuf.as_mut_ptr().cast()
        };
        // SAFETY: a live handle or NULL; `p` is NULL or valid for `count` bytes.
        let r = unsafe {
            if positional {
                fdt_pread(self.c_handle(h), fd, p, count, off)
            } else {
                fdt_read(self.c_handle(h), fd, p, count)
            }
        };
        check_errno(r as i64, "read");
        match h {
            Some(i) if !null || count == 0 => {
                let t = &self.m[i];
                let m = if positional {
                    t.pread64(fd, &mut mbuf, off)
                } else {
                    t.read(fd, &mut mbuf)
                };
                assert_eq!(r, size(m), "read");
                assert_eq!(cbuf, mbuf);
            }
            Some(_) => assert!(r < 0),
            None => assert_eq!(r, -(libc::EINVAL as isize)),
        }
    }

    fn write(&mut self, b: &mut Bytes<'_>, positional: bool) {
        let h = self.pick_handle(b);
        let fd = b.fd();
        let count = [0usize, 1, 4, 9, 64][usize::from(b.u8()) % 5];
        let null = b.u8().is_multiple_of(6);
        let off = i64::from(b.u8()) - 8;
        let buf = vec![7u8; count];
        let p = if null {
            std::ptr::null()
        } else {
            buf.as_ptr().cast()
        };
        // SAFETY: a live handle or NULL; `p` is NULL or valid for `count` bytes.
        let r = unsafe {
            if positional {
                fdt_pwrite(self.c_handle(h), fd, p, count, off)
            } else {
                fdt_write(self.c_handle(h), fd, p, count)
            }
        };
        check_errno(r as i64, "write");
        match h {
            Some(i) if !null || count == 0 => {
                let t = &self.m[i];
                let m = if positional {
                    t.pwrite64(fd, &buf, off)
                } else {
                    t.write(fd, &buf)
                };
                assert_eq!(r, size(m), "write");
            }
            Some(_) => assert!(r < 0),
            None => assert_eq!(r, -(libc::EINVAL as isize)),
        }
    }

    fn ioctl(&mut self, b: &mut Bytes<'_>, compat: bool) {
        const CMDS: [u32; 9] = [
            FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC, FIOQSIZE, FIGETBSZ, FIONREAD, PROBE_IOC, 0xdead,
        ];
        let h = self.pick_handle(b);
        let fd = b.fd();
        let cmd = CMDS[usize::from(b.u8()) % CMDS.len()];
        let v = i64::from(b.u8() % 3);
        let (mut cmem, mut mmem) = (v, v);
        let raw = b.u64() as c_ulong;
        // Pointer commands get NULL or a valid 8-byte cell (the ABI's contract for
        // `fdt_ioctl`; FIONREAD is one on a file whose getattr says regular, and the
        // sequences make such files); other commands any value. `fdt_compat_ioctl` takes
        // anything.
        let pointer = matches!(cmd, FIONBIO | FIOASYNC | FIOQSIZE | FIGETBSZ | FIONREAD);
        let use_null = b.u8().is_multiple_of(4);
        let (carg, marg) = if compat || !pointer {
            (raw, raw)
        } else if use_null {
            (0, 0)
        } else {
            (&raw mut cmem as c_ulong, &raw mut mmem as c_ulong)
        };
        // SAFETY: a live handle or NULL; pointer arguments as above.
        let r = unsafe {
            if compat {
                fdt_compat_ioctl(self.c_handle(h), fd, cmd, carg)
            } else {
                fdt_ioctl(self.c_handle(h), fd, cmd, carg)
            }
        };
        match h {
            Some(i) => {
                let t = &self.m[i];
                let m = if compat {
                    t.compat_ioctl(fd, cmd, marg as u32, &mut NoMemory)
                } else {
                    // SAFETY: the same contract as the C side's.
                    let mut mem = unsafe { HostMemory::new() };
                    t.ioctl(fd, cmd, marg as usize, &mut mem)
                };
                assert_eq!(
                    r as i64,
                    m.unwrap_or_else(|e| i64::from(e.neg())),
                    "ioctl {cmd:#x}"
                );
                assert_eq!(cmem, mmem);
            }
            None => assert_eq!(r, -(libc::EINVAL as std::ffi::c_long)),
        }
    }

    /// Whether `fd` is the number of a live owned reservation (on any table).
    fn owned_reserved(&self, fd: c_int) -> bool {
        self.m_res.iter().any(|r| r.fd() as c_int == fd)
    }

    /// `fdt_fd_payload`, `fdt_set_fd_payload`, `fdt_cmpxchg_fd_payload`, NULL arguments
    /// included.
    fn payload(&mut self, b: &mut Bytes<'_>) {
        let h = self.pick_handle(b);
        let ch = self.c_handle(h);
        let fd = b.fd();
        let v = b.payload();
        match b.u8() % 4 {
            0 => {
                let null = b.u8().is_multiple_of(8);
                let mut p = 0xdead_u64;
                let out = if null {
                    std::ptr::null_mut()
                } else {
                    &raw mut p
                };
                // SAFETY: a live handle or NULL; `out` is NULL or a local.
                let r = unsafe { fdt_fd_payload(ch, fd, out) };
                self.expect(h, r, |t| match t.files().fd_payload(fd as u32) {
                    _ if null => -libc::EINVAL,
                    Ok(m) => {
                        assert_eq!(p, m, "fd_payload({fd})");
                        0
                    }
                    Err(e) => e.neg(),
                });
                if r != 0 && !null {
                    assert_eq!(p, 0, "0 on failure");
                }
            }
            1 => {
                // SAFETY: a live handle or NULL.
                let r = unsafe { fdt_set_fd_payload(ch, fd, v) };
                self.expect(h, r, |t| neg(t.files().set_fd_payload(fd as u32, v)));
            }
            _ => {
                let null = b.u8().is_multiple_of(8);
                let mut expected = b.payload();
                let before = expected;
                let p = if null {
                    std::ptr::null_mut()
                } else {
                    &raw mut expected
                };
                // SAFETY: a live handle or NULL; `p` is NULL or a local.
                let r = unsafe { fdt_cmpxchg_fd_payload(ch, fd, p, v) };
                self.expect(h, r, |t| {
                    if null {
                        return -libc::EINVAL;
                    }
                    match t.files().cmpxchg_fd_payload(fd as u32, before, v) {
                        Ok(Ok(())) => {
                            assert_eq!(expected, before);
                            1
                        }
                        Ok(Err(actual)) => {
                            assert_eq!(expected, actual, "cmpxchg reports the payload found");
                            0
                        }
                        Err(e) => {
                            assert_eq!(expected, before, "unchanged on failure");
                            e.neg()
                        }
                    }
                });
            }
        }
    }

    /// `fdt_install_with` (38), `fdt_install_at_with` (39), `fdt_fd_install_with` (40).
    fn install_with(&mut self, b: &mut Bytes<'_>, op: u8) {
        let h = self.pick_handle(b);
        let ch = self.c_handle(h);
        let fd = b.fd();
        let flags = b.fd_flags();
        let v = b.payload();
        let Some(r) = self.pick_ref(b) else {
            // SAFETY: NULL file, refused before anything else.
            let r = unsafe {
                match op {
                    38 => fdt_install_with(ch, std::ptr::null_mut(), flags, v),
                    39 => fdt_install_at_with(ch, fd, std::ptr::null_mut(), flags, v),
                    _ => fdt_fd_install_with(ch, fd, std::ptr::null_mut(), v),
                }
            };
            assert_eq!(r, -libc::EINVAL);
            return;
        };
        if op == 40 && self.owned_reserved(fd) {
            return;
        }
        let (cf, mf) = (self.c_refs.swap_remove(r), self.m_refs.swap_remove(r));
        // SAFETY: a live handle or NULL; a reference we hand over.
        let res = unsafe {
            match op {
                38 => fdt_install_with(ch, cf, flags, v),
                39 => fdt_install_at_with(ch, fd, cf, flags, v),
                _ => fdt_fd_install_with(ch, fd, cf, v),
            }
        };
        self.expect_mut(h, res, |t| {
            let nofile = t.nofile();
            match op {
                38 => int(t
                    .files()
                    .install_with(mf, flags & O_CLOEXEC, v, nofile)
                    .map(|fd| fd as i32)),
                39 if flags & !O_CLOEXEC != 0 => -libc::EINVAL,
                39 => int(t
                    .files_mut()
                    .replace_fd_with(fd as u32, mf, flags, v, nofile)
                    .map(|fd| fd as i32)),
                _ => neg(t.files().fd_install_with(fd as u32, mf, v)),
            }
        });
        if res >= 0
            && let Some(i) = h
        {
            let at = if op == 38 { res } else { fd };
            assert_eq!(self.m[i].files().fd_payload(at as u32), Ok(v));
        }
    }

    /// Ends an owned reservation: install, install with a payload, or release; with NULL
    /// arguments too (a NULL file gives the reservation back).
    fn end_reservation(&mut self, b: &mut Bytes<'_>) {
        let how = b.u8() % 5;
        let v = b.payload();
        if self.c_res.is_empty() || how == 4 {
            // SAFETY: NULL reservations: refused (a file given with one is put).
            unsafe {
                fdt_reservation_release(std::ptr::null_mut());
                assert_eq!(fdt_reservation_fd(std::ptr::null()), -libc::EINVAL);
                if let Some(r) = self.pick_ref(b) {
                    let cf = self.c_refs.swap_remove(r);
                    drop(self.m_refs.swap_remove(r));
                    assert_eq!(
                        fdt_reservation_install(std::ptr::null_mut(), cf),
                        -libc::EINVAL
                    );
                }
            }
            return;
        }
        let i = usize::from(b.u8()) % self.c_res.len();
        let (cr, mr) = (self.c_res.swap_remove(i), self.m_res.swap_remove(i));
        let fd = mr.fd() as c_int;
        match (how, self.pick_ref(b)) {
            (_, None) | (0, _) => {
                // SAFETY: a live reservation, ended once.
                unsafe { fdt_reservation_release(cr) };
                mr.release();
            }
            (3, Some(_)) => {
                // SAFETY: a live reservation, ended once; NULL file.
                let r = unsafe { fdt_reservation_install_with(cr, std::ptr::null_mut(), v) };
                assert_eq!(r, -libc::EINVAL);
                mr.release();
            }
            (_, Some(r)) => {
                let (cf, mf) = (self.c_refs.swap_remove(r), self.m_refs.swap_remove(r));
                // SAFETY: a live reservation, ended once; a reference we hand over.
                let got = unsafe {
                    if how == 1 {
                        fdt_reservation_install(cr, cf)
                    } else {
                        fdt_reservation_install_with(cr, cf, v)
                    }
                };
                let want = if how == 1 {
                    mr.install(mf)
                } else {
                    mr.install_with(mf, v)
                };
                assert_eq!((got, want as c_int), (fd, fd));
            }
        }
    }

    /// The `...2` forms' argument checks, which change nothing: NULL out-parameters, and
    /// `ops_size` values `fdt_file_new2` must refuse without making a file.
    fn out_params(&mut self, b: &mut Bytes<'_>) {
        let h = self.pick_handle(b);
        let ch = self.c_handle(h);
        let fd = b.fd();
        // SAFETY: a live handle or NULL; NULL out-parameters are refused before any use.
        unsafe {
            assert_eq!(fdt_files_fork2(ch, std::ptr::null_mut()), -libc::EINVAL);
            assert_eq!(fdt_files_share2(ch, std::ptr::null_mut()), -libc::EINVAL);
            assert_eq!(fdt_fget2(ch, fd, std::ptr::null_mut()), -libc::EINVAL);
            assert_eq!(fdt_fdget2(ch, fd, std::ptr::null_mut()), -libc::EINVAL);
        }
        let known = size_of::<fdt_file_ops>();
        let ver0 = std::mem::offset_of!(fdt_file_ops, poll);
        let mut big = vec![0u8; 4200];
        let size = match b.u8() % 5 {
            0 => ver0 - 1,
            1 => ver0 + 1,
            2 => 4097,
            _ => {
                big[known + usize::from(b.u8() % 64)] = 1;
                known + 64
            }
        };
        // The probe is never made into a file: nothing may call `release`.
        let p = Probe::new(usize::MAX, 0);
        let mut f = std::ptr::dangling_mut();
        // SAFETY: `big` is valid for `size` bytes; its callbacks are all NULL.
        let r = unsafe {
            fdt_file_new2(
                big.as_ptr().cast(),
                size,
                Arc::as_ptr(&p).cast_mut().cast(),
                O_RDWR,
                &mut f,
            )
        };
        assert!(f.is_null());
        assert!(r == -libc::EINVAL || r == -libc::E2BIG, "file_new2: {r}");
        assert_eq!(p.releases(), 0);
    }

    fn expect(&self, h: Option<usize>, r: c_int, m: impl FnOnce(&MTask) -> c_int) {
        check_errno(r.into(), "call");
        match h {
            Some(i) => assert_eq!(r, m(&self.m[i])),
            None => assert_eq!(r, -libc::EINVAL),
        }
    }

    fn expect_mut(&mut self, h: Option<usize>, r: c_int, m: impl FnOnce(&mut MTask) -> c_int) {
        check_errno(r.into(), "call");
        match h {
            Some(i) => assert_eq!(r, m(&mut self.m[i])),
            None => assert_eq!(r, -libc::EINVAL),
        }
    }

    /// Puts everything and checks every file was released exactly once on both sides.
    pub fn finish(mut self) {
        for c in self.c_res.drain(..) {
            // SAFETY: live reservations, each ended once.
            unsafe { fdt_reservation_release(c) };
        }
        self.m_res.clear();
        for c in self.c.drain(..) {
            // SAFETY: live handles, each put once.
            unsafe { fdt_files_put(c) };
        }
        self.m.clear();
        for c in self.c_refs.drain(..) {
            // SAFETY: references we hold, each put once.
            unsafe { fdt_file_put(c) };
        }
        self.m_refs.clear();
        for (pc, pm) in &self.probes {
            assert_eq!(pc.releases(), 1, "C file {} releases", pc.id);
            assert_eq!(pm.releases(), 1, "mirror file {} releases", pm.id);
            assert_eq!(pc.flushes(), pm.flushes(), "file {} flushes", pc.id);
            // Only the test's own `Arc` is left: the library dropped its `private_data`.
            assert_eq!(Arc::strong_count(pc), 1, "C file {} leaked", pc.id);
        }
    }
}

fn neg(r: Result<(), fdtable::Errno>) -> c_int {
    r.map_or_else(|e| e.neg(), |()| 0)
}

fn int(r: Result<i32, fdtable::Errno>) -> c_int {
    r.unwrap_or_else(|e| e.neg())
}

fn size(r: Result<usize, fdtable::Errno>) -> isize {
    r.map_or_else(|e| e.neg() as isize, |n| n as isize)
}

/// Runs the calls `data` decodes to, then checks the end state.
pub fn run(data: &[u8]) -> usize {
    let mut w = World::new();
    w.new_handle();
    let mut b = Bytes { data, at: 0 };
    while w.calls < MAX_OPS && w.step(&mut b) {}
    let calls = w.calls;
    w.finish();
    calls
}

/// Gives this thread its RCU record (with one borrow on a table of its own), so that the
/// `fdget_rcu` calls the sequences compare both take the fast path: a thread's first borrow
/// takes the slow one, which also makes a handle left alone on its table light again, a
/// change only the first of the two calls would make.
fn register_rcu_thread() {
    struct Dummy;
    impl fdtable::FileLike for Dummy {}
    std::thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if DONE.with(|d| d.replace(true)) {
        return;
    }
    let mut files: Files<Dummy> = Files::new();
    let fd = files
        .install(FileRef::new(Dummy), 0, 16)
        .expect("a free fd");
    let other = files.share();
    drop(files.fdget_rcu(fd));
    drop(other);
}

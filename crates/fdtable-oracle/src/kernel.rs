//! The kernel executor: runs a [`Program`] through real system calls in fresh child
//! processes. This is the crate's only module with `unsafe` code.
//!
//! # How a run goes
//!
//! 1. The test process (multi-threaded) writes the program, the probe's path and the FIFO
//!    directory into a SysV shared memory segment, which is inherited by `fork` and can be
//!    re-attached by id after `execve` (an anonymous `MAP_SHARED` mapping cannot).
//! 2. It forks the *setup* process S, which closes every fd (`close_range(0, ~0U, 0)`), makes
//!    fds 0, 1, 2 eventfds (identities 1, 2, 3), sets `RLIMIT_NOFILE` to the program's soft
//!    limit and [`HARD_NOFILE`], and forks the *root* process E, whose table is therefore a
//!    fresh `dup_fd` copy of 64 slots holding only fds 0–2.
//! 3. E interprets the program ([`crate::interp`]); `Fork`/`Share` records run in children
//!    made with a raw `clone(SIGCHLD [| CLONE_FILES])`, which E waits for. Every result, the
//!    per-record window of fd states and every full snapshot go to shared memory.
//! 4. Meanwhile the test process *watches*: it answers requests that only an outsider can
//!    answer without touching the table under test — a table's size (`FDSize` in
//!    `/proc/<pid>/status`) and "is the reserving opener asleep in `wait_for_partner`?"
//!    (`/proc/<pid>/wchan`) — through a futex-based request/ack pair in shared memory.
//!
//! # Rules for children
//!
//! The test process is multi-threaded, so its children allocate nothing and take no locks:
//! every child-side function here uses raw system calls on integers, stack buffers and the
//! shared segment, and ends with `_exit`. A child never returns into the code it was forked
//! from. Because of that, every fd in a child belongs to the sequence under test (the
//! inherited ones are closed first), so closing or replacing fds there cannot break the I/O
//! safety of any Rust object that is still used.
//!
//! # exec
//!
//! An `Exec` record saves the interpreter's frame in shared memory, raises the soft limit to
//! the hard one (so the dynamic loader finds an fd), and `execve`s the
//! `fdtable-oracle-probe` binary with the segment id. The probe (built without Rust's
//! runtime start-up, which would reopen closed fds 0–2) restores the soft limit, reports the
//! table, and runs the rest of the process's records.
//!
//! The dynamic loader of the probe opens (and closes) its libraries at the lowest free fd.
//! That is invisible except when the table has no free slot, where it grows the table; the
//! library executor does the same transient allocation after `Files::exec` so that table
//! sizes stay comparable (see `crate::library`).
//!
//! # Requirements
//!
//! Linux 6.10 or later (`F_DUPFD_QUERY`), permission to set the hard `RLIMIT_NOFILE` to
//! [`HARD_NOFILE`] (root, `CAP_SYS_RESOURCE`, or a hard limit already that high, which is then
//! lowered), SysV shared memory, and a readable `/proc/<pid>/wchan` (or `/proc/<pid>/syscall`)
//! for the reservation scenarios.

#![allow(unsafe_code)]

use crate::interp::{self, CHILD_FAILED, NOT_RUN, Prog, RESV_NOBLOCK, Sys, TAG_ROOT_EXIT};
use crate::outcome::{Outcome, Snapshot};
use crate::program::{
    FRAME_WORDS, Frame, HARD_NOFILE, ID_FIFO_R, ID_FIFO_W, ID_UNKNOWN, Program, REC_WORDS, Rec,
    STD_IDS, kind,
};
use libc::c_long;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

// ORDERING (whole module): the processes of a run take turns — a parent is blocked in
// `wait4` while its child runs, and the futex request/ack pair hands control between a child
// and the watcher — and both hand-overs go through the kernel (process exit and wait, futex
// wake and wait), which orders memory. Stores and loads of the segment are therefore Relaxed,
// except the request/ack sequence words, which are Release/Acquire so that the request's
// arguments and the answer travel with them without relying on that.

/// `fcntl(F_DUPFD_QUERY)` (Linux 6.10).
const F_DUPFD_QUERY: c_long = 1024 + 3;

// Header words of the shared segment.
const H_MAGIC: usize = 0;
const H_N: usize = 1;
const H_CAP: usize = 2;
const H_LOGCAP: usize = 3;
const H_LOGLEN: usize = 4;
const H_HI: usize = 5;
const H_ERROR: usize = 6;
const H_REQ_SEQ: usize = 7; // AtomicU32 only
const H_ACK_SEQ: usize = 8; // AtomicU32 only
const H_REQ_KIND: usize = 9;
const H_REQ_PID: usize = 10;
const H_ANSWER: usize = 11;
const H_RESV_PID: usize = 12;
const H_RESV_RESULT: usize = 13;
const H_EXEC_AT: usize = 14;
const H_EXEC_END: usize = 15;
const H_EXEC_TAG: usize = 16;
const H_NOFILE: usize = 17;
const H_WORDS: usize = 18;
const H_FRAME: usize = 24;
const H_SHMID_STR: usize = H_FRAME + FRAME_WORDS + 4;
const H_PROBE_PATH: usize = 64;
const PATH_WORDS: usize = 512;
const H_FIFO_DIR: usize = H_PROBE_PATH + PATH_WORDS;
const HDR: usize = H_FIFO_DIR + PATH_WORDS;

const MAGIC: u64 = 0x6664_7461_626c_6531;
const SNAP_MAGIC: u64 = 0x736e_6170;

// Requests to the watcher.
const REQ_FDSIZE: u64 = 1;
const REQ_WAIT_RESERVED: u64 = 2;
const REQ_DONE: u64 = 3;

// Setup and child failure codes (in H_ERROR and exit statuses).
const ERR_STD_FDS: u64 = 1;
const ERR_RLIMIT: u64 = 2;
const ERR_LOG_FULL: u64 = 3;
const ERR_BAD_INDEX: u64 = 4;
const ERR_PANIC: u64 = 5;
const ERR_PROBE_ATTACH: u64 = 6;
const ERR_CLONE: u64 = 7;

/// Offsets of the arrays after the header, for `cap` records.
#[derive(Clone, Copy, Debug)]
struct Layout {
    recs: usize,
    results: usize,
    args: usize,
    windows: usize,
    log: usize,
    log_cap: usize,
    words: usize,
}

impl Layout {
    fn new(cap: usize, log_cap: usize) -> Layout {
        let recs = HDR;
        let results = recs + REC_WORDS * cap;
        let args = results + 2 * cap;
        let windows = args + 2 * cap;
        let log = windows + 4 * cap;
        Layout {
            recs,
            results,
            args,
            windows,
            log,
            log_cap,
            words: log + log_cap,
        }
    }
}

/// An attached shared segment: `words` 64-bit words at `base`.
///
/// # Invariants
///
/// `base` points to a live attachment of at least `words` words, 8-byte aligned, for as long
/// as the process that holds this value keeps it attached (the test process until
/// [`KernelExecutor`] is dropped; a child or the probe until it exits).
#[derive(Clone, Copy)]
struct Shm {
    base: *mut u64,
    words: usize,
    layout: Layout,
}

impl Shm {
    /// Word `i` as an atomic; exits (child) or panics (test process) out of bounds.
    fn at(&self, i: usize) -> &AtomicU64 {
        if i >= self.words {
            die(ERR_BAD_INDEX);
        }
        // SAFETY: `i < words`, so in bounds of the attachment (type invariant), aligned, and
        // only ever accessed atomically by every process that maps it.
        unsafe { AtomicU64::from_ptr(self.base.add(i)) }
    }

    /// The low half of header word `i`, as the 32-bit atomic a futex needs. The words used
    /// this way are never accessed as 64-bit words.
    fn at32(&self, i: usize) -> &AtomicU32 {
        assert!(i < HDR);
        // SAFETY: in bounds (the header is part of every attachment); a u64 slot is aligned
        // for a u32; only ever accessed through this function, atomically.
        unsafe { AtomicU32::from_ptr(self.base.add(i).cast::<u32>()) }
    }

    fn get(&self, i: usize) -> u64 {
        // ORDERING: Relaxed; every handoff of a word between processes is ordered by
        // something else: fork/clone or execve (writes before it), wait4/waitid on the
        // writer's exit, or the Release/Acquire futex words of `KernelSys::request`/`watch`.
        self.at(i).load(Ordering::Relaxed)
    }

    fn set(&self, i: usize, v: u64) {
        // ORDERING: Relaxed; see `get`: the reader is ordered after us by fork/clone or
        // execve, by wait4/waitid on our exit, or by the futex sequence words.
        self.at(i).store(v, Ordering::Relaxed)
    }

    /// The address of header word `i`, for a NUL-terminated string stored there.
    fn cstr_ptr(&self, i: usize) -> *const libc::c_char {
        assert!(i + PATH_WORDS <= HDR);
        self.base.wrapping_add(i).cast()
    }

    fn put_bytes(&self, at: usize, bytes: &[u8]) {
        let mut buf = bytes.to_vec();
        buf.push(0);
        assert!(buf.len() <= PATH_WORDS * 8, "path too long");
        for (k, chunk) in buf.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.set(at + k, u64::from_le_bytes(w));
        }
    }

    fn rec(&self, i: usize) -> Rec {
        if i >= self.get(H_N) as usize {
            die(ERR_BAD_INDEX);
        }
        let base = self.layout.recs + i * REC_WORDS;
        let mut w = [0u64; REC_WORDS];
        for (k, v) in w.iter_mut().enumerate() {
            *v = self.get(base + k);
        }
        Rec::from_words(w)
    }
}

impl Prog for Shm {
    fn rec(&self, i: usize) -> Rec {
        Shm::rec(self, i)
    }
}

// === raw system calls (child-safe: no allocation, no locks) ===

fn errno() -> i64 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0) as i64
}

/// System calls whose arguments are integers only and whose effects are limited to the
/// calling process's fd table, its files, its rlimits, its children or signals to its own
/// children: they cannot break memory safety.
#[derive(Clone, Copy)]
enum IntCall {
    Close,
    Dup,
    Dup2,
    Dup3,
    /// Integer commands only (F_DUPFD*, F_GETFD, F_SETFD, F_DUPFD_QUERY, F_SETFL).
    Fcntl,
    CloseRange,
    Unshare,
    Eventfd2,
    Getpid,
    Kill,
    Setpgid,
    /// `PR_SET_PDEATHSIG` only.
    Prctl,
}

fn int_call(call: IntCall, a: u64, b: u64, c: u64) -> i64 {
    let nr = match call {
        IntCall::Close => libc::SYS_close,
        IntCall::Dup => libc::SYS_dup,
        IntCall::Dup2 => libc::SYS_dup2,
        IntCall::Dup3 => libc::SYS_dup3,
        IntCall::Fcntl => libc::SYS_fcntl,
        IntCall::CloseRange => libc::SYS_close_range,
        IntCall::Unshare => libc::SYS_unshare,
        IntCall::Eventfd2 => libc::SYS_eventfd2,
        IntCall::Getpid => libc::SYS_getpid,
        IntCall::Kill => libc::SYS_kill,
        IntCall::Setpgid => libc::SYS_setpgid,
        IntCall::Prctl => libc::SYS_prctl,
    };
    // SAFETY: every call in `IntCall` takes integers only and touches no memory of the
    // caller (see the enum); the fd-closing ones run only in executor children, whose fds
    // all belong to the sequence under test (module docs).
    let r = unsafe { libc::syscall(nr, a as c_long, b as c_long, c as c_long, 0 as c_long) };
    if r == -1 { -errno() } else { r as i64 }
}

fn set_nofile_raw(soft: u64) -> i64 {
    let lim = libc::rlimit64 {
        rlim_cur: soft,
        rlim_max: HARD_NOFILE,
    };
    // SAFETY: `lim` is a valid rlimit64 for the duration of the call; the old-limit pointer
    // is null.
    let r = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0 as c_long,
            libc::RLIMIT_NOFILE as c_long,
            &lim as *const libc::rlimit64,
            std::ptr::null_mut::<libc::rlimit64>(),
        )
    };
    if r == -1 { -errno() } else { 0 }
}

/// `clone(flags)` without a new stack or `CLONE_VM`: like `fork`, the child runs on a copy
/// of the caller's memory. Returns 0 in the child.
fn clone_raw(flags: u64) -> i64 {
    // SAFETY: without CLONE_VM the child gets a private copy of the address space and
    // continues on its copy of this stack, exactly as after fork(2). Both processes only
    // use raw system calls afterwards (module docs), so no libc state is relied upon.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags as c_long,
            0 as c_long,
            0 as c_long,
            0 as c_long,
            0 as c_long,
        )
    };
    if r == -1 { -errno() } else { r as i64 }
}

/// `wait4(pid)`, retried on EINTR: the raw wait status, or `-errno`.
fn wait_raw(pid: i64) -> i64 {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid out-pointer for the call; rusage is null.
        let r = unsafe {
            libc::syscall(
                libc::SYS_wait4,
                pid as c_long,
                &mut status as *mut libc::c_int,
                0 as c_long,
                std::ptr::null_mut::<libc::rusage>(),
            )
        };
        if r == -1 {
            let e = errno();
            if e == libc::EINTR as i64 {
                continue;
            }
            return -e;
        }
        return status as i64;
    }
}

fn exit_raw(code: u64) -> ! {
    // SAFETY: `_exit` ends the process without running anything of this process's state.
    unsafe { libc::_exit(code as libc::c_int) }
}

/// Ends a child with a failure code. In the test process (no child context), panics.
fn die(code: u64) -> ! {
    // ORDERING: Relaxed; pairs with nothing: only a child sets it, before its own reads
    // (program order) and before forking its children; the test process never does.
    if IN_CHILD.load(Ordering::Relaxed) {
        exit_raw(100 + code)
    }
    panic!("fdtable-oracle: shared segment misuse (code {code})")
}

/// Set in executor children (inherited by their children; the probe sets it too).
static IN_CHILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn openat_raw(path: *const libc::c_char, flags: i32) -> i64 {
    // SAFETY: `path` points to a NUL-terminated string that lives for the call (a stack
    // buffer of the caller).
    let r = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD as c_long,
            path,
            flags as c_long,
            0 as c_long,
        )
    };
    if r == -1 { -errno() } else { r as i64 }
}

fn futex_wait(word: &AtomicU32, val: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned u32 in shared memory; `ts` lives for the call.
    // FUTEX_WAIT (not private) because the word is shared between processes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT as c_long,
            val as c_long,
            &ts as *const libc::timespec,
        )
    };
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned u32 in shared memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE as c_long,
            i32::MAX as c_long,
        )
    };
}

/// Reads an eventfd's counter and writes it back: the file's identity. Other files get a
/// class: FIFO read end (EOF or EAGAIN), FIFO write end (EBADF on read), unknown.
fn identify(fd: u32) -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: `buf` is valid for 8 bytes of writes.
    let r = unsafe { libc::syscall(libc::SYS_read, fd as c_long, buf.as_mut_ptr(), 8 as c_long) };
    let r = if r == -1 { -errno() } else { r as i64 };
    if r == 8 {
        // SAFETY: `buf` is valid for 8 bytes of reads.
        unsafe { libc::syscall(libc::SYS_write, fd as c_long, buf.as_ptr(), 8 as c_long) };
        return u64::from_ne_bytes(buf);
    }
    if r == -(libc::EBADF as i64) {
        ID_FIFO_W
    } else if r == 0 || r == -(libc::EAGAIN as i64) {
        ID_FIFO_R
    } else {
        ID_UNKNOWN
    }
}

/// A NUL-terminated path on the stack: the FIFO directory from the segment, `/`, `rec`.
struct FifoPath {
    buf: [u8; PATH_WORDS * 8 + 32],
}

impl FifoPath {
    fn new(shm: &Shm, rec: usize) -> FifoPath {
        let mut buf = [0u8; PATH_WORDS * 8 + 32];
        let mut n = 0;
        'words: for k in 0..PATH_WORDS {
            for b in shm.get(H_FIFO_DIR + k).to_le_bytes() {
                if b == 0 {
                    break 'words;
                }
                buf[n] = b;
                n += 1;
            }
        }
        buf[n] = b'/';
        n += 1;
        let mut digits = [0u8; 20];
        let mut d = 0;
        let mut v = rec;
        loop {
            digits[d] = b'0' + (v % 10) as u8;
            d += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while d > 0 {
            d -= 1;
            buf[n] = digits[d];
            n += 1;
        }
        buf[n] = 0;
        FifoPath { buf }
    }

    fn ptr(&self) -> *const libc::c_char {
        self.buf.as_ptr().cast()
    }
}

// === the kernel as a `Sys` ===

#[derive(Clone, Copy)]
struct KernelSys {
    shm: Shm,
}

impl KernelSys {
    /// Posts a request to the watcher and waits for its answer.
    fn request(&self, kind: u64, pid: u64) -> u64 {
        let shm = &self.shm;
        shm.set(H_REQ_KIND, kind);
        shm.set(H_REQ_PID, pid);
        // ORDERING: Release; pairs with the watcher's Acquire load of the sequence word:
        // publishes the request's kind and pid.
        let seq = shm
            .at32(H_REQ_SEQ)
            .fetch_add(1, Ordering::Release)
            .wrapping_add(1);
        futex_wake(shm.at32(H_REQ_SEQ));
        if kind == REQ_DONE {
            return 0;
        }
        loop {
            // ORDERING: Acquire; pairs with the watcher's Release store of the ack: the
            // answer is visible.
            let a = shm.at32(H_ACK_SEQ).load(Ordering::Acquire);
            if a == seq {
                break;
            }
            futex_wait(shm.at32(H_ACK_SEQ), a, Duration::from_millis(100));
        }
        shm.get(H_ANSWER)
    }

    fn status_result(status: i64) -> i64 {
        if status < 0 {
            status
        } else if libc::WIFEXITED(status as i32) && libc::WEXITSTATUS(status as i32) == 0 {
            0
        } else {
            CHILD_FAILED + (status & 0xffff)
        }
    }
}

fn cloexec_flag(cloexec: bool) -> u64 {
    if cloexec { libc::O_CLOEXEC as u64 } else { 0 }
}

impl Sys for KernelSys {
    fn hi(&self) -> u64 {
        self.shm.get(H_HI)
    }
    fn set_hi(&mut self, hi: u64) {
        self.shm.set(H_HI, hi)
    }
    fn put_result(&mut self, i: usize, r: [i64; 2], args: [u64; 2]) {
        let l = self.shm.layout;
        self.shm.set(l.results + 2 * i, r[0] as u64);
        self.shm.set(l.results + 2 * i + 1, r[1] as u64);
        self.shm.set(l.args + 2 * i, args[0]);
        self.shm.set(l.args + 2 * i + 1, args[1]);
    }
    fn put_result1(&mut self, i: usize, r: i64, args: [u64; 2]) {
        let l = self.shm.layout;
        self.shm.set(l.results + 2 * i, r as u64);
        self.shm.set(l.args + 2 * i, args[0]);
        self.shm.set(l.args + 2 * i + 1, args[1]);
    }
    fn put_result2(&mut self, i: usize, r: i64) {
        let l = self.shm.layout;
        self.shm.set(l.results + 2 * i + 1, r as u64);
    }
    fn put_window(&mut self, i: usize, w: [u64; 4]) {
        let l = self.shm.layout;
        for (k, v) in w.iter().enumerate() {
            self.shm.set(l.windows + 4 * i + k, *v);
        }
    }
    fn snapshot(&mut self, pos: usize, tag: u64) {
        let shm = self.shm;
        let l = shm.layout;
        let start = shm.get(H_LOGLEN) as usize;
        let mut w = start;
        let mut push = |v: u64| {
            if w >= l.log_cap {
                shm.set(H_ERROR, ERR_LOG_FULL);
                return false;
            }
            shm.set(l.log + w, v);
            w += 1;
            true
        };
        if !(push(SNAP_MAGIC) && push(pos as u64) && push(tag) && push(0)) {
            return;
        }
        let mut count = 0;
        for fd in 0..self.hi() as u32 {
            let g = int_call(IntCall::Fcntl, fd as u64, libc::F_GETFD as u64, 0);
            if g < 0 {
                continue;
            }
            if !(push(fd as u64) && push(g as u64 & 1) && push(identify(fd))) {
                return;
            }
            count += 1;
        }
        shm.set(l.log + start + 3, count);
        shm.set(H_LOGLEN, w as u64);
    }

    fn open(&mut self, id: u64, cloexec: bool, _nofile: u64) -> i64 {
        let flags = libc::EFD_NONBLOCK as u64 | cloexec_flag(cloexec);
        int_call(IntCall::Eventfd2, id, flags, 0)
    }
    fn close(&mut self, fd: u32) -> i64 {
        int_call(IntCall::Close, fd as u64, 0, 0)
    }
    fn dup(&mut self, fd: u32, _nofile: u64) -> i64 {
        int_call(IntCall::Dup, fd as u64, 0, 0)
    }
    fn dup2(&mut self, old: u32, new: u32, _nofile: u64) -> i64 {
        int_call(IntCall::Dup2, old as u64, new as u64, 0)
    }
    fn dup3(&mut self, old: u32, new: u32, flags: u32, _nofile: u64) -> i64 {
        int_call(IntCall::Dup3, old as u64, new as u64, flags as u64)
    }
    fn dupfd(&mut self, fd: u32, from: u32, cloexec: bool, _nofile: u64) -> i64 {
        let cmd = if cloexec {
            libc::F_DUPFD_CLOEXEC
        } else {
            libc::F_DUPFD
        };
        int_call(IntCall::Fcntl, fd as u64, cmd as u64, from as u64)
    }
    fn getfd(&mut self, fd: u32) -> i64 {
        int_call(IntCall::Fcntl, fd as u64, libc::F_GETFD as u64, 0)
    }
    fn setfd(&mut self, fd: u32, arg: u32) -> i64 {
        int_call(IntCall::Fcntl, fd as u64, libc::F_SETFD as u64, arg as u64)
    }
    fn query(&mut self, fd: u32, other: u32) -> i64 {
        int_call(
            IntCall::Fcntl,
            fd as u64,
            F_DUPFD_QUERY as u64,
            other as u64,
        )
    }
    fn close_range(&mut self, first: u32, last: u32, flags: u32) -> i64 {
        int_call(IntCall::CloseRange, first as u64, last as u64, flags as u64)
    }
    fn replace_fd(&mut self, src: u32, fd: u32, cloexec: bool, nofile: u64) -> i64 {
        // fs/file.c `replace_fd`: `fd >= rlimit(RLIMIT_NOFILE)` is EBADF (dup2 skips that check
        // only for an fd onto itself, which `replace_fd` does not), then `do_dup2` under the
        // `expand_files` check, with the close-on-exec bit from the flags.
        // The file is looked up first (the caller's `fget(src)`), so a bad `src` changes
        // nothing (dup2 would grow the table before looking at its `oldfd`).
        let g = int_call(IntCall::Fcntl, src as u64, libc::F_GETFD as u64, 0);
        if g < 0 {
            return g;
        }
        if fd as u64 >= nofile {
            return -(libc::EBADF as i64);
        }
        let r = int_call(IntCall::Dup2, src as u64, fd as u64, 0);
        if r < 0 {
            return r;
        }
        let bit = if cloexec { libc::FD_CLOEXEC } else { 0 };
        let s = int_call(IntCall::Fcntl, fd as u64, libc::F_SETFD as u64, bit as u64);
        if s < 0 { s } else { r }
    }
    fn renumber(&mut self, from: u32, to: u32, _nofile: u64) -> i64 {
        // WASI's fd_renumber as dup2 + close.
        let r = int_call(IntCall::Dup2, from as u64, to as u64, 0);
        if r >= 0 && from != to {
            let c = int_call(IntCall::Close, from as u64, 0, 0);
            if c < 0 {
                return c;
            }
        }
        r
    }
    fn set_nofile(&mut self, soft: u64) -> i64 {
        set_nofile_raw(soft)
    }
    fn fd_size(&mut self) -> i64 {
        let pid = int_call(IntCall::Getpid, 0, 0, 0);
        let v = self.request(REQ_FDSIZE, pid as u64);
        if v == u64::MAX { -1 } else { v as i64 }
    }
    fn spawn(&mut self, share: bool, body: &mut dyn FnMut(&mut Self)) -> i64 {
        let flags = libc::SIGCHLD as u64 | if share { libc::CLONE_FILES as u64 } else { 0 };
        let pid = clone_raw(flags);
        if pid == 0 {
            int_call(
                IntCall::Prctl,
                libc::PR_SET_PDEATHSIG as u64,
                libc::SIGKILL as u64,
                0,
            );
            body(self);
            exit_raw(0);
        }
        if pid < 0 {
            return pid;
        }
        Self::status_result(wait_raw(pid))
    }
    fn unshare(&mut self) -> i64 {
        int_call(IntCall::Unshare, libc::CLONE_FILES as u64, 0, 0)
    }
    fn exec(&mut self, frame: &Frame, at: usize, end: usize, tag: u64) -> i64 {
        let shm = self.shm;
        for (k, v) in frame.to_words().iter().enumerate() {
            shm.set(H_FRAME + k, *v);
        }
        shm.set(H_EXEC_AT, at as u64);
        shm.set(H_EXEC_END, end as u64);
        shm.set(H_EXEC_TAG, tag);
        set_nofile_raw(HARD_NOFILE);
        let argv = [
            shm.cstr_ptr(H_PROBE_PATH),
            shm.cstr_ptr(H_SHMID_STR),
            std::ptr::null(),
        ];
        let envp: [*const libc::c_char; 1] = [std::ptr::null()];
        // SAFETY: `argv` and `envp` are NULL-terminated arrays of pointers to
        // NUL-terminated strings (in the segment, written before the fork) that live for
        // the call. On success the call does not return.
        unsafe { libc::syscall(libc::SYS_execve, argv[0], argv.as_ptr(), envp.as_ptr()) };
        let e = -errno();
        set_nofile_raw(frame.nofile);
        e
    }
    fn reserve_begin(&mut self, rec: usize, cloexec: bool, _nofile: u64) -> i64 {
        let shm = self.shm;
        let path = FifoPath::new(&shm, rec);
        shm.set(H_RESV_RESULT, NOT_RUN as u64);
        let pid = clone_raw(libc::SIGCHLD as u64 | libc::CLONE_FILES as u64);
        if pid == 0 {
            int_call(
                IntCall::Prctl,
                libc::PR_SET_PDEATHSIG as u64,
                libc::SIGKILL as u64,
                0,
            );
            let flags = libc::O_RDONLY | cloexec_flag(cloexec) as i32;
            let r = openat_raw(path.ptr(), flags);
            if r >= 0 {
                int_call(
                    IntCall::Fcntl,
                    r as u64,
                    libc::F_SETFL as u64,
                    libc::O_NONBLOCK as u64,
                );
            }
            shm.set(H_RESV_RESULT, r as u64);
            exit_raw(0);
        }
        if pid < 0 {
            return pid;
        }
        shm.set(H_RESV_PID, pid as u64);
        self.request(REQ_WAIT_RESERVED, pid as u64);
        let r = shm.get(H_RESV_RESULT) as i64;
        if r == NOT_RUN {
            return 0;
        }
        wait_raw(pid);
        shm.set(H_RESV_PID, 0);
        if r < 0 { r } else { RESV_NOBLOCK }
    }
    fn reserve_end(&mut self, rec: usize, cloexec: bool, _nofile: u64) -> [i64; 2] {
        let shm = self.shm;
        let path = FifoPath::new(&shm, rec);
        let flags = libc::O_WRONLY | libc::O_NONBLOCK | cloexec_flag(cloexec) as i32;
        let w = openat_raw(path.ptr(), flags);
        if w < 0 {
            return [w, NOT_RUN];
        }
        let pid = shm.get(H_RESV_PID) as i64;
        wait_raw(pid);
        shm.set(H_RESV_PID, 0);
        [w, shm.get(H_RESV_RESULT) as i64]
    }
    fn reserve_abort(&mut self, _rec: usize) -> i64 {
        let shm = self.shm;
        let pid = shm.get(H_RESV_PID) as i64;
        int_call(IntCall::Kill, pid as u64, libc::SIGKILL as u64, 0);
        wait_raw(pid);
        shm.set(H_RESV_PID, 0);
        0
    }
}

/// Runs `f` (child code) and exits; a panic exits with a failure code instead of unwinding
/// into the code the child was forked from.
fn child_entry(f: impl FnOnce() -> u64) -> ! {
    // ORDERING: Relaxed; pairs with nothing: only this process (program order) and its
    // later fork/clone children (ordered by the fork) read it.
    IN_CHILD.store(true, Ordering::Relaxed);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => exit_raw(code),
        Err(_) => exit_raw(100 + ERR_PANIC),
    }
}

/// The setup process S: a clean fd table with fds 0–2, the limits, then the root process.
fn setup_main(shm: Shm) -> u64 {
    int_call(
        IntCall::Prctl,
        libc::PR_SET_PDEATHSIG as u64,
        libc::SIGKILL as u64,
        0,
    );
    int_call(IntCall::Setpgid, 0, 0, 0);
    int_call(IntCall::CloseRange, 0, u32::MAX as u64, 0);
    for (fd, id) in STD_IDS.iter().enumerate() {
        if int_call(IntCall::Eventfd2, *id, libc::EFD_NONBLOCK as u64, 0) != fd as i64 {
            shm.set(H_ERROR, ERR_STD_FDS);
            return 100 + ERR_STD_FDS;
        }
    }
    let nofile = shm.get(H_NOFILE);
    if set_nofile_raw(nofile) != 0 {
        shm.set(H_ERROR, ERR_RLIMIT);
        return 100 + ERR_RLIMIT;
    }
    // A fresh copy: the root's table is sized for fds 0–2 only (S's may be as large as the
    // test process's was).
    let pid = clone_raw(libc::SIGCHLD as u64);
    if pid == 0 {
        int_call(
            IntCall::Prctl,
            libc::PR_SET_PDEATHSIG as u64,
            libc::SIGKILL as u64,
            0,
        );
        let mut sys = KernelSys { shm };
        let mut frame = Frame::root(nofile);
        let n = shm.get(H_N) as usize;
        interp::run_process(&mut sys, &shm, &mut frame, 0, n, TAG_ROOT_EXIT);
        sys.request(REQ_DONE, 0);
        return 0;
    }
    if pid < 0 {
        shm.set(H_ERROR, ERR_CLONE);
        return 100 + ERR_CLONE;
    }
    let status = wait_raw(pid);
    if status >= 0 && libc::WIFEXITED(status as i32) {
        libc::WEXITSTATUS(status as i32) as u64
    } else {
        99
    }
}

/// The probe binary's `main`: re-attach the segment named by the first argument, restore the
/// frame saved by the `Exec` record, report the table and run the rest of the process.
pub fn probe_main() -> ! {
    // ORDERING: Relaxed; see `child_entry`.
    IN_CHILD.store(true, Ordering::Relaxed);
    let shmid: Option<i32> = std::env::args_os()
        .nth(1)
        .and_then(|a| std::str::from_utf8(a.as_bytes()).ok()?.parse().ok());
    let Some(shmid) = shmid else {
        exit_raw(100 + ERR_PROBE_ATTACH)
    };
    // SAFETY: attaching a segment at an address of the kernel's choosing does not disturb
    // any existing mapping.
    let base = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
    if base as isize == -1 {
        exit_raw(100 + ERR_PROBE_ATTACH)
    }
    let base = base.cast::<u64>();
    // SAFETY: the segment starts with the header, written by the test process; H_MAGIC and
    // H_WORDS are within it. Read atomically like every other access.
    let (magic, words, cap, log_cap) = unsafe {
        // ORDERING: Relaxed; the test process wrote the header before forking S, and this
        // process descends from S through fork/clone and execve, which order it.
        let w = |i: usize| AtomicU64::from_ptr(base.add(i)).load(Ordering::Relaxed);
        (w(H_MAGIC), w(H_WORDS), w(H_CAP), w(H_LOGCAP))
    };
    let layout = Layout::new(cap as usize, log_cap as usize);
    if magic != MAGIC || layout.words != words as usize {
        exit_raw(100 + ERR_PROBE_ATTACH)
    }
    // INVARIANT: the attachment holds `words` words (the segment was created that large)
    // and stays attached until this process exits.
    let shm = Shm {
        base,
        words: words as usize,
        layout,
    };
    child_entry(|| {
        let mut w = [0u64; FRAME_WORDS];
        for (k, v) in w.iter_mut().enumerate() {
            *v = shm.get(H_FRAME + k);
        }
        let mut frame = Frame::from_words(w);
        set_nofile_raw(frame.nofile);
        let (at, end, tag) = (
            shm.get(H_EXEC_AT) as usize,
            shm.get(H_EXEC_END) as usize,
            shm.get(H_EXEC_TAG),
        );
        let mut sys = KernelSys { shm };
        interp::resume_after_exec(&mut sys, &shm, &mut frame, at, end, tag);
        if frame.root {
            sys.request(REQ_DONE, 0);
        }
        0
    })
}

// === the test process side ===

/// Why a kernel run produced no outcome to compare (a harness failure, not a divergence).
#[derive(Debug)]
pub struct HarnessError(pub String);

impl std::fmt::Display for HarnessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HarnessError {}

/// Runs programs against the live kernel. One run at a time; make one per thread.
pub struct KernelExecutor {
    shm: Shm,
    fifo_dir: PathBuf,
    fifos: std::collections::BTreeSet<usize>,
    /// Kill a run that takes longer than this (a hung child).
    pub watchdog: Duration,
}

static EXECUTORS: AtomicU64 = AtomicU64::new(0);

impl KernelExecutor {
    /// The largest program (in records) an executor takes.
    pub const MAX_RECORDS: usize = 16 * 1024;
    /// Snapshot log capacity in words (3 per fd per snapshot).
    pub const LOG_WORDS: usize = 1 << 21;

    /// An executor that re-executes `probe` (the `fdtable-oracle-probe` binary) for `Exec`.
    pub fn new(probe: &Path) -> Result<KernelExecutor, HarnessError> {
        let err = |what: &str| HarnessError(format!("{what}: {}", std::io::Error::last_os_error()));
        let layout = Layout::new(Self::MAX_RECORDS, Self::LOG_WORDS);
        let bytes = layout.words * 8;
        // SAFETY: plain system call with integer arguments.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, bytes, libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(err("shmget"));
        }
        // SAFETY: attaching at an address of the kernel's choosing disturbs no mapping.
        let base = unsafe { libc::shmat(id, std::ptr::null(), 0) };
        // SAFETY: marks the segment for removal once the last attachment goes; this
        // process and its children stay attached, and Linux lets the probe attach a
        // segment so marked.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        if base as isize == -1 {
            return Err(err("shmat"));
        }
        // INVARIANT: the segment is `bytes` long and stays attached until `drop`.
        let shm = Shm {
            base: base.cast(),
            words: layout.words,
            layout,
        };
        let probe = probe
            .canonicalize()
            .map_err(|e| HarnessError(format!("probe binary {}: {e}", probe.display())))?;
        // ORDERING: Relaxed (`EXECUTORS`); a unique counter, publishes nothing.
        let fifo_dir = std::env::temp_dir().join(format!(
            "fdtable-oracle-{}-{}",
            std::process::id(),
            EXECUTORS.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&fifo_dir)
            .map_err(|e| HarnessError(format!("{}: {e}", fifo_dir.display())))?;
        shm.set(H_MAGIC, MAGIC);
        shm.set(H_CAP, Self::MAX_RECORDS as u64);
        shm.set(H_LOGCAP, Self::LOG_WORDS as u64);
        shm.set(H_WORDS, layout.words as u64);
        shm.put_bytes(H_PROBE_PATH, probe.as_os_str().as_bytes());
        shm.put_bytes(H_FIFO_DIR, fifo_dir.as_os_str().as_bytes());
        shm.put_bytes(H_SHMID_STR, id.to_string().as_bytes());
        Ok(KernelExecutor {
            shm,
            fifo_dir,
            fifos: Default::default(),
            watchdog: Duration::from_secs(120),
        })
    }

    fn make_fifo(&mut self, rec: usize) -> Result<(), HarnessError> {
        if self.fifos.contains(&rec) {
            return Ok(());
        }
        let path = self.fifo_dir.join(rec.to_string());
        let c = CString::new(path.as_os_str().as_bytes()).expect("no NUL in a temp path");
        // SAFETY: `c` is a valid NUL-terminated path for the call.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(HarnessError(format!("mkfifo {}: {e}", path.display())));
            }
        }
        self.fifos.insert(rec);
        Ok(())
    }

    /// Runs `prog` in a fresh process tree and returns what the kernel did.
    pub fn run(&mut self, prog: &Program) -> Result<Outcome, HarnessError> {
        let n = prog.recs.len();
        if n > Self::MAX_RECORDS {
            return Err(HarnessError(format!(
                "{n} records is more than the executor takes"
            )));
        }
        for (i, r) in prog.recs.iter().enumerate() {
            if r.kind == kind::RESV_BEGIN {
                self.make_fifo(i)?;
            }
        }
        let shm = self.shm;
        let l = shm.layout;
        for (i, r) in prog.recs.iter().enumerate() {
            for (k, w) in r.to_words().iter().enumerate() {
                shm.set(l.recs + i * REC_WORDS + k, *w);
            }
            shm.set(l.results + 2 * i, NOT_RUN as u64);
            shm.set(l.results + 2 * i + 1, NOT_RUN as u64);
            shm.set(l.args + 2 * i, 0);
            shm.set(l.args + 2 * i + 1, 0);
            for k in 0..4 {
                shm.set(l.windows + 4 * i + k, 0);
            }
        }
        shm.set(H_N, n as u64);
        shm.set(H_NOFILE, prog.nofile.min(HARD_NOFILE));
        shm.set(H_LOGLEN, 0);
        shm.set(H_HI, 3);
        shm.set(H_ERROR, 0);
        shm.set(H_RESV_PID, 0);
        // ORDERING: Acquire; pairs with the Release increments of earlier runs' children.
        let served = shm.at32(H_REQ_SEQ).load(Ordering::Acquire);

        // SAFETY: fork in a multi-threaded process: the child only runs `setup_main` and
        // what it calls, which allocate nothing and use raw system calls (module docs).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(HarnessError(format!(
                "fork: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            child_entry(|| setup_main(shm));
        }
        let status = self.watch(pid, served)?;
        if status != 0 || shm.get(H_ERROR) != 0 {
            let code = shm.get(H_ERROR);
            let exit = if status > 100 { status as u64 - 100 } else { 0 };
            return Err(HarnessError(format!(
                "the kernel side failed: exit status {status:#x} ({}), error {code} ({})",
                error_name(exit),
                error_name(code)
            )));
        }
        let mut out = Outcome::new(n);
        for i in 0..n {
            out.results[i] = [
                shm.get(l.results + 2 * i) as i64,
                shm.get(l.results + 2 * i + 1) as i64,
            ];
            out.args[i] = [shm.get(l.args + 2 * i), shm.get(l.args + 2 * i + 1)];
            for k in 0..4 {
                out.windows[i][k] = shm.get(l.windows + 4 * i + k);
            }
        }
        out.hi = shm.get(H_HI);
        let len = shm.get(H_LOGLEN) as usize;
        let mut p = 0;
        while p < len {
            if shm.get(l.log + p) != SNAP_MAGIC || p + 4 > len {
                return Err(HarnessError(format!("corrupt snapshot log at word {p}")));
            }
            let pos = shm.get(l.log + p + 1) as usize;
            let tag = shm.get(l.log + p + 2);
            let count = shm.get(l.log + p + 3) as usize;
            p += 4;
            if p + 3 * count > len {
                return Err(HarnessError(format!("corrupt snapshot log at word {p}")));
            }
            let fds = (0..count)
                .map(|k| {
                    let b = l.log + p + 3 * k;
                    (shm.get(b) as u32, shm.get(b + 1) != 0, shm.get(b + 2))
                })
                .collect();
            p += 3 * count;
            out.snapshots.push(Snapshot { pos, tag, fds });
        }
        Ok(out)
    }

    /// Serves the children's requests until the setup process exits; returns its exit code.
    fn watch(&self, pid: libc::pid_t, mut served: u32) -> Result<i64, HarnessError> {
        let shm = self.shm;
        let started = Instant::now();
        let mut done = false;
        loop {
            // ORDERING: Acquire; pairs with the Release increment in `KernelSys::request`.
            let seq = shm.at32(H_REQ_SEQ).load(Ordering::Acquire);
            if seq != served {
                let kind = shm.get(H_REQ_KIND);
                let who = shm.get(H_REQ_PID);
                let answer = match kind {
                    REQ_FDSIZE => fd_size_of(who).unwrap_or(u64::MAX),
                    REQ_WAIT_RESERVED => {
                        self.wait_reserved(who, started)?;
                        0
                    }
                    _ => {
                        done = true;
                        0
                    }
                };
                shm.set(H_ANSWER, answer);
                // ORDERING: Release; pairs with the Acquire load in `KernelSys::request`:
                // publishes the answer.
                shm.at32(H_ACK_SEQ).store(seq, Ordering::Release);
                futex_wake(shm.at32(H_ACK_SEQ));
                served = seq;
                continue;
            }
            let mut info: libc::siginfo_t = zeroed_siginfo();
            let opts = libc::WEXITED | libc::WNOWAIT | if done { 0 } else { libc::WNOHANG };
            // SAFETY: `info` is a valid out-pointer; waits only for our own child `pid`.
            let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, opts) };
            // SAFETY: reading the pid field of a siginfo filled (or zeroed) above.
            let exited = r == 0 && unsafe { info.si_pid() } == pid;
            if exited || r != 0 {
                return Ok(self.reap(pid));
            }
            if started.elapsed() > self.watchdog {
                self.kill_group(pid);
                self.reap(pid);
                return Err(HarnessError(format!(
                    "the kernel side did not finish within {:?}",
                    self.watchdog
                )));
            }
            futex_wait(shm.at32(H_REQ_SEQ), served, Duration::from_millis(5));
        }
    }

    fn wait_reserved(&self, who: u64, started: Instant) -> Result<(), HarnessError> {
        let wchan = format!("/proc/{who}/wchan");
        loop {
            if self.shm.get(H_RESV_RESULT) as i64 != NOT_RUN {
                return Ok(());
            }
            match std::fs::read_to_string(&wchan) {
                Ok(s) if s.trim() == "wait_for_partner" => return Ok(()),
                // A kernel that hides wchan: asleep inside openat will do, since the opener
                // reserves its fd before it can sleep (only the FIFO wait can block it).
                Ok(s) if matches!(s.trim(), "" | "0") && asleep_in_openat(who) => return Ok(()),
                Ok(_) => {}
                Err(_) => return Ok(()), // gone: the requester sees its result
            }
            if started.elapsed() > self.watchdog {
                return Err(HarnessError(
                    "the reserving open never blocked in wait_for_partner".into(),
                ));
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// Kills whatever is left of the run's process group (all of it started here), then
    /// reaps the setup process, whose pid names the group and is not reused before that.
    fn reap(&self, pid: libc::pid_t) -> i64 {
        self.kill_group(pid);
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r != pid {
            return -1;
        }
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status) as i64
        } else {
            0x1_0000 | status as i64
        }
    }

    fn kill_group(&self, pid: libc::pid_t) {
        // SAFETY: signals only the process group our child S created (setpgid(0, 0)), whose
        // leader is not yet reaped, so the id cannot name anyone else's group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

fn zeroed_siginfo() -> libc::siginfo_t {
    // SAFETY: siginfo_t is plain data for which all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

fn asleep_in_openat(pid: u64) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.starts_with('S')));
    let call = std::fs::read_to_string(format!("/proc/{pid}/syscall"))
        .is_ok_and(|s| s.split_whitespace().next() == Some(&libc::SYS_openat.to_string()));
    state == Some(true) && call
}

fn error_name(code: u64) -> &'static str {
    match code {
        0 => "none",
        ERR_STD_FDS => "could not make fds 0-2 eventfds after closing everything",
        ERR_RLIMIT => {
            "setrlimit(RLIMIT_NOFILE) to the program's limit and HARD_NOFILE failed (raising the hard limit to 8192 needs root or CAP_SYS_RESOURCE)"
        }
        ERR_LOG_FULL => "the snapshot log is full",
        ERR_BAD_INDEX => "a child read outside the shared segment",
        ERR_PANIC => "a child panicked",
        ERR_PROBE_ATTACH => "the probe could not attach the shared segment",
        ERR_CLONE => "clone failed",
        _ => "unknown",
    }
}

fn fd_size_of(pid: u64) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("FDSize:"))
        .and_then(|v| v.trim().parse().ok())
}

impl Drop for KernelExecutor {
    fn drop(&mut self) {
        // SAFETY: detaches our own attachment; no reference into it outlives `self`.
        unsafe { libc::shmdt(self.shm.base.cast()) };
        let _ = std::fs::remove_dir_all(&self.fifo_dir);
    }
}

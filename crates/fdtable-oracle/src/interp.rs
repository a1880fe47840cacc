//! The interpreter both executors share: argument resolution, the reservation rules, what is
//! recorded after each operation. It is generic over [`Sys`], the system under test, and does
//! not allocate, so the kernel executor can run it in a child forked from a multi-threaded
//! process.

use crate::program::{FdArg, Frame, LimitArg, Rec, file_id, kind};

/// Result of a record that did not run.
pub const NOT_RUN: i64 = i64::MIN;
/// Result of a reservation record that does not apply (not the first process, or nothing or
/// already something in progress); the same on both sides by construction.
pub const SKIPPED: i64 = i64::MIN + 1;
/// Kernel only: a child process of the executor did not exit normally (its wait status is
/// added to this).
pub const CHILD_FAILED: i64 = i64::MIN + 0x1000;
/// Kernel only: the reserving open completed at once instead of blocking (the harness failed
/// to produce a reservation).
pub const RESV_NOBLOCK: i64 = i64::MIN + 3;

/// How many fds the per-operation check covers: `0..min(hi, WINDOW)`.
pub const WINDOW: u64 = 128;

/// Tag of the snapshot taken when the first process ends.
pub const TAG_ROOT_EXIT: u64 = u64::MAX;
/// Tag bit of a snapshot taken right after an `execve` (the rest is the record index).
pub const TAG_EXEC: u64 = 1 << 62;

/// The records of a program, wherever they are stored.
pub trait Prog {
    /// Record `i`.
    fn rec(&self, i: usize) -> Rec;
}

impl Prog for [Rec] {
    fn rec(&self, i: usize) -> Rec {
        self[i]
    }
}

/// A system that runs descriptor-table operations: the live kernel or the library.
///
/// Results are fd numbers or other non-negative values, or `-errno`.
#[allow(missing_docs)]
pub trait Sys: Sized {
    /// One past the highest fd any process of the run was handed (at least 3).
    fn hi(&self) -> u64;
    fn set_hi(&mut self, hi: u64);
    /// Records the results of record `i` and its resolved arguments.
    fn put_result(&mut self, i: usize, r: [i64; 2], args: [u64; 2]);
    /// Records the first result of record `i` and its arguments, leaving the second alone
    /// (a `Share` child writes that one).
    fn put_result1(&mut self, i: usize, r: i64, args: [u64; 2]);
    /// Records the second result of record `i` only (set by a child before its body).
    fn put_result2(&mut self, i: usize, r: i64);
    /// Records the open and close-on-exec bits of fds `0..128` after record `i`.
    fn put_window(&mut self, i: usize, w: [u64; 4]);
    /// Logs every installed fd below `hi` with its close-on-exec bit and file identity.
    fn snapshot(&mut self, pos: usize, tag: u64);

    fn open(&mut self, id: u64, cloexec: bool, nofile: u64) -> i64;
    fn close(&mut self, fd: u32) -> i64;
    fn dup(&mut self, fd: u32, nofile: u64) -> i64;
    fn dup2(&mut self, old: u32, new: u32, nofile: u64) -> i64;
    fn dup3(&mut self, old: u32, new: u32, flags: u32, nofile: u64) -> i64;
    fn dupfd(&mut self, fd: u32, from: u32, cloexec: bool, nofile: u64) -> i64;
    fn getfd(&mut self, fd: u32) -> i64;
    fn setfd(&mut self, fd: u32, arg: u32) -> i64;
    fn query(&mut self, fd: u32, other: u32) -> i64;
    fn close_range(&mut self, first: u32, last: u32, flags: u32) -> i64;
    fn replace_fd(&mut self, src: u32, fd: u32, cloexec: bool, nofile: u64) -> i64;
    fn renumber(&mut self, from: u32, to: u32, nofile: u64) -> i64;
    fn set_nofile(&mut self, soft: u64) -> i64;
    fn fd_size(&mut self) -> i64;
    /// Runs `body` in a child process (sharing the table if `share`), waits for it, and
    /// returns 0 or an error.
    fn spawn(&mut self, share: bool, body: &mut dyn FnMut(&mut Self)) -> i64;
    fn unshare(&mut self) -> i64;
    /// `execve`. The kernel executor does not return on success: the exec'd probe calls
    /// [`resume_after_exec`] with the same arguments. The library returns 0.
    fn exec(&mut self, frame: &Frame, at: usize, end: usize, tag: u64) -> i64;
    fn reserve_begin(&mut self, rec: usize, cloexec: bool, nofile: u64) -> i64;
    fn reserve_end(&mut self, rec: usize, cloexec: bool, nofile: u64) -> [i64; 2];
    fn reserve_abort(&mut self, rec: usize) -> i64;
}

/// Runs records `start..end` as one process, then ends it (see [`finish_process`]).
pub fn run_process<S: Sys, P: Prog + ?Sized>(
    sys: &mut S,
    prog: &P,
    frame: &mut Frame,
    start: usize,
    end: usize,
    tag: u64,
) {
    run_range(sys, prog, frame, start, end, tag);
    finish_process(sys, frame, end, tag);
}

/// Ends a process: abandons a reservation still in progress, then snapshots the table.
pub fn finish_process<S: Sys>(sys: &mut S, frame: &mut Frame, end: usize, tag: u64) {
    if frame.resv {
        sys.reserve_abort(frame.resv_rec as usize);
        frame.resv = false;
    }
    sys.snapshot(end, tag);
}

/// Continues a process after a successful `execve` of record `at`.
pub fn resume_after_exec<S: Sys, P: Prog + ?Sized>(
    sys: &mut S,
    prog: &P,
    frame: &mut Frame,
    at: usize,
    end: usize,
    tag: u64,
) {
    after_exec(sys, at);
    run_process(sys, prog, frame, at + 1, end, tag);
}

fn after_exec<S: Sys>(sys: &mut S, at: usize) {
    sys.put_result(at, [0, NOT_RUN], [0, 0]);
    window(sys, at);
    sys.snapshot(at + 1, TAG_EXEC | at as u64);
}

fn window<S: Sys>(sys: &mut S, at: usize) {
    let n = sys.hi().min(WINDOW);
    let mut w = [0u64; 4];
    for fd in 0..n as u32 {
        let r = sys.getfd(fd);
        if r >= 0 {
            w[(fd / 64) as usize] |= 1 << (fd % 64);
            if r & 1 != 0 {
                w[2 + (fd / 64) as usize] |= 1 << (fd % 64);
            }
        }
    }
    sys.put_window(at, w);
}

fn note_fd<S: Sys>(sys: &mut S, frame: &mut Frame, r: i64) {
    if r >= 0 {
        frame.push(r as u32);
        let hi = sys.hi().max(r as u64 + 1);
        sys.set_hi(hi);
    }
}

fn run_range<S: Sys, P: Prog + ?Sized>(
    sys: &mut S,
    prog: &P,
    frame: &mut Frame,
    start: usize,
    end: usize,
    tag: u64,
) {
    let mut i = start;
    while i < end {
        i = step(sys, prog, frame, i, end, tag);
    }
}

/// Runs record `i`; returns the index of the next record of this process.
fn step<S: Sys, P: Prog + ?Sized>(
    sys: &mut S,
    prog: &P,
    frame: &mut Frame,
    i: usize,
    end: usize,
    tag: u64,
) -> usize {
    use kind::*;
    let r = prog.rec(i);
    let hi = sys.hi();
    let fd = |w: u64| FdArg::decode(w).resolve(frame, hi);
    let nofile = frame.nofile;
    let (a, b) = (fd(r.a), fd(r.b));
    let mut res = [NOT_RUN; 2];
    let mut args = [a as u64, b as u64];
    match r.kind {
        OPEN => {
            res[0] = sys.open(file_id(i, 0), r.a != 0, nofile);
            note_fd(sys, frame, res[0]);
            args = [0, 0];
        }
        OPEN_MANY => {
            let mut n = 0;
            while n < r.a {
                let fd = sys.open(file_id(i, n), r.b != 0, nofile);
                if fd < 0 {
                    res[1] = fd;
                    break;
                }
                note_fd(sys, frame, fd);
                n += 1;
            }
            res[0] = n as i64;
            args = [0, 0];
        }
        CLOSE => res[0] = sys.close(a),
        DUP => {
            res[0] = sys.dup(a, nofile);
            note_fd(sys, frame, res[0]);
        }
        DUP2 => {
            res[0] = sys.dup2(a, b, nofile);
            note_fd(sys, frame, res[0]);
        }
        DUP3 => {
            res[0] = sys.dup3(a, b, r.c as u32, nofile);
            note_fd(sys, frame, res[0]);
        }
        DUPFD => {
            res[0] = sys.dupfd(a, b, r.c != 0, nofile);
            note_fd(sys, frame, res[0]);
        }
        REPLACE_FD => {
            res[0] = sys.replace_fd(a, b, r.c != 0, nofile);
            note_fd(sys, frame, res[0]);
        }
        RENUMBER => {
            res[0] = sys.renumber(a, b, nofile);
            note_fd(sys, frame, res[0]);
        }
        GETFD => res[0] = sys.getfd(a),
        SETFD => res[0] = sys.setfd(a, r.b as u32),
        QUERY => res[0] = sys.query(a, b),
        CLOSE_RANGE => res[0] = sys.close_range(a, b, r.c as u32),
        SET_NOFILE => {
            let soft = LimitArg::decode(r.a).resolve(frame, hi);
            args = [soft, 0];
            res[0] = sys.set_nofile(soft);
            if res[0] == 0 {
                frame.nofile = soft;
            }
        }
        FD_SIZE => res[0] = sys.fd_size(),
        FORK | SHARE => {
            let share = r.kind == SHARE;
            let body = (i + 1, (i + 1 + r.len as usize).min(end));
            let mut child = *frame;
            child.root = false;
            child.resv = false;
            if share {
                child.nofile = LimitArg::decode(r.a).resolve(frame, hi);
            }
            args = [child.nofile, 0];
            res[0] = sys.spawn(share, &mut |csys: &mut S| {
                let mut f = child;
                if share {
                    let r = csys.set_nofile(f.nofile);
                    csys.put_result2(i, r);
                }
                run_process(csys, prog, &mut f, body.0, body.1, i as u64);
            });
            sys.put_result1(i, res[0], args);
            window(sys, i);
            return body.1;
        }
        UNSHARE => res[0] = sys.unshare(),
        EXEC => {
            let e = sys.exec(frame, i, end, tag);
            if e >= 0 {
                after_exec(sys, i);
                return i + 1;
            }
            res[0] = e;
            args = [0, 0];
        }
        RESV_BEGIN => {
            args = [0, 0];
            res[0] = if !frame.root || frame.resv {
                SKIPPED
            } else {
                let r = sys.reserve_begin(i, r.a != 0, nofile);
                if r == 0 {
                    frame.resv = true;
                    frame.resv_rec = i as u64;
                }
                r
            };
        }
        RESV_END => {
            args = [0, 0];
            if !frame.root || !frame.resv {
                res[0] = SKIPPED;
            } else {
                res = sys.reserve_end(frame.resv_rec as usize, r.a != 0, nofile);
                if res[0] >= 0 {
                    frame.resv = false;
                    note_fd(sys, frame, res[0]);
                    note_fd(sys, frame, res[1]);
                }
            }
        }
        RESV_ABORT => {
            args = [0, 0];
            res[0] = if !frame.root || !frame.resv {
                SKIPPED
            } else {
                frame.resv = false;
                sys.reserve_abort(frame.resv_rec as usize)
            };
        }
        _ => res[0] = SKIPPED,
    }
    sys.put_result(i, res, args);
    window(sys, i);
    i + 1
}

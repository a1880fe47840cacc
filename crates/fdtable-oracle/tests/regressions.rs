//! Hand-written sequences for the traps of REFERENCE.md section 4, each run on the kernel and
//! on the library. Every test also pins what the kernel itself answered, so a sequence that
//! stops reaching its trap (a harness change, a different kernel) fails instead of passing
//! vacuously.

use fdtable::Errno;
use fdtable_oracle::interp::SKIPPED;
use fdtable_oracle::program::{FdArg, LimitArg, Op};
use fdtable_oracle::{Case, CheckError, Checked, KernelExecutor, check};
use std::cell::RefCell;

use FdArg::{Hi, Lit, Recent};
use Op::*;

const CLOEXEC: u32 = fdtable::CLOSE_RANGE_CLOEXEC;
const UNSHARE: u32 = fdtable::CLOSE_RANGE_UNSHARE;
const ALL: FdArg = Lit(u32::MAX);
const O_CLOEXEC: u32 = fdtable::O_CLOEXEC;

thread_local! {
    static KERNEL: RefCell<KernelExecutor> = RefCell::new(
        KernelExecutor::new(env!("CARGO_BIN_EXE_fdtable-oracle-probe").as_ref())
            .expect("kernel executor"),
    );
}

/// Runs the case on both sides; panics with the full report on a divergence.
fn run(nofile: u64, ops: Vec<Op>) -> Checked {
    let case = Case::new(nofile, ops);
    KERNEL.with(|k| match check(&mut k.borrow_mut(), &case) {
        Ok(c) => c,
        Err(CheckError::Divergence(d)) => panic!("kernel and library diverge: {d}"),
        Err(e) => panic!("{e}"),
    })
}

fn err(e: Errno) -> i64 {
    -(e.raw() as i64)
}

/// Asserts the kernel's first result for each listed record.
fn expect(c: &Checked, want: &[(usize, i64)]) {
    for &(i, v) in want {
        assert_eq!(
            c.kernel.results[i][0],
            v,
            "record #{i}: the kernel did not answer as this test expects\n{}",
            fdtable_oracle::outcome::report(&c.program, &c.kernel, &c.kernel, Some(i))
        );
    }
}

/// Asserts the kernel's close-on-exec bit of `fd` after record `i`.
fn expect_cloexec(c: &Checked, i: usize, fd: u32, cloexec: bool) {
    let w = c.kernel.windows[i];
    assert!(
        w[fd as usize / 64] & 1 << (fd % 64) != 0,
        "fd {fd} open after #{i}"
    );
    assert_eq!(
        w[2 + fd as usize / 64] & 1 << (fd % 64) != 0,
        cloexec,
        "fd {fd} after #{i}"
    );
}

// === trap 6: the close-on-exec bit is written on every allocation path ===

#[test]
fn cloexec_is_rewritten_by_every_allocation_path_after_close_range_cloexec_on_empty_slots() {
    let c = run(
        64,
        vec![
            CloseRange {
                first: Lit(3),
                last: ALL,
                flags: CLOEXEC,
            }, // #0 marks empty 3..63
            Open { cloexec: false }, // #1 -> 3
            Dup(Lit(0)),             // #2 -> 4
            DupFd {
                fd: Lit(0),
                from: Lit(10),
                cloexec: false,
            }, // #3 -> 10
            Dup2(Lit(0), Lit(20)),   // #4 -> 20
            Dup3(Lit(0), Lit(21), 0), // #5 -> 21
            ReserveBegin { cloexec: false }, // #6 reserves 5
            ReserveEnd { cloexec: false }, // #7 write end 6, 5 installed
            Fork(vec![Open { cloexec: false }]), // #8, #9 -> 7 in the child
            Exec,                    // #10 must keep them all
        ],
    );
    expect(
        &c,
        &[
            (1, 3),
            (2, 4),
            (3, 10),
            (4, 20),
            (5, 21),
            (6, 0),
            (9, 7),
            (10, 0),
        ],
    );
    assert_eq!(c.kernel.results[7], [6, 5]);
    for fd in [3, 4, 5, 6, 10, 20, 21] {
        expect_cloexec(&c, 10, fd, false);
    }
}

#[test]
fn cloexec_of_a_previous_occupant_does_not_leak() {
    let c = run(
        64,
        vec![
            Open { cloexec: true },  // #0 -> 3, cloexec
            Close(Lit(3)),           // #1
            Open { cloexec: false }, // #2 -> 3, must be clear
            DupFd {
                fd: Lit(0),
                from: Lit(4),
                cloexec: true,
            }, // #3 -> 4, cloexec
            Dup3(Lit(0), Lit(5), O_CLOEXEC), // #4 -> 5, cloexec
            Dup2(Lit(1), Lit(5)),    // #5 replaces 5: clear
            Close(Lit(4)),           // #6
            Dup(Lit(0)),             // #7 -> 4, must be clear
            SetFd(Lit(4), 0xffff_ffff), // #8 only FD_CLOEXEC counts
            GetFd(Lit(4)),           // #9 -> 1
            SetFd(Lit(4), 0xffff_fffe), // #10 clears
            GetFd(Lit(4)),           // #11 -> 0
        ],
    );
    expect(
        &c,
        &[(2, 3), (3, 4), (4, 5), (5, 5), (7, 4), (9, 1), (11, 0)],
    );
    expect_cloexec(&c, 2, 3, false);
    expect_cloexec(&c, 5, 5, false);
    expect_cloexec(&c, 7, 4, false);
}

#[test]
fn close_range_cloexec_covers_reserved_slots_and_the_install_keeps_it() {
    let c = run(
        64,
        vec![
            ReserveBegin { cloexec: false }, // #0 reserves 3
            CloseRange {
                first: Lit(0),
                last: ALL,
                flags: CLOEXEC,
            }, // #1
            ReserveEnd { cloexec: false },   // #2 write end 4, 3 installed
            GetFd(Lit(3)),                   // #3 -> 1: the bit was set while reserved
            GetFd(Lit(4)),                   // #4 -> 0: written by the allocation
        ],
    );
    expect(&c, &[(0, 0), (1, 0), (3, 1), (4, 0)]);
    assert_eq!(c.kernel.results[2], [4, 3]);
}

// === trap 9: errno asymmetries of dup2, dup3 and F_DUPFD ===

#[test]
fn dup_family_errnos() {
    let c = run(
        16,
        vec![
            Dup2(Lit(1), Lit(1)),                          // #0 -> 1
            Dup2(Lit(9), Lit(9)),                          // #1 EBADF
            Dup3(Lit(1), Lit(1), 0),                       // #2 EINVAL
            Dup3(Lit(9), Lit(9), 0),                       // #3 EINVAL before EBADF
            Dup3(Lit(1), Lit(5), 1),                       // #4 EINVAL (unknown flag)
            Dup3(Lit(1), Lit(5), O_CLOEXEC | 0x8000_0000), // #5 EINVAL
            Dup2(Lit(1), FdArg::Limit(0)),                 // #6 EBADF at the limit
            Dup3(Lit(1), FdArg::Limit(0), 0),              // #7 EBADF at the limit
            DupFd {
                fd: Lit(1),
                from: FdArg::Limit(0),
                cloexec: false,
            }, // #8 EINVAL
            DupFd {
                fd: Lit(9),
                from: FdArg::Limit(0),
                cloexec: false,
            }, // #9 EBADF first
            Dup2(Lit(9), FdArg::Limit(0)),                 // #10 EBADF (limit first)
            Dup2(Lit(1), Lit(u32::MAX)),                   // #11 EBADF (-1)
            DupFd {
                fd: Lit(1),
                from: Lit(u32::MAX),
                cloexec: true,
            }, // #12 EINVAL (-1)
            Dup2(Lit(1), Lit(1 << 20)),                    // #13 EBADF (nr_open)
            DupFd {
                fd: Lit(1),
                from: Lit(15),
                cloexec: false,
            }, // #14 -> 15
            DupFd {
                fd: Lit(1),
                from: Lit(15),
                cloexec: false,
            }, // #15 EMFILE
            Close(Lit(u32::MAX)),                          // #16 EBADF
            DupFdQuery(Lit(1), Lit(15)),                   // #17 -> 1
            DupFdQuery(Lit(1), Lit(2)),                    // #18 -> 0
            DupFdQuery(Lit(1), Lit(9)),                    // #19 EBADF
            SetNofile(LimitArg::Abs(10)),                  // #20
            Dup2(Lit(15), Lit(15)),                        // #21 -> 15, above the limit
            Dup(Lit(15)),          // #22 -> 3, an fd above the limit dups fine
            Dup2(Lit(15), Lit(9)), // #23 -> 9
            Dup2(Lit(1), Lit(15)), // #24 EBADF: 15 >= limit
        ],
    );
    let (ebadf, einval, emfile) = (err(Errno::EBADF), err(Errno::EINVAL), err(Errno::EMFILE));
    expect(
        &c,
        &[
            (0, 1),
            (1, ebadf),
            (2, einval),
            (3, einval),
            (4, einval),
            (5, einval),
            (6, ebadf),
            (7, ebadf),
            (8, einval),
            (9, ebadf),
            (10, ebadf),
            (11, ebadf),
            (12, einval),
            (13, ebadf),
            (14, 15),
            (15, emfile),
            (16, ebadf),
            (17, 1),
            (18, 0),
            (19, ebadf),
            (21, 15),
            (22, 3),
            (23, 9),
            (24, ebadf),
        ],
    );
}

#[test]
fn limits_of_zero_and_below_the_fds_in_use() {
    let c = run(
        0,
        vec![
            Open { cloexec: false }, // #0 EMFILE
            Dup(Lit(0)),             // #1 EMFILE
            Dup2(Lit(0), Lit(0)),    // #2 -> 0 (no limit check)
            Dup2(Lit(0), Lit(1)),    // #3 EBADF
            DupFd {
                fd: Lit(0),
                from: Lit(0),
                cloexec: false,
            }, // #4 EINVAL
            SetNofile(LimitArg::Abs(3)), // #5
            Open { cloexec: false }, // #6 EMFILE: 0-2 in use
            Close(Lit(1)),           // #7
            Open { cloexec: true },  // #8 -> 1
            SetNofile(LimitArg::Abs(100)), // #9
            Share {
                nofile: LimitArg::Abs(3),           // #10, a lower limit of its own
                ops: vec![Open { cloexec: false }], // #11 EMFILE in the child
            },
            Open { cloexec: false }, // #12 -> 3 in the parent
        ],
    );
    let (ebadf, einval, emfile) = (err(Errno::EBADF), err(Errno::EINVAL), err(Errno::EMFILE));
    expect(
        &c,
        &[
            (0, emfile),
            (1, emfile),
            (2, 0),
            (3, ebadf),
            (4, einval),
            (6, emfile),
            (8, 1),
            (10, 0),
            (11, emfile),
            (12, 3),
        ],
    );
}

// === trap 8: next_fd is only a hint ===

#[test]
fn next_fd_hint_rules() {
    let c = run(
        256,
        vec![
            DupFd {
                fd: Lit(0),
                from: Lit(10),
                cloexec: false,
            }, // #0 -> 10, hint must stay
            Open { cloexec: false }, // #1 -> 3
            Dup2(Lit(0), Lit(4)),    // #2 -> 4, hint goes stale
            Open { cloexec: false }, // #3 -> 5
            OpenMany {
                count: 3,
                cloexec: false,
            }, // #4 -> 6, 7, 8
            Close(Lit(4)),           // #5 lowers the hint
            Open { cloexec: false }, // #6 -> 4
            CloseRange {
                first: Lit(3),
                last: Lit(6),
                flags: 0,
            }, // #7
            Open { cloexec: false }, // #8 -> 3
            ReserveBegin { cloexec: false }, // #9 reserves 4
            Open { cloexec: false }, // #10 -> 5
            ReserveAbort,            // #11 gives 4 back
            Open { cloexec: false }, // #12 -> 4
            Fork(vec![Close(Lit(3)), Open { cloexec: false }]), // #13: #14, #15 -> 3
            DupFd {
                fd: Lit(0),
                from: Lit(64),
                cloexec: false,
            }, // #16 -> 64
            DupFd {
                fd: Lit(0),
                from: Lit(63),
                cloexec: false,
            }, // #17 -> 63
            Open { cloexec: false }, // #18 -> 6
        ],
    );
    expect(
        &c,
        &[
            (0, 10),
            (1, 3),
            (2, 4),
            (3, 5),
            (6, 4),
            (8, 3),
            (9, 0),
            (10, 5),
            (12, 4),
            (15, 3),
            (16, 64),
            (17, 63),
            (18, 6),
        ],
    );
}

// === table sizes: growth, fork sizing, close_range UNSHARE's punched hole ===

#[test]
fn growth_and_fork_sizing() {
    let c = run(
        4096,
        vec![
            FdSize,                                           // #0 64
            Dup2(Lit(0), Lit(64)),                            // #1
            FdSize,                                           // #2 128
            Fork(vec![FdSize]),                               // #3, #4: 128 (last fd 64 -> 128)
            Close(Lit(64)),                                   // #5
            FdSize,                                           // #6 128: never shrinks in place
            Fork(vec![FdSize]),                               // #7, #8: 64
            Dup2(Lit(0), Lit(130)),                           // #9
            Fork(vec![FdSize]),      // #10, #11: ALIGN(131, 64) = 192 -> 256
            Dup2(Lit(0), Lit(1500)), // #12
            FdSize,                  // #13 2048
            Fork(vec![Close(Lit(1500)), Fork(vec![FdSize])]), // #14..#17: 256
            Unshare,                 // #18: not shared, no copy
            FdSize,                  // #19 2048
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    Unshare, // #21: a copy sized to fd 1500
                    FdSize,  // #22 2048
                ],
            },
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(200),
                        last: ALL,
                        flags: UNSHARE,
                    }, // #24
                    FdSize, // #25 256: copy stops below the hole
                ],
            },
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(100),
                        last: ALL,
                        flags: UNSHARE | CLOEXEC,
                    }, // #27
                    FdSize, // #28 2048: everything copied
                    Exec,   // #29
                    FdSize, // #30 2048
                ],
            },
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(3),
                        last: ALL,
                        flags: UNSHARE,
                    }, // #32
                    FdSize, // #33 64
                ],
            },
            FdSize,           // #34 2048, and 130 and 1500 still open
            GetFd(Lit(1500)), // #35 0
        ],
    );
    expect(
        &c,
        &[
            (0, 64),
            (2, 128),
            (4, 128),
            (6, 128),
            (8, 64),
            (11, 256),
            (13, 2048),
            (17, 256),
            (19, 2048),
            (22, 2048),
            (25, 256),
            (28, 2048),
            (30, 2048),
            (33, 64),
            (34, 2048),
            (35, 0),
        ],
    );
}

#[test]
fn tables_past_1024_fragmented_and_full() {
    let c = run(
        1100,
        vec![
            OpenMany {
                count: 1100,
                cloexec: false,
            }, // #0 -> 1097 then EMFILE
            FdSize, // #1 2048
            CloseRange {
                first: Lit(500),
                last: Lit(700),
                flags: 0,
            }, // #2
            Close(Lit(64)), // #3
            Close(Lit(1023)), // #4
            Open { cloexec: true }, // #5 -> 64
            DupFd {
                fd: Lit(0),
                from: Lit(701),
                cloexec: false,
            }, // #6 -> 1023
            DupFd {
                fd: Lit(0),
                from: Lit(701),
                cloexec: false,
            }, // #7 EMFILE (701..1099 full)
            Open { cloexec: false }, // #8 -> 500
            CloseRange {
                first: Lit(600),
                last: ALL,
                flags: CLOEXEC,
            }, // #9
            Exec,   // #10 closes 64 and 600..
            Open { cloexec: false }, // #11 -> 64
            Fork(vec![FdSize]), // #12, #13: last fd 501 -> 512
            DupFd {
                fd: Lit(0),
                from: Hi(-1),
                cloexec: false,
            }, // #14 hi-1 = 1099: 1099 free again
        ],
    );
    assert_eq!(c.kernel.results[0], [1097, err(Errno::EMFILE)]);
    expect(
        &c,
        &[
            (1, 2048),
            (5, 64),
            (6, 1023),
            (7, err(Errno::EMFILE)),
            (8, 500),
            (11, 64),
            (13, 512),
            (14, 1099),
        ],
    );
}

// === close_range UNSHARE, sharing, exec of a shared table ===

#[test]
fn close_range_unshare_leaves_the_shared_table_alone() {
    let c = run(
        64,
        vec![
            OpenMany {
                count: 5,
                cloexec: false,
            }, // #0 3..7
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(3),
                        last: Lit(4),
                        flags: UNSHARE,
                    }, // #2
                    Open { cloexec: false }, // #3 -> 3 in the copy
                ],
            },
            GetFd(Lit(3)), // #4 0: still open here
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(5),
                        last: Lit(5),
                        flags: 0,
                    }, // #6 on the shared table
                    CloseRange {
                        first: Lit(6),
                        last: ALL,
                        flags: CLOEXEC,
                    }, // #7 shared too
                    Exec,          // #8: a copy; 6, 7 closed there
                    GetFd(Lit(6)), // #9 EBADF in the copy
                ],
            },
            GetFd(Lit(5)), // #10 EBADF: closed by the sharer
            GetFd(Lit(6)), // #11 1: still open, cloexec
            CloseRange {
                first: Lit(7),
                last: Lit(6),
                flags: 0,
            }, // #12 EINVAL
            CloseRange {
                first: Lit(3),
                last: ALL,
                flags: 1 << 3,
            }, // #13 EINVAL
            CloseRange {
                first: Lit(1000),
                last: ALL,
                flags: 0,
            }, // #14 0: past the table
            CloseRange {
                first: Lit(3),
                last: ALL,
                flags: UNSHARE,
            }, // #15 not shared: in place
            GetFd(Lit(3)), // #16 EBADF
        ],
    );
    let (ebadf, einval) = (err(Errno::EBADF), err(Errno::EINVAL));
    expect(
        &c,
        &[
            (2, 0),
            (3, 3),
            (4, 0),
            (6, 0),
            (7, 0),
            (8, 0),
            (9, ebadf),
            (10, ebadf),
            (11, 1),
            (12, einval),
            (13, einval),
            (14, 0),
            (15, 0),
            (16, ebadf),
        ],
    );
}

// === trap 2: reserved slots ===

#[test]
fn reserved_slots_are_busy_not_open_and_dropped_by_fork_and_exec() {
    let c = run(
        64,
        vec![
            ReserveBegin { cloexec: true },  // #0 reserves 3
            Dup2(Lit(0), Lit(3)),            // #1 EBUSY
            Dup3(Lit(0), Lit(3), O_CLOEXEC), // #2 EBUSY
            Close(Lit(3)),                   // #3 EBADF, stays reserved
            GetFd(Lit(3)),                   // #4 EBADF
            DupFdQuery(Lit(0), Lit(3)),      // #5 EBADF
            CloseRange {
                first: Lit(3),
                last: Lit(3),
                flags: UNSHARE,
            }, // #6: a copy (shared with the opener)
            Open { cloexec: false },         // #7 -> 3: the copy dropped the reservation
            Dup2(Lit(1), Lit(3)),            // #8 -> 3
            ReserveEnd { cloexec: false },   // #9 write end 4 here; 3 installed in the old table
            ReserveBegin { cloexec: false }, // #10 reserves 5
            Fork(vec![Dup2(Lit(0), Lit(5)), Open { cloexec: false }]), // #11: #12 -> 5, #13 -> 6
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![Dup2(Lit(0), Lit(5)), Open { cloexec: false }], // #15 EBUSY, #16 -> 6
            },
            Exec,                          // #17: the copy drops 5
            Open { cloexec: false },       // #18 -> 5
            ReserveAbort,                  // #19
            ReserveEnd { cloexec: false }, // #20 skipped: nothing in progress
        ],
    );
    let (ebadf, ebusy) = (err(Errno::EBADF), err(Errno::EBUSY));
    expect(
        &c,
        &[
            (0, 0),
            (1, ebusy),
            (2, ebusy),
            (3, ebadf),
            (4, ebadf),
            (5, ebadf),
            (6, 0),
            (7, 3),
            (8, 3),
            (10, 0),
            (12, 5),
            (13, 6),
            (15, ebusy),
            (16, 6),
            (17, 0),
            (18, 5),
            (19, 0),
            (20, SKIPPED),
        ],
    );
    assert_eq!(c.kernel.results[9], [4, 3]);
}

#[test]
fn a_reservation_that_cannot_start_or_finish_reports_emfile() {
    let c = run(
        4,
        vec![
            Open { cloexec: false },         // #0 -> 3
            ReserveBegin { cloexec: false }, // #1 EMFILE: the open fails at once
            Close(Lit(3)),                   // #2
            ReserveBegin { cloexec: false }, // #3 reserves 3
            ReserveEnd { cloexec: false },   // #4 EMFILE: no fd for the write end
            ReserveAbort,                    // #5
            Open { cloexec: false },         // #6 -> 3
        ],
    );
    let emfile = err(Errno::EMFILE);
    expect(
        &c,
        &[(0, 3), (1, emfile), (3, 0), (4, emfile), (5, 0), (6, 3)],
    );
}

// === trap 11: exec ===

#[test]
fn exec_closes_exactly_the_cloexec_fds() {
    let c = run(
        128,
        vec![
            OpenMany {
                count: 70,
                cloexec: true,
            }, // #0 3..72
            CloseRange {
                first: Lit(10),
                last: Lit(69),
                flags: 0,
            }, // #1
            SetFd(Lit(5), 0),                  // #2
            Dup(Lit(3)),                       // #3 -> 10, no cloexec
            Dup3(Lit(3), Lit(100), O_CLOEXEC), // #4
            Dup3(Lit(3), Lit(101), 0),         // #5
            Exec,                              // #6
            Exec,                              // #7: nothing more to close
            Open { cloexec: false },           // #8 -> 3
            DupFdQuery(Lit(5), Lit(10)),       // #9 0: different files
            DupFdQuery(Lit(10), Lit(101)),     // #10 1: both dups of the old 3
            Dup(Recent(0)),                    // #11 -> 4
        ],
    );
    expect(
        &c,
        &[(3, 10), (6, 0), (7, 0), (8, 3), (9, 0), (10, 1), (11, 4)],
    );
    let snap = c
        .kernel
        .snapshots
        .iter()
        .find(|s| s.pos == 7)
        .expect("snapshot after the first exec");
    let fds: Vec<u32> = snap.fds.iter().map(|f| f.0).collect();
    assert_eq!(fds, [0, 1, 2, 5, 10, 101]);
}

#[test]
fn a_reserved_last_fd_still_sizes_the_fork_copy_but_is_not_copied() {
    let c = run(
        4096,
        vec![
            OpenMany {
                count: 125,
                cloexec: false,
            }, // #0 3..127: the 128-slot table is full
            ReserveBegin { cloexec: false }, // #1 reserves 128: the table grows to 256
            FdSize,                          // #2 256
            Fork(vec![FdSize, Open { cloexec: false }]), // #3: #4 256 (sized by the reserved 128), #5 -> 128
            Close(Lit(127)),                             // #6
            Fork(vec![FdSize]), // #7, #8: still 256 (128 is the last open bit)
            Share {
                nofile: LimitArg::Rel(0),
                ops: vec![
                    CloseRange {
                        first: Lit(100),
                        last: ALL,
                        flags: UNSHARE,
                    }, // #10
                    FdSize, // #11 128: the hole covers 128, the last fd below it is 99
                    Dup2(Lit(0), Lit(128)), // #12 -> 128 in the private copy
                ],
            },
            Dup2(Lit(0), Lit(128)), // #13 EBUSY: still reserved here
            Exec,                   // #14: the copy drops 128 (the opener shares the old table)
            FdSize,                 // #15 256: the exec copy was sized by the reserved 128 too
        ],
    );
    expect(
        &c,
        &[
            (1, 0),
            (2, 256),
            (4, 256),
            (5, 128),
            (8, 256),
            (11, 128),
            (12, 128),
            (13, err(Errno::EBUSY)),
            (14, 0),
            (15, 256),
        ],
    );
}

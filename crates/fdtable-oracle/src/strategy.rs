//! proptest strategies for [`Case`]s, weighted towards the edges: fds next to the limit and
//! to word and table boundaries, negative and huge fds, limits next to the fds in use, unknown
//! flag bits, nested fork/clone, exec, and reservations.
//!
//! Every generated value shrinks: sequences lose operations, bodies lose operations,
//! arguments move towards the first alternative of each `prop_oneof!` (small literal fds,
//! no flags), counts towards small ones.

use crate::program::{Case, FdArg, HARD_NOFILE, LimitArg, Op};
use fdtable::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, O_CLOEXEC};
use proptest::prelude::*;
use proptest::sample::select;

/// fds at word and table boundaries.
const EDGE_FDS: &[u32] = &[
    63, 64, 65, 127, 128, 129, 255, 256, 1023, 1024, 1025, 2047, 2048,
];

/// fds that only bad callers pass: C's negative numbers, `nr_open` and around it, `INT_MAX`,
/// the hard limit.
const HUGE_FDS: &[u32] = &[
    u32::MAX,
    u32::MAX - 1,
    0x8000_0000,
    0x7fff_ffff,
    0x7fff_ffc0,
    1 << 20,
    (1 << 20) - 1,
    (1 << 20) + 1,
    HARD_NOFILE as u32 - 1,
    HARD_NOFILE as u32,
];

/// A descriptor argument.
pub fn fd_arg() -> impl Strategy<Value = FdArg> {
    prop_oneof![
        25 => (0u32..8).prop_map(FdArg::Lit),
        30 => (0u8..4).prop_map(FdArg::Recent),
        12 => (-2i32..=1).prop_map(FdArg::Limit),
        10 => (-2i32..=1).prop_map(FdArg::Hi),
        6 => select(EDGE_FDS).prop_map(FdArg::Lit),
        4 => (8u32..40).prop_map(FdArg::Lit),
        4 => select(HUGE_FDS).prop_map(FdArg::Lit),
    ]
}

/// A soft limit argument.
pub fn limit_arg() -> impl Strategy<Value = LimitArg> {
    prop_oneof![
        4 => (-3i32..=3).prop_map(LimitArg::Rel),
        4 => (-2i32..=2).prop_map(LimitArg::Hi),
        3 => select(&[0u32, 1, 3, 4, 5, 8, 16, 63, 64, 65, 100, 128, 129][..]).prop_map(LimitArg::Abs),
        1 => select(&[1024u32, 1025, 1100, 2048, 4096, HARD_NOFILE as u32, u32::MAX][..])
            .prop_map(LimitArg::Abs),
    ]
}

/// The first process's soft limit.
pub fn initial_nofile() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => select(&[16u64, 32, 63, 64, 65, 100, 128, 129, 256][..]),
        2 => select(&[3u64, 4, 5, 8][..]),
        2 => select(&[1024u64, 1025, 1100, 2048, 4096][..]),
        1 => Just(0u64),
    ]
}

fn dup3_flags() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => Just(0u32),
        4 => Just(O_CLOEXEC),
        1 => select(&[O_CLOEXEC | 1, 1, libc::O_NONBLOCK as u32, 0x8000_0000, u32::MAX][..]),
    ]
}

fn setfd_arg() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => Just(0u32),
        3 => Just(1u32),
        1 => select(&[2u32, 3, u32::MAX, 0xffff_fffe, 0x8000_0001][..]),
    ]
}

fn close_range_flags() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => Just(0u32),
        3 => Just(CLOSE_RANGE_CLOEXEC),
        2 => Just(CLOSE_RANGE_UNSHARE),
        2 => Just(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC),
        1 => select(&[1u32, 8, 1 << 31, u32::MAX, CLOSE_RANGE_UNSHARE | 1, CLOSE_RANGE_CLOEXEC | 16][..]),
    ]
}

fn close_range_last() -> impl Strategy<Value = FdArg> {
    prop_oneof![3 => fd_arg(), 2 => Just(FdArg::Lit(u32::MAX))]
}

fn open_many() -> impl Strategy<Value = Op> {
    let count = prop_oneof![
        20 => 2u16..20,
        6 => 55u16..75,
        1 => 1000u16..1100,
    ];
    (count, any::<bool>()).prop_map(|(count, cloexec)| Op::OpenMany { count, cloexec })
}

/// One operation that is not a process operation.
pub fn table_op() -> BoxedStrategy<Op> {
    prop_oneof![
        14 => any::<bool>().prop_map(|cloexec| Op::Open { cloexec }),
        3 => open_many(),
        12 => fd_arg().prop_map(Op::Close),
        6 => fd_arg().prop_map(Op::Dup),
        9 => (fd_arg(), fd_arg()).prop_map(|(o, n)| Op::Dup2(o, n)),
        6 => (fd_arg(), fd_arg(), dup3_flags()).prop_map(|(o, n, f)| Op::Dup3(o, n, f)),
        7 => (fd_arg(), fd_arg(), any::<bool>())
            .prop_map(|(fd, from, cloexec)| Op::DupFd { fd, from, cloexec }),
        3 => fd_arg().prop_map(Op::GetFd),
        4 => (fd_arg(), setfd_arg()).prop_map(|(fd, a)| Op::SetFd(fd, a)),
        3 => (fd_arg(), fd_arg()).prop_map(|(a, b)| Op::DupFdQuery(a, b)),
        7 => (fd_arg(), close_range_last(), close_range_flags())
            .prop_map(|(first, last, flags)| Op::CloseRange { first, last, flags }),
        5 => limit_arg().prop_map(Op::SetNofile),
        2 => Just(Op::FdSize),
        1 => Just(Op::Unshare),
        5 => (fd_arg(), fd_arg(), any::<bool>())
            .prop_map(|(src, fd, cloexec)| Op::ReplaceFd { src, fd, cloexec }),
        5 => (fd_arg(), fd_arg()).prop_map(|(a, b)| Op::Renumber(a, b)),
    ]
    .boxed()
}

/// An operation of a process at nesting `depth` (0 = no more children).
pub fn op(depth: u32) -> BoxedStrategy<Op> {
    if depth == 0 {
        return prop_oneof![60 => table_op(), 1 => Just(Op::Exec)].boxed();
    }
    let body = move || proptest::collection::vec(op(depth - 1), 0..10);
    prop_oneof![
        60 => table_op(),
        1 => Just(Op::Exec),
        2 => body().prop_map(Op::Fork),
        2 => (limit_arg(), body()).prop_map(|(nofile, ops)| Op::Share { nofile, ops }),
    ]
    .boxed()
}

fn top_op() -> BoxedStrategy<Op> {
    prop_oneof![
        50 => op(2),
        2 => any::<bool>().prop_map(|cloexec| Op::ReserveBegin { cloexec }),
        1 => any::<bool>().prop_map(|cloexec| Op::ReserveEnd { cloexec }),
        1 => Just(Op::ReserveAbort),
    ]
    .boxed()
}

/// A whole case: an initial limit and up to `max_len` top-level operations.
pub fn case(max_len: usize) -> impl Strategy<Value = Case> {
    (
        initial_nofile(),
        proptest::collection::vec(top_op(), 1..=max_len),
    )
        .prop_map(|(nofile, ops)| Case::new(nofile, ops))
}

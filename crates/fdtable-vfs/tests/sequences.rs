//! Differential property tests: random sequences of syscalls on regular files (several fds,
//! shared and separate open file descriptions), on a non-blocking pipe, and on a socket pair,
//! replayed on the kernel and on the layer; every result, errno and byte read must match.

mod common;

use common::{Log, Sys, diff, diff_forking};
use fdtable_vfs::uapi::*;
use proptest::prelude::*;

/// Deterministic contents for the `i`-th write.
fn data(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j) as u8).collect()
}

// === regular files ===

#[derive(Clone, Debug)]
enum FileOp {
    Write(usize, usize),
    Read(usize, usize),
    Pwrite(usize, usize, i64),
    Pread(usize, usize, i64),
    Lseek(usize, i64, i32),
    Truncate(usize, i64),
    SetFl(usize, u32),
    Fionread(usize),
    Writev(usize, Vec<usize>),
    Readv(usize, Vec<usize>),
    Dup(usize),
    Reopen(u32),
    Close(usize),
    Fork(usize, usize, i64),
}

fn offset() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => 0i64..20_000,
        1 => Just(-1i64),
        1 => (0i64..4).prop_map(|k| k * 4096),
        1 => Just(i64::MAX - 1),
    ]
}

fn file_op() -> impl Strategy<Value = FileOp> {
    let h = 0usize..8;
    let len = prop_oneof![4 => 0usize..64, 2 => 0usize..9000];
    prop_oneof![
        (h.clone(), len.clone()).prop_map(|(h, l)| FileOp::Write(h, l)),
        (h.clone(), len.clone()).prop_map(|(h, l)| FileOp::Read(h, l)),
        (h.clone(), len.clone(), offset()).prop_map(|(h, l, o)| FileOp::Pwrite(h, l, o)),
        (h.clone(), len.clone(), offset()).prop_map(|(h, l, o)| FileOp::Pread(h, l, o)),
        (h.clone(), prop_oneof![offset(), -5000i64..0], 0i32..6)
            .prop_map(|(h, o, w)| FileOp::Lseek(h, o, w)),
        (h.clone(), prop_oneof![0i64..20_000, Just(-1i64)])
            .prop_map(|(h, l)| FileOp::Truncate(h, l)),
        (
            h.clone(),
            prop::sample::select(vec![0, O_APPEND, O_NONBLOCK, O_APPEND | O_RDWR, O_NOATIME])
        )
            .prop_map(|(h, f)| FileOp::SetFl(h, f)),
        h.clone().prop_map(FileOp::Fionread),
        (h.clone(), prop::collection::vec(0usize..300, 0..4))
            .prop_map(|(h, v)| FileOp::Writev(h, v)),
        (h.clone(), prop::collection::vec(0usize..300, 0..4))
            .prop_map(|(h, v)| FileOp::Readv(h, v)),
        h.clone().prop_map(FileOp::Dup),
        prop::sample::select(vec![
            O_RDONLY,
            O_WRONLY,
            O_RDWR,
            O_RDWR | O_APPEND,
            O_WRONLY | O_TRUNC,
            O_RDONLY | O_PATH,
        ])
        .prop_map(FileOp::Reopen),
        h.clone().prop_map(FileOp::Close),
        (h.clone(), 0usize..100, offset()).prop_map(|(h, l, o)| FileOp::Fork(h, l, o)),
    ]
}

fn run_file_ops(s: &mut dyn Sys, log: &mut Log, tmpfs: bool, ops: &[FileOp]) {
    let first = s.open("f", (O_CREAT | O_RDWR) as i32, 0o644);
    let mut fds = vec![log.fd("open", first)];
    for (i, op) in ops.iter().enumerate() {
        let fd = |h: usize| fds[h % fds.len()];
        match op {
            FileOp::Write(h, l) => log.val("write", s.write(fd(*h), &data(i, *l))),
            FileOp::Read(h, l) => log.val("read", s.read(fd(*h), *l)),
            FileOp::Pwrite(h, l, o) => log.val("pwrite", s.pwrite(fd(*h), &data(i, *l), *o)),
            FileOp::Pread(h, l, o) => log.val("pread", s.pread(fd(*h), *l, *o)),
            FileOp::Lseek(h, o, w) => {
                // Data/hole answers are file-system specific; tmpfs is what MemFs models. And
                // tmpfs's `mapping_seek_hole_data` overflows on a page in the last 4 KiB
                // below 2^63 (it rounds up to 2^63, a negative loff_t), so it answers ENXIO or
                // a negative offset there; files that large are left out.
                let huge = s.fstat(fd(*h)).is_ok_and(|st| st.size > 1 << 62);
                let w = if (!tmpfs || huge) && (*w == SEEK_DATA || *w == SEEK_HOLE) {
                    SEEK_SET
                } else {
                    *w
                };
                log.val("lseek", s.lseek(fd(*h), *o, w))
            }
            FileOp::Truncate(h, l) => log.val("ftruncate", s.ftruncate(fd(*h), *l)),
            FileOp::SetFl(h, f) => log.val("setfl", s.fcntl(fd(*h), F_SETFL, *f as i64)),
            FileOp::Fionread(h) => log.val("fionread", s.ioctl_get_int(fd(*h), FIONREAD)),
            FileOp::Writev(h, lens) => {
                let parts: Vec<Vec<u8>> = lens.iter().map(|&l| data(i, l)).collect();
                let refs: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
                log.val("writev", s.writev(fd(*h), &refs))
            }
            FileOp::Readv(h, lens) => log.val("readv", s.readv(fd(*h), lens)),
            FileOp::Dup(h) => {
                let r = s.dup(fd(*h));
                let new = log.fd("dup", r);
                if new >= 0 {
                    fds.push(new);
                }
            }
            FileOp::Reopen(flags) => {
                let r = s.open("f", *flags as i32, 0);
                let new = log.fd("reopen", r);
                if new >= 0 {
                    fds.push(new);
                }
            }
            FileOp::Close(h) => {
                if fds.len() > 1 {
                    let victim = fds.remove(h % fds.len());
                    log.val("close", s.close(victim));
                }
            }
            FileOp::Fork(h, l, o) => {
                s.fork_child(&[
                    common::ChildOp::Write(fd(*h), data(i, *l)),
                    common::ChildOp::Lseek(fd(h + 1), *o, SEEK_CUR),
                ]);
                log.val("after fork", s.lseek(fd(*h), 0, SEEK_CUR));
            }
        }
    }
    for &f in &fds {
        log.val("final pos", s.lseek(f, 0, SEEK_CUR));
        log.val("final flags", s.fcntl(f, F_GETFL, 0));
    }
    log.val("final size", s.fstat(fds[0]).map(|st| st.size));
    if tmpfs {
        log.val("final blocks", s.fstat(fds[0]).map(|st| st.blocks));
    }
    log.val("final content", s.pread(fds[0], 40_000, 0));
}

// === pipes ===

#[derive(Clone, Debug)]
enum PipeOp {
    Write(usize),
    Read(usize),
    Writev(Vec<usize>),
    Readv(Vec<usize>),
    Fionread,
    SetSize(i64),
    Poll,
    CloseRead,
    CloseWrite,
}

fn pipe_op() -> impl Strategy<Value = PipeOp> {
    let len = prop_oneof![
        4 => 0usize..100,
        2 => 0usize..9000,
        1 => (1usize..4).prop_map(|k| k * 4096),
        1 => 60_000usize..70_000,
    ];
    prop_oneof![
        6 => len.clone().prop_map(PipeOp::Write),
        6 => len.prop_map(PipeOp::Read),
        1 => prop::collection::vec(0usize..5000, 0..4).prop_map(PipeOp::Writev),
        1 => prop::collection::vec(0usize..5000, 0..4).prop_map(PipeOp::Readv),
        2 => Just(PipeOp::Fionread),
        1 => prop::sample::select(vec![0i64, 4096, 8192, 10_000, 65536, 1 << 20])
            .prop_map(PipeOp::SetSize),
        1 => Just(PipeOp::Poll),
        1 => Just(PipeOp::CloseRead),
        1 => Just(PipeOp::CloseWrite),
    ]
}

fn run_pipe_ops(s: &mut dyn Sys, log: &mut Log, packet: bool, ops: &[PipeOp]) {
    let flags = O_NONBLOCK | if packet { O_DIRECT } else { 0 };
    let [r, w] = log.fds("pipe2", s.pipe2(flags as i32));
    let (mut r_open, mut w_open) = (true, true);
    for (i, op) in ops.iter().enumerate() {
        match op {
            PipeOp::Write(l) if w_open => log.val("write", s.write(w, &data(i, *l))),
            PipeOp::Read(l) if r_open => log.val("read", s.read(r, *l)),
            PipeOp::Writev(lens) if w_open => {
                let parts: Vec<Vec<u8>> = lens.iter().map(|&l| data(i, l)).collect();
                let refs: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
                log.val("writev", s.writev(w, &refs))
            }
            PipeOp::Readv(lens) if r_open => log.val("readv", s.readv(r, lens)),
            PipeOp::Fionread if r_open => log.val("fionread", s.ioctl_get_int(r, FIONREAD)),
            PipeOp::SetSize(n) if w_open => {
                log.val("setpipe", s.fcntl(w, F_SETPIPE_SZ, *n));
                log.val("getpipe", s.fcntl(w, F_GETPIPE_SZ, 0));
            }
            PipeOp::Poll => {
                if r_open {
                    log.val("poll r", s.poll1(r, POLLIN | POLLOUT));
                }
                if w_open {
                    log.val("poll w", s.poll1(w, POLLIN | POLLOUT));
                }
            }
            PipeOp::CloseRead if r_open => {
                r_open = false;
                log.val("close r", s.close(r));
            }
            PipeOp::CloseWrite if w_open => {
                w_open = false;
                log.val("close w", s.close(w));
            }
            _ => {}
        }
    }
    if r_open {
        log.val("drain", s.read(r, 1 << 21));
        log.val("after drain", s.read(r, 1));
    }
}

// === socket pairs ===

#[derive(Clone, Debug)]
enum SockOp {
    Write(usize, usize),
    Read(usize, usize),
    Fionread(usize),
    Shutdown(usize, i32),
    Poll(usize),
    Close(usize),
}

fn sock_op() -> impl Strategy<Value = SockOp> {
    let end = 0usize..2;
    prop_oneof![
        4 => (end.clone(), 0usize..2048).prop_map(|(e, l)| SockOp::Write(e, l)),
        4 => (end.clone(), 0usize..3000).prop_map(|(e, l)| SockOp::Read(e, l)),
        1 => end.clone().prop_map(SockOp::Fionread),
        1 => (end.clone(), 0i32..4).prop_map(|(e, h)| SockOp::Shutdown(e, h)),
        1 => end.clone().prop_map(SockOp::Poll),
        1 => end.prop_map(SockOp::Close),
    ]
}

fn run_sock_ops(s: &mut dyn Sys, log: &mut Log, ops: &[SockOp]) {
    let fds = log.fds(
        "socketpair",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    let mut open = [true, true];
    for (i, op) in ops.iter().enumerate() {
        match *op {
            SockOp::Write(e, l) if open[e] => log.val("write", s.write(fds[e], &data(i, l))),
            SockOp::Read(e, l) if open[e] => log.val("read", s.read(fds[e], l)),
            SockOp::Fionread(e) if open[e] => {
                log.val("fionread", s.ioctl_get_int(fds[e], FIONREAD))
            }
            SockOp::Shutdown(e, how) if open[e] => log.val("shutdown", s.shutdown(fds[e], how)),
            SockOp::Poll(e) if open[e] => {
                log.val("poll", s.poll1(fds[e], POLLIN | POLLOUT | POLLRDHUP))
            }
            SockOp::Close(e) if open[e] => {
                open[e] = false;
                log.val("close", s.close(fds[e]));
            }
            _ => {}
        }
    }
    for e in 0..2 {
        if open[e] {
            log.val("drain", s.read(fds[e], 1 << 20));
            log.val("after drain", s.read(fds[e], 1));
        }
    }
}

/// 96 cases per property from a fixed seed, so a run is repeatable; `PROPTEST_CASES` and
/// `PROPTEST_RNG_SEED` explore further (the kernel is the oracle, so a new divergence found
/// that way is either a layer bug or a kernel quirk to note in the docs).
fn config() -> ProptestConfig {
    let env = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            env.cases
        } else {
            96
        },
        rng_seed: match env.rng_seed {
            proptest::test_runner::RngSeed::Random => {
                proptest::test_runner::RngSeed::Fixed(0x5eed_f11e)
            }
            seed => seed,
        },
        ..env
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn regular_file_sequences(ops in prop::collection::vec(file_op(), 1..40)) {
        diff_forking("file sequence", |s, log, tmpfs| run_file_ops(s, log, tmpfs, &ops));
    }

    #[test]
    fn pipe_sequences(
        packet in any::<bool>(),
        ops in prop::collection::vec(pipe_op(), 1..40),
    ) {
        diff("pipe sequence", |s, log, _| run_pipe_ops(s, log, packet, &ops));
    }

    #[test]
    fn socketpair_sequences(ops in prop::collection::vec(sock_op(), 1..40)) {
        diff("socketpair sequence", |s, log, _| run_sock_ops(s, log, &ops));
    }
}

//! The seccomp-bpf filter installed in the first process before it executes the program
//! (and inherited by everything it starts): `SECCOMP_RET_ALLOW` for the calls that take and
//! return no descriptor and no path, `SECCOMP_RET_TRACE` for everything else, unknown numbers
//! included, so that only descriptor calls stop in the supervisor.
//!
//! Since Linux 5.11 the kernel caches, per call number, a filter result that depends on the
//! number alone: the allowed calls then cost nothing at all. A few calls are traced only for
//! some argument values (mmap of a file, RLIMIT_NOFILE, `PR_SET_MM`, `P_PIDFD`,
//! `CLONE_FILES`, a dynamic clock's id, `KEYCTL_WATCH_KEY`); those few run the filter each
//! time.
//!
//! Calls from a foreign ABI (the i386 `int 0x80` entry of a 64-bit process) get ENOSYS from
//! the filter itself: their numbers mean other calls, and a tracer stop could not tell them
//! apart cheaply. x32 numbers (bit 30) are traced and refused with a note.

use crate::syscalls::{self, Kind};

/// `struct sock_filter`.
pub type Insn = libc::sock_filter;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGT_K: u16 = 0x25;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
const BPF_ALU_AND_K: u16 = 0x54;

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_TRACE`.
pub const RET_TRACE: u32 = 0x7ff0_0000;
/// `SECCOMP_RET_ERRNO | ENOSYS`.
pub const RET_ENOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32;

const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Offset of the low 32 bits of argument `i` in `struct seccomp_data`.
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
}

/// A call traced only when one argument's low 32 bits pass a test.
#[derive(Clone, Copy, Debug)]
pub enum ArgTest {
    /// Traced when the argument equals the value.
    Eq(u32),
    /// Traced when the argument has none of these bits.
    Clear(u32),
    /// Traced when the argument has one of these bits.
    Set(u32),
    /// Traced when the argument's bits under the mask (first) equal the value (second).
    Masked(u32, u32),
}

/// The calls traced only for some argument values: (number, argument, test).
pub const CONDITIONAL: &[(u32, u32, ArgTest)] = &[
    // mmap of a file; anonymous mappings ignore the fd.
    (
        libc::SYS_mmap as u32,
        3,
        ArgTest::Clear(libc::MAP_ANONYMOUS as u32),
    ),
    // RLIMIT_NOFILE is virtual; the other limits are the kernel's.
    (
        libc::SYS_getrlimit as u32,
        0,
        ArgTest::Eq(libc::RLIMIT_NOFILE),
    ),
    (
        libc::SYS_setrlimit as u32,
        0,
        ArgTest::Eq(libc::RLIMIT_NOFILE),
    ),
    (
        libc::SYS_prlimit64 as u32,
        1,
        ArgTest::Eq(libc::RLIMIT_NOFILE),
    ),
    // prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, fd).
    (
        libc::SYS_prctl as u32,
        0,
        ArgTest::Eq(libc::PR_SET_MM as u32),
    ),
    // waitid(P_PIDFD, fd, ...).
    (libc::SYS_waitid as u32, 0, ArgTest::Eq(3)),
    // unshare(CLONE_FILES).
    (
        libc::SYS_unshare as u32,
        0,
        ArgTest::Set(libc::CLONE_FILES as u32),
    ),
    // A dynamic clock (FD_TO_CLOCKID: negative, low bits CLOCKFD) names a descriptor.
    (libc::SYS_clock_gettime as u32, 0, CLOCK_FD),
    (libc::SYS_clock_settime as u32, 0, CLOCK_FD),
    (libc::SYS_clock_getres as u32, 0, CLOCK_FD),
    (libc::SYS_clock_adjtime as u32, 0, CLOCK_FD),
    // keyctl(KEYCTL_WATCH_KEY, key, watch_queue_fd, id).
    (libc::SYS_keyctl as u32, 0, ArgTest::Eq(32)),
];

/// A clock id that carries a descriptor: sign bit set, low three bits 3.
const CLOCK_FD: ArgTest = ArgTest::Masked(0x8000_0007, 0x8000_0003);

/// Whether the filter lets call `nr` run untraced whatever its arguments.
pub fn always_allowed(nr: u64) -> bool {
    matches!(syscalls::kind(nr), Kind::Allow)
        && !CONDITIONAL.iter().any(|&(n, _, _)| n as u64 == nr)
}

/// Builds the filter program.
pub fn program() -> Vec<Insn> {
    let mut p = vec![
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(BPF_RET_K, RET_ENOSYS),
        stmt(BPF_LD_W_ABS, OFF_NR),
        // x32 numbers: traced, refused by the supervisor with a note.
        jump(BPF_JGE_K, 0x4000_0000, 0, 1),
        stmt(BPF_RET_K, RET_TRACE),
    ];
    for &(nr, arg, test) in CONDITIONAL {
        // jeq nr ? block : skip; block: load the argument, (mask it,) test it, return.
        let masked = matches!(test, ArgTest::Masked(..));
        p.push(jump(BPF_JEQ_K, nr, 0, if masked { 5 } else { 4 }));
        p.push(stmt(BPF_LD_W_ABS, arg_lo(arg)));
        let (code, k, trace_if_true) = match test {
            ArgTest::Eq(v) => (BPF_JEQ_K, v, true),
            ArgTest::Set(m) => (BPF_JSET_K, m, true),
            ArgTest::Clear(m) => (BPF_JSET_K, m, false),
            ArgTest::Masked(m, v) => {
                p.push(stmt(BPF_ALU_AND_K, m));
                (BPF_JEQ_K, v, true)
            }
        };
        // jt -> first return, jf -> second.
        p.push(jump(code, k, 0, 1));
        let (first, second) = if trace_if_true {
            (RET_TRACE, RET_ALLOW)
        } else {
            (RET_ALLOW, RET_TRACE)
        };
        p.push(stmt(BPF_RET_K, first));
        p.push(stmt(BPF_RET_K, second));
    }
    // The always-allowed numbers as ranges: jgt hi ? next : (jge lo ? ALLOW : TRACE).
    for (lo, hi) in allowed_ranges() {
        p.push(jump(BPF_JGT_K, hi, 3, 0));
        p.push(jump(BPF_JGE_K, lo, 0, 1));
        p.push(stmt(BPF_RET_K, RET_ALLOW));
        p.push(stmt(BPF_RET_K, RET_TRACE));
    }
    p.push(stmt(BPF_RET_K, RET_TRACE));
    p
}

/// Maximal runs of consecutive always-allowed numbers, ascending.
fn allowed_ranges() -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for nr in 0..syscalls::NR_MAX as u32 {
        if !always_allowed(nr as u64) {
            continue;
        }
        match out.last_mut() {
            Some((_, hi)) if *hi + 1 == nr => *hi = nr,
            _ => out.push((nr, nr)),
        }
    }
    out
}

/// Runs `prog` on one `seccomp_data` (arch, nr, args), as the kernel would: the test
/// interpreter for the opcodes [`program`] uses.
pub fn evaluate(prog: &[Insn], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    let word = |off: u32| -> u32 {
        match off {
            OFF_NR => nr,
            OFF_ARCH => arch,
            o if o >= 16 && (o - 16) % 8 == 0 => args[((o - 16) / 8) as usize] as u32,
            o => panic!("unexpected load at {o}"),
        }
    };
    let mut a = 0u32;
    let mut pc = 0usize;
    loop {
        let i = prog[pc];
        pc += 1;
        let taken = match i.code {
            BPF_LD_W_ABS => {
                a = word(i.k);
                continue;
            }
            BPF_RET_K => return i.k,
            BPF_ALU_AND_K => {
                a &= i.k;
                continue;
            }
            BPF_JEQ_K => a == i.k,
            BPF_JGT_K => a > i.k,
            BPF_JGE_K => a >= i.k,
            BPF_JSET_K => a & i.k != 0,
            c => panic!("unexpected opcode {c:#x}"),
        };
        pc += if taken { i.jt } else { i.jf } as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_gets_what_its_kind_says() {
        let prog = program();
        assert!(prog.len() < 4096, "{} instructions", prog.len());
        for nr in 0..600u32 {
            let r = evaluate(&prog, AUDIT_ARCH_X86_64, nr, [0; 6]);
            let conditional = CONDITIONAL.iter().any(|&(n, _, _)| n == nr);
            if conditional {
                continue;
            }
            let want = if always_allowed(nr as u64) {
                RET_ALLOW
            } else {
                RET_TRACE
            };
            assert_eq!(r, want, "nr {nr} ({:?})", syscalls::name(nr as u64));
        }
        // Calls that must stop in the supervisor.
        for nr in [
            libc::SYS_read,
            libc::SYS_openat,
            libc::SYS_close,
            libc::SYS_clone3,
            libc::SYS_execve,
            libc::SYS_io_uring_setup,
            libc::SYS_stat,
        ] {
            assert_eq!(
                evaluate(&prog, AUDIT_ARCH_X86_64, nr as u32, [0; 6]),
                RET_TRACE
            );
        }
        for nr in [
            libc::SYS_getpid,
            libc::SYS_futex,
            libc::SYS_brk,
            libc::SYS_exit_group,
        ] {
            assert_eq!(
                evaluate(&prog, AUDIT_ARCH_X86_64, nr as u32, [0; 6]),
                RET_ALLOW
            );
        }
        // Unknown and x32 numbers are traced; foreign ABIs get ENOSYS.
        assert_eq!(evaluate(&prog, AUDIT_ARCH_X86_64, 470, [0; 6]), RET_TRACE);
        assert_eq!(
            evaluate(&prog, AUDIT_ARCH_X86_64, 0x4000_0000 | 2, [0; 6]),
            RET_TRACE
        );
        assert_eq!(evaluate(&prog, 0x4000_0003, 5, [0; 6]), RET_ENOSYS);
    }

    #[test]
    fn conditional_calls() {
        let prog = program();
        let ev = |nr: i64, args: [u64; 6]| evaluate(&prog, AUDIT_ARCH_X86_64, nr as u32, args);
        let anon = libc::MAP_ANONYMOUS as u64 | libc::MAP_PRIVATE as u64;
        assert_eq!(
            ev(libc::SYS_mmap, [0, 4096, 3, anon, u64::MAX, 0]),
            RET_ALLOW
        );
        assert_eq!(ev(libc::SYS_mmap, [0, 4096, 1, 2, 3, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_prlimit64, [0, 7, 0, 1, 0, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_prlimit64, [0, 3, 0, 1, 0, 0]), RET_ALLOW);
        assert_eq!(ev(libc::SYS_getrlimit, [7, 0, 0, 0, 0, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_setrlimit, [4, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(
            ev(libc::SYS_unshare, [0x400 | 0x20000, 0, 0, 0, 0, 0]),
            RET_TRACE
        );
        assert_eq!(ev(libc::SYS_unshare, [0x20000, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(ev(libc::SYS_waitid, [3, 5, 0, 4, 0, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_waitid, [0, 5, 0, 4, 0, 0]), RET_ALLOW);
        assert_eq!(ev(libc::SYS_prctl, [35, 13, 3, 0, 0, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_prctl, [15, 0, 0, 0, 0, 0]), RET_ALLOW);
        // Clock ids: a dynamic clock's (FD_TO_CLOCKID) is traced, the others not.
        let clock = |id: i32| id as u32 as u64;
        for nr in [
            libc::SYS_clock_gettime,
            libc::SYS_clock_settime,
            libc::SYS_clock_getres,
            libc::SYS_clock_adjtime,
        ] {
            for fd in [0, 3, 1000, crate::syscalls::CLOCK_FD_MAX] {
                let id = crate::syscalls::fd_clock(fd);
                assert_eq!(ev(nr, [clock(id), 0, 0, 0, 0, 0]), RET_TRACE, "{nr} {fd}");
            }
            for id in [0, 1, 7, 11, ((!42) << 3) | 2, ((!42) << 3) | 6, -1] {
                assert_eq!(ev(nr, [clock(id), 0, 0, 0, 0, 0]), RET_ALLOW, "{nr} {id}");
            }
        }
        assert_eq!(
            ev(libc::SYS_clock_nanosleep, [clock(-29), 0, 0, 0, 0, 0]),
            RET_ALLOW
        );
        assert_eq!(ev(libc::SYS_keyctl, [32, 0, 3, 1, 0, 0]), RET_TRACE);
        assert_eq!(ev(libc::SYS_keyctl, [0, 0, 0, 0, 0, 0]), RET_ALLOW);
    }
}

//! The seccomp-bpf filter installed in the program's process before it executes the
//! program, inherited by everything it starts.
//!
//! Per call number, from the catalogue ([`fdtable_syscalls`]) and the policy
//! ([`crate::policy`]): `SECCOMP_RET_ALLOW` for calls that take no descriptor or only use
//! descriptors and paths (the kernel caches that per number, so they cost nothing),
//! `SECCOMP_RET_USER_NOTIF` for calls that change or report the table, `SECCOMP_RET_ERRNO`
//! for what is refused without a note (signals aimed at the supervisor); a few calls are decided on one or two argument registers (never on
//! memory): `fcntl` and `ioctl` by command, rlimits by resource, `clone` by flags, signals
//! and scheduling calls by whether they aim at the supervisor.
//!
//! Calls from another ABI (the i386 `int 0x80` entry, x32 numbers) get ENOSYS: their
//! numbers mean other calls.

use crate::policy;
use fdtable_syscalls::{self as cat, Cond, Effect};

/// `struct sock_filter`.
pub type Insn = libc::sock_filter;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGT_K: u16 = 0x25;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
const BPF_ALU_AND_K: u16 = 0x54;
const BPF_ALU_RSH_K: u16 = 0x74;

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `__X32_SYSCALL_BIT`: the x32 ABI's calls, which arrive as `AUDIT_ARCH_X86_64`.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Whether `nr` is an x32 call's number (the bit, and a number in the x32 table's range).
pub fn is_x32(nr: u32) -> bool {
    nr & X32_SYSCALL_BIT != 0 && nr & !X32_SYSCALL_BIT < 1024
}
/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_USER_NOTIF`.
pub const RET_NOTIFY: u32 = 0x7fc0_0000;
/// `SECCOMP_RET_ERRNO | errno`.
pub const fn ret_errno(e: i32) -> u32 {
    0x0005_0000 | (e as u32 & 0xffff)
}

const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Offset of the low 32 bits of argument `i` in `struct seccomp_data`.
const fn arg_lo(i: u8) -> u32 {
    16 + 8 * i as u32
}
const fn arg_hi(i: u8) -> u32 {
    arg_lo(i) + 4
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

/// What the filter is built for.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The supervisor's process id and its threads' ids: signals, rlimits and scheduling
    /// aimed at them are refused.
    pub supervisor: Vec<i32>,
    /// Notify `prctl(PR_SET_DUMPABLE)` and `prctl(PR_GET_DUMPABLE)` (a supervisor without
    /// `CAP_SYS_PTRACE` keeps the flag for the program).
    pub dumpable: bool,
    /// Notify the process calls (fork, vfork, clone, clone3, execve, execveat): for
    /// `--floor-untraced`, a measurement of a supervisor that does not trace.
    pub notify_processes: bool,
}

/// One test of a rule, on the low 32 bits of argument registers.
#[derive(Clone, Copy, Debug)]
enum Test {
    /// The argument equals the value.
    Eq(u8, u32),
    /// The argument has one of the bits.
    Set(u8, u32),
    /// Both arguments equal their values.
    Eq2(u8, u32, u8, u32),
    /// The argument is within the inclusive range.
    Range(u8, u32, u32),
    /// The ioctl command's type byte (argument 1, bits 8..16) equals.
    IoctlType(u32),
    /// `prlimit64`'s resource is `RLIMIT_NOFILE` and its new limit (argument 2) is not NULL.
    NewNofile,
}

/// A rule: the first test that matches gives its action; otherwise `default`.
struct Rule {
    nr: u32,
    tests: Vec<(Test, u32)>,
    default: u32,
}

fn rules(ctx: &Context) -> Vec<Rule> {
    use libc::EPERM;
    let deny = ret_errno(EPERM);
    let sup: Vec<u32> = ctx.supervisor.iter().map(|&p| p as u32).collect();
    let aimed =
        |arg: u8| -> Vec<(Test, u32)> { sup.iter().map(|&p| (Test::Eq(arg, p), deny)).collect() };
    let mut out = Vec::new();
    let nr = |name: &str| cat::by_name(name).map_or(u32::MAX, |s| s.nr);
    if ctx.notify_processes {
        for name in ["fork", "vfork", "clone", "clone3", "execve", "execveat"] {
            out.push(Rule {
                nr: nr(name),
                tests: Vec::new(),
                default: RET_NOTIFY,
            });
        }
    }
    // fcntl: the commands that change or report the table; F_SETOWN aimed at the supervisor
    // (its process group too: it is a group leader); F_SETOWN_EX (the owner in memory).
    let setown = cat::consts::F_SETOWN;
    let mut t: Vec<(Test, u32)> = sup
        .iter()
        .flat_map(|&p| [p, (p as i32).wrapping_neg() as u32])
        .map(|who| (Test::Eq2(1, setown, 2, who), deny))
        .collect();
    t.push((Test::Eq(1, cat::consts::F_SETOWN_EX), RET_NOTIFY));
    t.extend(
        cat::fcntl::COMMANDS
            .iter()
            .filter(|c| cat::fcntl::touches_table(c.cmd))
            .map(|c| (Test::Eq(1, c.cmd), RET_NOTIFY)),
    );
    out.push(Rule {
        nr: nr("fcntl"),
        tests: t,
        default: RET_ALLOW,
    });
    // ioctl: the owner-setting commands, the known commands, the use-only types, everything
    // else notified.
    let mut t: Vec<(Test, u32)> = cat::ioctl::SETS_OWNER
        .iter()
        .map(|&c| (Test::Eq(1, c), RET_NOTIFY))
        .collect();
    t.extend(
        cat::ioctl::COMMANDS
            .iter()
            .map(|c| (Test::Eq(1, c.cmd), RET_NOTIFY)),
    );
    t.extend(
        cat::ioctl::USE_ONLY
            .iter()
            .map(|&(c, _)| (Test::Eq(1, c), RET_ALLOW)),
    );
    t.extend(
        cat::ioctl::PRIVATE
            .iter()
            .map(|&(lo, hi, _)| (Test::Range(1, lo, hi), RET_NOTIFY)),
    );
    t.extend(
        cat::ioctl::USE_ONLY_TYPES
            .iter()
            .map(|&(ty, _)| (Test::IoctlType(ty as u32), RET_ALLOW)),
    );
    out.push(Rule {
        nr: nr("ioctl"),
        tests: t,
        default: RET_NOTIFY,
    });
    // Conditional creations, from the catalogue's conditions (all on registers).
    for s in cat::SYSCALLS {
        if let Effect::CreateIf(conds, _) = s.effect {
            let (mut tests, default) = cond_tests(conds);
            if s.name == "seccomp" {
                // Strict mode: refused (`policy::refusal`).
                tests.push((
                    Test::Eq(0, crate::policy::SECCOMP_SET_MODE_STRICT as u32),
                    RET_NOTIFY,
                ));
            }
            if s.name == "bpf" {
                // A program run in the caller may create and close descriptors.
                tests.extend(
                    cat::bpf::RUNNING
                        .iter()
                        .map(|&(v, _)| (Test::Eq(0, v as u32), RET_NOTIFY)),
                );
            }
            out.push(Rule {
                nr: s.nr,
                tests,
                default,
            });
        }
    }
    // clone: CLONE_UNTRACED (refused) and CLONE_PIDFD (a pidfd is installed) are notified.
    out.push(Rule {
        nr: nr("clone"),
        tests: vec![(
            Test::Set(
                0,
                (cat::consts::CLONE_UNTRACED | cat::consts::CLONE_PIDFD) as u32,
            ),
            RET_NOTIFY,
        )],
        default: RET_ALLOW,
    });
    out.push(Rule {
        nr: nr("unshare"),
        tests: vec![(Test::Set(0, cat::consts::CLONE_FILES as u32), RET_NOTIFY)],
        default: RET_ALLOW,
    });
    // RLIMIT_NOFILE with a new value: notified (the library follows the kernel's limit).
    let nofile = cat::consts::RLIMIT_NOFILE as u32;
    out.push(Rule {
        nr: nr("setrlimit"),
        tests: vec![(Test::Eq(0, nofile), RET_NOTIFY)],
        default: RET_ALLOW,
    });
    let mut t = aimed(0);
    t.push((Test::NewNofile, RET_NOTIFY));
    out.push(Rule {
        nr: nr("prlimit64"),
        tests: t,
        default: RET_ALLOW,
    });
    // waitid(P_PIDFD): a traced child whose pidfd is readable must be reapable
    // (`calls::process::waitid_pidfd`).
    out.push(Rule {
        nr: nr("waitid"),
        tests: vec![(Test::Eq(0, crate::calls::process::P_PIDFD), RET_NOTIFY)],
        default: RET_ALLOW,
    });
    // Signals and scheduling calls aimed at the supervisor.
    let mut t = aimed(0);
    for &p in &sup {
        t.push((Test::Eq(0, (p as i32).wrapping_neg() as u32), deny));
    }
    // kill(-1, sig): carried out by the supervisor for every other process.
    t.push((Test::Eq(0, u32::MAX), RET_NOTIFY));
    out.push(Rule {
        nr: nr("kill"),
        tests: t,
        default: RET_ALLOW,
    });
    for name in [
        "tkill",
        "rt_sigqueueinfo",
        "process_vm_readv",
        "process_vm_writev",
        "sched_setaffinity",
        "sched_setscheduler",
        "sched_setparam",
        "sched_setattr",
        "pidfd_open",
    ] {
        let default = if name == "pidfd_open" {
            RET_NOTIFY
        } else {
            RET_ALLOW
        };
        out.push(Rule {
            nr: nr(name),
            tests: aimed(0),
            default,
        });
    }
    for name in ["tgkill", "rt_tgsigqueueinfo"] {
        let mut t = aimed(0);
        t.extend(aimed(1));
        out.push(Rule {
            nr: nr(name),
            tests: t,
            default: RET_ALLOW,
        });
    }
    // setpriority(which, who) and ioprio_set(which, who): the supervisor, or its group;
    // every process of a user (PRIO_USER, IOPRIO_WHO_USER) is notified (it may be the
    // supervisor's user).
    for (name, user) in [("setpriority", 2), ("ioprio_set", 3)] {
        let mut t = aimed(1);
        t.push((Test::Eq(0, user), RET_NOTIFY));
        out.push(Rule {
            nr: nr(name),
            tests: t,
            default: RET_ALLOW,
        });
    }
    // prctl: strict seccomp mode (refused, `policy::refusal`), and the dumpable flag if the
    // supervisor keeps it.
    let mut t = vec![(
        Test::Eq2(
            0,
            libc::PR_SET_SECCOMP as u32,
            1,
            crate::policy::SECCOMP_MODE_STRICT as u32,
        ),
        RET_NOTIFY,
    )];
    if ctx.dumpable {
        t.push((Test::Eq(0, libc::PR_SET_DUMPABLE as u32), RET_NOTIFY));
        t.push((Test::Eq(0, libc::PR_GET_DUMPABLE as u32), RET_NOTIFY));
    }
    out.push(Rule {
        nr: nr("prctl"),
        tests: t,
        default: RET_ALLOW,
    });
    out
}

/// The tests (and default) that notify exactly when every condition holds.
fn cond_tests(conds: &[Cond]) -> (Vec<(Test, u32)>, u32) {
    match conds {
        [Cond::Is { arg, value, .. }] => {
            (vec![(Test::Eq(*arg, *value as u32), RET_NOTIFY)], RET_ALLOW)
        }
        [Cond::HasAll { arg, bits, .. }] => {
            (vec![(Test::Set(*arg, *bits as u32), RET_NOTIFY)], RET_ALLOW)
        }
        [Cond::HasNone { arg, bits, .. }] => {
            (vec![(Test::Set(*arg, *bits as u32), RET_ALLOW)], RET_NOTIFY)
        }
        [Cond::OneOf { arg, values }] => (
            values
                .iter()
                .map(|&(v, _)| (Test::Eq(*arg, v as u32), RET_NOTIFY))
                .collect(),
            RET_ALLOW,
        ),
        [
            Cond::Is {
                arg: a, value: v, ..
            },
            Cond::Is {
                arg: b, value: w, ..
            },
        ] => (
            vec![(Test::Eq2(*a, *v as u32, *b, *w as u32), RET_NOTIFY)],
            RET_ALLOW,
        ),
        _ => panic!("the filter cannot test {conds:?}"),
    }
}

/// Emits `rule`'s block, preceded by the number check that jumps over it.
fn emit_rule(p: &mut Vec<Insn>, r: &Rule) {
    let mut block = Vec::new();
    for &(test, action) in &r.tests {
        match test {
            Test::Eq(a, v) | Test::Set(a, v) => {
                let code = if matches!(test, Test::Eq(..)) {
                    BPF_JEQ_K
                } else {
                    BPF_JSET_K
                };
                block.push(stmt(BPF_LD_W_ABS, arg_lo(a)));
                block.push(jump(code, v, 0, 1));
                block.push(stmt(BPF_RET_K, action));
            }
            Test::Eq2(a, v, b, w) => {
                block.push(stmt(BPF_LD_W_ABS, arg_lo(a)));
                block.push(jump(BPF_JEQ_K, v, 0, 3));
                block.push(stmt(BPF_LD_W_ABS, arg_lo(b)));
                block.push(jump(BPF_JEQ_K, w, 0, 1));
                block.push(stmt(BPF_RET_K, action));
            }
            Test::Range(a, lo, hi) => {
                block.push(stmt(BPF_LD_W_ABS, arg_lo(a)));
                // Below `lo`: past the next two; above `hi`: past the return.
                block.push(jump(BPF_JGE_K, lo, 0, 2));
                block.push(jump(BPF_JGT_K, hi, 1, 0));
                block.push(stmt(BPF_RET_K, action));
            }
            Test::IoctlType(ty) => {
                block.push(stmt(BPF_LD_W_ABS, arg_lo(1)));
                block.push(stmt(BPF_ALU_RSH_K, 8));
                block.push(stmt(BPF_ALU_AND_K, 0xff));
                block.push(jump(BPF_JEQ_K, ty, 0, 1));
                block.push(stmt(BPF_RET_K, action));
            }
            Test::NewNofile => {
                block.push(stmt(BPF_LD_W_ABS, arg_lo(1)));
                block.push(jump(BPF_JEQ_K, cat::consts::RLIMIT_NOFILE as u32, 0, 5));
                block.push(stmt(BPF_LD_W_ABS, arg_lo(2)));
                block.push(jump(BPF_JEQ_K, 0, 0, 2));
                block.push(stmt(BPF_LD_W_ABS, arg_hi(2)));
                block.push(jump(BPF_JEQ_K, 0, 1, 0));
                block.push(stmt(BPF_RET_K, action));
            }
        }
    }
    block.push(stmt(BPF_RET_K, r.default));
    assert!(block.len() < 256, "the rule for call {} is too long", r.nr);
    p.push(stmt(BPF_LD_W_ABS, OFF_NR));
    p.push(jump(BPF_JEQ_K, r.nr, 0, block.len() as u8));
    p.extend(block);
}

/// The action for call `nr` that does not depend on its arguments.
pub fn static_action(nr: u32) -> u32 {
    let Some(s) = cat::by_nr(nr as u64) else {
        // Unknown to the catalogue: refused by the supervisor with a note.
        return RET_NOTIFY;
    };
    if policy::notified(s) {
        return RET_NOTIFY;
    }
    match s.effect {
        Effect::None | Effect::Obsolete | Effect::Fork | Effect::Vfork => RET_ALLOW,
        Effect::Rlimit(r) if r.new.is_none() => RET_ALLOW,
        _ => RET_NOTIFY,
    }
}

/// Builds the filter program.
pub fn program(ctx: &Context) -> Vec<Insn> {
    let mut p = vec![
        // Other ABIs (i386's `int 0x80`, a 32-bit program) and x32 numbers (bit 30): their
        // numbers mean other calls. The supervisor refuses them with a note.
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(BPF_RET_K, RET_NOTIFY),
        stmt(BPF_LD_W_ABS, OFF_NR),
        jump(BPF_JGE_K, X32_SYSCALL_BIT, 0, 1),
        stmt(BPF_RET_K, RET_NOTIFY),
    ];
    let rules = rules(ctx);
    for r in &rules {
        emit_rule(&mut p, r);
    }
    // The static actions as ranges of equal action: jgt hi ? next : ret action.
    p.push(stmt(BPF_LD_W_ABS, OFF_NR));
    let conditional = |nr: u32| rules.iter().any(|r| r.nr == nr);
    let mut ranges: Vec<(u32, u32, u32)> = Vec::new();
    for nr in 0..cat::NR_END + 64 {
        if conditional(nr) {
            continue;
        }
        let a = static_action(nr);
        match ranges.last_mut() {
            Some((_, hi, act)) if *act == a && *hi + 1 == nr => *hi = nr,
            _ => ranges.push((nr, nr, a)),
        }
    }
    // Conditional numbers were handled above, so a range may jump over them.
    for (_, hi, act) in &ranges {
        p.push(jump(BPF_JGT_K, *hi, 1, 0));
        p.push(stmt(BPF_RET_K, *act));
    }
    p.push(stmt(BPF_RET_K, RET_NOTIFY));
    assert!(p.len() < 4096, "{} instructions", p.len());
    p
}

/// Runs `prog` on one `seccomp_data` (arch, nr, args), as the kernel would: the test
/// interpreter for the opcodes [`program`] uses.
pub fn evaluate(prog: &[Insn], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    let word = |off: u32| -> u32 {
        match off {
            OFF_NR => nr,
            OFF_ARCH => arch,
            o if o >= 16 && (o - 16) % 4 == 0 => {
                let i = ((o - 16) / 8) as usize;
                let v = args[i];
                if (o - 16) % 8 == 0 {
                    v as u32
                } else {
                    (v >> 32) as u32
                }
            }
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
            BPF_ALU_RSH_K => {
                a >>= i.k;
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
mod tests;

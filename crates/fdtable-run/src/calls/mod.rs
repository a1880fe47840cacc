//! What the supervisor does with each notified call, by family: the catalogue
//! ([`fdtable_syscalls`]) says what the call does to a table, [`crate::policy`] what is
//! refused, and one module per family decides in the library and answers or lets the call
//! run.
//!
//! - [`create`]: every call that creates descriptors (the open family, sockets, pipes,
//!   pidfds, ... and `recvmsg`, unknown `ioctl`s, BPF programs run in the caller);
//! - [`dup`]: `dup`, `dup2`, `dup3`, `F_DUPFD`, `F_DUPFD_CLOEXEC`;
//! - [`close`]: `close`, `close_range`;
//! - [`cloexec`]: `F_GETFD`, `F_SETFD`, `FIOCLEX`, `FIONCLEX`;
//! - [`process`]: `unshare`, `RLIMIT_NOFILE`, `kill(-1)`, `pidfd_send_signal`,
//!   `F_SETOWN_EX`, `FIOSETOWN`, `SIOCSPGRP`, `PR_SET_DUMPABLE`, `UFFDIO_API`,
//!   `waitid(P_PIDFD)`.

pub mod cloexec;
pub mod close;
pub mod create;
pub mod describe;
pub mod dup;
pub mod process;

use crate::policy;
use crate::sup::{Reply, State};
use fdtable_syscalls::{self as cat, Effect, fcntl, ioctl};

/// Decides call `nr` of task `tid`, whose previous call is settled.
pub fn decide(st: &mut State, tid: i32, nr: u64, args: &[u64; 6]) -> Reply {
    let sc = cat::by_nr(nr);
    if let Some(r) = policy::refusal(nr, sc, args) {
        st.stats.refused += 1;
        st.note(r.note);
        return Reply::Errno(r.errno);
    }
    let Some(sc) = sc else {
        return Reply::Errno(libc::ENOSYS);
    };
    match sc.effect {
        Effect::Create(c) => create::create(st, tid, sc, c, args),
        Effect::CreateIf(conds, c) if cat::all_hold(conds, args) => {
            create::create(st, tid, sc, c, args)
        }
        Effect::CreateIf(..) if sc.name == "bpf" && cat::bpf::runs_program(args[0]) => {
            create::anywhere(st, tid)
        }
        Effect::Close => close::close(st, tid, args[0] as u32),
        Effect::CloseRange => close::close_range(st, tid, args),
        Effect::Dup => dup::dup(st, tid, args[0] as u32, None, false),
        Effect::Dup2 => dup::dup3(st, tid, args, false),
        Effect::Dup3 => dup::dup3(st, tid, args, true),
        Effect::Fcntl if args[1] as u32 == cat::consts::F_SETOWN_EX => {
            process::set_owner(st, tid, args, true)
        }
        Effect::Ioctl if cat::ioctl::SETS_OWNER.contains(&(args[1] as u32)) => {
            process::set_owner(st, tid, args, false)
        }
        Effect::Fcntl => {
            let fd = args[0] as u32;
            match fcntl::by_value(args[1] as u32).map(|c| c.effect) {
                Some(fcntl::Effect::DupFd { cloexec }) => {
                    dup::dup(st, tid, fd, Some(args[2] as u32), cloexec)
                }
                Some(fcntl::Effect::GetFd) => cloexec::get(st, tid, fd),
                Some(fcntl::Effect::SetFd) => cloexec::set(
                    st,
                    tid,
                    fd,
                    args[2] & fdtable_syscalls::consts::FD_CLOEXEC != 0,
                    false,
                ),
                _ => Reply::Continue,
            }
        }
        Effect::Ioctl => {
            let fd = args[0] as u32;
            let cmd = args[1] as u32;
            match ioctl::by_value(cmd).map(|c| c.effect) {
                Some(ioctl::Effect::SetCloexec(on)) => cloexec::set(st, tid, fd, on, true),
                Some(ioctl::Effect::Create(c) | ioctl::Effect::CreateInStruct(c)) => {
                    create::by_ioctl(st, tid, c, args)
                }
                Some(ioctl::Effect::Later(_)) => process::uffdio_api(st, tid, args),
                None if ioctl::use_only(cmd) => Reply::Continue,
                // A driver's command: it may install descriptors at the lowest free numbers.
                None => create::unbounded(st, tid, None, "ioctl", args),
            }
        }
        Effect::Recv { flags_arg } => create::recv(st, tid, sc, flags_arg, args),
        Effect::Clone => create::clone_pidfd(st, tid, args),
        Effect::Clone3 => create::clone3(st, tid, args),
        Effect::Unshare => process::unshare(st, tid),
        Effect::Exec => {
            st.exec_call(tid);
            Reply::Continue
        }
        Effect::Rlimit(r) => process::rlimit(st, tid, r, args),
        Effect::None => match sc.name {
            "kill" => process::kill_all(st, tid, args),
            "waitid" => process::waitid_pidfd(st, tid, args),
            "pidfd_send_signal" => process::pidfd_send_signal(st, tid, args),
            "prctl" => process::prctl_dumpable(st, tid, args),
            "setpriority" | "ioprio_set" => process::user_priority(st, tid, sc.name, args),
            _ => Reply::Continue,
        },
        _ => Reply::Continue,
    }
}

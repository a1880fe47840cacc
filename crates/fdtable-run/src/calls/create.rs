//! Calls that create descriptors: the library reserves the lowest free number(s) and the call
//! runs (`CONTINUE`) in the caller's context; what it installed is settled at the task's
//! next notification or event by probing the reserved numbers (or, for calls that install
//! an unknown number of descriptors, the lowest free numbers upward).

use crate::sup::settle::Settle;
use crate::sup::table::Expect;
use crate::sup::{Reply, State};
use fdtable_syscalls::consts::{AF_UNIX, CLONE_PIDFD, MSG_CMSG_CLOEXEC, O_CLOEXEC, O_PATH};
use fdtable_syscalls::{Cloexec, Count, Create, Order, Syscall};

/// Where the new descriptor's close-on-exec bit comes from, for these arguments (`None`: in
/// memory, read back from the kernel).
pub fn cloexec_of(c: Cloexec, args: &[u64; 6]) -> Option<bool> {
    match c {
        Cloexec::Never => Some(false),
        Cloexec::Always => Some(true),
        Cloexec::Flag { arg, bit, .. } => Some(args[arg as usize] & bit != 0),
        Cloexec::Field { .. } => None,
    }
}

/// A creation: reserve, record, let it run.
pub fn create(st: &mut State, tid: i32, sc: &Syscall, c: Create, args: &[u64; 6]) -> Reply {
    let count = match c.count {
        Count::Pair(_) => 2,
        Count::One | Count::OneAt(_) => 1,
    };
    let cloexec = cloexec_of(c.cloexec, args);
    // The opens take O_PATH in the same flags as O_CLOEXEC.
    let opath = match c.cloexec {
        Cloexec::Flag { arg, bit, .. } if c.order == Order::ReserveFirst && bit == O_CLOEXEC => {
            Some(args[arg as usize] & O_PATH != 0)
        }
        Cloexec::Field { .. } => None,
        _ if c.order == Order::ReserveFirst => None,
        _ => Some(false),
    };
    let name = sc.name;
    let origin = st.origin(tid, || super::describe::call(tid, name, args), 0);
    let e = Expect {
        cloexec,
        opath,
        origin,
        // Another process's descriptor, of any kind.
        foreign: name == "pidfd_getfd",
        ..Expect::default()
    };
    st.nofile_to_decide(tid);
    let got = st.reserve(tid, 0, count, &e).unwrap_or_default();
    st.in_flight(tid, Settle::Numbers, got);
    Reply::Continue
}

/// A descriptor-creating `ioctl` (its own descriptor's lookup and checks are the kernel's).
pub fn by_ioctl(st: &mut State, tid: i32, c: Cloexec, args: &[u64; 6]) -> Reply {
    let origin = st.origin(tid, || super::describe::call(tid, "ioctl", args), 0);
    let e = Expect {
        cloexec: cloexec_of(c, args),
        opath: Some(false),
        origin,
        ..Expect::default()
    };
    st.nofile_to_decide(tid);
    let got = st.reserve(tid, 0, 1, &e).unwrap_or_default();
    st.in_flight(tid, Settle::Numbers, got);
    Reply::Continue
}

/// `clone(CLONE_PIDFD)`: the pidfd (close-on-exec) is settled at the clone event.
pub fn clone_pidfd(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    if args[0] & CLONE_PIDFD == 0 {
        return Reply::Continue;
    }
    let origin = st.origin(tid, || "clone(CLONE_PIDFD)".into(), 0);
    let e = Expect {
        cloexec: Some(true),
        opath: Some(false),
        origin,
        ..Expect::default()
    };
    st.nofile_to_decide(tid);
    let got = st.reserve(tid, 0, 1, &e).unwrap_or_default();
    st.in_flight(tid, Settle::ClonePidfd, got);
    Reply::Continue
}

/// `clone3(args, size)`: its flags live in memory, which the supervisor never reads (another
/// thread can change them after any check, and a page the program serves itself with
/// userfaultfd would block the reader): a pidfd is reserved in case `CLONE_PIDFD` is set, on
/// a shared table any free number may be taken until it settles, and table sharing and the
/// thread group are read from the kernel at the clone event. A task `CLONE_UNTRACED` kept
/// out of sight is killed when the call returns without a clone event.
pub fn clone3(st: &mut State, tid: i32, _args: &[u64; 6]) -> Reply {
    let origin = st.origin(tid, || "clone3(CLONE_PIDFD)".into(), 0);
    let e = Expect {
        cloexec: Some(true),
        opath: Some(false),
        origin,
        ..Expect::default()
    };
    st.nofile_to_decide(tid);
    let got = st.reserve(tid, 0, 1, &e).unwrap_or_default();
    if st.shared(tid)
        && let Some(t) = st.table(tid)
    {
        t.unbounded = true;
        t.contended = true;
    }
    st.in_flight(tid, Settle::Clone3, got);
    Reply::Continue
}

/// A call that may install an unknown number of descriptors at the lowest free numbers.
pub fn unbounded(
    st: &mut State,
    tid: i32,
    cloexec: Option<bool>,
    name: &str,
    args: &[u64; 6],
) -> Reply {
    let origin = st.origin(tid, || super::describe::call(tid, name, args), 0);
    if st.shared(tid)
        && let Some(t) = st.table(tid)
    {
        t.unbounded = true;
        // Its descriptors may take numbers other calls in flight reserved (the kernel's
        // order decides): what is adopted there is read from the kernel, bits and all.
        t.contended = true;
    }
    st.in_flight(tid, Settle::Unbounded { cloexec, origin }, Vec::new());
    Reply::Continue
}

/// A call that may install descriptors at the lowest free numbers and close any
/// (`bpf(BPF_PROG_TEST_RUN)` of a syscall program): the table is read whole from the kernel
/// when it settles (with a shared one, once nothing else of it is in flight).
pub fn anywhere(st: &mut State, tid: i32) -> Reply {
    if let Some(t) = st.table(tid) {
        t.unbounded = true;
        t.contended = true;
    }
    st.in_flight(tid, Settle::Anywhere, Vec::new());
    Reply::Continue
}

/// `recvmsg`, `recvmmsg`: descriptors arrive only on a Unix socket (`SCM_RIGHTS`,
/// `SCM_PIDFD`); whether a description is one is asked once and remembered.
pub fn recv(st: &mut State, tid: i32, sc: &Syscall, flags_arg: u8, args: &[u64; 6]) -> Reply {
    let fd = args[0] as u32;
    let unix = match st.resolve(tid, fd) {
        crate::sup::settle::Known::Installed => is_unix(st, tid, fd),
        // Not open: the kernel answers EBADF; another thread's call may be changing it.
        crate::sup::settle::Known::Unsure => true,
        _ => false,
    };
    if !unix {
        return Reply::Continue;
    }
    // `MSG_CMSG_CLOEXEC` sets the bit on every descriptor received; without it, `SCM_RIGHTS`
    // descriptors come without it and an `SCM_PIDFD` one with it (a pidfd always is): only
    // the kernel's `fdinfo` tells which is which.
    let cloexec = (args[flags_arg as usize] & MSG_CMSG_CLOEXEC != 0).then_some(true);
    unbounded(st, tid, cloexec, sc.name, args)
}

fn is_unix(st: &mut State, tid: i32, fd: u32) -> bool {
    let Some(task) = st.tasks.get(&tid) else {
        return true;
    };
    let Some(desc) = task.files.fget(fd) else {
        return true;
    };
    let tgid = task.tgid;
    *desc.unix.get_or_init(|| {
        let Ok(copy) = crate::sys::task_getfd(tid, tgid, fd) else {
            return true;
        };
        crate::sys::socket_domain(&copy).is_none_or(|d| d == AF_UNIX)
    })
}

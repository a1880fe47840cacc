//! What `fdtable run` refuses, and why: the calls whose effect on a table the supervisor
//! cannot keep identical in the library, and the calls that would reach the supervisor.
//! The catalogue ([`fdtable_syscalls`]) says what calls do; this module says what the
//! supervisor does not allow.

use fdtable_syscalls::{self as cat, Effect, Later, Syscall, consts};

/// A refusal: the errno returned and the note printed (once per distinct text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The errno.
    pub errno: i32,
    /// Why, naming the call.
    pub note: String,
}

fn refuse(errno: i32, name: &str, why: &str) -> Option<Refusal> {
    let e = fdtable::Errno::new(errno).name().unwrap_or("?");
    Some(Refusal {
        errno,
        note: format!("refused {name}: {why} ({e})"),
    })
}

/// Calls without a table effect that still reach the supervisor: refused ones (`ptrace`,
/// io_uring) and `pidfd_send_signal` (whose target is checked: a `/proc/<pid>` directory may
/// name the supervisor).
pub fn notified(s: &Syscall) -> bool {
    matches!(s.effect, Effect::Trace | Effect::Async) || s.name == "pidfd_send_signal"
}

/// Whether the kernel's own call `s` with these arguments may be interrupted by a signal and
/// return `-ERESTARTSYS` (it may block: an open of a FIFO or a device, a receive, a lock, a
/// driver's ioctl, a wait for a child without `WNOHANG`). The others return it only when the
/// signal came while the notification waited for the supervisor (`sup::events`,
/// `restart_cut_call`).
pub fn may_be_interrupted(s: &Syscall, args: &[u64; 6]) -> bool {
    match s.name {
        "waitid" => args[3] & libc::WNOHANG as u64 == 0,
        name => matches!(
            name,
            "open"
                | "openat"
                | "openat2"
                | "creat"
                | "open_by_handle_at"
                | "accept"
                | "accept4"
                | "recvmsg"
                | "recvmmsg"
                | "ioctl"
                | "fcntl"
                | "connect"
                | "mq_open"
        ),
    }
}

/// Whether call `s` with these arguments waits without a timeout and fails with EINTR when
/// any signal wakes it, even one with no handler (`epoll_wait`, `semop`, `sigwaitinfo`,
/// `io_getevents`: calls that return `-EINTR` rather than a restart code). Natively an
/// ignored signal never wakes it (it is discarded when sent); a traced task's ignored
/// signals are queued and do ([`crate::sup::State::restart_cut_call`]). With a timeout
/// the call is left alone: restarted, it would wait its whole timeout again.
pub fn waits_forever_until_any_signal(s: &Syscall, args: &[u64; 6]) -> bool {
    match s.name {
        "epoll_wait" | "epoll_pwait" => (args[3] as i32) < 0,
        "epoll_pwait2" | "semtimedop" => args[3] == 0,
        "semop" => true,
        "rt_sigtimedwait" => args[2] == 0,
        "io_getevents" | "io_pgetevents" => args[4] == 0,
        _ => false,
    }
}

/// Whether call `s` with these arguments is refused, and how.
pub fn refusal(nr: u64, s: Option<&Syscall>, args: &[u64; 6]) -> Option<Refusal> {
    let Some(s) = s else {
        return refuse(
            libc::ENOSYS,
            &format!("syscall {nr}"),
            "unknown to the supervisor, it may take or create descriptors",
        );
    };
    match s.effect {
        Effect::Trace => refuse(
            libc::EPERM,
            s.name,
            "every process under fdtable run is already traced by the supervisor",
        ),
        Effect::Async => refuse(libc::ENOSYS, s.name, URING),
        Effect::Create(c) if c.later == Later::Ring => refuse(libc::ENOSYS, s.name, URING),
        Effect::Create(c)
            if c.later == Later::ReadInstalls && consts::fanotify_read_installs(args[0]) =>
        {
            refuse(
                libc::EPERM,
                s.name,
                "read() of a fanotify group that reports descriptors (not file handles, or with pidfds, or of a permission class) installs descriptors inside the kernel",
            )
        }
        Effect::CreateIf(conds, _) if s.name == "seccomp" && cat::all_hold(conds, args) => refuse(
            libc::ENOSYS,
            s.name,
            "a seccomp listener installs descriptors into other processes",
        ),
        // Strict mode as the kernel would grant it (no flags, no arguments): refused by the
        // kernel itself once a filter is in place, as fdtable run's is.
        _ if s.name == "seccomp" && args[..3] == [SECCOMP_SET_MODE_STRICT, 0, 0] => {
            refuse(libc::EINVAL, "seccomp(SECCOMP_SET_MODE_STRICT)", STRICT)
        }
        _ if s.name == "prctl"
            && args[0] == libc::PR_SET_SECCOMP as u64
            && args[1] == SECCOMP_MODE_STRICT =>
        {
            refuse(
                libc::EINVAL,
                "prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)",
                STRICT,
            )
        }
        Effect::Clone if args[0] & consts::CLONE_UNTRACED != 0 => refuse(
            libc::EPERM,
            "clone(CLONE_UNTRACED)",
            "the child would not be traced by the supervisor",
        ),
        _ => None,
    }
}

/// `seccomp`'s operation that enters strict mode.
pub const SECCOMP_SET_MODE_STRICT: u64 = 0;
/// `prctl(PR_SET_SECCOMP)`'s strict mode.
pub const SECCOMP_MODE_STRICT: u64 = 1;

const STRICT: &str = "the program runs under fdtable run's seccomp filter, and the kernel does not let a process under a filter enter strict mode";

const URING: &str = "io_uring opens, accepts, receives and closes descriptors inside the kernel, asynchronously, with no system call the supervisor could see";

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, args: [u64; 6]) -> Option<i32> {
        let s = cat::by_name(name).unwrap();
        refusal(s.nr as u64, Some(s), &args).map(|r| r.errno)
    }

    #[test]
    fn refusals() {
        assert_eq!(r("ptrace", [0; 6]), Some(libc::EPERM));
        assert_eq!(r("io_uring_setup", [8, 0, 0, 0, 0, 0]), Some(libc::ENOSYS));
        assert_eq!(r("io_uring_enter", [3, 0, 0, 0, 0, 0]), Some(libc::ENOSYS));
        // fanotify: descriptors in events refused, file handles allowed.
        assert_eq!(r("fanotify_init", [0, 0, 0, 0, 0, 0]), Some(libc::EPERM));
        assert_eq!(r("fanotify_init", [0x200, 0, 0, 0, 0, 0]), None);
        assert_eq!(
            r("fanotify_init", [0x280, 0, 0, 0, 0, 0]),
            Some(libc::EPERM)
        );
        assert_eq!(r("seccomp", [1, 8, 0, 0, 0, 0]), Some(libc::ENOSYS));
        assert_eq!(r("seccomp", [1, 0, 0, 0, 0, 0]), None);
        // Strict mode: refused by name where the kernel would grant it natively.
        assert_eq!(r("seccomp", [0, 0, 0, 0, 0, 0]), Some(libc::EINVAL));
        assert_eq!(r("seccomp", [0, 1, 0, 0, 0, 0]), None);
        assert_eq!(r("seccomp", [0, 0, 8, 0, 0, 0]), None);
        assert_eq!(r("prctl", [22, 1, 0, 0, 0, 0]), Some(libc::EINVAL));
        assert_eq!(r("prctl", [22, 2, 0, 0, 0, 0]), None);
        assert_eq!(r("prctl", [21, 0, 0, 0, 0, 0]), None);
        assert_eq!(r("clone", [0x0080_0011, 0, 0, 0, 0, 0]), Some(libc::EPERM));
        assert_eq!(r("clone", [0x1011, 0, 0, 0, 0, 0]), None);
        assert_eq!(r("openat", [0; 6]), None);
        assert_eq!(
            refusal(500, None, &[0; 6]).map(|r| r.errno),
            Some(libc::ENOSYS)
        );
        assert!(
            refusal(500, None, &[0; 6])
                .unwrap()
                .note
                .contains("refused syscall 500")
        );
        assert!(notified(cat::by_name("pidfd_send_signal").unwrap()));
        assert!(!notified(cat::by_name("read").unwrap()));
    }
}

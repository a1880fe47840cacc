//! `close` and `close_range`: the library closes, then the kernel closes the same numbers
//! (a supervisor cannot close another process's descriptor). EBADF and EINVAL are the
//! library's answers. On a shared table a closed number is uncertain until the table
//! settles: the kernel may run the close after another thread's allocation that the library
//! placed after it.

use super::dup::hold;
use crate::sup::settle::{Known, Settle};
use crate::sup::table::Expect;
use crate::sup::{Reply, State};
use fdtable::Errno;
use fdtable_syscalls::consts::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE};

/// `close(fd)`.
pub fn close(st: &mut State, tid: i32, fd: u32) -> Reply {
    match st.resolve(tid, fd) {
        Known::Installed => {}
        Known::Reserved | Known::Free => return Reply::Errno(Errno::EBADF.raw()),
        Known::Unsure => {
            if let Some(r) = super::process::pinned(st, tid, fd, "close") {
                return r;
            }
            // Another thread's close or dup of it is in flight: the kernel decides.
            hold(st, tid, fd, Expect::default());
            st.in_flight(tid, Settle::Numbers, vec![fd]);
            return Reply::Continue;
        }
    }
    if st.shared(tid) {
        if let Some(r) = super::process::pinned(st, tid, fd, "close") {
            return r;
        }
        st.make_uncertain(tid, fd, Expect::default());
        st.in_flight(tid, Settle::Numbers, vec![fd]);
    } else if let Some(t) = st.tasks.get_mut(&tid) {
        let _ = t.files.close_fd(fd);
        t.touched.push(fd);
    }
    Reply::Continue
}

/// `close_range(first, last, flags)`.
pub fn close_range(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let first = args[0] as u32;
    let last = args[1] as u32;
    let flags = args[2] as u32;
    let known = (CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) as u32;
    if flags & !known != 0 || first > last {
        return Reply::Errno(Errno::EINVAL.raw());
    }
    let shared = st.shared(tid);
    let Some(t) = st.tasks.get_mut(&tid) else {
        return Reply::Continue;
    };
    let in_range: Vec<u32> = t
        .files
        .iter_from(first)
        .map(|o| o.fd)
        .take_while(|&n| n <= last)
        .collect();
    if !shared {
        let _ = t.files.close_range(first, last, flags);
        t.touched.extend(in_range);
        return Reply::Continue;
    }
    if flags & CLOSE_RANGE_UNSHARE as u32 != 0 {
        // The caller gets a copy of the table (unless the call fails), read from the kernel
        // when it is back.
        st.in_flight(tid, Settle::Unshare, Vec::new());
        return Reply::Continue;
    }
    let uncertain: Vec<u32> = st
        .table(tid)
        .map(|tb| tb.uncertain.range(first..=last).map(|(&n, _)| n).collect())
        .unwrap_or_default();
    if flags & CLOSE_RANGE_CLOEXEC as u32 == 0 {
        for &n in in_range.iter().chain(&uncertain) {
            if let Some(r) = super::process::pinned(st, tid, n, "close_range") {
                return r;
            }
        }
    }
    let mut touched = Vec::new();
    if flags & CLOSE_RANGE_CLOEXEC as u32 != 0 {
        // A bit another call in flight changes too (an F_SETFD decided earlier may run
        // later): the kernel's order decides it.
        super::cloexec::contested(st, tid, &in_range);
        if let Some(t) = st.tasks.get_mut(&tid) {
            let _ = t.files.close_range(first, last, flags);
        }
        touched.extend(in_range);
    } else {
        for n in in_range {
            st.make_uncertain(tid, n, Expect::default());
            touched.push(n);
        }
    }
    for n in uncertain {
        hold(st, tid, n, Expect::default());
        touched.push(n);
    }
    let settle = if flags & CLOSE_RANGE_CLOEXEC as u32 != 0 {
        Settle::CloexecRange { first, last }
    } else {
        Settle::Numbers
    };
    st.in_flight(tid, settle, touched);
    Reply::Continue
}

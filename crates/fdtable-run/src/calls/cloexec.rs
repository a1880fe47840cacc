//! Close-on-exec bits: `F_GETFD` is answered by the library; `F_SETFD`, `FIOCLEX` and
//! `FIONCLEX` set the library's bit and run, so the kernel sets the same.

use crate::sup::settle::{Known, Settle};
use crate::sup::{Reply, State};
use fdtable::Errno;
use fdtable_syscalls::consts::O_PATH;

/// `fcntl(fd, F_GETFD)`.
///
/// Until the process's limit has been seen to move, it is read here too, as at a decision
/// that depends on it: a first change from outside that landed between an earlier call's
/// decision and its run (a `dup2` the kernel then refused) is seen at once. A change seen
/// (here or elsewhere: `--check-tables`, a settle) leaves the table unbounded until it is
/// read back from the kernel, which happens before the library answers. Once the limit has
/// moved, the dup family's results are probed when their calls settle.
pub fn get(st: &mut State, tid: i32, fd: u32) -> Reply {
    if !st.limit_moved(tid) {
        st.nofile_to_decide(tid);
    }
    if let Some(key) = st.key(tid)
        && st.tables.get(&key).is_some_and(|t| t.unbounded)
    {
        st.quiesce(key, tid);
    }
    if st.table(tid).is_some_and(|t| t.bits.contains(&fd)) {
        // Concurrent changes of the bit: the kernel's order decides it.
        return Reply::Continue;
    }
    match st.resolve(tid, fd) {
        Known::Installed => match st.tasks.get(&tid).map(|t| t.files.get_close_on_exec(fd)) {
            Some(Ok(c)) => Reply::Value(c as i64),
            _ => Reply::Errno(Errno::EBADF.raw()),
        },
        Known::Reserved | Known::Free => Reply::Errno(Errno::EBADF.raw()),
        Known::Unsure => Reply::Continue,
    }
}

/// `fcntl(fd, F_SETFD, on)`, or `ioctl(fd, FIOCLEX / FIONCLEX)` (`ioctl`: looked up with
/// `fdget`, which refuses an `O_PATH` descriptor with EBADF).
pub fn set(st: &mut State, tid: i32, fd: u32, on: bool, ioctl: bool) -> Reply {
    match st.resolve(tid, fd) {
        Known::Installed => {}
        Known::Reserved | Known::Free => return Reply::Errno(Errno::EBADF.raw()),
        Known::Unsure => {
            if let Some(t) = st.table(tid)
                && let Some(e) = t.uncertain.get_mut(&fd)
            {
                e.cloexec = None;
            }
            st.in_flight(tid, Settle::Numbers, vec![fd]);
            return Reply::Continue;
        }
    }
    if ioctl && is_opath(st, tid, fd) {
        return Reply::Errno(Errno::EBADF.raw());
    }
    let shared = st.shared(tid);
    if let Some(t) = st.tasks.get_mut(&tid) {
        let _ = t.files.set_close_on_exec(fd, on);
        if !shared {
            t.touched.push(fd);
        }
    }
    if shared {
        // The kernel sets it when the call runs: until then a check leaves it out. Another
        // call in flight on this number may run after this one although decided before.
        contested(st, tid, &[fd]);
        st.in_flight(tid, Settle::Numbers, vec![fd]);
    }
    Reply::Continue
}

/// A call about to set the close-on-exec bit of `ns` on a shared table (`F_SETFD`,
/// `FIOCLEX`, `close_range(CLOSE_RANGE_CLOEXEC)`, `dup3` onto an open number): numbers another
/// call in flight is also changing get their bit from the kernel, whose order of the two
/// decides it ([`crate::sup::table::Table::bits`]). Call before this call is in flight.
pub fn contested(st: &mut State, tid: i32, ns: &[u32]) {
    if let Some(t) = st.table(tid) {
        for n in ns {
            if t.busy.contains_key(n) {
                t.bits.insert(*n);
            }
        }
    }
}

fn is_opath(st: &mut State, tid: i32, fd: u32) -> bool {
    let Some(desc) = st.tasks.get(&tid).and_then(|t| t.files.fget(fd)) else {
        return false;
    };
    if let Some(&o) = desc.opath.get() {
        return o;
    }
    let o = st.kernel_flags(tid, fd).is_some_and(|f| f & O_PATH != 0);
    let _ = desc.opath.set(o);
    o
}

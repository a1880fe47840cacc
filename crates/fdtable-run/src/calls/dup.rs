//! The dup family. The library decides (EBADF, EINVAL, EMFILE, EBUSY are answered); the call
//! then runs and the kernel does the same to its identical table. On a table only the
//! caller uses the result is certain and installed at once; on a shared table the new number
//! is uncertain until the table settles (another thread's allocation may have taken the
//! number the library chose, and then the kernel's order is adopted).

use crate::sup::settle::{Known, Settle};
use crate::sup::table::Expect;
use crate::sup::{Reply, State};
use fdtable::Errno;
use fdtable_syscalls::consts::O_CLOEXEC;

fn err(e: Errno) -> Reply {
    Reply::Errno(e.raw())
}

/// `dup(old)` (`from` None) or `fcntl(old, F_DUPFD[_CLOEXEC], from)`.
pub fn dup(st: &mut State, tid: i32, old: u32, from: Option<u32>, cloexec: bool) -> Reply {
    match st.resolve(tid, old) {
        Known::Installed => {}
        Known::Reserved | Known::Free => return err(Errno::EBADF),
        Known::Unsure => return unsure(st, tid, from.unwrap_or(0), cloexec),
    }
    let nofile = st.nofile_to_decide(tid);
    if from.is_some_and(|f| f as u64 >= nofile) {
        return err(Errno::EINVAL);
    }
    let (src, src_origin) = {
        let Some(t) = st.tasks.get(&tid) else {
            return Reply::Continue;
        };
        (t.files.fget(old), t.files.fd_payload(old).unwrap_or(0))
    };
    let name = if from.is_some() {
        if cloexec {
            "fcntl(F_DUPFD_CLOEXEC)"
        } else {
            "fcntl(F_DUPFD)"
        }
    } else {
        "dup"
    };
    let origin = st.origin(tid, || format!("{name}({old})"), src_origin);
    if !st.shared(tid) {
        let Some(t) = st.tasks.get_mut(&tid) else {
            return Reply::Continue;
        };
        let r = match from {
            None => t.files.dup(old, nofile),
            Some(f) => t.files.dupfd(old, f, cloexec, nofile),
        };
        let n = match r {
            Ok(n) => n,
            Err(e) => return err(e),
        };
        if !st.kernel_has_room(tid, n) {
            // Beyond `fs.nr_open`: the kernel's table cannot grow to `n` (EMFILE), and `n`,
            // beyond the kernel's table, was free in the library too.
            if let Some(t) = st.tasks.get_mut(&tid) {
                drop(t.files.file_close_fd(n));
            }
            return err(Errno::EMFILE);
        }
        if let Some(t) = st.tasks.get_mut(&tid) {
            let _ = t.files.set_fd_payload(n, origin);
            t.touched.push(n);
        }
        if st.limit_moved(tid) {
            // The limit may change again before the call runs: its result is probed.
            let e = Expect {
                file: src,
                cloexec: Some(cloexec),
                opath: e_opath(st, tid, n),
                origin,
                ..Expect::default()
            };
            st.make_uncertain(tid, n, e);
            st.in_flight(tid, Settle::Numbers, vec![n]);
        }
        return Reply::Continue;
    }
    let e = Expect {
        file: src.clone(),
        cloexec: Some(cloexec),
        opath: src.as_ref().and_then(|d| d.opath.get().copied()),
        origin,
        ..Expect::default()
    };
    let got = st
        .reserve(tid, from.unwrap_or(0), 1, &e)
        .unwrap_or_default();
    st.in_flight(tid, Settle::Numbers, got);
    Reply::Continue
}

/// Another thread's call in flight may be changing the source: the kernel answers, and the
/// number the library would have given is uncertain.
fn unsure(st: &mut State, tid: i32, from: u32, cloexec: bool) -> Reply {
    st.nofile_to_decide(tid);
    let e = Expect {
        cloexec: Some(cloexec),
        ..Expect::default()
    };
    let got = st.reserve(tid, from, 1, &e).unwrap_or_default();
    st.in_flight(tid, Settle::Numbers, got);
    Reply::Continue
}

/// `dup2(old, new)`, `dup3(old, new, flags)`.
pub fn dup3(st: &mut State, tid: i32, args: &[u64; 6], is_dup3: bool) -> Reply {
    let old = args[0] as u32;
    let new = args[1] as u32;
    let flags = if is_dup3 { args[2] as u32 } else { 0 };
    let nofile = st.nofile_to_decide(tid);
    let shared = st.shared(tid);
    let old_state = st.resolve(tid, old);
    let new_state = if shared && new != old && (new as u64) < nofile {
        st.resolve(tid, new)
    } else {
        Known::Free
    };
    let cloexec = flags & O_CLOEXEC as u32 != 0;
    // Beyond `fs.nr_open` the kernel's table cannot grow to `new` (`expand_files`), after the
    // flag and limit checks and whatever `old` is: EBADF.
    let flags_ok = !is_dup3 || (flags & !(O_CLOEXEC as u32) == 0 && new != old);
    if flags_ok && new != old && (new as u64) < nofile && !st.kernel_has_room(tid, new) {
        return err(Errno::EBADF);
    }
    if shared
        && (old_state == Known::Unsure || matches!(new_state, Known::Reserved | Known::Unsure))
    {
        // Only the kernel knows: the source may be changing under another thread's call, or
        // the target may be reserved by one (EBUSY) or not. The call runs; the target is
        // uncertain until the table settles.
        if (flags & !(O_CLOEXEC as u32) != 0 && is_dup3) || new as u64 >= nofile {
            return Reply::Continue;
        }
        if new != old
            && let Some(r) =
                super::process::pinned(st, tid, new, if is_dup3 { "dup3" } else { "dup2" })
        {
            return r;
        }
        let file = st.tasks.get(&tid).and_then(|t| t.files.fget(old));
        let e = Expect {
            file,
            cloexec: Some(cloexec),
            ..Expect::default()
        };
        hold(st, tid, new, e);
        let mut touched = vec![new];
        if matches!(new_state, Known::Reserved | Known::Unsure) {
            // If the kernel has `new` free when the dup runs, the dup takes it, and the
            // allocation in flight that would have taken it lands on the lowest number the
            // kernel has free above it: one more number above `new` is held uncertain, so
            // that it is not one the library has free (table.rs, rule 4).
            if let Some(spare) = st.reserve(tid, new + 1, 1, &Expect::default()) {
                touched.extend(spare);
            }
        }
        st.in_flight(tid, Settle::Numbers, touched);
        return Reply::Continue;
    }
    if shared
        && old != new
        && let Some(r) = super::process::pinned(st, tid, new, if is_dup3 { "dup3" } else { "dup2" })
    {
        return r;
    }
    let Some(t) = st.tasks.get_mut(&tid) else {
        return Reply::Continue;
    };
    let src_origin = t.files.fd_payload(old).unwrap_or(0);
    let replaced = matches!(t.files.fd_state(new), fdtable::FdState::Installed { .. });
    let r = if is_dup3 {
        t.files.dup3(old, new, flags, nofile)
    } else {
        t.files.dup2(old, new, nofile)
    };
    match r {
        Err(e) => err(e),
        Ok(_) if old == new => Reply::Continue,
        Ok(n) => {
            let name = if is_dup3 { "dup3" } else { "dup2" };
            let origin = st.origin(tid, || format!("{name}({old}, {new})"), src_origin);
            let Some(t) = st.tasks.get_mut(&tid) else {
                return Reply::Continue;
            };
            let _ = t.files.set_fd_payload(n, origin);
            t.touched.push(n);
            let moved = !shared && st.limit_moved(tid);
            if moved
                && replaced
                && let Some(t) = st.table(tid)
            {
                // A kernel that refuses the call (a limit lowered before it ran) keeps the
                // file that was there, and its bit: read both when it settles.
                t.contended = true;
            }
            let Some(t) = st.tasks.get_mut(&tid) else {
                return Reply::Continue;
            };
            if shared || moved {
                let file = t.files.fget(n);
                let e = Expect {
                    file,
                    cloexec: Some(cloexec),
                    origin,
                    ..Expect::default()
                };
                // An earlier call still in flight on `n` (an F_SETFD) may run after this
                // one: the bit is then the kernel's to say.
                super::cloexec::contested(st, tid, &[n]);
                st.make_uncertain(tid, n, e);
                st.in_flight(tid, Settle::Numbers, vec![n]);
            }
            Reply::Continue
        }
    }
}

/// Whether `tid`'s descriptor `n` is known to be `O_PATH` (`None`: not known).
fn e_opath(st: &State, tid: i32, n: u32) -> Option<bool> {
    let t = st.tasks.get(&tid)?;
    t.files.fget(n).and_then(|d| d.opath.get().copied())
}

/// Makes `n` uncertain (pending on `tid`'s call) whatever the library has there.
pub fn hold(st: &mut State, tid: i32, n: u32, e: Expect) {
    let in_set = st.table(tid).is_some_and(|t| t.uncertain.contains_key(&n));
    if in_set {
        if let Some(t) = st.table(tid)
            && let Some(x) = t.uncertain.get_mut(&n)
        {
            x.pending.push(tid);
            x.cloexec = None;
        }
    } else {
        st.make_uncertain(tid, n, e);
    }
}

//! Bad input never panics: arbitrary fds (negative as C ints, past `nr_open`, `u32::MAX`),
//! absurd limits (0, `u64::MAX`), unknown flag bits — every call returns the kernel's errno or
//! a valid result, and afterwards the table is consistent and every file is released once.

#![cfg(not(loom))]

use fdtable::{Errno, FdState, FileLike, FileRef, Files};
use proptest::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counted(Arc<AtomicUsize>);
impl FileLike for Counted {}
impl Drop for Counted {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); a release counter, bumped and read on the
        // test's own thread (the last put drops the file synchronously); pairs with nothing.
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Install(u64),
    Alloc(u32, u64, u32),
    PutUnused(u32),
    FdInstall(u32),
    Close(u32),
    Dup(u32, u64),
    Dup2(u32, u32, u64),
    Dup3(u32, u32, u32, u64),
    DupFd(u32, u32, bool, u64),
    GetFd(u32),
    SetFd(u32, bool),
    Query(u32, u32),
    CloseRange(u32, u32, u32),
    Lookup(u32),
    Fork,
    Exec,
    ReplaceFd(u32, u32, u64),
    Renumber(u32, u32, u64),
    Payload(u32, u16),
    Iterate(u32),
    OwnedReserve(u64, bool),
}

/// fds biased towards the interesting: small, around 64/1024, near nr_open, "negative".
fn fd() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0u32..8,
        2 => 60u32..70,
        1 => 1020u32..1030,
        1 => Just((1 << 20) - 1),
        1 => Just(1 << 20),
        1 => Just(i32::MAX as u32),
        1 => Just(-1i32 as u32),
        1 => Just(i32::MIN as u32),
        1 => any::<u32>(),
    ]
}

fn limit() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => Just(1024u64),
        1 => Just(0u64),
        1 => 1u64..8,
        1 => Just(70u64),
        1 => Just(1u64 << 20),
        1 => Just((1u64 << 20) + 1),
        1 => Just(u32::MAX as u64 + 7),
        1 => Just(u64::MAX),
    ]
}

fn flags() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(fdtable::O_CLOEXEC), any::<u32>(), 0u32..16]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => limit().prop_map(Op::Install),
        2 => (fd(), limit(), flags()).prop_map(|(s, l, f)| Op::Alloc(s, l, f)),
        1 => fd().prop_map(Op::PutUnused),
        1 => fd().prop_map(Op::FdInstall),
        2 => fd().prop_map(Op::Close),
        2 => (fd(), limit()).prop_map(|(a, l)| Op::Dup(a, l)),
        2 => (fd(), fd(), limit()).prop_map(|(a, b, l)| Op::Dup2(a, b, l)),
        2 => (fd(), fd(), flags(), limit()).prop_map(|(a, b, f, l)| Op::Dup3(a, b, f, l)),
        2 => (fd(), fd(), any::<bool>(), limit()).prop_map(|(a, b, c, l)| Op::DupFd(a, b, c, l)),
        1 => fd().prop_map(Op::GetFd),
        1 => (fd(), any::<bool>()).prop_map(|(a, c)| Op::SetFd(a, c)),
        1 => (fd(), fd()).prop_map(|(a, b)| Op::Query(a, b)),
        2 => (fd(), fd(), flags()).prop_map(|(a, b, f)| Op::CloseRange(a, b, f)),
        2 => fd().prop_map(Op::Lookup),
        1 => Just(Op::Fork),
        1 => Just(Op::Exec),
        2 => (fd(), flags(), limit()).prop_map(|(a, f, l)| Op::ReplaceFd(a, f, l)),
        2 => (fd(), fd(), limit()).prop_map(|(a, b, l)| Op::Renumber(a, b, l)),
        1 => (fd(), any::<u16>()).prop_map(|(a, p)| Op::Payload(a, p)),
        1 => fd().prop_map(Op::Iterate),
        1 => (limit(), any::<bool>()).prop_map(|(l, install)| Op::OwnedReserve(l, install)),
    ]
}

fn is_errno(r: &Result<impl Sized, Errno>, allowed: &[Errno]) -> bool {
    match r {
        Ok(_) => true,
        Err(e) => allowed.contains(e),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_arguments_never_panic(ops in proptest::collection::vec(op(), 1..60)) {
        let released = Arc::new(AtomicUsize::new(0));
        let mut created = 0usize;
        let mut files: Files<Counted, u16> = Files::new();
        let mut children = Vec::new();
        let new = |created: &mut usize| {
            *created += 1;
            FileRef::new(Counted(released.clone()))
        };
        use Errno as E;
        for op in ops {
            match op {
                Op::Install(l) => {
                    let r = files.install(new(&mut created), 0, l);
                    prop_assert!(is_errno(&r, &[E::EMFILE]), "{r:?}");
                    if let Ok(fd) = r {
                        prop_assert!((fd as u64) < l);
                    }
                }
                Op::Alloc(s, l, f) => {
                    let r = files.alloc_fd(s, l, f);
                    prop_assert!(is_errno(&r, &[E::EMFILE]), "{r:?}");
                    if let Ok(fd) = r {
                        prop_assert_eq!(files.fd_state(fd), FdState::Reserved);
                    }
                }
                Op::PutUnused(fd) => files.put_unused_fd(fd),
                Op::FdInstall(fd) => {
                    let was = files.fd_state(fd);
                    let r = files.fd_install(fd, new(&mut created));
                    prop_assert_eq!(r.is_ok(), was == FdState::Reserved);
                }
                Op::Close(fd) => {
                    let r = files.close_fd(fd);
                    prop_assert!(is_errno(&r, &[E::EBADF]));
                }
                Op::Dup(fd, l) => {
                    let r = files.dup(fd, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EMFILE]), "{r:?}");
                }
                Op::Dup2(a, b, l) => {
                    let r = files.dup2(a, b, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EBUSY]), "{r:?}");
                }
                Op::Dup3(a, b, f, l) => {
                    let r = files.dup3(a, b, f, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EBUSY, E::EINVAL]), "{r:?}");
                }
                Op::DupFd(a, from, c, l) => {
                    let r = files.dupfd(a, from, c, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EINVAL, E::EMFILE]), "{r:?}");
                    if let Ok(fd) = r {
                        prop_assert!(fd >= from);
                        prop_assert_eq!(files.get_close_on_exec(fd), Ok(c));
                    }
                }
                Op::GetFd(fd) => {
                    let r = files.get_close_on_exec(fd);
                    prop_assert!(is_errno(&r, &[E::EBADF]));
                }
                Op::SetFd(fd, c) => {
                    let r = files.set_close_on_exec(fd, c);
                    prop_assert!(is_errno(&r, &[E::EBADF]));
                }
                Op::Query(a, b) => {
                    let r = files.dupfd_query(a, b);
                    prop_assert!(is_errno(&r, &[E::EBADF]));
                }
                Op::CloseRange(a, b, f) => {
                    let r = files.close_range(a, b, f);
                    let bad = a > b || f & !(fdtable::CLOSE_RANGE_UNSHARE | fdtable::CLOSE_RANGE_CLOEXEC) != 0;
                    prop_assert_eq!(r.is_err(), bad);
                }
                Op::Lookup(fd) => {
                    let light = files.fdget(fd).is_some();
                    let shared = files.fget(fd).is_some();
                    prop_assert_eq!(light, shared);
                    prop_assert_eq!(light, matches!(files.fd_state(fd), FdState::Installed { .. }));
                }
                Op::Fork => {
                    let child = files.fork();
                    prop_assert!(is_errno(&child, &[E::EMFILE, E::ENOMEM]));
                    if let Ok(c) = child {
                        children.push(c);
                    }
                }
                Op::Exec => files.exec().unwrap(),
                Op::ReplaceFd(fd, f, l) => {
                    let was_reserved = files.fd_state(fd) == FdState::Reserved;
                    let r = files.replace_fd(fd, new(&mut created), f, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EMFILE, E::EBUSY]), "{r:?}");
                    prop_assert_eq!(r == Err(E::EBUSY), was_reserved && (fd as u64) < l);
                    if r.is_ok() {
                        let cloexec = f & fdtable::O_CLOEXEC != 0;
                        prop_assert_eq!(files.fd_state(fd), FdState::Installed { cloexec });
                        prop_assert_eq!(files.fd_payload(fd), Ok(0));
                    }
                }
                Op::Renumber(a, b, l) => {
                    let before = files.fget_with_payload(a).ok();
                    let r = files.renumber(a, b, l);
                    prop_assert!(is_errno(&r, &[E::EBADF, E::EBUSY]), "{r:?}");
                    if let (Ok(to), Some((file, payload))) = (r, before) {
                        let (now, p) = files.fget_with_payload(to).unwrap();
                        prop_assert!(FileRef::ptr_eq(&file, &now));
                        prop_assert_eq!(p, payload);
                        if a != b {
                            prop_assert_eq!(files.fd_state(a), FdState::Free);
                        }
                    }
                }
                Op::Payload(fd, p) => {
                    let r = files.set_fd_payload(fd, p);
                    prop_assert!(is_errno(&r, &[E::EBADF]));
                    prop_assert_eq!(r.is_ok(), files.fd_payload(fd) == Ok(p));
                }
                Op::Iterate(from) => {
                    let mut last = None;
                    for o in files.iter_from(from) {
                        prop_assert!(o.fd >= from && last.is_none_or(|l| o.fd > l));
                        prop_assert_eq!(files.fd_state(o.fd), FdState::Installed { cloexec: o.cloexec });
                        prop_assert_eq!(files.fd_payload(o.fd), Ok(o.payload));
                        last = Some(o.fd);
                    }
                    prop_assert_eq!(files.next_open_fd(from), files.iter_from(from).next().map(|o| o.fd));
                }
                Op::OwnedReserve(l, install) => {
                    match files.reserve_owned(0, l) {
                        Ok(r) => {
                            let fd = r.fd();
                            prop_assert_eq!(files.fd_state(fd), FdState::Reserved);
                            if install {
                                prop_assert_eq!(r.install(new(&mut created)), fd);
                                let installed = matches!(files.fd_state(fd), FdState::Installed { .. });
                                prop_assert!(installed);
                            } else {
                                drop(r);
                                prop_assert_eq!(files.fd_state(fd), FdState::Free);
                            }
                        }
                        Err(e) => prop_assert_eq!(e, E::EMFILE),
                    }
                }
            }
            // The table stays bounded by nr_open.
            prop_assert!(files.max_fds() <= fdtable::nr_open().next_power_of_two());
        }
        // Installed fds and snapshot agree; reserved fds are reported.
        let snap = files.snapshot().unwrap();
        for (fd, cloexec, _) in &snap {
            prop_assert_eq!(files.fd_state(*fd), FdState::Installed { cloexec: *cloexec });
        }
        for fd in files.reserved_fds().unwrap() {
            files.put_unused_fd(fd);
        }
        drop(snap);
        drop(files);
        drop(children);
        // ORDERING: SeqCst (more than needed); see `Drop for Counted`: program order.
        prop_assert_eq!(released.load(Ordering::SeqCst), created, "each file released exactly once");
    }
}

#[test]
fn nr_open_bounds() {
    assert_eq!(fdtable::set_nr_open(63), Err(Errno::EINVAL));
    assert_eq!(
        fdtable::set_nr_open(fdtable::NR_OPEN_MAX + 1),
        Err(Errno::EINVAL)
    );
    assert_eq!(fdtable::set_nr_open(usize::MAX), Err(Errno::EINVAL));
    assert_eq!(fdtable::nr_open(), fdtable::NR_OPEN_DEFAULT_CAP);
}

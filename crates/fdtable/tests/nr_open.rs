//! `nr_open` below its default (`sysctl -w fs.nr_open=1000`), in a test binary of its own
//! because the cap is process-wide. The kernel (since 6.13's `alloc_fdtable`) rounds the cap
//! down to a whole bitmap word: with 1000 the table can hold fds 0..960, so fd 959 is the last
//! one that can be allocated even though the limit check (`nr >= nr_open`) would let 999 pass.

use fdtable::{Errno, FileLike, FileRef, Files, set_nr_open};

struct F;
impl FileLike for F {}

const BIG: u64 = 1 << 20;

#[test]
fn a_lowered_nr_open_caps_growth_like_the_kernel() {
    // Bad values are refused and change nothing.
    assert_eq!(set_nr_open(63), Err(Errno::EINVAL));
    assert_eq!(set_nr_open(usize::MAX), Err(Errno::EINVAL));
    assert_eq!(fdtable::nr_open(), fdtable::NR_OPEN_DEFAULT_CAP);

    // A table with fd 1500 open, built before the cap is lowered.
    let mut before: Files<F> = Files::new();
    assert_eq!(before.install(FileRef::new(F), 0, BIG), Ok(0));
    assert_eq!(before.dup2(0, 1500, BIG), Ok(1500));

    set_nr_open(1000).unwrap();
    assert_eq!(fdtable::nr_open(), 1000);

    let mut files: Files<F> = Files::new();
    for fd in 0..960u32 {
        assert_eq!(files.install(FileRef::new(F), 0, BIG), Ok(fd));
    }
    assert_eq!(files.max_fds(), 960, "rounded down to a whole word");
    // Full: the next fd (960) would need a bigger table than nr_open allows.
    assert_eq!(files.install(FileRef::new(F), 0, BIG), Err(Errno::EMFILE));
    assert!(files.get_unused_fd_flags(0, BIG).is_err());
    // dup2/dup3 turn the growth's EMFILE into EBADF; F_DUPFD keeps it.
    assert_eq!(files.dup2(0, 960, BIG), Err(Errno::EBADF));
    assert_eq!(files.dup2(0, 999, BIG), Err(Errno::EBADF));
    assert_eq!(files.dup3(0, 1000, 0, BIG), Err(Errno::EBADF));
    assert_eq!(files.dupfd(0, 960, false, BIG), Err(Errno::EMFILE));
    // Inside the table everything still works.
    assert_eq!(files.dup2(0, 959, BIG), Ok(959));
    files.close_fd(500).unwrap();
    assert_eq!(files.dupfd(0, 0, false, BIG), Ok(500));
    // A fork copy is sized to the last open fd: 959 fits.
    let child = files.fork().expect("fd 959 fits under nr_open");
    assert_eq!(child.max_fds(), 960);
    drop(child);

    // The table built before the cap keeps its size, but a copy of it cannot be made.
    assert!(before.fget(1500).is_some());
    assert_eq!(before.fork().err(), Some(Errno::EMFILE));
    assert_eq!(before.unshare(), Ok(()), "not shared: nothing to copy");
    let mut other = before.share();
    assert_eq!(other.unshare(), Err(Errno::EMFILE));
    drop((other, before, files));

    set_nr_open(fdtable::NR_OPEN_DEFAULT_CAP).unwrap();
}

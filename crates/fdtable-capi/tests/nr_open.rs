//! `fdt_set_nr_open` is process-wide, so its test has a binary of its own.

// The legacy calls are tested here, beside their `...2` forms.
#![allow(deprecated)]

mod support;

use fdtable_capi::*;
use support::probe::*;

#[test]
fn nr_open_caps_limits_and_growth() {
    assert_eq!(fdt_get_nr_open(), 1 << 20);
    assert_eq!(fdt_set_nr_open(63), -libc::EINVAL);
    assert_eq!(fdt_set_nr_open(std::ffi::c_ulong::MAX), -libc::EINVAL);
    let h = fdt_files_new();
    let p = Probe::new(0, K_FLUSH);
    // SAFETY: a live handle, put at the end; our reference handed over.
    unsafe {
        assert_eq!(fdt_install(h, c_file(&p, FDT_O_RDWR), 0), 0);
        assert_eq!(fdt_dup2(h, 0, 100), 100);
        assert_eq!(fdt_set_nr_open(64), 0);
        assert_eq!(fdt_get_nr_open(), 64);
        // Installing at a chosen fd below the soft limit (1024) but where the table cannot
        // grow: EMFILE (replace_fd), the file put.
        let q = Probe::new(1, K_FLUSH);
        assert_eq!(
            fdt_install_at(h, 500, c_file(&q, FDT_O_RDWR), 0),
            -libc::EMFILE
        );
        assert_eq!((q.flushes(), q.releases()), (0, 1));
        assert_eq!(
            fdt_set_nofile(h, 65, 65),
            -libc::EPERM,
            "hard above nr_open"
        );
        assert_eq!(fdt_set_nofile(h, 64, 64), 0);
        assert_eq!(fdt_dup2(h, 0, 63), 63, "within the table");
        // A fork needs 128 slots now, more than nr_open: EMFILE, no child.
        let mut c = std::ptr::dangling_mut();
        assert_eq!(fdt_files_fork2(h, &mut c), -libc::EMFILE);
        assert!(c.is_null());
        assert!(fdt_files_fork(h).is_null());
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EMFILE),
            "errno says why"
        );
        assert_eq!(fdt_close(h, 100), 0);
        let child = fdt_files_fork(h);
        assert!(!child.is_null());
        fdt_files_put(child);
        assert_eq!(fdt_set_nr_open(1 << 20), 0);
        fdt_files_put(h);
    }
    // close(100), then fds 0 and 63 closed by the child's put and by the parent's.
    assert_eq!((p.flushes(), p.releases()), (5, 1));
}

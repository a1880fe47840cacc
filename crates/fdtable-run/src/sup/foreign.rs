//! Descriptors the program receives from processes outside it (`SCM_RIGHTS` from an
//! unsupervised sender, `pidfd_getfd`) whose `read()` installs descriptors inside the
//! kernel: a fanotify group whose events carry descriptors, a userfaultfd with fork events.
//! `read()` runs unseen (it only uses a descriptor), so what it installs could never be
//! kept in the library's table. The program cannot make such objects itself (`fanotify_init`
//! of one and `UFFDIO_API` with `UFFD_FEATURE_EVENT_FORK` are refused); one received is
//! found when its number is adopted, and every process using the table is killed before
//! any of its calls is decided again. One inherited at start is refused by `fdtable run`
//! itself (`cli::run`).

use super::{State, key_of};
use crate::{procfs, sys};

impl State {
    /// Descriptor `n`, just adopted in `tid`'s table from the kernel, may be another
    /// process's: if its `read()` installs descriptors, the processes using the table are
    /// killed, with a note.
    pub fn check_foreign(&mut self, tid: i32, n: u32) {
        let Some(what) = procfs::installs_on_read(tid, n) else {
            return;
        };
        let Some(key) = self.key(tid) else {
            return;
        };
        let mut procs: Vec<i32> = self
            .tasks
            .values()
            .filter(|t| key_of(&t.files) == key)
            .map(|t| t.tgid)
            .collect();
        procs.sort_unstable();
        procs.dedup();
        let list = procs
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        self.note(format!(
            "refused descriptor {n} received by task {tid}: {what}, whose read() would install descriptors inside the kernel; process {list} killed"
        ));
        for p in procs {
            let _ = sys::kill(p, libc::SIGKILL);
        }
    }
}

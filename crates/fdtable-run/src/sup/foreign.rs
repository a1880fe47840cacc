//! Descriptors the program receives from processes outside it (`SCM_RIGHTS` from an
//! unsupervised sender, `pidfd_getfd`) whose `read()` installs descriptors inside the
//! kernel: a fanotify group whose events carry descriptors, a userfaultfd with fork events.
//! `read()` runs unseen (it only uses a descriptor), so what it installs could never be
//! kept in the library's table. The program cannot make such objects itself (`fanotify_init`
//! of one and `UFFDIO_API` with `UFFD_FEATURE_EVENT_FORK` are refused); one received is
//! found when its number is adopted (or first seen in a table read whole from the kernel),
//! and every process whose table holds it (in the library, or in the kernel at the same
//! number) is killed, a child that copies such a table (stopped at its creation) too. One inherited at start is refused by `fdtable run` itself
//! (`cli::run`).

use super::{Fdt, State, key_of};
use crate::{procfs, sys};
use std::sync::atomic::Ordering;

impl State {
    /// Descriptor `n`, just adopted in `tid`'s table from the kernel, may be another
    /// process's: if its `read()` installs descriptors, it is marked refused and every
    /// process whose table holds it is killed, with a note.
    pub fn check_foreign(&mut self, tid: i32, n: u32) {
        let Some(what) = procfs::installs_on_read(tid, n) else {
            return;
        };
        if let Some(d) = self.tasks.get(&tid).and_then(|t| t.files.fget(n)) {
            // ORDERING: Relaxed; the supervisor's state is read and written under its lock.
            d.refused.store(true, Ordering::Relaxed);
            self.refused += 1;
        }
        let key = self.key(tid);
        // Tables that hold it: this one, those whose library copy holds the description,
        // and those the kernel shows it in at the same number (the table `tid`'s was copied
        // from, a fork's, found from the copy's side before the original's call settled).
        let mut procs: Vec<i32> = self
            .tasks
            .values()
            .filter(|t| {
                Some(key_of(&t.files)) == key
                    || holds_refused(&t.files)
                    || sys::same_file_at(tid, t.tid, n) == Some(true)
            })
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

    /// A task just created (stopped at its creation) with table `files`: killed if the
    /// table holds a refused description (its parent was killed for it as the copy was
    /// made). True if it was.
    pub fn refuse_copy(&mut self, child: i32, files: &Fdt) -> bool {
        if self.refused == 0 || !holds_refused(files) {
            return false;
        }
        self.note(format!(
            "process {child} was created with a table, or a copy of one, holding a refused descriptor; killed"
        ));
        let _ = sys::kill(child, libc::SIGKILL);
        true
    }
}

/// Whether `files` holds a description marked refused.
fn holds_refused(files: &Fdt) -> bool {
    files.iter().any(|o| {
        files
            .fget(o.fd)
            // ORDERING: Relaxed; as in `check_foreign`.
            .is_some_and(|d| d.refused.load(Ordering::Relaxed))
    })
}

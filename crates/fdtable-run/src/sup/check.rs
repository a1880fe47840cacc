//! `--check-tables`: the library's table against the kernel's (installed numbers and
//! close-on-exec bits), after every notified call is settled.
//!
//! Checked each time: every number the task's last call could have changed, and the lowest
//! number the library has free (an installation nobody announced would take it). In full
//! (a listing of `/proc/<pid>/fd`, and the `fdinfo` of every descriptor below 64 and of the
//! numbers changed): a table without descriptors above 63 after every call (a shared one
//! whenever nothing of it is in flight), a larger table every 64th call, at an exec that
//! ran and at exit. Numbers of calls still in flight (uncertain numbers, close-on-exec
//! changes in flight) are left out until they settle.

use super::{State, key_of};
use crate::procfs;
use fdtable::FdState;
use fdtable_syscalls::consts::O_CLOEXEC;
use std::collections::HashSet;
use std::io::Write;

impl State {
    /// Compares `tid`'s table with the kernel's; `full` forces a full comparison.
    pub fn check_task(&mut self, tid: i32, full: bool) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        if task.raw {
            // The first process before it executes the program (an exec that failed):
            // the library reads its table at the first exec.
            return;
        }
        let touched = std::mem::take(&mut task.touched);
        // First: a limit changed from outside makes the table unbounded, and it is read back
        // from the kernel at once where nothing is in flight, as before a decision (a call
        // decided under the old limit may have run under the new one).
        let limit = self.nofile_to_decide(tid).max(1);
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let key = key_of(&task.files);
        let large = task.files.next_open_fd(64).is_some();
        let Some(table) = self.tables.get_mut(&key) else {
            return;
        };
        table.calls += 1;
        let unbounded = table.unbounded;
        let shared = table.members > 1;
        let quiet = table.inflight == 0;
        let periodic = !large || table.calls % 64 == 0;
        let full = full || (periodic && (quiet || !shared));
        // Every close-on-exec bit is read on tables of up to 64 descriptors; on larger ones
        // those of the numbers the calls changed.
        let all_bits = !large;
        let touched_set: HashSet<u32> = touched.iter().copied().collect();
        self.stats.checks += 1;
        let mut bad: Vec<String> = Vec::new();
        // Numbers of calls in flight are left out until they settle.
        let excluded = |st: &State, n: u32| {
            st.tables.get(&key).is_some_and(|t| {
                t.busy.contains_key(&n) || t.uncertain.contains_key(&n) || t.bits.contains(&n)
            })
        };
        if full {
            let Some(task) = self.tasks.get(&tid) else {
                return;
            };
            let library: Vec<(u32, bool)> = task.files.iter().map(|o| (o.fd, o.cloexec)).collect();
            self.stats.listings += 1;
            let Some(kernel) = procfs::list_fds(tid) else {
                return;
            };
            let kset: HashSet<u32> = kernel.iter().copied().collect();
            for &(fd, cloexec) in &library {
                if excluded(self, fd) {
                    continue;
                }
                if !kset.contains(&fd) {
                    bad.push(format!("{fd} is open in the library, not in the kernel"));
                } else if (all_bits || touched_set.contains(&fd))
                    && let Some(f) = self.kernel_flags(tid, fd)
                    && (f & O_CLOEXEC != 0) != cloexec
                {
                    bad.push(format!("{fd}: close-on-exec {cloexec} in the library"));
                }
            }
            let Some(task) = self.tasks.get(&tid) else {
                return;
            };
            for &fd in &kernel {
                if excluded(self, fd) {
                    continue;
                }
                let state = task.files.fd_state(fd);
                let explained = matches!(state, FdState::Installed { .. })
                    || (unbounded && state == FdState::Free);
                if !explained {
                    bad.push(format!(
                        "{fd} is open in the kernel, {state:?} in the library"
                    ));
                }
            }
        } else {
            let mut nums = touched;
            if let Some(task) = self.tasks.get(&tid)
                && let Ok(n) = task.files.alloc_fd(0, limit, 0)
            {
                task.files.put_unused_fd(n);
                if !unbounded {
                    nums.push(n);
                }
            }
            nums.sort_unstable();
            nums.dedup();
            for n in nums {
                if excluded(self, n) {
                    continue;
                }
                let Some(state) = self.tasks.get(&tid).map(|t| t.files.fd_state(n)) else {
                    return;
                };
                let Some(kernel) = self.probe(tid, n) else {
                    return;
                };
                match (state, kernel) {
                    (FdState::Installed { cloexec }, true) => {
                        if let Some(f) = self.kernel_flags(tid, n)
                            && (f & O_CLOEXEC != 0) != cloexec
                        {
                            bad.push(format!("{n}: close-on-exec {cloexec} in the library"));
                        }
                    }
                    (FdState::Installed { .. }, false) => {
                        bad.push(format!("{n} is open in the library, not in the kernel"))
                    }
                    // A call in flight that installs an unknown number of descriptors may
                    // have taken it (adopted when the table is quiet), as in a full check.
                    (FdState::Free, true) if unbounded => {}
                    (s, true) => {
                        bad.push(format!("{n} is open in the kernel, {s:?} in the library"))
                    }
                    _ => {}
                }
            }
        }
        // A task killed while it waited for this answer (its process exiting) may have
        // released its table, or another thread's call may have been cut short: nothing to
        // compare.
        let tgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
        if !bad.is_empty() && !procfs::dying(tid, tgid) {
            self.stats.table_mismatches += bad.len() as u64;
            let _ = writeln!(
                std::io::stderr(),
                "fdtable run: task {tid}: the kernel's table differs from the library's: {}",
                bad.join("; ")
            );
        }
    }
}

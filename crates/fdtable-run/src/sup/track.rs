//! `--track-fds`: the call that created each descriptor number (kept as the number's payload
//! in the library's table), and the report of what each process still holds when it exits,
//! as `valgrind --track-fds=yes` prints it.

use super::State;
use crate::procfs;
use std::io::Write;

/// The call that created a descriptor number.
#[derive(Clone, Debug)]
pub struct Origin {
    /// The call, decoded (`openat(AT_FDCWD, "/etc/passwd", O_RDONLY)`), or
    /// `<inherited from parent>`.
    pub call: String,
    /// The process that made it (0 for the descriptors `fdtable run` was given).
    pub pid: i32,
    /// For a duplicate: the origin of the original (0: none).
    pub from: u32,
}

/// Every origin recorded; index 0 is "none".
#[derive(Debug, Default)]
pub struct Origins {
    list: Vec<Origin>,
}

impl Origins {
    /// Records an origin; its index (never 0).
    pub fn add(&mut self, o: Origin) -> u32 {
        self.list.push(o);
        self.list.len() as u32
    }

    /// The origin of index `i`.
    pub fn get(&self, i: u32) -> Option<&Origin> {
        i.checked_sub(1).and_then(|i| self.list.get(i as usize))
    }

    /// The creating call of the description behind origin `i` (through duplicates).
    pub fn root(&self, i: u32) -> u32 {
        match self.get(i) {
            Some(o) if o.from != 0 => o.from,
            _ => i,
        }
    }
}

impl State {
    /// Records the origin of a number `tid` is creating with `call` (which builds the text;
    /// only run with `--track-fds`), duplicating origin `from` (0: none).
    pub fn origin(&mut self, tid: i32, call: impl FnOnce() -> String, from: u32) -> u32 {
        if !self.cfg.track_fds {
            return 0;
        }
        let pid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
        let from = self.origins.root(from);
        self.origins.add(Origin {
            call: call(),
            pid,
            from,
        })
    }

    /// Marks the descriptors of `tid`'s table as inherited from `fdtable run`'s caller.
    pub fn inherited(&mut self, tid: i32) {
        if !self.cfg.track_fds {
            return;
        }
        let o = self.origins.add(Origin {
            call: "<inherited from parent>".into(),
            pid: 0,
            from: 0,
        });
        if let Some(t) = self.tasks.get(&tid) {
            let fds: Vec<u32> = t.files.iter().map(|o| o.fd).collect();
            for fd in fds {
                let _ = t.files.set_fd_payload(fd, o);
            }
        }
    }

    /// The descriptors `tid`'s process still holds, on stderr.
    pub fn report_fds(&mut self, tid: i32, alive: bool) {
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let pid = task.tgid;
        let open: Vec<(u32, u32)> = task.files.iter().map(|o| (o.fd, o.payload)).collect();
        let inherited = |o: u32| self.origins.get(o).is_none_or(|x| x.pid == 0);
        let std = open
            .iter()
            .filter(|&&(fd, o)| fd <= 2 && inherited(o))
            .count();
        let mut out = format!(
            "=={pid}== FILE DESCRIPTORS: {} open ({std} std) at exit.\n",
            open.len()
        );
        for &(fd, o) in &open {
            if fd <= 2 && inherited(o) {
                continue;
            }
            let target = if alive {
                procfs::fd_target(tid, fd).unwrap_or_else(|| "(unknown)".to_string())
            } else {
                "(the process is gone)".to_string()
            };
            out.push_str(&format!("=={pid}== Open file descriptor {fd}: {target}\n"));
            match self.origins.get(o) {
                Some(x) if x.pid == 0 => out.push_str(&format!("=={pid}==    {}\n", x.call)),
                Some(x) => out.push_str(&format!(
                    "=={pid}==    created by {} in process {}\n",
                    x.call, x.pid
                )),
                None => out.push_str(&format!("=={pid}==    <unknown>\n")),
            }
            if let Some(x) = self.origins.get(o)
                && let Some(from) = self.origins.get(x.from)
            {
                if from.pid == 0 {
                    out.push_str(&format!(
                        "=={pid}==    duplicating a descriptor {}\n",
                        from.call
                    ));
                } else {
                    out.push_str(&format!(
                        "=={pid}==    duplicating a descriptor created by {} in process {}\n",
                        from.call, from.pid
                    ));
                }
            }
            out.push_str(&format!("=={pid}== \n"));
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
    }
}

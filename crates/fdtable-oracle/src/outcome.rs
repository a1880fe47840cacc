//! What an executor observed, and the comparison that finds the first divergence.

use crate::interp::{CHILD_FAILED, NOT_RUN, RESV_NOBLOCK, SKIPPED, TAG_EXEC, TAG_ROOT_EXIT};
use crate::program::{Program, describe, kind};
use fdtable::Errno;
use std::fmt::Write as _;

/// The installed fds of one process at one point: `(fd, close-on-exec, file identity)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Taken after the records before this index ran.
    pub pos: usize,
    /// [`TAG_ROOT_EXIT`], `TAG_EXEC | record`, or the record index of the `Fork`/`Share`
    /// whose child ended.
    pub tag: u64,
    /// Installed fds in ascending order.
    pub fds: Vec<(u32, bool, u64)>,
}

/// Everything one executor observed while running a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Per record: the result (fd, value or `-errno`) and a second result where the
    /// operation has one.
    pub results: Vec<[i64; 2]>,
    /// Per record: its fd or limit arguments as resolved when it ran.
    pub args: Vec<[u64; 2]>,
    /// Per record: open bits of fds 0..128, then close-on-exec bits, after it ran (fds
    /// below `min(hi, 128)` only).
    pub windows: Vec<[u64; 4]>,
    /// Full snapshots, in the order they were taken.
    pub snapshots: Vec<Snapshot>,
    /// One past the highest fd handed out.
    pub hi: u64,
    /// The first process's exit status (0 for the library).
    pub exit_status: i64,
}

impl Outcome {
    pub(crate) fn new(n: usize) -> Outcome {
        Outcome {
            results: vec![[NOT_RUN; 2]; n],
            args: vec![[0; 2]; n],
            windows: vec![[0; 4]; n],
            snapshots: Vec::new(),
            hi: 3,
            exit_status: 0,
        }
    }

    /// How many records ran.
    pub fn ops_run(&self) -> usize {
        self.results.iter().filter(|r| r[0] != NOT_RUN).count()
    }
}

/// The first point where the kernel and the library disagree.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The record at (or before) which it shows.
    pub at: usize,
    /// What differs.
    pub what: String,
    /// The whole program with both sides' results.
    pub report: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n{}", self.what, self.report)
    }
}

/// Formats a result.
pub fn fmt_result(v: i64) -> String {
    match v {
        NOT_RUN => "-".to_string(),
        SKIPPED => "skipped".to_string(),
        RESV_NOBLOCK => "open did not block".to_string(),
        v if v >= 0 => v.to_string(),
        v if (CHILD_FAILED..CHILD_FAILED + 0x1_0000).contains(&v) => {
            format!("child failed (wait status {:#x})", v - CHILD_FAILED)
        }
        v => {
            let e = Errno::new((-v) as i32);
            match e.name() {
                Some(n) if e.raw() as i64 == -v => n.to_string(),
                _ => format!("errno {}", -v),
            }
        }
    }
}

fn fmt_results(r: [i64; 2]) -> String {
    if r[1] == NOT_RUN {
        fmt_result(r[0])
    } else {
        format!("{} / {}", fmt_result(r[0]), fmt_result(r[1]))
    }
}

/// Formats a window as the list of open fds, `c` marking close-on-exec.
pub fn fmt_window(w: &[u64; 4]) -> String {
    let mut s = String::new();
    for fd in 0..128 {
        if w[fd / 64] & 1 << (fd % 64) != 0 {
            if !s.is_empty() {
                s.push(' ');
            }
            write!(s, "{fd}").unwrap();
            if w[2 + fd / 64] & 1 << (fd % 64) != 0 {
                s.push('c');
            }
        }
    }
    format!("[{s}]")
}

fn fmt_snapshot(s: &Snapshot) -> String {
    let mut out = String::new();
    for (fd, c, id) in &s.fds {
        if !out.is_empty() {
            out.push(' ');
        }
        write!(out, "{fd}{}#{id}", if *c { "c" } else { "" }).unwrap();
    }
    format!("[{out}]")
}

fn fmt_tag(tag: u64) -> String {
    if tag == TAG_ROOT_EXIT {
        "end of the first process".to_string()
    } else if tag & TAG_EXEC != 0 {
        format!("after execve #{}", tag & !TAG_EXEC)
    } else {
        format!("end of the child of #{tag}")
    }
}

/// Compares two outcomes of `prog`; the first difference, in execution order, is the error.
pub fn compare(prog: &Program, kernel: &Outcome, library: &Outcome) -> Result<(), Divergence> {
    let n = prog.recs.len();
    let fail = |at: usize, what: String| Divergence {
        at,
        report: report(prog, kernel, library, Some(at)),
        what,
    };
    let (mut ki, mut li) = (0, 0);
    for p in 0..=n {
        loop {
            let k = kernel.snapshots.get(ki).filter(|s| s.pos == p);
            let l = library.snapshots.get(li).filter(|s| s.pos == p);
            match (k, l) {
                (None, None) => break,
                (Some(k), Some(l)) if k == l => {
                    ki += 1;
                    li += 1;
                }
                (k, l) => {
                    let side = |s: Option<&Snapshot>| match s {
                        Some(s) => format!("{}: {}", fmt_tag(s.tag), fmt_snapshot(s)),
                        None => "no snapshot".to_string(),
                    };
                    return Err(fail(
                        p.saturating_sub(1),
                        format!(
                            "snapshot before record #{p} differs (fd, c = close-on-exec, #identity)\n  kernel:  {}\n  library: {}",
                            side(k),
                            side(l)
                        ),
                    ));
                }
            }
        }
        if p == n {
            break;
        }
        let (kr, lr) = (kernel.results[p], library.results[p]);
        if kr != lr {
            return Err(fail(
                p,
                format!(
                    "record #{p} {}: kernel {} / library {}",
                    describe(&prog.recs[p], Some(kernel.args[p])),
                    fmt_results(kr),
                    fmt_results(lr)
                ),
            ));
        }
        if kernel.args[p] != library.args[p] {
            return Err(fail(
                p,
                format!(
                    "record #{p}: arguments resolved differently: kernel {:?} / library {:?}",
                    kernel.args[p], library.args[p]
                ),
            ));
        }
        if kernel.windows[p] != library.windows[p] {
            return Err(fail(
                p,
                format!(
                    "after record #{p} {}: open fds (c = close-on-exec) differ\n  kernel:  {}\n  library: {}",
                    describe(&prog.recs[p], Some(kernel.args[p])),
                    fmt_window(&kernel.windows[p]),
                    fmt_window(&library.windows[p])
                ),
            ));
        }
    }
    if ki != kernel.snapshots.len() || li != library.snapshots.len() {
        return Err(fail(
            n.saturating_sub(1),
            format!(
                "unmatched snapshots: kernel {:?} / library {:?}",
                &kernel.snapshots[ki..],
                &library.snapshots[li..]
            ),
        ));
    }
    if kernel.exit_status != library.exit_status {
        return Err(fail(
            n.saturating_sub(1),
            format!("first process exit status {:#x}", kernel.exit_status),
        ));
    }
    Ok(())
}

/// The whole program, one record a line, indented by process, with both sides' results
/// (`=` where they agree) and the open fds after each record; `mark` flags a record.
pub fn report(prog: &Program, kernel: &Outcome, library: &Outcome, mark: Option<usize>) -> String {
    let mut s = format!(
        "program (initial soft RLIMIT_NOFILE {}, {} records; kernel | library):\n",
        prog.nofile,
        prog.recs.len()
    );
    let mut ends: Vec<usize> = Vec::new();
    for (i, rec) in prog.recs.iter().enumerate() {
        while ends.last().is_some_and(|&e| e <= i) {
            ends.pop();
        }
        let (kr, lr) = (kernel.results[i], library.results[i]);
        let res = if kr == lr {
            format!("= {}", fmt_results(kr))
        } else {
            format!("{} | {}", fmt_results(kr), fmt_results(lr))
        };
        let win = if kernel.windows[i] == library.windows[i] {
            fmt_window(&kernel.windows[i])
        } else {
            format!(
                "{} | {}",
                fmt_window(&kernel.windows[i]),
                fmt_window(&library.windows[i])
            )
        };
        let flag = if mark == Some(i) { ">>" } else { "  " };
        writeln!(
            s,
            "{flag}#{i:<4}{:indent$}{} -> {res}   {win}",
            "",
            describe(rec, (kr[0] != NOT_RUN).then_some(kernel.args[i])),
            indent = ends.len() * 4
        )
        .unwrap();
        if matches!(rec.kind, kind::FORK | kind::SHARE) {
            ends.push(i + 1 + rec.len as usize);
        }
    }
    s
}

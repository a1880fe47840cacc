//! Descriptor arguments: what a call's result says about the descriptors it was given.
//!
//! The kernel looks a call's descriptor arguments up before it does anything with them:
//! `fdget`/`fget` (most calls) refuse an O_PATH file as if the slot were empty, `fdget_raw`
//! (fstat, fstatfs, fchdir, fcntl) and the start of a path walk (every `*at` dirfd) take it;
//! `pidfd_getfd` looks its second argument up in the *target's* table with `fget_task`, which
//! takes O_PATH files too. So, with [`crate::decode`]'s description of each call:
//!
//! - **success** proves every argument installed and, where `fdget` looks it up, not O_PATH
//!   (P15); pidfd_getfd's target descriptor installed in the target's table;
//! - **EBADF** must be explained by the model: an argument closed, reserved, negative, or an
//!   O_PATH file where `fdget` looks it up, or (pidfd_getfd) a target descriptor the target's
//!   table does not hold. If every argument is valid, the answer is a mismatch for calls whose
//!   only EBADF is the lookup; calls that answer EBADF for other reasons too (a file's access
//!   mode, a descriptor inside the arguments, a descriptor that is no pidfd) leave it
//!   unchecked;
//! - **any other errno** of a call whose lookups come before its other checks proves the
//!   arguments were found, unless the errno may come before the lookups
//!   ([`crate::decode::EARLY`]: argument checks, copies, allocations, seccomp's answers).
//!
//! What the log cannot decide is counted, by reason, in [`crate::stats::Stats::fd_args_unchecked`]
//! and never reported as a mismatch: descriptors the replay does not know (an assumed initial
//! state, received or resynced files whose O_PATH-ness it never saw), a shared table another
//! task changed during the call, a pidfd whose process is not traced, has exited or is exiting,
//! or whose table changed during the call. A disagreement in a table that may change invisibly
//! (io_uring) is drift, as elsewhere; a mismatch resynchronises the model to the log.

use super::check::Verdict;
use super::step::force_install;
use super::{Engine, Pending, may_touch_table};
use crate::decode::{Decoded, Ebadf, FdArg, Kind, Lookup};
use crate::parse::{Call, Ret};
use crate::syscalls;
use fdtable::{Errno, FdState};

/// The descriptor may be an O_PATH file opened where the replay could not see it.
const MAYBE_PATH: &str = "the descriptor may be an O_PATH file the replay did not see opened";
/// The errno may be answered before the lookup.
const EARLY_ERRNO: &str = "the errno may come before the descriptor lookup";
/// Several lookups in turn, or other checks first.
const BETWEEN: &str = "the errno may come before or between the descriptor lookups";
/// A negative descriptor with an errno from after the lookup.
const NEGATIVE: &str = "a negative descriptor value (a special value?)";
/// Another task sharing the table changed it during the call.
const UNSETTLED: &str = "a task sharing the table changed it during the call";
/// A descriptor of an assumed initial state.
const UNKNOWN_FD: &str = "a descriptor the replay does not know (initial state assumed)";
/// pidfd_getfd: the pidfd's process cannot be named.
const NOT_A_KNOWN_PIDFD: &str = "pidfd_getfd: the descriptor is not known to be a pidfd";
/// pidfd_getfd: the target is not traced or has gone.
const TARGET_GONE: &str = "pidfd_getfd: the pidfd's process is not traced or has gone";
/// pidfd_getfd: the target is exiting (its table may already be released).
const TARGET_EXITING: &str = "pidfd_getfd: the pidfd's process is exiting";
/// pidfd_getfd: the target's table changed during the call.
const TARGET_UNSETTLED: &str = "pidfd_getfd: the target's table changed during the call";

/// What the model says of one argument, as the call looks it up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Free, reserved, or a negative number: the lookup fails.
    Bad,
    /// An O_PATH file where `fdget` looks it up: the lookup fails.
    Path,
    /// Installed and usable by the lookup.
    Valid,
    /// Installed, looked up with `fdget`, and the replay does not know whether it is O_PATH.
    MaybePath,
}

/// How the model is made to agree with the log after a disagreement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fix {
    /// The log says the descriptor was bad: close it.
    Close(u32),
    /// The log says the descriptor was valid: install a (non-O_PATH) object there.
    Install(u32),
    /// Nothing can be told (several arguments).
    None,
}

/// Whether `fd` still holds the object of the initial state (assumed without a meta file).
fn assumed_initial(files: &super::step::Fdt, fd: u32) -> bool {
    files
        .fget(fd)
        .is_some_and(|f| f.kind == Kind::Inherited && f.line == 0)
}

fn state(files: &super::step::Fdt, a: FdArg) -> State {
    if a.negative {
        return State::Bad;
    }
    match files.fd_state(a.fd) {
        // The light lookup: no reference count while the table is unshared.
        FdState::Installed { .. } if a.lookup == Lookup::NoPath => match files.fdget(a.fd) {
            Some(f) if !f.kind.opath_known() => State::MaybePath,
            Some(f) if f.opath => State::Path,
            _ => State::Valid,
        },
        FdState::Installed { .. } => State::Valid,
        _ => State::Bad,
    }
}

impl Engine {
    /// Checks a call's descriptor arguments against its result.
    pub(crate) fn check_args(&mut self, c: &Call, d: &Decoded, pending: Option<&Pending>) {
        if d.args.is_empty() && d.remote.is_none() {
            return;
        }
        match c.ret {
            Ret::Val(_) => {
                self.check_uses(c, d, pending);
                if d.remote.is_some() {
                    self.check_remote(c, d, false);
                }
            }
            Ret::Err(e) => self.check_failed(c, d, e),
            Ret::Restart | Ret::Unknown => {}
        }
    }

    /// A successful call: its descriptor arguments were installed and, where `fdget` looked
    /// them up, not O_PATH (P15).
    fn check_uses(&mut self, c: &Call, d: &Decoded, pending: Option<&Pending>) {
        let Some(ti) = self.tasks.get(&c.entry_tid).map(|t| t.table) else {
            return;
        };
        for a in d.args.iter().filter(|a| !a.negative) {
            let fd = a.fd;
            let Some(t) = self.tables.get(ti) else {
                return;
            };
            self.stats.fd_uses += 1;
            let open_at_entry = pending.is_some_and(|p| p.open_at_entry.contains(&fd));
            let library = match state(&t.files, *a) {
                State::Valid | State::MaybePath => continue,
                State::Bad if open_at_entry => continue,
                State::Bad => format!("{fd} not open"),
                State::Path => format!("{fd} an O_PATH file (fdget refuses it)"),
            };
            // Closed or replaced meanwhile by a sibling whose call overlapped ours?
            if t.sharers() > 1 && c.entry_line < c.line {
                continue;
            }
            let verdict = if t.drifting || t.blind {
                Verdict::Drift
            } else if self.init.assumed && !self.touched.contains(&fd) {
                Verdict::Inherited
            } else {
                Verdict::Mismatch
            };
            match verdict {
                Verdict::Mismatch | Verdict::Undecided => {
                    let row = self.stats.row(&c.name);
                    row.checked += 1;
                    row.mismatched += 1;
                    self.push_mismatch(
                        c,
                        format!("{fd} open (the call succeeded)"),
                        library,
                        "fd use",
                    );
                }
                Verdict::Drift => self.stats.drift += 1,
                Verdict::Inherited => {
                    self.stats.inherited += 1;
                    self.stats.note(format!(
                        "line {}: fd {fd} used without a visible creation; taken as inherited \
                         (no meta file: initial descriptors assumed)",
                        c.line
                    ));
                }
            }
            let kind = if verdict == Verdict::Inherited {
                Kind::Inherited
            } else {
                Kind::Opaque
            };
            self.resync_arg(ti, Fix::Install(fd), kind, c.line);
        }
    }

    /// A failed call: EBADF must be explained by a bad argument; an errno from after the
    /// lookups proves the arguments valid.
    fn check_failed(&mut self, c: &Call, d: &Decoded, e: Errno) {
        let Some(ti) = self.tasks.get(&c.entry_tid).map(|t| t.table) else {
            return;
        };
        let Some(t) = self.tables.get(ti) else {
            return;
        };
        let states: Vec<State> = d.args.iter().map(|a| state(&t.files, *a)).collect();
        if e == Errno::EBADF {
            if d.ebadf == Ebadf::Steps {
                return;
            }
            if states.contains(&State::Bad) {
                return self.ebadf_explained(c, false);
            }
            if states.contains(&State::Path) {
                return self.ebadf_explained(c, true);
            }
            if d.remote.is_some() {
                // The pidfd was found: the target's table decides.
                return self.check_remote(c, d, true);
            }
            if states.contains(&State::MaybePath) {
                return self.unchecked(MAYBE_PATH);
            }
            match d.ebadf {
                Ebadf::Other(why) => self.unchecked(why),
                Ebadf::Strict => {
                    let fds: Vec<u32> = d.args.iter().map(|a| a.fd).collect();
                    let fix = match fds[..] {
                        [fd] => Fix::Close(fd),
                        _ => Fix::None,
                    };
                    let list = fds
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ");
                    self.disagree(
                        c,
                        ti,
                        &fds,
                        format!("EBADF (a descriptor of {list} not valid)"),
                        format!("{list} valid"),
                        fix,
                    );
                }
                Ebadf::Steps => {}
            }
            return;
        }
        if d.args.is_empty() {
            return;
        }
        if d.is_early(e) || e == Ret::unknown_errno() {
            return self.unchecked(EARLY_ERRNO);
        }
        if !d.proves {
            return self.unchecked(BETWEEN);
        }
        if d.args.iter().any(|a| a.negative) {
            return self.unchecked(NEGATIVE);
        }
        let wrong: Vec<(u32, State)> = d
            .args
            .iter()
            .zip(&states)
            .filter(|(_, s)| matches!(s, State::Bad | State::Path))
            .map(|(a, s)| (a.fd, *s))
            .collect();
        if wrong.is_empty() {
            self.stats.failed_fd_uses += 1;
            return;
        }
        let what = e.name().map_or_else(|| format!("{e:?}"), str::to_string);
        for (fd, s) in wrong {
            let library = if s == State::Path {
                format!("{fd} an O_PATH file (fdget refuses it)")
            } else {
                format!("{fd} not open")
            };
            self.disagree(
                c,
                ti,
                &[fd],
                format!("{fd} valid ({what} comes after the lookup)"),
                library,
                Fix::Install(fd),
            );
        }
    }

    /// pidfd_getfd's target descriptor, in the table of the pidfd's process: open if the call
    /// succeeded, not open if it answered EBADF (`failed`) with a valid pidfd.
    fn check_remote(&mut self, c: &Call, d: &Decoded, failed: bool) {
        let (Some(pidfd), Some(target)) = (d.args.first(), d.remote) else {
            return;
        };
        if failed && target.negative {
            // No table holds a negative descriptor (and a pidfd that is none is EBADF too).
            return self.ebadf_explained(c, false);
        }
        let Some(ti) = self.tasks.get(&c.entry_tid).map(|t| t.table) else {
            return;
        };
        let Some(obj) = self.tables.get(ti).and_then(|t| t.files.fget(pidfd.fd)) else {
            // Not open: the caller's P15 check said so.
            return;
        };
        let Kind::Pidfd(pid) = obj.kind else {
            return self.unchecked(if failed {
                syscalls::NOT_PIDFD
            } else {
                NOT_A_KNOWN_PIDFD
            });
        };
        let pid = self.resolve(pid);
        let Some(task) = self.tasks.get(&pid) else {
            return self.unchecked(TARGET_GONE);
        };
        // A later task with the same pid (the pidfd's process was reaped meanwhile).
        if task.born.is_some_and(|b| b > obj.line) {
            return self.unchecked(TARGET_GONE);
        }
        // An exiting task's table may already be released (EBADF whatever the descriptor);
        // a success still found the descriptor there.
        if failed && self.dying.contains(&pid) {
            return self.unchecked(TARGET_EXITING);
        }
        let tt = task.table;
        if self.busy(tt, c) {
            return self.unchecked(TARGET_UNSETTLED);
        }
        let Some(t2) = self.tables.get(tt) else {
            return self.unchecked(TARGET_GONE);
        };
        let open =
            !target.negative && matches!(t2.files.fd_state(target.fd), FdState::Installed { .. });
        let (drifting, fd) = (t2.drifting || t2.blind, target.fd);
        self.stats.remote_fd_args += 1;
        match (failed, open) {
            (true, false) => self.ebadf_explained(c, false),
            (false, true) => {}
            (true, true) | (false, false) => {
                let (log, library) = if failed {
                    (
                        format!("EBADF ({fd} not open in process {pid})"),
                        format!("{fd} open in process {pid}"),
                    )
                } else {
                    (
                        format!("{fd} open in process {pid} (the call succeeded)"),
                        format!("{fd} not open in process {pid}"),
                    )
                };
                if drifting {
                    self.stats.drift += 1;
                } else if self.init.assumed && !self.touched_before(fd) {
                    self.unchecked(UNKNOWN_FD);
                } else {
                    let row = self.stats.row(&c.name);
                    row.checked += 1;
                    row.mismatched += 1;
                    self.push_mismatch(c, log, library, "pidfd_getfd target");
                }
            }
        }
    }

    /// An EBADF the model explains: counted as a checked (and matched) table errno.
    fn ebadf_explained(&mut self, c: &Call, opath: bool) {
        let row = self.stats.row(&c.name);
        row.checked += 1;
        row.matched += 1;
        self.stats.exact += 1;
        self.stats.ebadf += 1;
        self.stats.ebadf_args += 1;
        if opath {
            self.stats.ebadf_opath += 1;
        }
    }

    fn unchecked(&mut self, why: &str) {
        *self
            .stats
            .fd_args_unchecked
            .entry(why.to_string())
            .or_default() += 1;
    }

    /// Whether a task other than `c`'s may have changed table `ti` during `c`: a call of one
    /// of them that may change a table is in flight, or (if `c` spans several lines) one
    /// returned since `c` was entered. (The caller's own table, unshared, cannot change.)
    fn busy(&self, ti: usize, c: &Call) -> bool {
        let Some(t) = self.tables.get(ti) else {
            return true;
        };
        let in_flight = self.tasks.iter().any(|(&tid, task)| {
            tid != c.entry_tid
                && task.table == ti
                && task
                    .pending
                    .as_ref()
                    .is_some_and(|p| may_touch_table(&p.name))
        });
        in_flight || (c.entry_line < c.line && t.changed > c.entry_line)
    }

    /// Arguments that disagree with the result: drift in a table that may change invisibly,
    /// unchecked if another task may have changed the table during the call or the
    /// descriptors were never seen with an assumed initial state, else a mismatch; the model
    /// is then made to agree with the log.
    fn disagree(&mut self, c: &Call, ti: usize, fds: &[u32], log: String, lib: String, fix: Fix) {
        let Some(t) = self.tables.get(ti) else {
            return;
        };
        let verdict = if t.drifting || t.blind {
            Verdict::Drift
        } else if self.busy(ti, c) {
            return self.unchecked(UNSETTLED);
        } else if self.init.assumed
            && fds
                .iter()
                .any(|&fd| !self.touched_before(fd) || assumed_initial(&t.files, fd))
        {
            Verdict::Inherited
        } else {
            Verdict::Mismatch
        };
        match verdict {
            Verdict::Mismatch | Verdict::Undecided => {
                let row = self.stats.row(&c.name);
                row.checked += 1;
                row.mismatched += 1;
                self.push_mismatch(c, log, lib, "descriptor argument");
            }
            Verdict::Drift => {
                self.stats.drift += 1;
                super::tasks::keep(&mut self.stats.first_drift, c, log, lib);
            }
            Verdict::Inherited => {
                self.unchecked(UNKNOWN_FD);
                self.stats.note(format!(
                    "line {}: {log} for a descriptor never seen; the initial state was assumed \
                     (no meta file)",
                    c.line
                ));
            }
        }
        let kind = if verdict == Verdict::Inherited {
            Kind::Inherited
        } else {
            Kind::Opaque
        };
        self.resync_arg(ti, fix, kind, c.line);
    }

    fn resync_arg(&mut self, ti: usize, fix: Fix, kind: Kind, line: u64) {
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        match fix {
            Fix::Close(fd) => {
                self.stats.resyncs += 1;
                self.touched.insert(fd);
                let _ = t.files.close_fd(fd);
            }
            Fix::Install(fd) => {
                self.stats.resyncs += 1;
                self.touched.insert(fd);
                // An installed object the log contradicts (O_PATH where the lookup found a
                // usable file) is replaced; its close-on-exec bit is the slot's and stays.
                let cloexec = t.files.get_close_on_exec(fd).unwrap_or(false);
                force_install(&mut t.files, fd, kind, line);
                let _ = t.files.set_close_on_exec(fd, cloexec);
            }
            Fix::None => {}
        }
    }
}

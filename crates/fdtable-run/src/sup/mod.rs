//! The supervisor: the library's tables of every traced task, kept identical to the
//! kernel's.
//!
//! Two threads share one [`State`] under a mutex: the notification thread blocks in
//! `SECCOMP_IOCTL_NOTIF_RECV` and answers each notification ([`State::on_notification`],
//! then [`crate::calls`]); the ptrace thread (the one that attached, as ptrace requires)
//! receives process events ([`events`]). What a `CONTINUE`d call did is settled later from
//! the kernel's table ([`settle`]); `--check-tables` compares ([`check`]); `--track-fds`
//! reports ([`track`]).

pub mod check;
pub mod early;
pub mod events;
pub mod exec;
pub mod foreign;
pub mod settle;
pub mod table;
pub mod track;

use crate::procfs;
use crate::sys;
use fdtable::{FileLike, Files};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use table::Table;

/// How the supervisor was configured.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Report the descriptors each process still holds when it exits.
    pub track_fds: bool,
    /// Compare the library's tables with the kernel's (slow; for tests).
    pub check_tables: bool,
    /// Measurement only: every call runs (`CONTINUE`), every stop is resumed, no table is
    /// kept (`--floor`).
    pub floor: bool,
    /// Measurement only, with `floor`: no ptrace; process calls are notified
    /// (`--floor-untraced`).
    pub untraced: bool,
    /// The supervisor keeps `prctl(PR_SET_DUMPABLE)` for the program (it lacks
    /// `CAP_SYS_PTRACE`).
    pub emulate_dumpable: bool,
    /// `--stats`: the counters are written at the last task's exit event.
    pub stats: bool,
}

impl Config {
    /// Whether tasks stop at their exit (`PTRACE_O_TRACEEXIT`).
    pub fn exit_events(&self) -> bool {
        self.track_fds || self.check_tables || self.stats
    }
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit(code)`.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Counters, for `--stats` and the benchmark.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Notifications received.
    pub notifications: u64,
    /// Calls let run (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
    pub continued: u64,
    /// Calls answered by the supervisor (the library's result or errno).
    pub answered: u64,
    /// Calls refused.
    pub refused: u64,
    /// `kcmp` probes of a kernel table.
    pub probes: u64,
    /// `fdinfo` reads (close-on-exec bits the supervisor could not know).
    pub fdinfo: u64,
    /// Listings of a kernel table (`/proc/<pid>/fd`).
    pub listings: u64,
    /// Descriptors adopted from the kernel's table after concurrent calls.
    pub adopted: u64,
    /// The most uncertain numbers one table had at once.
    pub uncertain_max: u64,
    /// Processes and threads traced.
    pub tasks: u64,
    /// ptrace event stops.
    pub events: u64,
    /// Signal-delivery stops.
    pub signals: u64,
    /// Comparisons of a table (`--check-tables`).
    pub checks: u64,
    /// Differences found between a kernel table and the library's (`--check-tables`).
    pub table_mismatches: u64,
    /// New tasks whose first stop came before their creator's event.
    pub early: u64,
    /// Checks whether an early task's creator can still report it.
    pub early_checks: u64,
    /// Notified calls a signal interrupted before they were received, restarted.
    pub restarted: u64,
    /// Early tasks claimed from the kernel: their creator was killed before its event.
    pub claimed: u64,
    /// Changes of a process's RLIMIT_NOFILE seen when it was read (a traced `setrlimit`'s,
    /// or one made from outside, `prlimit --pid`), each followed by a reading of its tables
    /// from the kernel.
    pub limit_changes: u64,
    /// Traced zombies collected for a `waitid(P_PIDFD, WNOHANG)` of their parent, so that a
    /// readable pidfd finds its child reapable, as natively.
    pub released: u64,
    /// Notified calls a signal cut before they were received that would have blocked (a
    /// FIFO open without a peer, an `accept` or receive with nothing waiting): left
    /// interrupted, as natively.
    pub left_interrupted: u64,
}

impl Stats {
    /// The counters as `--stats` writes them, with the supervisor's descriptor counts.
    pub fn to_json(&self, fds_start: usize, fds_end: usize) -> serde_json::Value {
        serde_json::json!({
            "notifications": self.notifications,
            "continued": self.continued,
            "answered": self.answered,
            "refused": self.refused,
            "probes": self.probes,
            "fdinfo": self.fdinfo,
            "listings": self.listings,
            "adopted": self.adopted,
            "uncertain_max": self.uncertain_max,
            "tasks": self.tasks,
            "events": self.events,
            "signals": self.signals,
            "checks": self.checks,
            "table_mismatches": self.table_mismatches,
            "early": self.early,
            "early_checks": self.early_checks,
            "restarted": self.restarted,
            "released": self.released,
            "left_interrupted": self.left_interrupted,
            "claimed": self.claimed,
            "limit_changes": self.limit_changes,
            "supervisor_fds_start": fds_start,
            "supervisor_fds_end": fds_end,
        })
    }
}

/// Writes `--stats`' file (errors are reported on stderr: the program's outcome stands). A
/// regular file (or a new one) is replaced whole (a temporary file beside it, renamed), so
/// that a reader never sees it half written; anything else (`/dev/stderr`, a FIFO) is
/// written in place.
pub fn write_stats(path: &std::path::Path, stats: &Stats, fds_start: usize, fds_end: usize) {
    let text = stats.to_json(fds_start, fds_end).to_string();
    let regular = std::fs::metadata(path).map_or(true, |m| m.is_file());
    let r = match path.file_name() {
        Some(name) if regular => {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".{}.tmp", std::process::id()));
            let tmp = path.with_file_name(tmp_name);
            std::fs::write(&tmp, &text)
                .and_then(|()| std::fs::rename(&tmp, path))
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(&tmp);
                })
        }
        _ => std::fs::write(path, &text),
    };
    if let Err(e) = r {
        let _ = writeln!(
            std::io::stderr(),
            "fdtable run: cannot write {}: {e}",
            path.display()
        );
    }
}

/// An open file description, as the library's table refers to it. The kernel holds the real
/// one; this records what the supervisor learns about it.
#[derive(Debug, Default)]
pub struct Desc {
    /// Whether it is an `AF_UNIX` socket (whose messages may carry descriptors), asked once.
    pub unix: OnceLock<bool>,
    /// Whether it is an `O_PATH` descriptor (which `ioctl` does not accept), when known.
    pub opath: OnceLock<bool>,
    /// Another process's object whose `read()` installs descriptors ([`foreign`]): every
    /// process whose table holds it is killed, a child copying such a table too.
    pub refused: AtomicBool,
}

impl FileLike for Desc {}

impl Desc {
    /// A description whose `O_PATH`-ness is `opath`, if known.
    pub fn new(opath: Option<bool>) -> Desc {
        let d = Desc::default();
        if let Some(o) = opath {
            let _ = d.opath.set(o);
        }
        d
    }
}

/// A descriptor table of the library: the payload of each number is its creating call
/// (an index into [`track::Origins`], 0 when not tracked).
pub type Fdt = Files<Desc, u32>;

/// The key of a table: its identity in the library.
pub type TableKey = usize;

/// The key of `files`' table.
pub fn key_of(files: &Fdt) -> TableKey {
    files.table_id().as_ptr() as usize
}

/// One traced task.
pub struct Task {
    /// Its id.
    pub tid: i32,
    /// Its thread group.
    pub tgid: i32,
    /// Its descriptor table (a handle; tasks sharing a table each hold one from `share`).
    pub files: Fdt,
    /// The `CONTINUE`d call whose effect is not settled yet.
    pub inflight: Option<settle::InFlight>,
    /// The number of its last notified call (-1 before the first).
    pub call: i64,
    /// Its last notified call, if it was `CONTINUE`d (its number and instruction pointer):
    /// that call runs in the kernel, whose own interruptions are the program's to see
    /// ([`State::restart_cut_call`]).
    pub continued: Option<(u64, u64)>,
    /// The signals passed on at its signal-delivery stops since it last reached the
    /// supervisor otherwise (a notification, an event), bit `s - 1` for signal `s`: if one
    /// has a handler, a handler frame may stand on its registers
    /// ([`State::restart_cut_call`]).
    pub delivered: u64,
    /// Numbers the last decided call changed (checked at the task's next stop).
    pub touched: Vec<u32>,
    /// Its first stop has been seen.
    pub started: bool,
    /// Before the program's first exec: calls pass unseen.
    pub raw: bool,
    /// Stopped at its exit event.
    pub exiting: bool,
    /// `PTRACE_O_TRACEEXEC` is set on it (`exec`'s module says which tasks have it).
    pub exec_events: bool,
    /// Exec events wanted from its first stop (set then): it shares its table or its
    /// process.
    pub exec_wanted: bool,
}

/// A thread group.
#[derive(Debug)]
pub struct Proc {
    /// RLIMIT_NOFILE (soft, hard), as the kernel has it.
    pub nofile: (u64, u64),
    /// `setrlimit`/`prlimit64` of RLIMIT_NOFILE in flight: the limit is read from the kernel
    /// until they settle.
    pub rlimit_pending: u32,
    /// The limit has been seen to change at a decision (from outside, or by a traced call
    /// still in flight), or a traced call made by another task than the process's only one
    /// changed it (`State::rlimit_over`). From then on, for as long as the process lives, the results of its
    /// dup family are probed like a creation's: a change that lands between a decision and
    /// the call's run in the kernel (after the decision read the limit) leaves the kernel
    /// refusing a call the library let run, and nothing else reads the limit before the
    /// program's next `F_GETFD` or `close` of that number is answered.
    pub limit_moved: bool,
    /// `PR_SET_DUMPABLE` as the program set it (kept by a supervisor without
    /// `CAP_SYS_PTRACE`).
    pub dumpable: bool,
    /// With `dumpable` cleared: the image of the process at its exec call in flight
    /// ([`crate::mem::image_id`]), so that an exec that changed nothing in the table is still
    /// seen to have run (and to have made the process dumpable again).
    pub image: Option<Vec<u8>>,
    /// `--track-fds` report printed.
    pub reported: bool,
}

impl Proc {
    /// A thread group with limit `nofile` and the dumpable flag `dumpable`.
    pub fn new(nofile: (u64, u64), dumpable: bool) -> Proc {
        Proc {
            nofile,
            rlimit_pending: 0,
            limit_moved: false,
            dumpable,
            image: None,
            reported: false,
        }
    }
}

impl Task {
    /// A new task `tid` of thread group `tgid` on `files`, before its first stop, with
    /// `PTRACE_O_TRACEEXEC` as `exec_events` says it has it and as `exec_wanted` asks.
    pub fn new(tid: i32, tgid: i32, files: Fdt, exec_events: bool, exec_wanted: bool) -> Task {
        Task {
            tid,
            tgid,
            files,
            inflight: None,
            call: -1,
            continued: None,
            delivered: 0,
            touched: Vec::new(),
            started: false,
            raw: false,
            exiting: false,
            exec_events,
            exec_wanted,
        }
    }
}

/// A new task's first stop, which [`State::start`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstStop {
    /// The stop of a task the kernel attached at its creation: resumed.
    Attach,
    /// A group-stop (its process was being stopped as it was created, and the kernel made
    /// it join the stop): it stays stopped until `SIGCONT`, as natively.
    GroupStop,
    /// A signal was delivered to it first: resumed with the signal.
    Signal(i32),
}

impl FirstStop {
    /// The stop `PTRACE_EVENT_STOP` reports with `sig`.
    pub fn of_event_stop(sig: i32) -> FirstStop {
        if is_stop_signal(sig) {
            FirstStop::GroupStop
        } else {
            FirstStop::Attach
        }
    }
}

/// Whether a `PTRACE_EVENT_STOP` with `sig` is a group-stop.
pub fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// The supervisor's state.
pub struct State {
    /// Configuration.
    pub cfg: Config,
    /// Every traced task.
    pub tasks: HashMap<i32, Task>,
    /// What is kept beside each table of the library.
    pub tables: HashMap<TableKey, Table>,
    /// Thread groups, by id.
    pub procs: HashMap<i32, Proc>,
    /// New tasks whose first stop came before their creator's event.
    pub early: HashSet<i32>,
    /// New tasks, not started yet, whose first stop was not the plain attach stop: how
    /// [`State::start`] lets them go.
    pub first_stops: HashMap<i32, FirstStop>,
    /// The ptrace thread checks early tasks on a timer ([`early`]).
    pub early_timer: bool,
    /// Running tasks' user time at the last check of early tasks ([`early`]).
    pub early_utime: HashMap<i32, u64>,
    /// The program's first process.
    pub root: i32,
    /// The supervisor's process and threads: what the program may not signal or name as a
    /// `SIGIO` owner (the filter's list).
    pub outside: Vec<i32>,
    /// `--stats`: the file and the supervisor's descriptor count at the start, until the
    /// counters are written.
    pub stats_file: Option<(std::path::PathBuf, usize)>,
    /// Notes already printed (each once per run).
    notes: HashSet<String>,
    /// Counters.
    pub stats: Stats,
    /// The creating calls of descriptors, for `--track-fds`.
    pub origins: track::Origins,
    /// A shared table has many uncertain numbers: receive queued notifications together.
    pub drain: bool,
    /// The program's filter, to tell which calls it notifies ([`State::restart_cut_call`]).
    pub filter: Vec<crate::filter::Insn>,
    /// Descriptions marked [`Desc::refused`] so far (0: no table needs looking at).
    pub refused: usize,
}

impl State {
    /// The state for the program's first process `root` (its table is read at its exec).
    pub fn new(cfg: Config, root: i32, outside: Vec<i32>) -> State {
        let filter = crate::filter::program(&crate::filter::Context {
            supervisor: outside.clone(),
            dumpable: cfg.emulate_dumpable,
            notify_processes: cfg.untraced,
        });
        let mut s = State {
            cfg,
            tasks: HashMap::default(),
            tables: HashMap::default(),
            procs: HashMap::default(),
            filter,
            early: HashSet::default(),
            first_stops: HashMap::default(),
            early_timer: false,
            early_utime: HashMap::default(),
            root,
            outside,
            stats_file: None,
            notes: HashSet::default(),
            stats: Stats {
                tasks: 1,
                ..Stats::default()
            },
            origins: track::Origins::default(),
            drain: false,
            refused: 0,
        };
        let files = Fdt::new();
        s.tables.insert(key_of(&files), Table::new());
        s.procs.insert(
            root,
            Proc::new(sys::nofile_of(root).unwrap_or((1024, 1024)), true),
        );
        // Seized with exec events (except under `--floor`): its first exec is read at the
        // event.
        let exec_events = !s.cfg.floor;
        let mut task = Task::new(root, root, files, exec_events, exec_events);
        task.started = true;
        task.raw = true;
        s.tasks.insert(root, task);
        s
    }

    /// Prints a note on stderr, once per distinct text.
    pub fn note(&mut self, text: String) {
        if self.notes.insert(text.clone()) {
            let _ = writeln!(std::io::stderr(), "fdtable run: {text}");
        }
    }

    /// The key of `tid`'s table.
    pub fn key(&self, tid: i32) -> Option<TableKey> {
        self.tasks.get(&tid).map(|t| key_of(&t.files))
    }

    /// `tid`'s table record.
    pub fn table(&mut self, tid: i32) -> Option<&mut Table> {
        let k = self.key(tid)?;
        self.tables.get_mut(&k)
    }

    /// Whether `tid`'s table is used by other tasks too.
    pub fn shared(&self, tid: i32) -> bool {
        self.key(tid)
            .and_then(|k| self.tables.get(&k))
            .is_some_and(|t| t.members > 1)
    }

    /// Whether the kernel's table of `tid` can hold number `n`. A table grows only below
    /// `fs.nr_open` (`expand_files`: EMFILE, which the dup family turns into EBADF), and
    /// root may lower that below a process's `RLIMIT_NOFILE` after the limit was set
    /// (`setrlimit` refuses a limit above it). Read from /proc only for a number beyond the
    /// table's size as last seen: at most once per growth of the kernel's table. Numbers
    /// below 1024 are not checked: each read costs about 20 µs, shells dup to 255 in every
    /// process, and a `fs.nr_open` below the default soft limit is not supported.
    pub fn kernel_has_room(&mut self, tid: i32, n: u32) -> bool {
        const CHECKED_FROM: u32 = 1024;
        if n < CHECKED_FROM {
            return true;
        }
        let Some(t) = self.table(tid) else {
            return true;
        };
        if n < t.kernel_size {
            return true;
        }
        let size = procfs::fd_size(tid).unwrap_or(0);
        if let Some(t) = self.table(tid) {
            t.kernel_size = t.kernel_size.max(size);
        }
        n < size || procfs::nr_open().is_none_or(|max| n < max)
    }

    /// `tid`'s RLIMIT_NOFILE soft limit, as the kernel has it now, for a call being decided:
    /// [`State::nofile`], and if the limit changed, the tables of the process are read
    /// from the kernel at once where nothing is in flight on them. Call it before the
    /// decision reserves or holds anything.
    pub fn nofile_to_decide(&mut self, tid: i32) -> u64 {
        let (l, changed) = self.read_nofile(tid);
        if changed {
            let Some(tgid) = self.tasks.get(&tid).map(|t| t.tgid) else {
                return l;
            };
            let keys: Vec<TableKey> = self
                .tasks
                .values()
                .filter(|t| t.tgid == tgid)
                .map(|t| key_of(&t.files))
                .collect();
            for key in keys {
                let user = self
                    .tasks
                    .values()
                    .find(|t| key_of(&t.files) == key)
                    .map(|t| t.tid);
                if let Some(u) = user {
                    self.quiesce(key, u);
                }
            }
        }
        l
    }

    /// `tid`'s RLIMIT_NOFILE soft limit, as the kernel has it now: read at every decision
    /// that depends on it (about 0.4 µs), because a process the filter does not cover (an
    /// administrator's `prlimit --pid`, any untraced process of the same user) can change it.
    /// A change (other than a traced `setrlimit` that settles the same way) may have landed
    /// after an earlier decision and before its call ran in the kernel: every table of the
    /// process is then read whole from the kernel when it is next quiet (`reconcile`), and
    /// the close-on-exec bits of its numbers at or above the lower of the two limits are the
    /// kernel's (a `dup2` onto an open number the kernel refused kept the old file and bit).
    pub fn nofile(&mut self, tid: i32) -> u64 {
        self.read_nofile(tid).0
    }

    /// `tid`'s RLIMIT_NOFILE soft limit as last read.
    pub fn cached_nofile(&self, tid: i32) -> u64 {
        self.tasks
            .get(&tid)
            .and_then(|t| self.procs.get(&t.tgid))
            .map_or(0, |p| p.nofile.0)
    }

    /// `tid`'s RLIMIT_NOFILE hard limit as last read.
    pub fn hard_nofile(&self, tid: i32) -> u64 {
        self.tasks
            .get(&tid)
            .and_then(|t| self.procs.get(&t.tgid))
            .map_or(0, |p| p.nofile.1)
    }

    /// Whether `tid`'s limit has been seen to change other than by a traced call settling
    /// ([`Proc::limit_moved`]): its dup family's results are then probed, as on a shared
    /// table.
    pub fn limit_moved(&self, tid: i32) -> bool {
        self.tasks
            .get(&tid)
            .and_then(|t| self.procs.get(&t.tgid))
            .is_some_and(|p| p.limit_moved)
    }

    /// [`State::nofile`], and whether the limit changed since it was last read.
    fn read_nofile(&mut self, tid: i32) -> (u64, bool) {
        let Some(tgid) = self.tasks.get(&tid).map(|t| t.tgid) else {
            return (0, false);
        };
        let Some(p) = self.procs.get_mut(&tgid) else {
            return (0, false);
        };
        let Some(l) = sys::nofile_of(tgid) else {
            return (p.nofile.0, false);
        };
        let old = std::mem::replace(&mut p.nofile, l);
        if old.0 == l.0 {
            return (l.0, false);
        }
        self.limit_changed(tgid, old.0, l.0);
        (l.0, true)
    }

    /// Process `tgid`'s soft limit was seen to change from `old` to `new` where a decision of
    /// the process may have read the old one and its call run under the new one: from now on
    /// its dup family's results are probed ([`Proc::limit_moved`]), and every table of the
    /// process is read from the kernel as soon as nothing is in flight on it, with the
    /// close-on-exec bits of its numbers at or above the lower limit.
    pub(crate) fn limit_changed(&mut self, tgid: i32, old: u64, new: u64) {
        self.stats.limit_changes += 1;
        if let Some(p) = self.procs.get_mut(&tgid) {
            p.limit_moved = true;
        }
        let low = old.min(new).min(u64::from(u32::MAX)) as u32;
        let keys: Vec<(TableKey, Vec<u32>)> = self
            .tasks
            .values()
            .filter(|t| t.tgid == tgid)
            .map(|t| {
                (
                    key_of(&t.files),
                    t.files.iter_from(low).map(|o| o.fd).collect(),
                )
            })
            .collect();
        for (key, above) in keys {
            let t = self.tables.entry(key).or_default();
            t.unbounded = true;
            t.bits.extend(above);
        }
    }
}

/// Uncertain numbers in one table above which queued notifications are received together.
const DRAIN_ABOVE: usize = 32;

/// The answer to a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Let the call run (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
    Continue,
    /// The call returns this value without running.
    Value(i64),
    /// The call fails with this errno without running.
    Errno(i32),
}

/// The state both threads share: behind a mutex the notification thread, which takes it
/// for every call, hands over to the ptrace thread when that one waits (a plain mutex lets
/// the thread that just released it take it again, and process events would wait behind a
/// stream of notifications).
pub struct Shared {
    state: Mutex<State>,
    events_waiting: AtomicBool,
    /// `--floor`: notifications received (kept outside the state: the floor takes no lock).
    floor_count: AtomicU64,
}

impl Shared {
    /// The shared `state`.
    pub fn new(state: State) -> Shared {
        Shared {
            state: Mutex::new(state),
            events_waiting: AtomicBool::new(false),
            floor_count: AtomicU64::new(0),
        }
    }

    /// The counters, with `--floor`'s notifications (which bypass the state) added.
    pub fn stats(&self) -> Stats {
        let mut s = self.lock().stats.clone();
        // ORDERING: Relaxed; see `floor_notifications`.
        let n = self.floor_count.load(Ordering::Relaxed);
        s.notifications += n;
        s.continued += n;
        s
    }

    /// The state, for anything.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, for the ptrace thread: announces that it waits.
    pub fn lock_for_events(&self) -> MutexGuard<'_, State> {
        // ORDERING: Release pairs with the Acquire load in `lock_for_notification`: the
        // notification thread sees the announcement before it takes the lock again.
        self.events_waiting.store(true, Ordering::Release);
        let g = self.lock();
        // ORDERING: Release pairs with the same Acquire load: the notification thread stops
        // yielding once the ptrace thread holds the lock.
        self.events_waiting.store(false, Ordering::Release);
        g
    }

    /// The state, for the notification thread: first lets a waiting ptrace thread in.
    pub fn lock_for_notification(&self) -> MutexGuard<'_, State> {
        // ORDERING: Acquire pairs with the Release stores of `lock_for_events`.
        while self.events_waiting.load(Ordering::Acquire) {
            sys::yield_now();
        }
        self.lock()
    }
}

/// The notification thread: receives each notification, decides it under the state's lock,
/// and answers it.
///
/// While a shared table has many uncertain numbers, the notifications already queued are
/// received together before any is decided: a task waiting in the queue has finished its
/// previous call, so counting it back lets the table reach quiescence (and release its
/// uncertain numbers) even under a stream of concurrent calls.
pub fn notifications(shared: &Shared, listener: &OwnedFd) {
    let l = listener.as_raw_fd();
    if shared.lock().cfg.floor {
        return floor_notifications(shared, l);
    }
    let mut drain = false;
    let mut batch: Vec<sys::Notif> = Vec::new();
    let mut replies: Vec<Reply> = Vec::new();
    loop {
        batch.clear();
        match sys::notif_recv(l) {
            Ok(n) => batch.push(n),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            // A notification withdrawn before it was received (its task was killed), or no
            // task carries the filter any more: then every receive fails at once, and this
            // thread is done.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                if sys::orphaned(l) {
                    return;
                }
                continue;
            }
            Err(_) => return,
        }
        if drain {
            while sys::readable(l) {
                match sys::notif_recv(l) {
                    Ok(n) => batch.push(n),
                    Err(_) => break,
                }
            }
        }
        replies.clear();
        {
            let mut st = shared.lock_for_notification();
            if batch.len() > 1 {
                for n in &batch {
                    st.arrived(n.pid as i32);
                }
            }
            for n in &batch {
                replies.push(st.on_notification(n));
            }
            drain = st.drain;
        }
        for (n, reply) in batch.iter().zip(&replies) {
            let (val, err, flags) = match *reply {
                Reply::Continue => (0, 0, sys::SECCOMP_USER_NOTIF_FLAG_CONTINUE),
                Reply::Value(v) => (v, 0, 0),
                Reply::Errno(e) => (0, -e, 0),
            };
            if sys::notif_send(l, n.id, val, err, flags).is_err() {
                // The task was killed while it waited: its call never ran.
                shared.lock().lost(n.pid as i32);
            }
        }
    }
}

/// `--floor`: answers every notification with `CONTINUE`, counting them.
fn floor_notifications(shared: &Shared, l: std::os::fd::RawFd) {
    loop {
        match sys::notif_recv(l) {
            Ok(n) => {
                // ORDERING: Relaxed: the count is read after every traced task has exited,
                // and a task cannot exit before its notification is answered (after this
                // increment); the kernel's exit notification to the tracer orders the two.
                shared.floor_count.fetch_add(1, Ordering::Relaxed);
                if n.data.arch != crate::filter::AUDIT_ARCH_X86_64
                    || n.data.nr as u32 >= crate::filter::X32_SYSCALL_BIT
                {
                    // Other ABIs' calls, refused as `fdtable run` refuses them.
                    let _ = sys::notif_send(l, n.id, 0, -libc::ENOSYS, 0);
                    continue;
                }
                let _ = sys::notif_send(l, n.id, 0, 0, sys::SECCOMP_USER_NOTIF_FLAG_CONTINUE);
            }
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && !sys::orphaned(l) => continue,
            Err(_) => break,
        }
    }
}

impl State {
    /// `tid`'s notification is in the queue: its previous call has finished.
    pub fn arrived(&mut self, tid: i32) {
        if self.tasks.get(&tid).is_some_and(|t| !t.raw) {
            self.task_back(tid);
        }
    }

    /// Handles one notification: settles what the task's previous call did, checks, and
    /// decides this call.
    pub fn on_notification(&mut self, n: &sys::Notif) -> Reply {
        self.stats.notifications += 1;
        let tid = n.pid as i32;
        let nr = n.data.nr as u32 as u64;
        let args = n.data.args;
        let Some(task) = self.tasks.get(&tid) else {
            // Every task the program creates is stopped until its creator's event is seen,
            // so this is a task that escaped the supervisor's sight (made untraced by a
            // `clone3` whose flags are in memory), and the notification proves it carries the
            // program's filter: nothing it asks for can be kept identical, and it is killed
            // with its process. A child the first process made with `CLONE_PARENT`, the
            // caller's, is found only this way.
            let Some(tgid) = crate::procfs::tgid_of(tid) else {
                // Gone: its thread group exited (and was reaped) after this notification
                // was queued. The answer reaches nobody.
                return Reply::Errno(libc::ENOSYS);
            };
            // Its pidfd first: a signal through it cannot reach another process, should this
            // one be killed and reaped after the check and its number reused.
            let Ok(fd) = sys::pidfd_open(tgid) else {
                return Reply::Errno(libc::ENOSYS);
            };
            let untraced =
                crate::procfs::tracer_of(tid).is_some_and(|t| !self.outside.contains(&t));
            if sys::pidfd_exited(&fd) {
                // It exited after the check: the check may have been of another process.
                return Reply::Errno(libc::ENOSYS);
            }
            if untraced {
                let _ = sys::pidfd_kill(&fd, libc::SIGSTOP);
                self.kill_strays(vec![(tgid, fd)]);
            } else {
                // Traced, yet unknown: refused, as nothing it asks for can be kept identical.
                self.note(format!(
                    "task {tid} is unknown to the supervisor; its calls are refused"
                ));
            }
            self.stats.refused += 1;
            return Reply::Errno(libc::ENOSYS);
        };
        if task.raw {
            // The first process before it executes the program.
            self.stats.continued += 1;
            return Reply::Continue;
        }
        self.task_back(tid);
        self.fresh(tid);
        if self.cfg.check_tables {
            self.check_task(tid, false);
        }
        if let Some(t) = self.tasks.get_mut(&tid) {
            t.call = nr as i64;
            t.delivered = 0;
            // Kept for `--check-tables` only, which takes them above.
            t.touched.clear();
        }
        let r = if n.data.arch != crate::filter::AUDIT_ARCH_X86_64 {
            self.stats.refused += 1;
            self.note(
                "i386 system calls (`int 0x80`, or a 32-bit program) are refused with ENOSYS: \
                 fdtable run supports x86_64 programs only"
                    .to_string(),
            );
            Reply::Errno(libc::ENOSYS)
        } else if n.data.nr as u32 >= crate::filter::X32_SYSCALL_BIT {
            self.stats.refused += 1;
            if crate::filter::is_x32(n.data.nr as u32) {
                self.note(
                    "x32 system calls are refused with ENOSYS: fdtable run supports x86_64 \
                     programs only"
                        .to_string(),
                );
            }
            // Other numbers this high (`syscall(-1)`) are no call at all: ENOSYS, as natively.
            Reply::Errno(libc::ENOSYS)
        } else {
            crate::calls::decide(self, tid, nr, &args)
        };
        if let Some(t) = self.tasks.get_mut(&tid) {
            t.continued = (r == Reply::Continue).then_some((nr, n.data.ip));
        }
        self.drain = self
            .table(tid)
            .is_some_and(|t| t.uncertain.len() > DRAIN_ABOVE);
        match r {
            Reply::Continue => self.stats.continued += 1,
            _ => self.stats.answered += 1,
        }
        r
    }
}

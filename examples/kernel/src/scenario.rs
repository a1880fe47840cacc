// The shared scenario: one fixed sequence of table calls, written out as a transcript.
//
// This file is compiled twice, against two builds of the core:
// - as `fdtable_example_kernel::scenario`, against `fdtable` without `std` (the kernel
//   example's build: the embedder's RCU hooks, no host);
// - `include!`d by `examples/wasi/tests/std_transcript.rs`, against `fdtable` with `std` (the
//   built-in RCU and everything else the default build turns on).
// Both transcripts must equal `examples/kernel/tests/golden.txt`: the same calls give the same
// results, errnos, close-on-exec bits, payloads, flushes and releases in both builds.
//
// So: plain `//` comments only (an `include!`d file cannot carry inner attributes or inner doc
// comments), and only `core`, `alloc`, `lock_api` and `fdtable`.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::{Debug, Write as _};
use fdtable::{
    CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, Errno, FileLike, FileRef, Files, O_CLOEXEC,
};

/// The scenario's `RLIMIT_NOFILE`.
pub const NOFILE: u64 = 256;

/// Where the scenario's files record their flushes and releases, in order.
pub struct EventLog<L: lock_api::RawMutex>(lock_api::Mutex<L, Vec<String>>);

/// The scenario's file type, used as a trait object (`Files<dyn Named, ..>`).
pub trait Named: FileLike {
    /// The file's name in the transcript.
    fn name(&self) -> &str;
}

struct Obj<L: lock_api::RawMutex> {
    name: &'static str,
    log: Arc<EventLog<L>>,
    flush_error: Option<Errno>,
}

impl<L: lock_api::RawMutex + Send + Sync> FileLike for Obj<L> {
    fn flush(&self) -> Result<(), Errno> {
        self.log.0.lock().push(format!("flush {}", self.name));
        match self.flush_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<L: lock_api::RawMutex + Send + Sync> Named for Obj<L> {
    fn name(&self) -> &str {
        self.name
    }
}

impl<L: lock_api::RawMutex> Drop for Obj<L> {
    fn drop(&mut self) {
        self.log.0.lock().push(format!("release {}", self.name));
    }
}

type Table<L> = Files<dyn Named, u16, L>;

/// The transcript being written: each call and its result, then the file events it caused.
struct Transcript<L: lock_api::RawMutex> {
    out: String,
    log: Arc<EventLog<L>>,
}

impl<L: lock_api::RawMutex + Send + Sync + 'static> Transcript<L> {
    fn file(&self, name: &'static str) -> FileRef<dyn Named> {
        self.file_failing(name, None)
    }

    fn file_failing(&self, name: &'static str, flush_error: Option<Errno>) -> FileRef<dyn Named> {
        let obj = Obj {
            name,
            log: self.log.clone(),
            flush_error,
        };
        FileRef::<dyn Named>::new_unsize(obj, |o| o)
    }

    /// Writes `call = result` as strace does (`= -1 EBADF (Bad file descriptor)` for an
    /// error), then the events since the previous line.
    fn step<T: Debug>(&mut self, call: &str, r: Result<T, Errno>) {
        let _ = match r {
            Ok(v) => writeln!(self.out, "{call} = {v:?}"),
            Err(e) => writeln!(self.out, "{call} = -1 {e} [errno {}]", e.raw()),
        };
        self.events();
    }

    /// A line of commentary or state.
    fn note(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
        self.events();
    }

    fn events(&mut self) {
        let events: Vec<String> = core::mem::take(&mut *self.log.0.lock());
        for e in events {
            let _ = writeln!(self.out, "    > {e}");
        }
    }

    /// The table as `/proc/self/fd` plus fdinfo would show it: every installed fd in order
    /// (by iteration) with its file, close-on-exec bit and payload; the reserved fds; the size.
    fn table(&mut self, who: &str, t: &Table<L>) {
        let mut line = format!("{who}:");
        for o in t.iter() {
            let _ = write!(line, " {}={}", o.fd, o.file.name());
            if o.cloexec {
                line.push_str("/cloexec");
            }
            if o.payload != 0 {
                let _ = write!(line, "/p{:#x}", o.payload);
            }
        }
        match t.reserved_fds() {
            Ok(reserved) if reserved.is_empty() => {}
            Ok(reserved) => {
                let _ = write!(line, " reserved={reserved:?}");
            }
            Err(e) => {
                let _ = write!(line, " reserved=({e:?})");
            }
        }
        let _ = write!(line, " (max_fds {})", t.max_fds());
        self.note(&line);
    }
}

fn name_at<L: lock_api::RawMutex>(t: &Table<L>, fd: u32) -> Result<String, Errno> {
    t.fget(fd)
        .map(|f| String::from(f.name()))
        .ok_or(Errno::EBADF)
}

/// Runs the scenario on tables locked by `L` and returns its transcript.
pub fn run<L: lock_api::RawMutex + Send + Sync + 'static>() -> String {
    let mut s = Transcript::<L> {
        out: String::new(),
        log: Arc::new(EventLog(lock_api::Mutex::new(Vec::new()))),
    };
    let n = NOFILE;

    s.note("# open: reserve, build, install; a failed open gives its fd back");
    let mut t: Table<L> = match Files::try_new() {
        Ok(t) => t,
        Err(e) => {
            s.step("Files::try_new()", Err::<(), _>(e));
            return s.out;
        }
    };
    s.step(
        "install_with(a, 0, p=0x11)",
        t.install_with(s.file("a"), 0, 0x11, n),
    );
    match t.get_unused_fd_flags(O_CLOEXEC, n) {
        Ok(slot) => {
            s.step("get_unused_fd_flags(O_CLOEXEC)", Ok::<_, Errno>(slot.fd()));
            let fd = slot.install(s.file("b"));
            s.note(&format!("install(b) at {fd}"));
        }
        Err(e) => s.step("get_unused_fd_flags(O_CLOEXEC)", Err::<u32, _>(e)),
    }
    {
        // The file is never built: the open failed after its fd was reserved.
        let slot = t.get_unused_fd_flags(0, n);
        s.step(
            "get_unused_fd_flags(0)",
            slot.as_ref().map(|r| r.fd()).map_err(|e| *e),
        );
        s.step("fd_state(2)", Ok::<_, Errno>(t.fd_state(2)));
    }
    s.step("failed open: fd_state(2)", Ok::<_, Errno>(t.fd_state(2)));
    s.step(
        "install(c, O_CLOEXEC)",
        t.install(s.file("c"), O_CLOEXEC, n),
    );
    s.step("install(full, nofile=3)", t.install(s.file("full"), 0, 3));
    s.table("T", &t);

    s.note("# dup, F_DUPFD, dup2, dup3");
    s.step("dup(0)", t.dup(0, n));
    s.step("dup(99)", t.dup(99, n));
    s.step("dup(-1)", t.dup(u32::MAX, n));
    s.step("dup(0, nofile=4)", t.dup(0, 4));
    s.step("F_DUPFD(0, 10)", t.dupfd(0, 10, false, n));
    s.step("F_DUPFD_CLOEXEC(1, 5)", t.dupfd(1, 5, true, n));
    s.step("F_DUPFD(0, nofile)", t.dupfd(0, n as u32, false, n));
    s.step("F_DUPFD(0, -1)", t.dupfd(0, u32::MAX, false, n));
    s.step("F_DUPFD(42, 0)", t.dupfd(42, 0, false, n));
    s.step("dup2(1, 1)", t.dup2(1, 1, n));
    s.step("dup2(7, 7)", t.dup2(7, 7, n));
    s.step("dup2(0, nofile)", t.dup2(0, n as u32, n));
    s.step("dup2(-1, 4)", t.dup2(u32::MAX, 4, n));
    s.step("dup2(1, 3)", t.dup2(1, 3, n));
    s.step("dup3(0, 0, 0)", t.dup3(0, 0, 0, n));
    s.step("dup3(0, 4, 1)", t.dup3(0, 4, 1, n));
    s.step("dup3(0, 4, O_CLOEXEC)", t.dup3(0, 4, O_CLOEXEC, n));
    s.step("dupfd_query(0, 4)", t.dupfd_query(0, 4));
    s.step("dupfd_query(0, 1)", t.dupfd_query(0, 1));
    s.step("dupfd_query(0, 9)", t.dupfd_query(0, 9));
    s.table("T", &t);

    s.note("# F_GETFD / F_SETFD, payloads");
    s.step("F_GETFD(5)", t.get_close_on_exec(5));
    s.step("F_SETFD(5, 0)", t.set_close_on_exec(5, false));
    s.step("F_SETFD(4, FD_CLOEXEC)", t.set_close_on_exec(4, true));
    s.step("F_GETFD(8)", t.get_close_on_exec(8));
    s.step("F_SETFD(-1, 1)", t.set_close_on_exec(u32::MAX, true));
    s.step("fd_payload(10)", t.fd_payload(10));
    s.step("set_fd_payload(3, 0x33)", t.set_fd_payload(3, 0x33));
    s.step("set_fd_payload(8, 1)", t.set_fd_payload(8, 1));
    s.step(
        "fget_with_payload(3)",
        t.fget_with_payload(3)
            .map(|(f, p)| (String::from(f.name()), p)),
    );
    s.table("T", &t);

    s.note("# close: flush on every close, release on the last");
    s.step("close(3)", t.close_fd(3));
    s.step("close(3)", t.close_fd(3));
    s.step("close(-1)", t.close_fd(u32::MAX));
    s.step(
        "install(e: flush fails with EIO)",
        t.install(s.file_failing("e", Some(Errno::EIO)), 0, n),
    );
    s.step("close(3)", t.close_fd(3));

    s.note("# a reserved fd (an open in progress, here an owned reservation) is busy, not open");
    let slot = t.reserve_owned(0, n);
    s.step(
        "reserve_owned(0)",
        slot.as_ref().map(|r| r.fd()).map_err(|e| *e),
    );
    s.step("close(3)", t.close_fd(3));
    s.step("dup2(0, 3)", t.dup2(0, 3, n));
    s.step("replace_fd(3, r)", t.replace_fd(3, s.file("r"), 0, n));
    s.step("renumber(0, 3)", t.renumber(0, 3, n));
    s.step("F_GETFD(3)", t.get_close_on_exec(3));
    s.step("fd_payload(3)", t.fd_payload(3));
    s.table("T", &t);
    drop(slot);
    s.step("given back: fd_state(3)", Ok::<_, Errno>(t.fd_state(3)));

    s.note("# replace_fd: install at a chosen number");
    s.step(
        "replace_fd(100, d, 0)",
        t.replace_fd(100, s.file("d"), 0, n),
    );
    s.step("max_fds", Ok::<_, Errno>(t.max_fds()));
    s.step(
        "replace_fd_with(100, d2, O_CLOEXEC, p=0x64)",
        t.replace_fd_with(100, s.file("d2"), O_CLOEXEC, 0x64, n),
    );
    s.step(
        "replace_fd(nofile, x)",
        t.replace_fd(n as u32, s.file("x"), 0, n),
    );
    s.step(
        "replace_fd(-1, y)",
        t.replace_fd(u32::MAX, s.file("y"), 0, n),
    );
    s.step(
        "lowest free after replace_fd: install(f)",
        t.install(s.file("f"), 0, n),
    );
    s.table("T", &t);

    s.note("# renumber: an atomic move (dup2 + close under one lock hold)");
    s.step("renumber(100, 20)", t.renumber(100, 20, n));
    s.step("fd_payload(20)", t.fd_payload(20));
    s.step("F_GETFD(20)", t.get_close_on_exec(20));
    s.step("renumber(20, 20)", t.renumber(20, 20, n));
    s.step("renumber(21, 21)", t.renumber(21, 21, n));
    s.step("renumber(21, 22)", t.renumber(21, 22, n));
    s.step("renumber(20, nofile)", t.renumber(20, n as u32, n));
    s.step("renumber(-1, 0)", t.renumber(u32::MAX, 0, n));
    s.step("renumber(20, 10)", t.renumber(20, 10, n));
    s.step("name_at(10)", name_at(&t, 10));
    s.step("renumber_onto(10, 21)", t.renumber_onto(10, 21, n));
    s.step("install(z)", t.install(s.file("z"), 0, n));
    s.step("dup(0)", t.dup(0, n));
    s.step("renumber_onto(7, 6)", t.renumber_onto(7, 6, n));
    s.step("name_at(6)", name_at(&t, 6));
    s.step("renumber_onto(6, 6)", t.renumber_onto(6, 6, n));
    s.step("close(6)", t.close_fd(6));
    s.table("T", &t);

    s.note("# one entry at once; payload compare-and-set");
    s.step(
        "fd_entry(10)",
        t.fd_entry(10)
            .map(|o| (o.fd, o.cloexec, o.payload, String::from(o.file.name()))),
    );
    s.step("fd_entry(21)", t.fd_entry(21).map(|o| o.fd));
    s.step(
        "cmpxchg_fd_payload(10, 7, 9)",
        t.cmpxchg_fd_payload(10, 7, 9),
    );
    s.step(
        "cmpxchg_fd_payload(10, 100, 9)",
        t.cmpxchg_fd_payload(10, 100, 9),
    );
    s.step("fd_payload(10)", t.fd_payload(10));
    s.step(
        "cmpxchg_fd_payload(10, 9, 100)",
        t.cmpxchg_fd_payload(10, 9, 100),
    );
    s.step(
        "cmpxchg_fd_payload(21, 0, 1)",
        t.cmpxchg_fd_payload(21, 0, 1),
    );
    s.table("T", &t);

    s.note("# iteration");
    let from4: Vec<u32> = t.iter_from(4).map(|o| o.fd).collect();
    s.step("iter_from(4)", Ok::<_, Errno>(from4));
    s.step("next_open_fd(6)", Ok::<_, Errno>(t.next_open_fd(6)));
    s.step("next_open_fd(11)", Ok::<_, Errno>(t.next_open_fd(11)));
    s.step("next_open_fd(-1)", Ok::<_, Errno>(t.next_open_fd(u32::MAX)));
    s.step(
        "iter_from(-1).count()",
        Ok::<_, Errno>(t.iter_from(u32::MAX).count()),
    );

    s.note("# clone(CLONE_FILES): two handles, one table; lookups through the other take the lock-free path");
    let mut other = t.share();
    s.step(
        "is_shared",
        Ok::<_, Errno>((t.is_shared(), other.is_shared())),
    );
    s.step("other: fget(10)", name_at(&other, 10));
    s.step("other: install(g)", other.install(s.file("g"), 0, n));
    s.step("T: fget(3)", name_at(&t, 3));
    s.step("other: close(1)", other.close_fd(1));
    s.step("T: fget(1)", name_at(&t, 1));
    s.step("other: dup2(0, 200)", other.dup2(0, 200, n));
    s.step("T: max_fds", Ok::<_, Errno>(t.max_fds()));
    s.table("T", &t);

    s.note("# fork: a copy; an open in progress stays the parent's");
    let slot = t.get_unused_fd_flags(0, n);
    s.step(
        "T: get_unused_fd_flags(0)",
        slot.as_ref().map(|r| r.fd()).map_err(|e| *e),
    );
    let child = t.fork();
    s.step("fork()", child.as_ref().map(|_| ()).map_err(|e| *e));
    let Ok(mut child) = child else {
        return s.out;
    };
    s.step("child: fd_state(1)", Ok::<_, Errno>(child.fd_state(1)));
    drop(slot);
    s.table("child", &child);
    s.step("child: close(0)", child.close_fd(0));
    s.step("T: fget(0)", name_at(&t, 0));

    s.note("# exec: close-on-exec fds closed, in the exec'ing table only");
    s.step("child: exec()", child.exec());
    s.table("child", &child);
    s.table("T", &t);

    s.note("# close_range");
    s.step("close_range(5, 1, 0)", t.close_range(5, 1, 0));
    s.step("close_range(0, 1, 1)", t.close_range(0, 1, 1));
    s.step(
        "other: close_range(0, 3, UNSHARE)",
        other.close_range(0, 3, CLOSE_RANGE_UNSHARE),
    );
    s.step(
        "is_shared",
        Ok::<_, Errno>((t.is_shared(), other.is_shared())),
    );
    s.table("other", &other);
    s.table("T", &t);
    s.step(
        "close_range(0, ~0, CLOEXEC)",
        t.close_range(0, u32::MAX, CLOSE_RANGE_CLOEXEC),
    );
    s.step("F_SETFD(10, 0)", t.set_close_on_exec(10, false));
    s.table("T", &t);
    s.step("close_range(100, ~0, 0)", t.close_range(100, u32::MAX, 0));
    s.step("close_range(300, 400, 0)", t.close_range(300, 400, 0));

    s.note("# exec on a shared table: the exec'ing handle gets a copy first");
    let keeper = t.share();
    s.step("T: exec()", t.exec());
    s.step("same table", Ok::<_, Errno>(Files::same_table(&t, &keeper)));
    s.table("T", &t);
    s.table("keeper", &keeper);

    s.note("# growth and EMFILE");
    s.step("dup2(10, 1000) nofile=4096", t.dup2(10, 1000, 4096));
    s.step("max_fds", Ok::<_, Errno>(t.max_fds()));
    s.step("dup2(10, 5000) nofile=4096", t.dup2(10, 5000, 4096));
    s.step(
        "F_DUPFD(10, 4095) nofile=4096",
        t.dupfd(10, 4095, false, 4096),
    );
    s.step(
        "F_DUPFD(10, 4095) nofile=4096",
        t.dupfd(10, 4095, false, 4096),
    );
    s.step("close_range(11, ~0, 0)", t.close_range(11, u32::MAX, 0));
    s.table("T", &t);

    s.note("# teardown: the last handle on a table closes what it holds");
    drop(keeper);
    s.note("dropped keeper");
    drop(other);
    s.note("dropped other");
    drop(child);
    s.note("dropped child");
    drop(t);
    s.note("dropped T");
    s.out
}

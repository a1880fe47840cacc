//! Reading the program's memory (`process_vm_readv`), for what is shown and never for what is
//! decided about the table: the paths in `--track-fds` reports, the random bytes that
//! tell one image of a process from the next (`image_id`; what `PR_GET_DUMPABLE` answers
//! after an exec), and the owner a call names for a file's `SIGIO` (read once, checked, and
//! used by the supervisor itself: `calls::process::set_owner`).
//!
//! A read that faults returns `None`.

use nix::sys::uio::{RemoteIoVec, process_vm_readv};
use nix::unistd::Pid;
use std::io::IoSliceMut;

const PAGE: u64 = 4096;

/// Reads `len` bytes at `addr`.
pub fn read(pid: Pid, addr: u64, len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    if addr == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    let remote = [RemoteIoVec {
        base: addr as usize,
        len,
    }];
    match process_vm_readv(pid, &mut [IoSliceMut::new(&mut buf)], &remote) {
        Ok(n) if n == len => Some(buf),
        _ => None,
    }
}

/// Reads a NUL-terminated string of at most `max` bytes (without the NUL). `None` if it
/// faults or is longer.
pub fn read_cstr(pid: Pid, addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() <= max {
        // Never cross a page in one read: the next page may be unmapped.
        let chunk = (PAGE - at % PAGE).min(256) as usize;
        let part = read(pid, at, chunk)?;
        if let Some(i) = part.iter().position(|&b| b == 0) {
            out.extend_from_slice(&part[..i]);
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(&part);
        at += chunk as u64;
    }
    None
}

/// (pid, address, length, whether a NUL-terminated string of at most that length).
type Request = (i32, u64, usize, bool);
type Answer = Option<Vec<u8>>;

/// How many reader threads the supervisor has.
const READERS: usize = 2;

/// A reader thread: it takes a request and the channel for its answer, and is idle between
/// requests.
struct Reader {
    tx: std::sync::Mutex<std::sync::mpsc::Sender<(Request, std::sync::mpsc::Sender<Answer>)>>,
    idle: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The readers, and where each reports its thread id once it runs.
type Pool = (
    Vec<Reader>,
    std::sync::Mutex<Vec<std::sync::mpsc::Receiver<i32>>>,
);

static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();

/// Starts the reader threads (once), without waiting for them: [`reader_ids`] collects their
/// thread ids. The supervisor starts them before the program exists: every thread of the
/// supervisor must be in the filter's list of its ids (signals, limits and scheduling aimed
/// at them are refused), so none may start later. A reader held by a page the program
/// serves itself stays held; once all are, timed reads answer at once that their deadline
/// passed (so the supervisor neither waits nor gains threads).
pub fn start_readers() {
    POOL.get_or_init(|| {
        let (mut readers, mut started) = (Vec::new(), Vec::new());
        for _ in 0..READERS {
            let (tx, rq) = std::sync::mpsc::channel::<(Request, std::sync::mpsc::Sender<Answer>)>();
            let (tid_tx, tid_rx) = std::sync::mpsc::channel();
            let idle = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
            let mine = idle.clone();
            let spawned = std::thread::Builder::new()
                .name("memory".into())
                .spawn(move || {
                    let _ = tid_tx.send(crate::sys::gettid());
                    while let Ok(((pid, addr, len, cstr), answer)) = rq.recv() {
                        let pid = Pid::from_raw(pid);
                        let a = if cstr {
                            read_cstr(pid, addr, len)
                        } else {
                            read(pid, addr, len)
                        };
                        // ORDERING: Release, pairs with the Acquire exchange in
                        // `timed_answer`: the next request is sent after this one is over.
                        mine.store(true, std::sync::atomic::Ordering::Release);
                        let _ = answer.send(a);
                    }
                });
            if spawned.is_err() {
                break;
            }
            started.push(tid_rx);
            readers.push(Reader {
                tx: std::sync::Mutex::new(tx),
                idle,
            });
        }
        (readers, std::sync::Mutex::new(started))
    });
}

/// The reader threads' ids ([`start_readers`], started if they were not), once each runs.
pub fn reader_ids() -> Vec<i32> {
    start_readers();
    let Some((_, started)) = POOL.get() else {
        return Vec::new();
    };
    let started = started.lock().unwrap_or_else(|e| e.into_inner());
    started.iter().filter_map(|r| r.recv().ok()).collect()
}

/// [`read_cstr`] with a deadline: a page the program serves itself with userfaultfd blocks
/// `process_vm_readv` until it is served, which may wait for a call the supervisor is about
/// to answer. The read runs on a reader thread ([`start_readers`]); after `timeout` it is
/// abandoned (the reader is busy until its read ends) and the answer is `None`.
pub fn read_cstr_timed(
    pid: Pid,
    addr: u64,
    max: usize,
    timeout: std::time::Duration,
) -> Option<Vec<u8>> {
    timed((pid.as_raw(), addr, max, true), timeout)
}

/// How long the supervisor waits for a read of the program's memory it makes for its own
/// purposes (a path to display or to look at, the auxiliary vector's random bytes): past it a
/// page the program serves itself is taken as unreadable.
pub const READ_DEADLINE: std::time::Duration = std::time::Duration::from_millis(20);

/// A path argument (a NUL-terminated string of at most `PATH_MAX` bytes) of task `tid`, read
/// with [`READ_DEADLINE`]; `None` if it cannot be read in time.
pub fn read_path(tid: i32, addr: u64) -> Option<Vec<u8>> {
    read_cstr_timed(
        Pid::from_raw(tid),
        addr,
        libc::PATH_MAX as usize,
        READ_DEADLINE,
    )
}

/// [`read`] with a deadline, as [`read_cstr_timed`].
pub fn read_timed(
    pid: Pid,
    addr: u64,
    len: usize,
    timeout: std::time::Duration,
) -> Option<Vec<u8>> {
    timed((pid.as_raw(), addr, len, false), timeout)
}

/// [`read_timed`] that tells the two failures apart: `Err(true)` if the deadline passed
/// (the memory may be readable later), `Err(false)` if the memory cannot be read (`EFAULT`).
pub fn read_timed_or(
    pid: Pid,
    addr: u64,
    len: usize,
    timeout: std::time::Duration,
) -> Result<Vec<u8>, bool> {
    match timed_answer((pid.as_raw(), addr, len, false), timeout) {
        Some(Some(v)) => Ok(v),
        Some(None) => Err(false),
        None => Err(true),
    }
}

fn timed(req: Request, timeout: std::time::Duration) -> Option<Vec<u8>> {
    timed_answer(req, timeout).flatten()
}

/// A reader's answer to `req`, or `None` if it did not come within `timeout` (or every reader
/// is still held by an earlier read).
fn timed_answer(req: Request, timeout: std::time::Duration) -> Option<Option<Vec<u8>>> {
    start_readers();
    let (readers, _) = POOL.get()?;
    let r = readers.iter().find(|r| {
        // ORDERING: Acquire, pairs with the reader's Release store when it finished its last
        // request.
        r.idle
            .compare_exchange(
                true,
                false,
                std::sync::atomic::Ordering::Acquire,
                std::sync::atomic::Ordering::Relaxed,
            )
            .is_ok()
    })?;
    let (answer_tx, answer_rx) = std::sync::mpsc::channel();
    r.tx.lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((req, answer_tx))
        .ok()?;
    answer_rx.recv_timeout(timeout).ok()
}

/// What tells one image of process `tid` from the next: the 16 random bytes the kernel puts on
/// the stack of each new image (`AT_RANDOM`; `getauxval(3)`), with the auxiliary vector
/// itself. `None` if either cannot be read (the bytes within 20 ms: a page served by
/// userfaultfd could otherwise hold the supervisor).
pub fn image_id(tid: i32) -> Option<Vec<u8>> {
    const AT_RANDOM: u64 = 25;
    let mut auxv = std::fs::read(format!("/proc/{tid}/auxv")).ok()?;
    let random = auxv
        .chunks_exact(16)
        .map(|e| {
            let word = |i: usize| u64::from_ne_bytes(e[i..i + 8].try_into().unwrap_or_default());
            (word(0), word(8))
        })
        .find(|&(key, _)| key == AT_RANDOM)?
        .1;
    auxv.extend(read_timed(Pid::from_raw(tid), random, 16, READ_DEADLINE)?);
    Some(auxv)
}

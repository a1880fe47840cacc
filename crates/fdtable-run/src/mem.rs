//! Reading the program's memory (`process_vm_readv`), for what is shown and never for what is
//! decided about the table: the paths in `--track-fds` reports, and the random bytes that
//! tell one image of a process from the next (`image_id`; what `PR_GET_DUMPABLE` answers
//! after an exec).
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

struct Reader {
    tx: std::sync::mpsc::Sender<Request>,
    rx: std::sync::mpsc::Receiver<Answer>,
}

static READER: std::sync::Mutex<Option<Reader>> = std::sync::Mutex::new(None);

fn reader() -> Option<Reader> {
    let (tx, rq) = std::sync::mpsc::channel::<Request>();
    let (ta, rx) = std::sync::mpsc::channel::<Answer>();
    std::thread::Builder::new()
        .name("memory".into())
        .spawn(move || {
            while let Ok((pid, addr, len, cstr)) = rq.recv() {
                let pid = Pid::from_raw(pid);
                let a = if cstr {
                    read_cstr(pid, addr, len)
                } else {
                    read(pid, addr, len)
                };
                if ta.send(a).is_err() {
                    return;
                }
            }
        })
        .ok()?;
    Some(Reader { tx, rx })
}

/// [`read_cstr`] with a deadline: a page the program serves itself with userfaultfd blocks
/// `process_vm_readv` until it is served, which may wait for a call the supervisor is about
/// to answer. The read runs on a helper thread; after `timeout` it is abandoned (the thread
/// ends when its read does) and the answer is `None`.
pub fn read_cstr_timed(
    pid: Pid,
    addr: u64,
    max: usize,
    timeout: std::time::Duration,
) -> Option<Vec<u8>> {
    timed((pid.as_raw(), addr, max, true), timeout)
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

/// The reader's answer to `req`, or `None` if it did not come within `timeout`.
fn timed_answer(req: Request, timeout: std::time::Duration) -> Option<Option<Vec<u8>>> {
    let mut g = READER.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        *g = reader();
    }
    let r = g.as_ref()?;
    r.tx.send(req).ok()?;
    match r.rx.recv_timeout(timeout) {
        Ok(a) => Some(a),
        Err(_) => {
            *g = None;
            None
        }
    }
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
    let timeout = std::time::Duration::from_millis(20);
    auxv.extend(read_timed(Pid::from_raw(tid), random, 16, timeout)?);
    Some(auxv)
}

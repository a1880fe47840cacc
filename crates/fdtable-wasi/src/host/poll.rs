//! `poll_oneoff`: waits for clocks and descriptors.
//!
//! Regular files, block devices and directories are always ready (as `poll(2)` says of them);
//! the host's standard streams and every other file (a FIFO, a socket, a terminal or another
//! character device) are polled with `poll(2)`; a clock is a timeout. The call returns the
//! subscriptions that are ready, each as one event; a subscription on a descriptor that is
//! not open, or lacks `POLL_FD_READWRITE`, is an event carrying that errno.

use crate::ctx::WasiCtx;
use crate::desc::{Desc, Input, Output, StdioKind};
use crate::host::misc::now;
use crate::memory::{CallResult, GuestMemory};
use crate::types::{
    EVENT_FD_READWRITE_HANGUP, Filetype, Rights, SUBSCRIPTION_CLOCK_ABSTIME, WasiErrno, clockid,
    eventtype, layout,
};
use rustix::event::{PollFd, PollFlags};
use std::io::Seek;
use std::os::fd::AsFd;

/// One event to report.
struct Event {
    userdata: u64,
    error: WasiErrno,
    kind: u8,
    nbytes: u64,
    flags: u16,
}

/// What a subscription waits on.
enum Wait {
    /// Ready now.
    Ready(Event),
    /// A host file to `poll(2)`, for reading or writing.
    Host(HostFd, u64, u8),
    /// A clock deadline, in monotonic nanoseconds.
    Clock(u64, u64),
}

/// A host descriptor `poll(2)` waits on.
enum HostFd {
    /// The host's standard stream (0, 1 or 2).
    Stdio(StdioKind),
    /// A file opened by path that `poll(2)` may find not ready (a FIFO, a socket, a
    /// character device): a duplicate of its descriptor, so the table is not held meanwhile.
    File(std::os::fd::OwnedFd),
}

pub(super) fn poll_oneoff(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    subs: u32,
    events: u32,
    n: u32,
    out: u32,
) -> CallResult {
    if n == 0 {
        // Waiting forever for nothing: refused, as wasmtime does.
        return Err(WasiErrno::Inval.into());
    }
    mem.check(out, 4, 4)?;
    let sub_bytes = n
        .checked_mul(layout::SUBSCRIPTION_SIZE)
        .ok_or(WasiErrno::Overflow)?;
    mem.check(subs, sub_bytes, 8)?;
    let ev_bytes = n
        .checked_mul(layout::EVENT_SIZE)
        .ok_or(WasiErrno::Overflow)?;
    mem.check(events, ev_bytes, 8)?;

    let start = now(clockid::MONOTONIC)?;
    let mut waits = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s = subs + i * layout::SUBSCRIPTION_SIZE;
        let userdata = mem.read_u64(s)?;
        let tag = mem.read_u8(s + 8)?;
        let ready = |error: WasiErrno, kind: u8| {
            Wait::Ready(Event {
                userdata,
                error,
                kind,
                nbytes: 0,
                flags: 0,
            })
        };
        match tag {
            eventtype::CLOCK => {
                let id = mem.read_u32(s + 16)?;
                let timeout = mem.read_u64(s + 24)?;
                let flags = mem.read_u16(s + 40)?;
                let deadline = if flags & SUBSCRIPTION_CLOCK_ABSTIME != 0 {
                    // An absolute time on `id`: the distance from now, on the monotonic clock.
                    let t = now(id)?;
                    start.saturating_add(timeout.saturating_sub(t))
                } else {
                    now(id)?;
                    start.saturating_add(timeout)
                };
                waits.push(Wait::Clock(userdata, deadline));
            }
            eventtype::FD_READ | eventtype::FD_WRITE => {
                let fd = mem.read_u32(s + 16)?;
                let Ok((file, _)) = ctx.get(fd, Rights::POLL_FD_READWRITE) else {
                    let e = match ctx.files.fdget(fd) {
                        None => WasiErrno::Badf,
                        Some(_) => WasiErrno::Notcapable,
                    };
                    waits.push(ready(e, tag));
                    continue;
                };
                let reading = tag == eventtype::FD_READ;
                let w = match (&*file, reading) {
                    (Desc::File(f), _) if !always_ready(f.filetype) => {
                        match f.file.as_fd().try_clone_to_owned() {
                            Ok(dup) => Wait::Host(HostFd::File(dup), userdata, tag),
                            Err(e) => ready(WasiErrno::from(e), tag),
                        }
                    }
                    (Desc::File(f), true) => {
                        // Readable: the bytes left before the end (none: hang-up, end of file).
                        let size = f.file.metadata().map(|m| m.len()).unwrap_or(0);
                        let pos = (&f.file).stream_position().unwrap_or(0);
                        let left = size.saturating_sub(pos);
                        Wait::Ready(Event {
                            userdata,
                            error: WasiErrno::Success,
                            kind: tag,
                            nbytes: left,
                            flags: if left == 0 {
                                EVENT_FD_READWRITE_HANGUP
                            } else {
                                0
                            },
                        })
                    }
                    (Desc::File(_), false) => Wait::Ready(Event {
                        userdata,
                        error: WasiErrno::Success,
                        kind: tag,
                        nbytes: 1,
                        flags: 0,
                    }),
                    (Desc::Stdin(Input::Inherit), true) => {
                        Wait::Host(HostFd::Stdio(StdioKind::In), userdata, tag)
                    }
                    (Desc::Stdin(Input::Bytes(q)), true) => {
                        let left = q.lock().map(|q| q.len()).unwrap_or(0) as u64;
                        Wait::Ready(Event {
                            userdata,
                            error: WasiErrno::Success,
                            kind: tag,
                            nbytes: left,
                            flags: if left == 0 {
                                EVENT_FD_READWRITE_HANGUP
                            } else {
                                0
                            },
                        })
                    }
                    (Desc::Stdout(kind, Output::Inherit), false) => {
                        Wait::Host(HostFd::Stdio(*kind), userdata, tag)
                    }
                    (Desc::Stdout(_, _), false) => Wait::Ready(Event {
                        userdata,
                        error: WasiErrno::Success,
                        kind: tag,
                        nbytes: 1,
                        flags: 0,
                    }),
                    // Reading an output stream, writing stdin, either on a directory.
                    _ => ready(WasiErrno::Badf, tag),
                };
                waits.push(w);
            }
            _ => return Err(WasiErrno::Inval.into()),
        }
    }

    let mut ready: Vec<Event> = Vec::new();
    let mut host: Vec<(HostFd, u64, u8)> = Vec::new();
    let mut clocks: Vec<(u64, u64)> = Vec::new();
    for w in waits {
        match w {
            Wait::Ready(e) => ready.push(e),
            Wait::Host(k, u, t) => host.push((k, u, t)),
            Wait::Clock(u, d) => clocks.push((u, d)),
        }
    }
    let deadline = clocks.iter().map(|&(_, d)| d).min();
    // Wait (unless something is ready already) until a host stream is ready or the first
    // deadline passes.
    let timeout_ns = if ready.is_empty() {
        deadline.map(|d| d.saturating_sub(now(clockid::MONOTONIC).unwrap_or(start)))
    } else {
        Some(0)
    };
    if host.is_empty() {
        if let Some(ns) = timeout_ns
            && ns > 0
        {
            std::thread::sleep(std::time::Duration::from_nanos(ns));
        }
    } else {
        poll_host(&host, timeout_ns, &mut ready)?;
    }
    // Every clock whose deadline has passed fires.
    let t = now(clockid::MONOTONIC)?;
    for (userdata, d) in clocks {
        if d <= t {
            ready.push(Event {
                userdata,
                error: WasiErrno::Success,
                kind: eventtype::CLOCK,
                nbytes: 0,
                flags: 0,
            });
        }
    }
    for (i, e) in ready.iter().enumerate() {
        let mut b = [0u8; layout::EVENT_SIZE as usize];
        b[0..8].copy_from_slice(&e.userdata.to_le_bytes());
        b[8..10].copy_from_slice(&e.error.raw().to_le_bytes());
        b[10] = e.kind;
        b[16..24].copy_from_slice(&e.nbytes.to_le_bytes());
        b[24..26].copy_from_slice(&e.flags.to_le_bytes());
        mem.write_bytes(events + i as u32 * layout::EVENT_SIZE, &b)?;
    }
    mem.write_u32(out, ready.len() as u32)?;
    Ok(())
}

/// Whether `poll(2)` always finds a file of this type ready (fs/select.c's default for files
/// without a `poll` method: regular files, block devices, directories).
fn always_ready(ft: Filetype) -> bool {
    matches!(
        ft,
        Filetype::RegularFile | Filetype::BlockDevice | Filetype::Directory
    )
}

/// Polls host descriptors for up to `timeout_ns` (forever if `None`).
fn poll_host(
    host: &[(HostFd, u64, u8)],
    timeout_ns: Option<u64>,
    ready: &mut Vec<Event>,
) -> CallResult {
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut fds: Vec<PollFd<'_>> = host
        .iter()
        .map(|(k, _, t)| {
            let flags = if *t == eventtype::FD_READ {
                PollFlags::IN
            } else {
                PollFlags::OUT
            };
            match k {
                HostFd::Stdio(StdioKind::In) => PollFd::new(&stdin, flags),
                HostFd::Stdio(StdioKind::Out) => PollFd::new(&stdout, flags),
                HostFd::Stdio(StdioKind::Err) => PollFd::new(&stderr, flags),
                HostFd::File(fd) => PollFd::new(fd, flags),
            }
        })
        .collect();
    let timeout = timeout_ns.map(|ns| rustix::time::Timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    });
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(_) | Err(rustix::io::Errno::INTR) => {}
        Err(e) => return Err(std::io::Error::from(e).into()),
    }
    for (pfd, (_, userdata, tag)) in fds.iter().zip(host) {
        let r = pfd.revents();
        if r.is_empty() {
            continue;
        }
        let hup = r.intersects(PollFlags::HUP | PollFlags::ERR);
        ready.push(Event {
            userdata: *userdata,
            error: if r.contains(PollFlags::NVAL) {
                WasiErrno::Badf
            } else {
                WasiErrno::Success
            },
            kind: *tag,
            nbytes: 1,
            flags: if hup { EVENT_FD_READWRITE_HANGUP } else { 0 },
        });
    }
    Ok(())
}

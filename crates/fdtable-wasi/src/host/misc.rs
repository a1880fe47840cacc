//! Arguments, environment, clocks, randomness, scheduling, signals and sockets.

use crate::ctx::WasiCtx;
use crate::memory::{CallResult, GuestMemory};
use crate::types::{Rights, SDFLAGS_ALL, WasiErrno, clockid};

/// Writes `strings` as NUL-terminated strings at `buf` and their addresses at `ptrs`.
fn write_strings(mem: &mut GuestMemory<'_>, strings: &[String], ptrs: u32, buf: u32) -> CallResult {
    let (count, size) = sizes(strings)?;
    mem.check(ptrs, count.checked_mul(4).ok_or(WasiErrno::Overflow)?, 4)?;
    mem.slice(buf, size)?;
    // Both ranges were checked, so every address below is inside memory (and below 2^32).
    let mut at = buf;
    for (i, s) in strings.iter().enumerate() {
        mem.write_u32(ptrs + 4 * i as u32, at)?;
        mem.write_bytes(at, s.as_bytes())?;
        let nul = at + s.len() as u32;
        mem.write_u8(nul, 0)?;
        at = nul.wrapping_add(1);
    }
    Ok(())
}

/// The count and total size (with NULs) of `strings`.
fn sizes(strings: &[String]) -> CallResult<(u32, u32)> {
    let count = u32::try_from(strings.len())?;
    let size = strings.iter().map(|s| s.len() + 1).sum::<usize>();
    Ok((count, u32::try_from(size)?))
}

fn write_sizes(mem: &mut GuestMemory<'_>, strings: &[String], count: u32, size: u32) -> CallResult {
    mem.check(count, 4, 4)?;
    mem.check(size, 4, 4)?;
    let (n, s) = sizes(strings)?;
    mem.write_u32(count, n)?;
    mem.write_u32(size, s)?;
    Ok(())
}

pub(super) fn args_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    argv: u32,
    buf: u32,
) -> CallResult {
    write_strings(mem, &ctx.args, argv, buf)
}

pub(super) fn args_sizes_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    count: u32,
    size: u32,
) -> CallResult {
    write_sizes(mem, &ctx.args, count, size)
}

pub(super) fn environ_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    env: u32,
    buf: u32,
) -> CallResult {
    write_strings(mem, &ctx.env, env, buf)
}

pub(super) fn environ_sizes_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    count: u32,
    size: u32,
) -> CallResult {
    write_sizes(mem, &ctx.env, count, size)
}

/// The host clock behind a WASI clock id (`Inval` for an unknown one).
pub(crate) fn host_clock(id: u32) -> CallResult<rustix::time::ClockId> {
    use rustix::time::ClockId;
    Ok(match id {
        clockid::REALTIME => ClockId::Realtime,
        clockid::MONOTONIC => ClockId::Monotonic,
        clockid::PROCESS_CPUTIME_ID => ClockId::ProcessCPUTime,
        clockid::THREAD_CPUTIME_ID => ClockId::ThreadCPUTime,
        _ => return Err(WasiErrno::Inval.into()),
    })
}

/// Nanoseconds of a timespec (0 for a negative one).
pub(crate) fn ts_ns(ts: rustix::time::Timespec) -> u64 {
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// The time of clock `id`, in nanoseconds.
pub(crate) fn now(id: u32) -> CallResult<u64> {
    Ok(ts_ns(rustix::time::clock_gettime(host_clock(id)?)))
}

pub(super) fn clock_res_get(
    _ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    id: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 8, 8)?;
    let res = ts_ns(rustix::time::clock_getres(host_clock(id)?)).max(1);
    mem.write_u64(out, res)?;
    Ok(())
}

pub(super) fn clock_time_get(
    _ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    id: u32,
    _precision: u64,
    out: u32,
) -> CallResult {
    mem.check(out, 8, 8)?;
    let t = now(id)?;
    mem.write_u64(out, t)?;
    Ok(())
}

pub(super) fn proc_raise(_ctx: &mut WasiCtx, _mem: &mut GuestMemory<'_>, _sig: u32) -> CallResult {
    Err(WasiErrno::Notsup.into())
}

pub(super) fn sched_yield(_ctx: &mut WasiCtx, _mem: &mut GuestMemory<'_>) -> CallResult {
    std::thread::yield_now();
    Ok(())
}

pub(super) fn random_get(
    _ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    buf: u32,
    len: u32,
) -> CallResult {
    let buf = mem.slice_mut(buf, len)?;
    getrandom::fill(buf).map_err(|_| WasiErrno::Io)?;
    Ok(())
}

/// Sockets: this host preopens none and creates none, so every descriptor that is open is
/// `Notsock`, as in wasmtime's preview 1 host; one that is not is `Badf`.
fn not_a_socket(ctx: &WasiCtx, fd: u32) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::NONE)?;
    drop(file);
    Err(WasiErrno::Notsock.into())
}

pub(super) fn sock_accept(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    flags: u32,
    out: u32,
) -> CallResult {
    if flags & !(crate::types::fdflags::NONBLOCK as u32) != 0 {
        return Err(WasiErrno::Inval.into());
    }
    mem.check(out, 4, 4)?;
    not_a_socket(ctx, fd)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn sock_recv(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    _flags: u32,
    out: u32,
    out_flags: u32,
) -> CallResult {
    let _ = mem.iovecs(iovs, n)?;
    mem.check(out, 4, 4)?;
    mem.check(out_flags, 2, 2)?;
    not_a_socket(ctx, fd)
}

pub(super) fn sock_send(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    _flags: u32,
    out: u32,
) -> CallResult {
    let _ = mem.iovecs(iovs, n)?;
    mem.check(out, 4, 4)?;
    not_a_socket(ctx, fd)
}

pub(super) fn sock_shutdown(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    how: u32,
) -> CallResult {
    if how & !(SDFLAGS_ALL as u32) != 0 {
        return Err(WasiErrno::Inval.into());
    }
    not_a_socket(ctx, fd)
}

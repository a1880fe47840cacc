//! The `wasi_snapshot_preview1` imports, defined on a [`wasmtime::Linker`] with `func_wrap`.
//!
//! Each import is a plain function of the guest's [`WasiCtx`] and [`GuestMemory`] returning a
//! [`CallResult`]; [`add_to_linker`] wraps them: `Ok` is errno 0, an errno is returned to the
//! guest, a trap (a bad pointer, `proc_exit`) ends the instance with the call's name attached.

mod fd;
mod misc;
mod path;
mod poll;
mod stat;

pub(crate) use stat::stdio_as_file;

use crate::ctx::WasiCtx;
use crate::memory::{CallError, CallResult, GuestMemory};
use wasmtime::{Caller, Extern, Linker};

/// The import module's name.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// `proc_exit`'s status, carried by the trap that ends the instance; see [`crate::run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitCode(pub u32);

impl core::fmt::Display for ExitCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "proc_exit({})", self.0)
    }
}

impl std::error::Error for ExitCode {}

/// The instance's memory for one call: the one [`crate::run::instantiate`] recorded, else its
/// `memory` export. A guest without one gets a trap (a preview 1 module must export its memory).
#[inline]
fn memory(caller: &mut Caller<'_, WasiCtx>) -> wasmtime::Result<wasmtime::Memory> {
    if let Some(m) = caller.data().memory {
        return Ok(m);
    }
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => Err(wasmtime::Error::msg(
            "the module does not export a memory named \"memory\"",
        )),
    }
}

/// Runs one import: memory and context in hand, the result turned into an errno or a trap.
#[inline]
fn call(
    name: &'static str,
    mut caller: Caller<'_, WasiCtx>,
    f: impl FnOnce(&mut WasiCtx, &mut GuestMemory<'_>) -> CallResult,
) -> wasmtime::Result<i32> {
    let mem = memory(&mut caller)?;
    let (bytes, ctx) = mem.data_and_store_mut(&mut caller);
    let mut mem = GuestMemory::new(bytes);
    match f(ctx, &mut mem) {
        Ok(()) => Ok(0),
        Err(CallError::Errno(e)) => Ok(i32::from(e.raw())),
        Err(CallError::Trap(t)) => Err(t.context(name)),
    }
}

/// Defines every `wasi_snapshot_preview1` import on `linker`.
pub fn add_to_linker(linker: &mut Linker<WasiCtx>) -> wasmtime::Result<()> {
    macro_rules! wrap {
        ($name:ident($($arg:ident: $ty:ty),*) => $body:path) => {
            linker.func_wrap(
                MODULE,
                stringify!($name),
                |caller: Caller<'_, WasiCtx>, $($arg: $ty),*| -> wasmtime::Result<i32> {
                    call(stringify!($name), caller, |ctx, mem| $body(ctx, mem, $($arg as _),*))
                },
            )?;
        };
    }
    wrap!(args_get(argv: i32, buf: i32) => misc::args_get);
    wrap!(args_sizes_get(argc: i32, size: i32) => misc::args_sizes_get);
    wrap!(environ_get(env: i32, buf: i32) => misc::environ_get);
    wrap!(environ_sizes_get(count: i32, size: i32) => misc::environ_sizes_get);
    wrap!(clock_res_get(id: i32, out: i32) => misc::clock_res_get);
    wrap!(clock_time_get(id: i32, precision: i64, out: i32) => misc::clock_time_get);
    wrap!(fd_advise(fd: i32, offset: i64, len: i64, advice: i32) => fd::fd_advise);
    wrap!(fd_allocate(fd: i32, offset: i64, len: i64) => fd::fd_allocate);
    wrap!(fd_close(fd: i32) => fd::fd_close);
    wrap!(fd_datasync(fd: i32) => fd::fd_datasync);
    wrap!(fd_fdstat_get(fd: i32, out: i32) => fd::fd_fdstat_get);
    wrap!(fd_fdstat_set_flags(fd: i32, flags: i32) => fd::fd_fdstat_set_flags);
    wrap!(fd_fdstat_set_rights(fd: i32, base: i64, inheriting: i64) => fd::fd_fdstat_set_rights);
    wrap!(fd_filestat_get(fd: i32, out: i32) => stat::fd_filestat_get);
    wrap!(fd_filestat_set_size(fd: i32, size: i64) => stat::fd_filestat_set_size);
    wrap!(fd_filestat_set_times(fd: i32, atim: i64, mtim: i64, fst: i32) => stat::fd_filestat_set_times);
    wrap!(fd_pread(fd: i32, iovs: i32, n: i32, offset: i64, out: i32) => fd::fd_pread);
    wrap!(fd_prestat_get(fd: i32, out: i32) => fd::fd_prestat_get);
    wrap!(fd_prestat_dir_name(fd: i32, path: i32, len: i32) => fd::fd_prestat_dir_name);
    wrap!(fd_pwrite(fd: i32, iovs: i32, n: i32, offset: i64, out: i32) => fd::fd_pwrite);
    wrap!(fd_read(fd: i32, iovs: i32, n: i32, out: i32) => fd::fd_read);
    wrap!(fd_readdir(fd: i32, buf: i32, len: i32, cookie: i64, out: i32) => fd::fd_readdir);
    wrap!(fd_renumber(fd: i32, to: i32) => fd::fd_renumber);
    wrap!(fd_seek(fd: i32, offset: i64, whence: i32, out: i32) => fd::fd_seek);
    wrap!(fd_sync(fd: i32) => fd::fd_sync);
    wrap!(fd_tell(fd: i32, out: i32) => fd::fd_tell);
    wrap!(fd_write(fd: i32, iovs: i32, n: i32, out: i32) => fd::fd_write);
    wrap!(path_create_directory(fd: i32, path: i32, len: i32) => path::path_create_directory);
    wrap!(path_filestat_get(fd: i32, flags: i32, path: i32, len: i32, out: i32) => stat::path_filestat_get);
    wrap!(path_filestat_set_times(fd: i32, flags: i32, path: i32, len: i32, atim: i64, mtim: i64, fst: i32) => stat::path_filestat_set_times);
    wrap!(path_link(fd: i32, flags: i32, path: i32, len: i32, to_fd: i32, to: i32, to_len: i32) => path::path_link);
    wrap!(path_open(fd: i32, dirflags: i32, path: i32, len: i32, oflags: i32, base: i64, inheriting: i64, fdflags: i32, out: i32) => path::path_open);
    wrap!(path_readlink(fd: i32, path: i32, len: i32, buf: i32, buf_len: i32, out: i32) => path::path_readlink);
    wrap!(path_remove_directory(fd: i32, path: i32, len: i32) => path::path_remove_directory);
    wrap!(path_rename(fd: i32, path: i32, len: i32, to_fd: i32, to: i32, to_len: i32) => path::path_rename);
    wrap!(path_symlink(target: i32, target_len: i32, fd: i32, path: i32, len: i32) => path::path_symlink);
    wrap!(path_unlink_file(fd: i32, path: i32, len: i32) => path::path_unlink_file);
    wrap!(poll_oneoff(subs: i32, events: i32, n: i32, out: i32) => poll::poll_oneoff);
    wrap!(proc_raise(sig: i32) => misc::proc_raise);
    wrap!(sched_yield() => misc::sched_yield);
    wrap!(random_get(buf: i32, len: i32) => misc::random_get);
    wrap!(sock_accept(fd: i32, flags: i32, out: i32) => misc::sock_accept);
    wrap!(sock_recv(fd: i32, iovs: i32, n: i32, flags: i32, out: i32, out_flags: i32) => misc::sock_recv);
    wrap!(sock_send(fd: i32, iovs: i32, n: i32, flags: i32, out: i32) => misc::sock_send);
    wrap!(sock_shutdown(fd: i32, how: i32) => misc::sock_shutdown);
    linker.func_wrap(
        MODULE,
        "proc_exit",
        |_: Caller<'_, WasiCtx>, code: i32| -> wasmtime::Result<()> {
            Err(wasmtime::Error::new(ExitCode(code as u32)))
        },
    )?;
    Ok(())
}

/*
 * fdtable.h — libfdtable, the Linux kernel's file-descriptor layer as a C library.
 *
 * A descriptor table (`struct fdt_files`, one handle per task) holds open file descriptions
 * (`struct fdt_file`) that you make from callbacks (`struct fdt_file_ops`). The table hands
 * out the lowest free descriptor, and fork, CLONE_FILES, unshare, exec, dup/dup2/dup3, fcntl,
 * close_range, poll and RLIMIT_NOFILE behave as on Linux, with Linux's errnos.
 *
 * Link: `pkg-config --cflags --libs fdtable`, or -lfdtable. A static link also needs the
 * system libraries in fdtable.pc's Libs.private (`pkg-config --static --libs fdtable`): what
 * rustc reports the static library needs, less -lgcc_s, the unwinder, which the C compiler
 * driver links itself (libgcc_s in a dynamic link, libgcc_eh with -static or
 * -static-libgcc). On Linux with glibc:
 *   -lutil -lrt -lpthread -lm -ldl -lc
 * A fully static program (`cc -static ... $(pkg-config --static --libs fdtable)`) also
 * needs glibc's static libraries (libc.a: Debian's libc6-dev).
 * For a *-linux-musl build, -lunwind -lc (libunwind.a from Rust's musl target).
 *
 * ERRORS: ONE CONVENTION
 *
 * - A call that can fail returns an integer: >= 0 on success (0, a descriptor, a count, a
 *   position), a negative errno on failure (`-EBADF`). A call that makes or finds an object
 *   stores it through an out-parameter (`struct fdt_files **`, `struct fdt_file **`,
 *   `struct fdt_fd *`), which it sets to NULL (the empty `struct fdt_fd`) on failure.
 * - Calls that cannot fail return their result directly: fdt_files_new (running out of
 *   memory aborts the process), fdt_version, fdt_get_nr_open, the accessors fdt_fd_file and
 *   fdt_file_private_data, and the reference calls fdt_files_put, fdt_file_get, fdt_file_put
 *   and fdt_fdput, which return nothing and take NULL as a no-op, as free() does.
 * - `errno` is never read, and written only by the two legacy calls documented to set it.
 * - The values are Linux's on every host. Those the library itself returns are EPERM, ENOENT,
 *   EIO, ENXIO, E2BIG, EBADF, ENOMEM, EFAULT, EBUSY, EISDIR, EINVAL, EMFILE, ENOTTY and
 *   ESPIPE, which every Unix numbers alike, so <errno.h>'s names compare right with any libc;
 *   a callback's `-errno` comes back unchanged.
 * - NULL handles never crash: a NULL `struct fdt_files *`, `struct fdt_file *` or
 *   out-parameter gives -EINVAL (a NULL buffer, as in the kernel, -EFAULT). Garbage
 *   descriptors (negative, huge, closed, reserved) get what Linux answers, -EBADF mostly. A
 *   non-NULL pointer must be one this library returned and that is still alive, as with any
 *   C API.
 *
 * LEGACY CALLS
 *
 * The 0.1 calls that report failure with NULL or not at all stay, for source and binary
 * compatibility, deprecated: fdt_files_fork and fdt_files_share (NULL, errno set),
 * fdt_file_new (NULL; reads only the 0.1 members of struct fdt_file_ops), fdt_fget (NULL),
 * fdt_fdget (an empty result), fdt_fd_install and fdt_put_unused_fd (silent). Each has a form
 * ending in 2 that follows the convention. Define FDTABLE_WARN_DEPRECATED before including
 * this header to have GCC or Clang warn where they are used.
 *
 * VERSIONS AND THE ABI
 *
 * - FDT_VERSION_MAJOR.FDT_VERSION_MINOR.FDT_VERSION_PATCH is this header's version, and
 *   fdt_version() the running library's, both as FDT_VERSION_NUMBER(major, minor, patch).
 * - The shared library's SONAME is libfdtable.so.MAJOR; the file is
 *   libfdtable.so.MAJOR.MINOR.PATCH. MAJOR changes only when the ABI breaks, MINOR when
 *   something is added, PATCH otherwise. A program runs with any library of its SONAME at
 *   least as new as the header it was built with. Only fdt_* symbols are exported.
 *   docs/C-ABI.md has the policy, and how CI checks the ABI against a recorded baseline.
 * - Within one MAJOR the ABI only grows: calls, constants and flag bits are added; members
 *   are added at the end of struct fdt_file_ops (see GROWTH); reserved members of struct
 *   fdt_stat get a meaning (its size stays 128 bytes). No call is removed or changes its
 *   signature or meaning, no other struct changes, no constant changes value: that would be
 *   a new MAJOR, hence a new SONAME.
 *
 * GROWTH OF struct fdt_file_ops
 *
 * Zero the struct, set the callbacks you have, and pass sizeof(struct fdt_file_ops) to
 * fdt_file_new2, as Linux's openat2 and clone3 take their struct's size:
 *
 *   static const struct fdt_file_ops my_ops = { .read = my_read, .poll = my_poll };
 *   struct fdt_file *f;
 *   int err = fdt_file_new2(&my_ops, sizeof my_ops, priv, FDT_O_RDWR, &f);
 *
 * The library reads the members it knows. A member your header lacks (you were built against
 * an older header) is NULL. A member the library does not know (you were built against a
 * newer header, and run with an older library) must be zero, or the call fails with -E2BIG
 * rather than silently ignore a callback. Members are only ever added at the end, without
 * implicit padding. FDT_FILE_OPS_SIZE_VER0 is the size of the 0.1 members.
 *
 * OWNERSHIP
 *
 * - A table handle belongs to whoever got it from fdt_files_new, fdt_files_fork2 or
 *   fdt_files_share2; fdt_files_put frees it. The last handle of a table closes every
 *   descriptor still open.
 * - A `struct fdt_file *` is reference-counted. fdt_file_new2 and fdt_fget2 give a reference
 *   the caller owns; fdt_file_get takes one more. Each must be given back exactly once: to
 *   fdt_file_put, or to a call that installs it (fdt_install, fdt_install_at,
 *   fdt_fd_install2, their _with forms, fdt_reservation_install and _with), which consume it
 *   even when they fail. A descriptor holds its own reference. The file's `release` callback
 *   runs exactly once, when the last reference goes, on the thread that dropped it.
 * - A `struct fdt_reservation *` (fdt_reserve_owned) is the caller's until one of
 *   fdt_reservation_install, fdt_reservation_install_with or fdt_reservation_release ends it.
 * - The light lookups fdt_fdget2 and fdt_fdget_with_payload give a `struct fdt_fd` that may
 *   *borrow* the file (no reference; see below). fdt_fd_file reads it; fdt_fdput ends it.
 * - Every other argument is only borrowed for the duration of the call: handles, buffers,
 *   `arg` pointers and `ops` structs stay the caller's, and nothing keeps them afterwards
 *   (fdt_file_new2 copies `*ops`, and keeps its address only to compare, fdt_file_has_ops).
 *   Each function's comment says what changes hands.
 *
 * THE LIGHT LOOKUP RULE
 *
 *   struct fdt_fd f;
 *   if (fdt_fdget2(files, fd, &f) < 0)          // -EBADF
 *     return ...;
 *   struct fdt_file *file = fdt_fd_file(f);
 *   ... use file ...
 *   fdt_fdput(f);
 *
 * While the handle is its table's only handle, fdt_fdget2 takes no lock and no reference.
 * The result is then valid only until the next call on that same handle that could close the
 * descriptor or share the table: fdt_close, fdt_dup2, fdt_dup3, fdt_renumber,
 * fdt_renumber_onto, fdt_install_at (and _with), fdt_close_range, fdt_exec, fdt_unshare,
 * fdt_files_share2, fdt_reserve_owned, fdt_files_put. fdt_fdput before making any of those
 * calls, or take a reference with fdt_file_get to keep the file. On a shared table fdt_fdget2
 * takes a reference (FDT_FDPUT_FPUT in `flags`) and fdt_fdput drops it. fdt_fdget_with_payload
 * follows the same rule.
 *
 * On a shared table, fdt_fdget_rcu (0.5) takes no reference either: the calling thread holds
 * an RCU read-side section (FDT_FDPUT_RCU in `flags`) until fdt_fdput, which must then be
 * called on the same thread, without blocking in between (a release of a lent file, on any
 * thread, waits for the section). The file stays valid until that fdt_fdput even if another
 * handle closes the descriptor; fdt_fd_get_file (not fdt_file_get) keeps it longer. End such
 * a result with code built with the 0.5 header or later: an older inline fdt_fdput does not
 * know the flag.
 *
 * PAYLOAD
 *
 * The table keeps a uint64_t beside each descriptor, as it keeps the close-on-exec bit: the
 * caller's per-descriptor state (WASI rights, flags, a key into the caller's own table).
 * It is plain data: copied by fdt_dup, fdt_dup2, fdt_dup3, F_DUPFD and fdt_files_fork2,
 * moved by fdt_renumber, forgotten when the descriptor closes; the library never reads it,
 * frees it or calls anything for it. A descriptor gets 0 unless installed with one
 * (fdt_install_with, fdt_install_at_with, fdt_fd_install_with, fdt_reservation_install_with);
 * fdt_fd_payload, fdt_set_fd_payload and fdt_cmpxchg_fd_payload read and change it. Check it
 * with fdt_fdget_with_payload, which returns the file and its payload as one snapshot: a
 * payload read first and a file looked up afterwards can belong to two different files when
 * another handle renumbers or dup2s onto the descriptor in between.
 *
 * 64 bits hold WASI preview 1's rights twice over (its 30 rights as base and inheriting
 * sets), Capsicum-style bit sets, or an index; a pointer fits too, but copies made by dup and
 * fork are not counted, so keep anything that needs freeing in the file's private_data.
 *
 * THREADS
 *
 * - Different handles may be used from different threads at the same time, including handles
 *   on one shared table (fdt_files_share2: one handle per thread, as tasks have). Lookups on
 *   a shared table are lock-free.
 * - One handle must not be used by two threads at the same time (it may move between
 *   threads). Give each thread its own handle with fdt_files_share2.
 * - fdt_file_get / fdt_file_put / fdt_file_private_data / fdt_file_count / fdt_file_has_ops
 *   may be called from any thread at any time on a file the caller holds.
 * - Callbacks run on the calling thread without any library lock held, possibly concurrently
 *   for one file: protect your own state. A callback must not call into the table handle
 *   whose call is running it (other handles and fdt_file_get/put are fine), and must not
 *   unwind or longjmp out of the library (a C++ exception aborts the process).
 * - A `struct fdt_reservation *` carries its own handle on its table: it may be used on
 *   another thread while the table's handles are used elsewhere (one thread at a time for
 *   the reservation itself).
 * - fdt_set_nr_open is process-wide and may be called at any time.
 * - ThreadSanitizer cannot see the synchronisation of an uninstrumented library and reports
 *   false races in programs that use it from several threads: link the library `make tsan`
 *   builds instead (docs/C-ABI.md, "ThreadSanitizer").
 *
 * CONSTANTS
 *
 * Constants keep Linux's values under an FDT_ prefix (FDT_O_CLOEXEC == O_CLOEXEC, FDT_F_DUPFD
 * == F_DUPFD, FDT_FIOCLEX == FIOCLEX, FDT_POLLIN == POLLIN, FDT_S_IFREG == S_IFREG...), so on
 * Linux <fcntl.h>'s, <poll.h>'s and <sys/stat.h>'s can be passed too; on other systems use
 * the FDT_ names (a getattr callback sets st->mode from FDT_S_IF* there).
 */

#ifndef FDTABLE_H
#define FDTABLE_H

/* Generated by cbindgen from crates/fdtable-capi. Do not edit: run
 * `FDTABLE_BLESS=1 cargo test -p fdtable-capi --test header`. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
/* Marks the legacy calls. Empty unless FDTABLE_WARN_DEPRECATED is defined, so that code
 * written for the 0.1 header keeps compiling with -Werror. */
#if defined(FDTABLE_WARN_DEPRECATED) && (defined(__GNUC__) || defined(__clang__))
#define FDT_DEPRECATED(note) __attribute__((deprecated(note)))
#else
#define FDT_DEPRECATED(note)
#endif

// `O_RDONLY`: open for reading only.
#define FDT_O_RDONLY 0

// `O_WRONLY`: open for writing only.
#define FDT_O_WRONLY 1

// `O_RDWR`: open for reading and writing.
#define FDT_O_RDWR 2

// `O_APPEND` (a status flag, `F_GETFL`/`F_SETFL`).
#define FDT_O_APPEND 1024

// `O_NONBLOCK` (a status flag, `F_GETFL`/`F_SETFL`, `FIONBIO`).
#define FDT_O_NONBLOCK 2048

// `O_CLOEXEC`: the close-on-exec flag of `fdt_install`, `fdt_get_unused_fd` and `fdt_dup3`.
#define FDT_O_CLOEXEC 524288

// `O_PATH`: a file that is only a location. `fdt_fdget2`, `fdt_fget2`, read, write, lseek and
// ioctl refuse it with `EBADF`, as Linux's `fdget` does; fcntl's descriptor commands and
// `fdt_fstat` work.
#define FDT_O_PATH 2097152

// `FD_CLOEXEC`: the bit of `F_GETFD` / `F_SETFD`.
#define FDT_FD_CLOEXEC 1

// `F_DUPFD`: duplicate onto the lowest free fd `>= arg` (`EINVAL` if `arg` is at or past
// the soft `RLIMIT_NOFILE`).
#define FDT_F_DUPFD 0

// `F_GETFD`: the close-on-exec bit.
#define FDT_F_GETFD 1

// `F_SETFD`: set or clear the close-on-exec bit (`FD_CLOEXEC` in `arg`).
#define FDT_F_SETFD 2

// `F_GETFL`: the access mode and status flags.
#define FDT_F_GETFL 3

// `F_SETFL`: set `O_APPEND`, `O_NONBLOCK`, `O_DIRECT`, `O_NOATIME`.
#define FDT_F_SETFL 4

// `F_DUPFD_QUERY`: 1 if `arg` refers to the same open file as the fd, 0 if not.
#define FDT_F_DUPFD_QUERY 1027

// `F_DUPFD_CLOEXEC`: `F_DUPFD` with close-on-exec set on the new fd.
#define FDT_F_DUPFD_CLOEXEC 1030

// `CLOSE_RANGE_UNSHARE`: unshare the table first (`fdt_close_range`).
#define FDT_CLOSE_RANGE_UNSHARE 2

// `CLOSE_RANGE_CLOEXEC`: set close-on-exec over the range instead of closing.
#define FDT_CLOSE_RANGE_CLOEXEC 4

// `FIONREAD`: passed to the file's `ioctl` callback, unless its `getattr` callback says it
// is a regular file (`FDT_S_IFREG`): then the answer is its size minus the position.
#define FDT_FIONREAD 21531

// `FIONBIO`: `arg` points to an `int`; sets or clears `O_NONBLOCK`.
#define FDT_FIONBIO 21537

// `FIONCLEX`: clear close-on-exec on the fd.
#define FDT_FIONCLEX 21584

// `FIOCLEX`: set close-on-exec on the fd.
#define FDT_FIOCLEX 21585

// `FIOASYNC`: `arg` points to an `int`; the files made here have no `fasync`, so turning
// `O_ASYNC` on is `ENOTTY`.
#define FDT_FIOASYNC 21586

// `S_IFMT`: the file-type bits of `struct fdt_stat`'s `mode` (since 0.3). A `getattr`
// callback sets one type: `st->mode = FDT_S_IFREG | 0644`.
#define FDT_S_IFMT 61440

// `S_IFSOCK`: a socket.
#define FDT_S_IFSOCK 49152

// `S_IFLNK`: a symbolic link.
#define FDT_S_IFLNK 40960

// `S_IFREG`: a regular file (`FDT_FIONREAD` and `FIOQSIZE` are answered from `getattr`).
#define FDT_S_IFREG 32768

// `S_IFBLK`: a block device.
#define FDT_S_IFBLK 24576

// `S_IFDIR`: a directory.
#define FDT_S_IFDIR 16384

// `S_IFCHR`: a character device.
#define FDT_S_IFCHR 8192

// `S_IFIFO`: a pipe (FIFO).
#define FDT_S_IFIFO 4096

// `SEEK_SET` (`fdt_lseek`).
#define FDT_SEEK_SET 0

// `SEEK_CUR`.
#define FDT_SEEK_CUR 1

// `SEEK_END`.
#define FDT_SEEK_END 2

// The soft `RLIMIT_NOFILE` of a table made by `fdt_files_new`.
#define FDT_NOFILE_SOFT_DEFAULT 1024

// The hard `RLIMIT_NOFILE` of a table made by `fdt_files_new`.
#define FDT_NOFILE_HARD_DEFAULT 4096

// `FDPUT_FPUT`: in `struct fdt_fd`'s `flags`, the lookup took a reference that `fdt_fdput`
// drops.
#define FDT_FDPUT_FPUT 1

// In `struct fdt_fd`'s `flags`: the lookup (`fdt_fdget_rcu`) holds an RCU read-side section
// of the calling thread open, which `fdt_fdput` ends on that thread.
#define FDT_FDPUT_RCU 2

// `POLLIN`: data to read (`fdt_poll`, the `poll` callback).
#define FDT_POLLIN 1

// `POLLPRI`: urgent data to read.
#define FDT_POLLPRI 2

// `POLLOUT`: writing would not block.
#define FDT_POLLOUT 4

// `POLLERR`: an error condition (always reported, asked for or not).
#define FDT_POLLERR 8

// `POLLHUP`: hung up (always reported).
#define FDT_POLLHUP 16

// `POLLNVAL`: the descriptor is not open (set by `fdt_poll`, never by a callback).
#define FDT_POLLNVAL 32

// `POLLRDNORM`: normal data to read.
#define FDT_POLLRDNORM 64

// `POLLRDBAND`: priority-band data to read.
#define FDT_POLLRDBAND 128

// `POLLWRNORM`: normal data may be written.
#define FDT_POLLWRNORM 256

// `POLLWRBAND`: priority-band data may be written.
#define FDT_POLLWRBAND 512

// `POLLRDHUP`: the peer closed its writing end (a stream socket).
#define FDT_POLLRDHUP 8192

// In `struct fdt_file_ops`'s `flags`: the file has no position (a pipe, a socket, a
// character stream; the kernel's `stream_open`). `read`/`write` get `pos == NULL`,
// `fdt_pread`/`fdt_pwrite` fail with `ESPIPE`, and `llseek` (if any) gets position 0.
#define FDT_FILE_STREAM 1

// (Since 0.5.) In `struct fdt_file_ops`'s `flags`: no callback of the file ever waits (an
// in-memory file, `/dev/null`), so `fdt_fdget_rcu` may lend it on a shared table without a
// reference once it is looked up often. Without it the file is always looked up with a
// reference, and a close never waits for lookups on other threads.
#define FDT_FILE_NEVER_BLOCKS 2

// The library's major version: the `N` of its SONAME `libfdtable.so.N`. Changes only when
// the ABI breaks (a removed or changed call, a changed struct layout or constant).
#define FDT_VERSION_MAJOR 0

// The minor version: grows when calls, constants or `struct fdt_file_ops` members are added
// (programs built against it may need those).
#define FDT_VERSION_MINOR 5

// The patch version: releases without interface changes.
#define FDT_VERSION_PATCH 0

// The version as one number, `(MAJOR << 16) | (MINOR << 8) | PATCH`, ordered as versions
// are: compare it with `FDT_VERSION_NUMBER(major, minor, patch)`.
#define FDT_VERSION (((FDT_VERSION_MAJOR << 16) | (FDT_VERSION_MINOR << 8)) | FDT_VERSION_PATCH)

// An open file description (the kernel's `struct file`): access mode, status flags,
// position, and the callbacks and `private_data` given to `fdt_file_new2`. Opaque and
// reference-counted: every `struct fdt_file *` a function hands to the caller "with a
// reference" must be given back exactly once, to `fdt_file_put` or to a call documented to
// consume it (`fdt_install`, `fdt_install_at`, `fdt_fd_install2`).
struct fdt_file;

// A descriptor table handle: one task's view of a table (the kernel's `current->files`),
// with that task's own `RLIMIT_NOFILE`. Opaque; made by `fdt_files_new`, `fdt_files_fork2`
// or `fdt_files_share2`, freed by `fdt_files_put`.
struct fdt_files;

// A reserved descriptor owned by the caller (`fdt_reserve_owned`): the first step of an open
// that may finish on another thread. The number is taken — other allocations skip it,
// `fdt_dup2` and `fdt_renumber` onto it fail with `-EBUSY`, `fdt_renumber_onto` with
// `-EBADF` — but it refers to nothing until `fdt_reservation_install` (or `..._install_with`)
// puts a file there; `fdt_reservation_release` gives it back instead. Each of the three ends
// the reservation and frees this object.
//
// Unlike a number from `fdt_get_unused_fd`, it carries its own handle on the table: it may be
// passed to another thread and used there while other threads use the table's handles (one
// thread at a time for the reservation itself). While it lives the table counts as shared
// (`fdt_fdget2` takes references), and the table stays alive even if every `struct fdt_files`
// on it was put.
struct fdt_reservation;

// A file's attributes, as `fdt_fstat` reports them and a `getattr` callback fills them (the
// kernel's `struct kstat`, the members this layer uses). 128 bytes on every platform, which
// stays so: attributes added later take reserved members, which are zero until then.
struct fdt_stat {
  // `st_mode`: the file type (`FDT_S_IFREG`, `FDT_S_IFIFO`, ...: one of the `FDT_S_IF*`
  // values under `FDT_S_IFMT`) and permission bits.
  uint32_t mode;
  // `st_nlink`.
  uint32_t nlink;
  // `st_ino`.
  uint64_t ino;
  // `st_size` (`i_size`).
  int64_t size;
  // `st_blocks`, in 512-byte units.
  uint64_t blocks;
  // `st_rdev`, for device files.
  uint64_t rdev;
  // `st_blksize`, also what `FIGETBSZ` answers (0: `-EINVAL`).
  uint32_t blksize;
  // Reserved: zero.
  uint32_t reserved0;
  // Reserved: zero.
  uint64_t reserved[10];
};

// The operations of a file made by `fdt_file_new2`: the kernel's `struct file_operations`
// reduced to what a descriptor layer dispatches. Any member may be NULL; then the caller of
// the corresponding call gets the kernel's answer for a missing operation. Zero the whole
// struct before setting members (a designated initializer or `= {0}` does), so that members
// a later header adds are NULL.
//
// The struct grows at its end only (see GROWTH in the header's introduction): pass
// `sizeof(struct fdt_file_ops)` to `fdt_file_new2`. `fdt_file_new` (legacy) reads only the
// members up to `flags` (`FDT_FILE_OPS_SIZE_VER0` bytes).
//
// Every callback gets the `private_data` given to `fdt_file_new2`. Callbacks run on the
// thread that made the call, with no lock of the library held, possibly concurrently on
// several threads for one file (a shared table, or a file installed in several tables):
// protect your own state. A callback must not call into the table handle whose call is
// running it (it may use other handles and `fdt_file_get` / `fdt_file_put`), and must not
// unwind or `longjmp` out (a C++ exception thrown through it aborts the process).
struct fdt_file_ops {
  // Reads up to `count` bytes into `buf` at `*pos`, advancing `*pos` by what it read;
  // `pos` is NULL for an `FDT_FILE_STREAM` file. Returns the bytes read (0: end of file)
  // or `-errno`. `buf` is never NULL. NULL member: `fdt_read` fails with `-EINVAL`.
  ssize_t (*read)(void *private_data, void *buf, size_t count, int64_t *pos);
  // Writes up to `count` bytes from `buf` at `*pos`, as `read`. NULL: `-EINVAL`.
  ssize_t (*write)(void *private_data, const void *buf, size_t count, int64_t *pos);
  // `unlocked_ioctl`: a command the generic layer did not answer (everything but
  // `FIOCLEX`, `FIONCLEX`, `FIONBIO`, `FIOASYNC`, `FIOQSIZE`, `FIGETBSZ`, and `FIONREAD` on
  // a regular file: see `getattr`), with `arg` as the caller passed it. A result in
  // -4095..-1 is `-errno`; anything else is returned as is. Return `-ENOTTY` for a command
  // you do not know. NULL: `-ENOTTY`.
  long (*ioctl)(void *private_data, unsigned int cmd, unsigned long arg);
  // `compat_ioctl`, for a 32-bit caller (`fdt_compat_ioctl`): `arg` is the 32-bit value,
  // zero-extended. NULL: `-ENOTTY`.
  long (*compat_ioctl)(void *private_data, unsigned int cmd, unsigned long arg);
  // Called on every close of a descriptor that refers to the file (`fdt_close`, the file
  // `fdt_dup2` displaces, `fdt_close_range`, `fdt_exec`, the last `fdt_files_put`).
  // Returns 0 or `-errno`; `fdt_close` returns it, and the descriptor is closed either way.
  int (*flush)(void *private_data);
  // Called exactly once, when the last reference to the file goes (from whichever call
  // dropped it, on that call's thread). Free `private_data` here.
  void (*release)(void *private_data);
  // (Not in the minimal surface.) The new position for (`offset`, `whence`) given the
  // current position `pos` (0 for a stream file); `whence` is `SEEK_SET`..`SEEK_HOLE`.
  // Returns the position (stored as the file's) or `-errno`. NULL: `fdt_lseek` fails with
  // `-ESPIPE`, as for a file without `llseek` in Linux.
  int64_t (*llseek)(void *private_data, int64_t pos, int64_t offset, int whence);
  // (Not in the minimal surface.) `FDT_FILE_STREAM`, `FDT_FILE_NEVER_BLOCKS` (since 0.5),
  // both or 0; other bits make `fdt_file_new2` fail. Without `FDT_FILE_STREAM` the file has
  // a position: `read`/`write` get one, `fdt_pread`/`fdt_pwrite` work, and calls on a
  // shared file serialise their use of it (`FMODE_ATOMIC_POS`).
  unsigned int flags;
  // (Since 0.2; read by `fdt_file_new2` only.) `->poll` without waiting: the events ready
  // now, a mask of `FDT_POLLIN`, `FDT_POLLOUT`, `FDT_POLLERR`, `FDT_POLLHUP`... (bits
  // above 0xffff are ignored). `fdt_poll` keeps those asked for, plus `FDT_POLLERR` and
  // `FDT_POLLHUP`. NULL: `FDT_POLLIN | FDT_POLLOUT | FDT_POLLRDNORM | FDT_POLLWRNORM`, as
  // for a Linux file without `->poll`.
  unsigned int (*poll)(void *private_data);
  // (Since 0.2; read by `fdt_file_new2` only.) `->getattr`: fills `*st` (zeroed by the
  // library; leave the reserved members alone) and returns 0, or returns `-errno`.
  // `fdt_fstat` returns it. Also called once by `fdt_file_new2` to fix the file's type
  // (`st->mode & FDT_S_IFMT`), and by the generic ioctls: for a regular file
  // (`FDT_S_IFREG`) `FDT_FIONREAD` is answered as `size` minus the position and
  // `FIOQSIZE` as `blocks * 512` without calling `ioctl`; `FIGETBSZ` answers `blksize`. A
  // failed call counts as all zeros there. NULL: `fdt_fstat` reports all zeros (a file of
  // no type, as Linux's anonymous files).
  int (*getattr)(void *private_data, struct fdt_stat *st);
};

// The result of a light lookup (`fdt_fdget2`), the kernel's `struct fd`: the file, and
// whether the lookup took a reference that `fdt_fdput` must drop (`FDT_FDPUT_FPUT` in
// `flags`). Use `fdt_fd_file` to read the file; pass the whole value to `fdt_fdput`.
struct fdt_fd {
  // The file, NULL if the descriptor was not open.
  struct fdt_file *file;
  // `FDT_FDPUT_FPUT` if a reference was taken, `FDT_FDPUT_RCU` if an RCU read-side
  // section is held (`fdt_fdget_rcu`); 0 otherwise.
  unsigned int flags;
};

// One entry of `fdt_poll`: `struct pollfd`, with the same layout, so an array of `struct
// pollfd` may be passed as one of these.
struct fdt_pollfd {
  // The descriptor; a negative one is skipped (`revents` 0).
  int fd;
  // The events asked for (`FDT_POLLIN`, `FDT_POLLOUT`, ...).
  short events;
  // The events ready: those asked for, plus `FDT_POLLERR` and `FDT_POLLHUP` always, or
  // `FDT_POLLNVAL` alone for a descriptor that is not open (or is `FDT_O_PATH`).
  short revents;
};

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The version of the library the program is running with, encoded as `FDT_VERSION` is
// (`FDT_VERSION` is the header's the program was built with). A program runs with any
// library of its SONAME at least as new as its header; this tells which one it got, for
// reports, or before using something added after the version the program requires.
//
// Cannot fail.
unsigned int fdt_version(void);

// Makes a new, empty descriptor table and returns the caller's handle on it.
//
// The table has no descriptors open; its soft/hard `RLIMIT_NOFILE` is 1024/4096
// (`FDT_NOFILE_SOFT_DEFAULT`, `FDT_NOFILE_HARD_DEFAULT`).
//
// Ownership: the caller owns the returned handle and frees it with `fdt_files_put`.
// Cannot fail, so it returns the handle directly: like every allocation of a fixed size in
// this library, running out of memory aborts the process (Rust's global allocator).
// Allocations that grow with the table (its arrays and bitmaps) are fallible instead and
// report `-ENOMEM`.
struct fdt_files *fdt_files_new(void);

// Frees a handle (`put_files_struct` for this task). If it was the table's last handle, every
// descriptor still open is closed: each file's `flush` runs, and its `release` if that was
// its last reference. (A live `struct fdt_reservation` holds a handle too: the table then
// closes when the reservation ends.)
//
// Ownership: consumes `files`. NULL is ignored.
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using, and it is not used again.
void fdt_files_put(struct fdt_files *files);

// `fork()`: makes a new table holding a copy of `files`'s descriptors (each open file gains
// one reference; close-on-exec bits and payloads copied; reserved descriptors are not
// copied), with a copy of its `RLIMIT_NOFILE`, and stores the caller's handle on it in
// `*child`.
//
// Ownership: `files` stays the caller's; the caller owns `*child` (free it with
// `fdt_files_put`).
//
// Returns 0; `-EINVAL` if `files` or `child` is NULL, `-EMFILE` if the copy would need a
// table larger than `nr_open` allows (see `fdt_set_nr_open`), `-ENOMEM` if the copy's arrays
// could not be allocated. On failure `*child` is set to NULL (if `child` is not NULL).
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using; `child` is NULL or valid
// for a write of a pointer.
int fdt_files_fork2(struct fdt_files *files, struct fdt_files **child);

// Legacy form of `fdt_files_fork2` (deprecated): returns the new handle, or NULL with
// `errno` set to what `fdt_files_fork2` returns negated (`EINVAL`, `EMFILE`, `ENOMEM`).
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using.
FDT_DEPRECATED("use fdt_files_fork2, which returns -errno")
struct fdt_files *fdt_files_fork(struct fdt_files *files);

// `clone(CLONE_FILES)`: makes another handle on the same table, for another task (or thread),
// and stores it in `*handle`. Both handles see every change the other makes. The new handle
// gets its own copy of `RLIMIT_NOFILE`, as a separate process sharing the table would have.
//
// After this call, light lookups on either handle take a reference (`FDT_FDPUT_FPUT`), and
// the two handles may be used from two threads at the same time.
//
// Ownership: `files` stays the caller's; the caller owns `*handle` (free it with
// `fdt_files_put`).
//
// Returns 0, or `-EINVAL` if `files` or `handle` is NULL (`*handle` is then set to NULL if
// `handle` is not NULL). Sharing itself cannot fail.
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using; `handle` is NULL or valid
// for a write of a pointer.
int fdt_files_share2(struct fdt_files *files, struct fdt_files **handle);

// Legacy form of `fdt_files_share2` (deprecated): returns the new handle, or NULL with
// `errno` set to `EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using.
FDT_DEPRECATED("use fdt_files_share2, which returns -errno")
struct fdt_files *fdt_files_share(struct fdt_files *files);

// `unshare(CLONE_FILES)`: if the table behind `*files` is shared with other handles, gives
// this handle a private copy of it (as `fdt_files_fork2` copies). Does nothing to an unshared
// table.
//
// Reserved descriptors are free in the copy, as in the kernel's `dup_fd` (an open in
// progress belongs to the table it was reserved in), and stay reserved in the shared table.
// So install or give back, first, what was reserved through this handle
// (`fdt_get_unused_fd`, or an `fdt_reservation`, which counts as a sharer): afterwards this
// handle's `fdt_fd_install2`/`fdt_put_unused_fd2` of that number answer `-EBADF`.
//
// Ownership: `*files` stays the caller's; use the value in `*files` after the call (this
// implementation keeps the same handle address).
//
// Returns 0, `-EINVAL` if `files` or `*files` is NULL, `-ENOMEM` or `-EMFILE` (the copy
// needs more than `nr_open` slots).
//
// # Safety
//
// `files` is NULL or points to NULL or to a live handle that no other thread is using.
int fdt_unshare(struct fdt_files **files);

// The descriptor part of `execve`: unshares the table (as `fdt_unshare`), then closes every
// close-on-exec descriptor (each file is flushed; released if that was its last reference).
// Reserved descriptors are not closed; what `fdt_unshare` says of them holds here too (a
// table copied for the exec has them free).
//
// As in the kernel's `de_thread`, free the handles of the other threads of the exec'ing
// process first, so that a table shared only with them is not copied.
//
// Ownership: `files` stays the caller's.
//
// Returns 0, `-EINVAL` if `files` is NULL, `-ENOMEM` / `-EMFILE` if the unshare failed
// (nothing was closed then).
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using.
int fdt_exec(struct fdt_files *files);

// `setrlimit(RLIMIT_NOFILE)` for this handle: allocation (`fdt_install`, `fdt_dup`,
// `F_DUPFD`, `fdt_get_unused_fd`) stays below `soft`, and `fdt_dup2`/`fdt_dup3` refuse
// `newfd >= soft`. Other handles sharing the table keep their own limits.
//
// Returns 0, `-EINVAL` if `files` is NULL or `soft > hard`, `-EPERM` if `hard` is above
// `nr_open` (see `fdt_set_nr_open`; `RLIM_INFINITY` is above it). There are no credentials:
// raising the hard limit is allowed.
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using.
int fdt_set_nofile(struct fdt_files *files, unsigned long soft, unsigned long hard);

// `getrlimit(RLIMIT_NOFILE)`: stores this handle's soft and hard limits in `*soft` and
// `*hard` (either may be NULL if not wanted).
//
// Returns 0, or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle that no other thread is using; `soft` and `hard` are NULL
// or valid for a write of an `unsigned long`.
int fdt_get_nofile(const struct fdt_files *files, unsigned long *soft, unsigned long *hard);

// Sets `nr_open` (the kernel's `fs.nr_open` sysctl) for the whole process: no table grows
// to hold a descriptor at or above it, and no hard `RLIMIT_NOFILE` may exceed it. The
// default is 1048576.
//
// Returns 0, or `-EINVAL` outside 64..=2147483584 (Linux's bounds on 64-bit).
int fdt_set_nr_open(unsigned long nr_open);

// The current `nr_open` (see `fdt_set_nr_open`).
unsigned long fdt_get_nr_open(void);

// Makes an open file description whose operations are `*ops` (copied: the caller's struct
// may be freed or changed afterwards) with `private_data` handed to every callback, opened
// with `open_flags` (`FDT_O_RDONLY` / `FDT_O_WRONLY` / `FDT_O_RDWR`, plus status flags such
// as `FDT_O_APPEND`, `FDT_O_NONBLOCK`; `FDT_O_PATH` makes a location-only file), and stores
// it in `*file`. Reading needs read access and a `read` callback, writing write access and
// a `write` callback. The `getattr` callback, if any, runs once here (the file's type).
//
// `ops_size` is `sizeof(struct fdt_file_ops)` as the caller compiled it (its header's
// version of the struct): members the library knows and the caller's struct lacks are
// NULL; members the caller's struct has and the library does not know must be zero.
//
// Ownership: `*file` is one reference, owned by the caller: install it (`fdt_install`,
// `fdt_install_at`, `fdt_fd_install2`, which take it over) or drop it with `fdt_file_put`.
// `release` runs when the last reference goes. `private_data` belongs to the file from then
// on, to be freed by `release`.
//
// Returns 0; `-EINVAL` if `ops` or `file` is NULL, `ops->flags` has an unknown bit, or
// `ops_size` is smaller than `FDT_FILE_OPS_SIZE_VER0` or does not end a member; `-E2BIG` if
// the caller's struct sets a member this library does not know (a callback added by a later
// version: it could not be called) or `ops_size` is above 4096. On failure `*file` is set to
// NULL, nothing was made, `release` is not called and `private_data` stays the caller's.
//
// # Safety
//
// `ops` is NULL or valid for reads of `ops_size` bytes, a `struct fdt_file_ops` whose
// callbacks follow that struct's contract; `file` is NULL or valid for a write of a pointer.
int fdt_file_new2(const struct fdt_file_ops *ops,
                  size_t ops_size,
                  void *private_data,
                  unsigned int open_flags,
                  struct fdt_file **file);

// Legacy form of `fdt_file_new2` (deprecated): reads only the version-0 members of `*ops`
// (`read` to `flags`: `FDT_FILE_OPS_SIZE_VER0` bytes, what the 0.1 header's struct had; later
// members such as `poll` are ignored) and returns the file, or NULL (without setting
// `errno`) where `fdt_file_new2` fails.
//
// # Safety
//
// `ops` is NULL or valid for reads of `FDT_FILE_OPS_SIZE_VER0` bytes, whose callbacks follow
// `struct fdt_file_ops`'s contract.
FDT_DEPRECATED("use fdt_file_new2, which takes sizeof(struct fdt_file_ops) and returns -errno")
struct fdt_file *fdt_file_new(const struct fdt_file_ops *ops,
                              void *private_data,
                              unsigned int open_flags);

// Whether `file` was made from the operations at `ops` (the address given to
// `fdt_file_new2` or `fdt_file_new`, as a kernel driver tests `file->f_op == &my_fops`): how
// a runtime recognises its own files among the descriptors before using their
// `fdt_file_private_data`. Addresses are compared, not contents: give every kind of file
// one `struct fdt_file_ops` that outlives its files (a `static const` one).
//
// Returns 1 if it was, 0 if not, `-EINVAL` if `file` or `ops` is NULL.
//
// # Safety
//
// `file` is NULL or a live file. `ops` is only compared, never read.
int fdt_file_has_ops(const struct fdt_file *file, const struct fdt_file_ops *ops);

// Takes another reference to `file` (the kernel's `get_file`).
//
// Ownership: the caller owns the new reference and must give it back (`fdt_file_put`, or a
// call that consumes one). NULL is ignored.
//
// # Safety
//
// `file` is NULL or a live file: the caller holds a reference to it, or got it from a light
// lookup that is still valid.
void fdt_file_get(struct fdt_file *file);

// Drops one reference to `file` (the kernel's `fput`). If it was the last, the file's
// `release` runs now, on this thread.
//
// Ownership: consumes one reference the caller owns. NULL is ignored.
//
// # Safety
//
// `file` is NULL or a file on which the caller owns a reference, which it does not use
// again.
void fdt_file_put(struct fdt_file *file);

// The `private_data` given to `fdt_file_new2` for `file`, or NULL if `file` is NULL. Check
// with `fdt_file_has_ops` that the file is of the kind whose `private_data` you expect.
//
// Ownership: borrows `file`; the result belongs to the file (freed by its `release`).
//
// # Safety
//
// `file` is NULL or a live file.
void *fdt_file_private_data(const struct fdt_file *file);

// The number of references to `file` now (the kernel's `file_count`: racy by nature, for
// diagnostics and tests). Each descriptor referring to the file holds one. Returns
// `-EINVAL` if `file` is NULL.
//
// # Safety
//
// `file` is NULL or a live file.
long fdt_file_count(const struct fdt_file *file);

// Installs `file` at the lowest free descriptor below the soft `RLIMIT_NOFILE` (the kernel's
// `FD_ADD`: `get_unused_fd_flags` + `fd_install`). `FDT_O_CLOEXEC` in `flags` sets
// close-on-exec; other bits are ignored. The descriptor's payload is 0 (`fdt_install_with`
// gives one).
//
// Ownership: consumes the caller's reference to `file`, also on failure (the file is put
// then, and released if that was its last reference).
//
// Returns the descriptor, `-EMFILE` if none is free, `-ENOMEM`, or `-EINVAL` if `files` or
// `file` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
// which the caller owns a reference.
int fdt_install(struct fdt_files *files, struct fdt_file *file, unsigned int flags);

// Installs `file` at the descriptor `fd` the caller chose (the kernel's `replace_fd`, as
// seccomp's `SECCOMP_ADDFD_FLAG_SETFD` uses it; WAMR's `fd_table_insert_existing`, a
// checkpoint or journal restore). If `fd` was open, what it referred to is closed first, as
// `fdt_dup2` closes it (flushed, error ignored). `FDT_O_CLOEXEC` in `flags` sets
// close-on-exec, else it is clear. The descriptor's payload is 0 (`fdt_install_at_with`
// gives one).
//
// Ownership: consumes the caller's reference to `file`, also on failure (the file is put
// then, and released if that was its last reference).
//
// Returns `fd`; `-EINVAL` if `files` or `file` is NULL or `flags` has a bit other than
// `FDT_O_CLOEXEC`; `-EBADF` if `fd` is negative or at or past the soft `RLIMIT_NOFILE`;
// `-EMFILE` if `fd` is at or past `nr_open` (the table cannot grow there; possible after
// `fdt_set_nr_open` lowered it); `-ENOMEM` if the table could not grow; `-EBUSY` if `fd` is
// reserved (`fdt_get_unused_fd`, `fdt_reserve_owned`). On failure the table is unchanged.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
// which the caller owns a reference.
int fdt_install_at(struct fdt_files *files, int fd, struct fdt_file *file, unsigned int flags);

// Reserves the lowest free descriptor below the soft `RLIMIT_NOFILE` (the kernel's
// `get_unused_fd_flags`, the first step of an open): the descriptor is taken, so other
// allocations skip it and `fdt_dup2` onto it fails with `-EBUSY`, but it refers to nothing
// yet. `FDT_O_CLOEXEC` in `flags` sets close-on-exec; other bits are ignored.
//
// Then either `fdt_fd_install2` a file there, or give it back with `fdt_put_unused_fd2` (a
// failed open), on this handle. A fork does not copy reserved descriptors. For an open that
// completes on another thread, `fdt_reserve_owned` gives a reservation that can travel.
//
// Returns the descriptor, `-EMFILE`, `-ENOMEM`, or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_get_unused_fd(struct fdt_files *files, unsigned int flags);

// Gives back a descriptor reserved by `fdt_get_unused_fd` (the kernel's `put_unused_fd`, the
// failed open's way out): it is free again.
//
// Returns 0; `-EBADF` if `fd` is not reserved (free, installed, negative, out of range;
// nothing changes), `-EINVAL` if `files` is NULL. Any reserved number is taken, one held by
// an `fdt_reservation` (`fdt_reserve_owned`) too, as in the kernel: that is a misuse, which
// the reservation's `fdt_reservation_install` then reports (`-EBADF`).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_put_unused_fd2(struct fdt_files *files, int fd);

// Legacy form of `fdt_put_unused_fd2` (deprecated): the same, silent about a descriptor
// that was not reserved (or NULL `files`).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
FDT_DEPRECATED("use fdt_put_unused_fd2, which returns -errno")
void fdt_put_unused_fd(struct fdt_files *files,
                       int fd);

// Installs `file` at `fd`, which `fdt_get_unused_fd` reserved (the kernel's `fd_install`).
// The descriptor's payload is 0 (`fdt_fd_install_with` gives one).
//
// Ownership: consumes the caller's reference to `file` in every case. On failure nothing is
// installed and the reference is put (the file is released if that was its last reference).
//
// Returns 0; `-EBADF` if `fd` is not reserved (free, installed, negative, out of range; it
// stays as it was), `-EINVAL` if `files` or `file` is NULL. As with `fdt_put_unused_fd`, a
// number an `fdt_reservation` holds is taken too (a misuse its install reports).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
// which the caller owns a reference.
int fdt_fd_install2(struct fdt_files *files, int fd, struct fdt_file *file);

// Legacy form of `fdt_fd_install2` (deprecated): the same, silent about its failures (the
// reference is put all the same). NULL `file` is ignored.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
// which the caller owns a reference.
FDT_DEPRECATED("use fdt_fd_install2, which returns -errno")
void fdt_fd_install(struct fdt_files *files,
                    int fd,
                    struct fdt_file *file);

// `close(fd)`: the descriptor is freed, the file flushed (its `flush` callback), and the
// table's reference dropped (the file is released if that was its last reference).
//
// Returns 0, the flush's `-errno` (the descriptor is closed anyway), `-EBADF` if `fd` is not
// open (a reserved descriptor stays reserved), or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_close(struct fdt_files *files, int fd);

// `dup(fd)`: the lowest free descriptor now refers to `fd`'s file, close-on-exec clear, with
// a copy of `fd`'s payload.
//
// Returns the new descriptor, `-EBADF`, `-EMFILE`, or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_dup(struct fdt_files *files, int fd);

// `dup2(oldfd, newfd)`: `newfd` now refers to `oldfd`'s file, close-on-exec clear, with a
// copy of `oldfd`'s payload; what `newfd` referred to is closed first (flushed, error
// ignored). `dup2(fd, fd)` returns `fd` if it is open.
//
// Returns `newfd`, `-EBADF` if `oldfd` is not open or `newfd` is negative or at or past the
// soft `RLIMIT_NOFILE`, `-EBUSY` if `newfd` is reserved (`fdt_get_unused_fd`,
// `fdt_reserve_owned`), `-ENOMEM`, or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_dup2(struct fdt_files *files, int oldfd, int newfd);

// `dup3(oldfd, newfd, flags)`: `fdt_dup2` with `FDT_O_CLOEXEC` as the only allowed flag
// (sets close-on-exec on `newfd`).
//
// Returns `newfd`, `-EINVAL` for another flag or `oldfd == newfd` (or `files` NULL), else as
// `fdt_dup2`.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_dup3(struct fdt_files *files, int oldfd, int newfd, int flags);

// Moves the file at `from` to `to` in one step (WASI's `fd_renumber`; `dup2(from, to)`
// then `close(from)` under one lock hold): no other handle ever sees the file at both
// numbers, or at neither. Its per-fd payload moves with it; `to`'s close-on-exec bit is clear
// (as after `fdt_dup2`); what `to` referred to is closed first, as `fdt_dup2` closes it
// (flushed, error ignored). The moved file is not flushed: no descriptor to it is closed.
// `fdt_renumber(files, fd, fd)` returns `fd` if it is open.
//
// Returns `to`; `-EBADF` if `from` is not open or `to` is negative or at or past the soft
// `RLIMIT_NOFILE`; `-EBUSY` if `to` is reserved (`fdt_get_unused_fd`, `fdt_reserve_owned`);
// `-ENOMEM`; `-EINVAL` if `files` is NULL. On failure nothing changes.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_renumber(struct fdt_files *files, int from, int to);

// `fdt_renumber` onto a descriptor that must already be open, as WASI preview 1's
// `fd_renumber` requires (it replaces an open descriptor and never creates one); the check
// and the move are one step, so no other handle can close `to` in between.
//
// Returns `to`; `-EBADF` if `from` or `to` is not open — free, negative, at or past the
// limit, or reserved (an open still in progress has not returned its number, so it is not an
// open descriptor yet: WASI's answer; `fdt_renumber` says `-EBUSY` there, as `dup2` does);
// `-EINVAL` if `files` is NULL. On failure nothing changes (a reservation stays).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_renumber_onto(struct fdt_files *files, int from, int to);

// `fcntl(fd, cmd, arg)`:
//
// - `FDT_F_DUPFD` / `FDT_F_DUPFD_CLOEXEC`: the lowest free descriptor `>= arg`, with a copy
//   of `fd`'s payload; `-EINVAL` if `arg` is at or past the soft `RLIMIT_NOFILE`, `-EMFILE`
//   if none is free.
// - `FDT_F_GETFD` / `FDT_F_SETFD`: the close-on-exec bit (`FDT_FD_CLOEXEC`).
// - `FDT_F_GETFL` / `FDT_F_SETFL`: access mode and status flags (`O_APPEND`, `O_NONBLOCK`
//   change; `O_DIRECT` is `-EINVAL` on these files).
// - `FDT_F_DUPFD_QUERY`: 1 if `arg` refers to the same open file, 0 if not.
// - Anything else: `-EINVAL`. On an `FDT_O_PATH` file, only the dup, query, `F_GETFD`,
//   `F_SETFD` and `F_GETFL` commands work (others: `-EBADF`).
//
// `arg` is used as an `int` (its low 32 bits), as Linux does for these commands.
//
// Returns the command's result, `-EBADF` if `fd` is not open, or `-EINVAL` if `files` is
// NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_fcntl(struct fdt_files *files, int fd, int cmd, unsigned long arg);

// `close_range(first, last, flags)`: closes every open descriptor in `first..=last` (`last`
// may be `~0U`: to the end), or with `FDT_CLOSE_RANGE_CLOEXEC` marks them close-on-exec;
// `FDT_CLOSE_RANGE_UNSHARE` first gives this handle a private copy of a shared table.
// Reserved descriptors are left alone. Flush errors are ignored.
//
// Returns 0, `-EINVAL` for other flags, `first > last` or NULL `files`; with
// `FDT_CLOSE_RANGE_UNSHARE` on a shared table, the copy's errors, as `fdt_unshare`: `-EMFILE`
// when what it must keep does not fit below `nr_open`, `-ENOMEM`.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_close_range(struct fdt_files *files,
                    unsigned int first,
                    unsigned int last,
                    unsigned int flags);

// The light lookup (the kernel's `fdget`): the file at `fd`, for the duration of one
// operation, stored in `*f`. Always pair a successful one with `fdt_fdput(*f)`, and read
// the file with `fdt_fd_file(*f)`.
//
// If this handle is its table's only handle, no lock is taken and no reference is counted:
// the file is *borrowed* from the table, and the result is valid only until the next call on
// this handle that could close the descriptor or share the table (`fdt_close`, `fdt_dup2`,
// `fdt_dup3`, `fdt_renumber`, `fdt_renumber_onto`, `fdt_install_at` and its `_with` form,
// `fdt_close_range`, `fdt_exec`, `fdt_unshare`, `fdt_files_share2`, `fdt_reserve_owned`,
// `fdt_files_put`); `fdt_fdput` it before any of those. To keep the
// file longer, take a reference with `fdt_file_get`. If the table is shared, the lookup
// takes a reference (`FDT_FDPUT_FPUT`), which `fdt_fdput` drops.
//
// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range) or is an
// `FDT_O_PATH` file; `-EINVAL` if `files` or `f` is NULL. On failure `*f` is the empty
// result (NULL file, no flags; `fdt_fdput` of it does nothing).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
// write of a `struct fdt_fd`.
int fdt_fdget2(struct fdt_files *files, int fd, struct fdt_fd *f);

// Legacy form of `fdt_fdget2` (deprecated): returns the result, whose file is NULL where
// `fdt_fdget2` fails (the error is then `-EBADF`, or `-EINVAL` for NULL `files`). It stays
// for the life of SONAME 0, and returning the result in registers makes it the cheaper of
// the two (25 instructions per unshared lookup and its `fdt_fdput` against `fdt_fdget2`'s
// 42, bench/fdget.c under callgrind): a hot loop may keep it.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
FDT_DEPRECATED("use fdt_fdget2, which returns -errno")
struct fdt_fd fdt_fdget(struct fdt_files *files,
                        int fd);

// The file of a light lookup, or NULL if the descriptor was not open.
//
// Ownership: borrowed from `fd` (valid until `fdt_fdput(fd)`, and, for a lookup that took no
// reference, under `fdt_fdget2`'s rule).
struct fdt_file *fdt_fd_file(struct fdt_fd fd);

// The lookup for hot paths on a shared table (the kernel's `fdget` under `rcu_read_lock`):
// the file at `fd` stored in `*f`, as `fdt_fdget2`, but on a shared table with no reference
// and no lock: the calling thread enters an RCU read-side section (`FDT_FDPUT_RCU` in
// `f->flags`) that keeps the file from being released until `fdt_fdput(*f)` ends it. On a
// table only this handle uses it borrows as `fdt_fdget2` does. A reference
// (`FDT_FDPUT_FPUT`) comes instead for a file whose operations lack
// `FDT_FILE_NEVER_BLOCKS`, for one looked up only a few times so far, and on a thread the
// library cannot register.
//
// While the section is open: call `fdt_fdput(*f)` **on the same thread**, from code built
// with the 0.5 header or later (an older header's inline `fdt_fdput` does not know the flag
// and would leave the section open); do not block (every release of a lent file, on any
// thread, waits for the section to end); other calls may be made, sections nest, and a file
// closed meanwhile (by any handle) stays valid until the `fdt_fdput`, which may then run its
// release (and wait for other threads' sections). To keep the file longer, or across
// something that may block, take a reference with `fdt_fd_get_file` (not `fdt_file_get`,
// which cannot tell a file whose last reference has gone) and `fdt_fdput` at once.
//
// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range) or is an
// `FDT_O_PATH` file; `-EINVAL` if `files` or `f` is NULL. On failure `*f` is the empty
// result and no section is open.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
// write of a `struct fdt_fd`.
int fdt_fdget_rcu(struct fdt_files *files, int fd, struct fdt_fd *f);

// A reference to the file of a lookup's result (`fdt_fdget2`, `fdt_fdget_rcu`,
// `fdt_fdget_with_payload`), to keep it past `fdt_fdput(f)` or across something that may
// block: the kernel's `get_file_rcu`. Call it before `fdt_fdput(f)`, on the thread that made
// an `FDT_FDPUT_RCU` result. Use it instead of `fdt_file_get` on a lent result: a file lent
// without a reference may have lost its last reference since (closed by another handle),
// and then cannot be kept.
//
// Ownership: the caller owns `*file` (give it back with `fdt_file_put`).
//
// Returns 0; `-EBADF` if the result is empty or its file's last reference has gone
// (`*file` is then NULL); `-EINVAL` if `file` is NULL.
//
// # Safety
//
// `f` is the unchanged result of a lookup not yet ended by `fdt_fdput` (for
// `FDT_FDPUT_RCU`: on this thread); `file` is NULL or valid for a write of a pointer.
int fdt_fd_get_file(struct fdt_fd f, struct fdt_file **file);

// Ends a light lookup (the kernel's `fdput`): drops the reference it took, if it took one
// (the file may be released here, if every descriptor to it was closed meanwhile by another
// handle), or ends the RCU section `fdt_fdget_rcu` opened. Does nothing for an empty result
// or a borrowing lookup.
//
// # Safety
//
// `fd` is the unchanged result of one `fdt_fdget2`, `fdt_fdget_rcu` (on this thread: on a
// thread that made no such lookup it ends nothing, and the section stays open) or
// `fdt_fdget`, passed to `fdt_fdput` once.
void fdt_fdput(struct fdt_fd fd);

// The counted lookup (the kernel's `fget`): a new reference to the file at `fd`, stored in
// `*file`; lock-free on a shared table.
//
// Ownership: the caller owns `*file`; give it back with `fdt_file_put` (or to a call that
// consumes one).
//
// Returns 0; `-EBADF` if `fd` is not open or is an `FDT_O_PATH` file; `-EINVAL` if `files`
// or `file` is NULL. On failure `*file` is set to NULL (if `file` is not NULL).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `file` is NULL or valid for
// a write of a pointer.
int fdt_fget2(struct fdt_files *files, int fd, struct fdt_file **file);

// Legacy form of `fdt_fget2` (deprecated): returns the reference, or NULL where `fdt_fget2`
// fails.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
FDT_DEPRECATED("use fdt_fget2, which returns -errno")
struct fdt_file *fdt_fget(struct fdt_files *files,
                          int fd);

// The lowest open descriptor at or above `fd` (installed: reserved ones are skipped), what
// `/proc/<pid>/fd` lists and `close_range` walks. A runtime lists its descriptors without
// probing every number up to the limit:
//
// ```c
// for (int fd = fdt_next_open_fd(files, 0); fd >= 0; fd = fdt_next_open_fd(files, fd + 1))
// ```
//
// Descriptors at or past the soft `RLIMIT_NOFILE` (left open when it was lowered) are found
// too. On a shared table another
// handle may open or close descriptors meanwhile; each answer was true when it was made.
//
// Returns the descriptor; `-ENOENT` if no descriptor at or above `fd` is open; `-EINVAL` if
// `files` is NULL or `fd` is negative.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_next_open_fd(const struct fdt_files *files, int fd);

// `fdt_install` with `payload` as the new descriptor's payload (instead of 0): the file,
// its close-on-exec bit and its payload appear together, so no lookup ever sees the file
// without its payload.
//
// Ownership, results and errors: as `fdt_install` (the reference to `file` is consumed,
// also on failure).
//
// # Safety
//
// As `fdt_install`.
int fdt_install_with(struct fdt_files *files,
                     struct fdt_file *file,
                     unsigned int flags,
                     uint64_t payload);

// `fdt_install_at` with `payload` as `fd`'s payload (instead of 0).
//
// Ownership, results and errors: as `fdt_install_at` (the reference to `file` is consumed,
// also on failure; on failure the table, payloads included, is unchanged).
//
// # Safety
//
// As `fdt_install_at`.
int fdt_install_at_with(struct fdt_files *files,
                        int fd,
                        struct fdt_file *file,
                        unsigned int flags,
                        uint64_t payload);

// `fdt_fd_install2` with `payload` as `fd`'s payload (instead of 0).
//
// Ownership, results and errors: as `fdt_fd_install2` (the reference to `file` is consumed
// in every case; on failure nothing is installed).
//
// # Safety
//
// As `fdt_fd_install2`.
int fdt_fd_install_with(struct fdt_files *files, int fd, struct fdt_file *file, uint64_t payload);

// The payload of the open descriptor `fd`, stored in `*payload`.
//
// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range);
// `-EINVAL` if `files` or `payload` is NULL. On failure `*payload` is set to 0 (if `payload`
// is not NULL).
//
// To check a payload before using the file (a rights check), use `fdt_fdget_with_payload`,
// which reads both at once: this call and a lookup made after it may see two different
// files if another handle renumbers or `dup2`s onto `fd` in between.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `payload` is NULL or valid
// for a write of a `uint64_t`.
int fdt_fd_payload(const struct fdt_files *files, int fd, uint64_t *payload);

// Replaces the payload of the open descriptor `fd` with `payload`. Other descriptors keep
// theirs, including those that refer to the same file (a payload is per descriptor, as the
// close-on-exec bit is).
//
// Returns 0; `-EBADF` if `fd` is not open; `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int fdt_set_fd_payload(struct fdt_files *files, int fd, uint64_t payload);

// Compare-and-swap on the payload of the open descriptor `fd`, with C11's
// `atomic_compare_exchange_strong` convention: if the payload is `*expected`, it becomes
// `desired` and the call returns 1; otherwise nothing changes, the payload found is stored
// in `*expected`, and the call returns 0. For payloads that several threads update, such as
// rights that may only narrow:
//
// ```c
// uint64_t rights;
// int r = fdt_fd_payload(files, fd, &rights);
// while (r >= 0 && (r = fdt_cmpxchg_fd_payload(files, fd, &rights, rights & ~RIGHT_WRITE)) == 0)
//   ;   /* another handle changed it first: retry from what it holds now */
// ```
//
// Returns 1 (replaced) or 0 (not replaced, `*expected` updated); `-EBADF` if `fd` is not
// open; `-EINVAL` if `files` or `expected` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `expected` is NULL or valid
// for a read and a write of a `uint64_t`.
int fdt_cmpxchg_fd_payload(struct fdt_files *files, int fd, uint64_t *expected, uint64_t desired);

// `fdt_fdget2` and the descriptor's payload as one snapshot: `*payload` is the payload that
// goes with *this* file at `fd` (given at its install or set since), never another
// descriptor's or an earlier installation's, even while other handles `fdt_dup2`,
// `fdt_renumber` or `fdt_install_at` onto `fd`. The lookup for a rights check before an
// operation, which `fdt_fd_payload` followed by `fdt_fdget2` is not:
//
// ```c
// struct fdt_fd f;
// uint64_t rights;
// if (fdt_fdget_with_payload(files, fd, &f, &rights) < 0)
//   return -EBADF;
// if (!(rights & RIGHT_READ)) {
//   fdt_fdput(f);
//   return -ENOTCAPABLE;
// }
// ... use fdt_fd_file(f) ...
// fdt_fdput(f);
// ```
//
// On a handle that is its table's only handle this costs what `fdt_fdget2` costs (no lock,
// no reference, and the payload is a plain read). On a shared table the file and its payload
// are read under the table's lock, with a reference (`FDT_FDPUT_FPUT`). Pair every success
// with `fdt_fdput(*f)`, under `fdt_fdget2`'s rule.
//
// Returns 0; `-EBADF` if `fd` is not open or is an `FDT_O_PATH` file; `-EINVAL` if `files`,
// `f` or `payload` is NULL. On failure `*f` is the empty result and `*payload` is 0 (those
// that are not NULL).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
// write of a `struct fdt_fd`; `payload` is NULL or valid for a write of a `uint64_t`.
int fdt_fdget_with_payload(struct fdt_files *files, int fd, struct fdt_fd *f, uint64_t *payload);

// Reserves the lowest free descriptor below `files`'s soft `RLIMIT_NOFILE`, as
// `fdt_get_unused_fd` does, and stores a reservation the caller owns in `*res`: for a runtime
// whose open completes on another thread or after an `await`, and whose cancelled opens must
// give the number back. `FDT_O_CLOEXEC` in `flags` sets close-on-exec; other bits are
// ignored.
//
// ```c
// struct fdt_reservation *r;
// int fd = fdt_reserve_owned(files, FDT_O_CLOEXEC, &r);
// if (fd < 0)
//   return fd;                                   /* -EMFILE, -ENOMEM */
// /* ... on any thread, later: */
// if (opened)
//   fdt_reservation_install_with(r, file, rights);  /* fd now refers to file */
// else
//   fdt_reservation_release(r);                  /* fd is free again */
// ```
//
// The reservation stays on the table `files` had when it was made, also if `files` is later
// unshared (`fdt_unshare`, `fdt_exec`); a fork does not copy it.
//
// Ownership: `files` stays the caller's; the caller owns `*res` and ends it with exactly one
// of `fdt_reservation_install`, `fdt_reservation_install_with`, `fdt_reservation_release`.
// The number belongs to the reservation: do not pass it to `fdt_fd_install2` or
// `fdt_put_unused_fd2`, which are for `fdt_get_unused_fd`'s numbers.
//
// Returns the reserved descriptor; `-EMFILE` if none is free, `-ENOMEM`, or `-EINVAL` if
// `files` or `res` is NULL. On failure `*res` is set to NULL (if `res` is not NULL).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `res` is NULL or valid for
// a write of a pointer.
int fdt_reserve_owned(struct fdt_files *files, unsigned int flags, struct fdt_reservation **res);

// The descriptor `res` reserved.
//
// Returns it, or `-EINVAL` if `res` is NULL.
//
// # Safety
//
// `res` is NULL or a live reservation not in use by another thread.
int fdt_reservation_fd(const struct fdt_reservation *res);

// Installs `file` at the reserved descriptor (the kernel's `fd_install`) and ends the
// reservation. The descriptor's payload is 0 (`fdt_reservation_install_with` gives one).
//
// Ownership: consumes `res` and the caller's reference to `file`, in every case: if `file`
// is NULL the reservation is given back, if `res` is NULL the file is put.
//
// Returns the descriptor; `-EINVAL` if `res` or `file` is NULL; `-EBADF` (the file put) if
// the descriptor was taken from under the reservation: given back or installed meanwhile
// through `fdt_put_unused_fd2`/`fdt_fd_install2`, which cannot tell a reservation's number
// from one of their own and must not be given one.
//
// # Safety
//
// `res` is NULL or a live reservation not in use by another thread, not used again; `file`
// is NULL or a file on which the caller owns a reference.
int fdt_reservation_install(struct fdt_reservation *res, struct fdt_file *file);

// `fdt_reservation_install` with `payload` as the descriptor's payload: the file and its
// payload appear together.
//
// Ownership, results and errors: as `fdt_reservation_install`.
//
// # Safety
//
// As `fdt_reservation_install`.
int fdt_reservation_install_with(struct fdt_reservation *res,
                                 struct fdt_file *file,
                                 uint64_t payload);

// Gives the reserved descriptor back without installing anything (the kernel's
// `put_unused_fd`: a failed or cancelled open) and ends the reservation.
//
// Ownership: consumes `res`. NULL is ignored.
//
// # Safety
//
// `res` is NULL or a live reservation not in use by another thread, and it is not used again.
void fdt_reservation_release(struct fdt_reservation *res);

// `read(fd, buf, count)`: reads at the file's position and advances it (the position is
// locked only while the file is shared). At most 0x7ffff000 bytes are read.
//
// Returns the bytes read (0: end of file), `-EBADF` if `fd` is not open for reading (or is
// `FDT_O_PATH`), `-EINVAL` if the file has no `read` callback or `files` is NULL, `-EFAULT`
// for a NULL `buf` with a non-zero `count`, or the callback's `-errno`.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `buf` is NULL or valid for
// writes of `count` bytes.
ssize_t fdt_read(struct fdt_files *files, int fd, void *buf, size_t count);

// `write(fd, buf, count)`: writes at the file's position and advances it. Returns the bytes
// written or `-errno`, with the errors of `fdt_read` (`-EBADF` if not open for writing).
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `buf` is NULL or valid for
// reads of `count` bytes.
ssize_t fdt_write(struct fdt_files *files, int fd, const void *buf, size_t count);

// `pread64(fd, buf, count, offset)`: reads at `offset`; the file's position does not move.
// Returns as `fdt_read`, and `-EINVAL` for a negative `offset` (checked first), `-ESPIPE`
// for an `FDT_FILE_STREAM` file.
//
// # Safety
//
// As `fdt_read`.
ssize_t fdt_pread(struct fdt_files *files, int fd, void *buf, size_t count, int64_t offset);

// `pwrite64(fd, buf, count, offset)`: writes at `offset`; the file's position does not
// move. Returns as `fdt_write`, plus `fdt_pread`'s `-EINVAL` and `-ESPIPE`.
//
// # Safety
//
// As `fdt_write`.
ssize_t fdt_pwrite(struct fdt_files *files, int fd, const void *buf, size_t count, int64_t offset);

// `lseek(fd, offset, whence)`: the file's `llseek` callback computes the new position,
// which becomes the file's.
//
// Returns the new position, `-EBADF`, `-EINVAL` for `whence` above `SEEK_HOLE` (4) or NULL
// `files`, `-ESPIPE` if the file has no `llseek` callback, or the callback's `-errno`.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
int64_t fdt_lseek(struct fdt_files *files, int fd, int64_t offset, int whence);

// `ioctl(fd, cmd, arg)`. The generic commands are answered here: `FDT_FIOCLEX`,
// `FDT_FIONCLEX`, and those whose `arg` is a pointer in this process — `FDT_FIONBIO`,
// `FDT_FIOASYNC` (read an `int`), `FIOQSIZE` (a `long long`: the blocks of a regular file,
// directory or symlink, as the `getattr` callback reports them; `-ENOTTY` for other types or
// without `getattr`), `FIGETBSZ` (an `int`: `getattr`'s `blksize`; `-EINVAL` when it is 0)
// and, on a file whose `getattr` reports a regular file, `FDT_FIONREAD` (an `int`: its size
// minus the position). Every other command goes to the file's `ioctl` callback with `arg`
// unchanged.
//
// Returns the result (a callback's value in -4095..-1 is `-errno`), `-EBADF` for a bad or
// `FDT_O_PATH` fd, `-ENOTTY` if the file has no `ioctl` callback, `-EFAULT` if a generic
// command's `arg` is NULL, or `-EINVAL` if `files` is NULL.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread. For `FDT_FIONBIO` and
// `FDT_FIOASYNC`, `arg` is 0 or the address of an `int`; for `FIOQSIZE` and `FIGETBSZ`, and
// for `FDT_FIONREAD` on a file whose `getattr` reports a regular file, it is 0 or valid for
// writes of 8 bytes.
long fdt_ioctl(struct fdt_files *files, int fd, unsigned int cmd, unsigned long arg);

// `compat_ioctl(fd, cmd, arg)`, for a 32-bit caller: the generic commands as `fdt_ioctl`,
// then the file's `compat_ioctl` callback with the low 32 bits of `arg`. A 32-bit argument
// is not an address in this process, so the generic commands that read or write through
// `arg` (`FDT_FIONBIO`, `FDT_FIOASYNC`, ...) fail with `-EFAULT`; translate those to
// `fdt_ioctl` with a host pointer. Returns as `fdt_ioctl`.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread.
long fdt_compat_ioctl(struct fdt_files *files, int fd, unsigned int cmd, unsigned long arg);

// `fstat(fd, st)`: the attributes of the file at `fd`, from its `getattr` callback (all zeros
// without one). `FDT_O_PATH` files are answered too, as Linux answers them.
//
// Returns 0; `-EBADF` if `fd` is not open; `-EFAULT` if `st` is NULL (after the descriptor
// check, in the kernel's order); the callback's `-errno`; `-EINVAL` if `files` is NULL. `*st`
// is written only on success.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `st` is NULL or valid for a
// write of a `struct fdt_stat`.
int fdt_fstat(struct fdt_files *files, int fd, struct fdt_stat *st);

// `poll(fds, nfds, 0)`: the readiness of each descriptor now, from its file's `poll`
// callback. Never waits: this layer has no wait queues (a runtime waits on its host's
// objects, then asks again).
//
// Returns the number of entries whose `revents` is not zero; `-EINVAL` if `nfds` is above
// the soft `RLIMIT_NOFILE` (checked first, as Linux does) or `files` is NULL; `-EFAULT` if
// `fds` is NULL and `nfds` is not 0.
//
// # Safety
//
// `files` is NULL or a live handle not in use by another thread; `fds` is NULL or valid for
// reads and writes of `nfds` entries.
int fdt_poll(struct fdt_files *files, struct fdt_pollfd *fds, size_t nfds);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* FDTABLE_H */

/*
 * The light lookup's two trivial halves are also inline, as the kernel's fd_file() and fdput()
 * are (include/linux/file.h): a lookup on an unshared table then costs one call. The functions
 * above stay exported for callers that cannot use macros; `(fdt_fd_file)(f)` and
 * `(fdt_fdput)(f)` call them from C. Define FDTABLE_NO_INLINE to get the plain calls.
 */
#if !defined(FDTABLE_NO_INLINE) && !defined(FDTABLE_INLINE_H)
#define FDTABLE_INLINE_H
static inline struct fdt_file *fdt_fd_file_inline_(struct fdt_fd fd)
{
  return fd.file;
}

static inline void fdt_fdput_inline_(struct fdt_fd fd)
{
  if (fd.flags == 0) /* a borrow (or the empty result): one test on the common path */
    return;
  if (fd.flags & FDT_FDPUT_FPUT)
    fdt_file_put(fd.file);
  else /* an RCU section (0.5), or a later kind: the library's own fdt_fdput */
    (fdt_fdput)(fd);
}

#define fdt_fd_file(fd) fdt_fd_file_inline_(fd)
#define fdt_fdput(fd) fdt_fdput_inline_(fd)
#endif /* FDTABLE_INLINE_H */

#ifndef FDTABLE_MACROS_H
#define FDTABLE_MACROS_H
/* A version as one number, ordered as versions are: compare FDT_VERSION or fdt_version() with
 * it, e.g. `#if FDT_VERSION >= FDT_VERSION_NUMBER(0, 2, 0)`. */
#define FDT_VERSION_NUMBER(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))

/* The size of the members struct fdt_file_ops had in 0.1 (`read` to `flags`), what the legacy
 * fdt_file_new reads, and the smallest `ops_size` fdt_file_new2 takes. */
#define FDT_FILE_OPS_SIZE_VER0 offsetof(struct fdt_file_ops, poll)
/* ... and with the members 0.2 added (`poll`, `getattr`). */
#define FDT_FILE_OPS_SIZE_VER1 (offsetof(struct fdt_file_ops, getattr) + sizeof(void (*)(void)))
#endif /* FDTABLE_MACROS_H */

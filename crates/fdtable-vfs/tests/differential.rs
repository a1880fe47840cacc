//! Differential tests: each scenario runs on the real kernel (files, pipes and sockets under a
//! fresh scratch directory, preferably on tmpfs) and on the layer (a `Task` on a `MemFs`), and
//! the two logs of return values and errnos must match line for line.

mod common;

use common::{BAD_FD, ChildOp, Log, Sys, diff, diff_forking, diff_host, diff_host_forking};
use fdtable_vfs::uapi::*;

const O_RW_CREAT: i32 = (O_CREAT | O_RDWR) as i32;

fn o(f: u32) -> i32 {
    f as i32
}

fn write_to_read_only_and_read_from_write_only(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let fd = log.fd("open rw", s.open("f", O_RW_CREAT, 0o644));
    log.val("write", s.write(fd, b"hello"));
    log.val("close", s.close(fd));
    let ro = log.fd("open ro", s.open("f", o(O_RDONLY), 0));
    log.val("write ro", s.write(ro, b"x"));
    log.val("pwrite ro", s.pwrite(ro, b"x", 0));
    log.val("writev ro", s.writev(ro, &[b"x"]));
    log.val("read ro", s.read(ro, 3));
    log.val("ftruncate ro", s.ftruncate(ro, 0));
    let wo = log.fd("open wo", s.open("f", o(O_WRONLY), 0));
    log.val("read wo", s.read(wo, 3));
    log.val("pread wo", s.pread(wo, 3, 0));
    log.val("readv wo", s.readv(wo, &[2]));
    log.val("write wo", s.write(wo, b"J"));
    log.val("pread ro", s.pread(ro, 5, 0));
    // O_ACCMODE 3: neither read nor write.
    let none = log.fd("open 3", s.open("f", 3, 0));
    log.val("read 3", s.read(none, 1));
    log.val("write 3", s.write(none, b"x"));
    log.val("getfl 3", s.fcntl(none, F_GETFL, 0));
}

#[test]
fn write_to_read_only_and_read_from_write_only_vs_kernel() {
    diff("rdonly", write_to_read_only_and_read_from_write_only);
}

#[test]
fn write_to_read_only_and_read_from_write_only_host_adapter_vs_kernel() {
    diff_host(
        "rdonly (host fds)",
        write_to_read_only_and_read_from_write_only,
    );
}

fn pipes_and_sockets_cannot_seek(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let [r, w] = log.fds("pipe", s.pipe2(0));
    log.val("lseek r", s.lseek(r, 0, SEEK_SET));
    log.val("lseek w cur", s.lseek(w, 0, SEEK_CUR));
    log.val("lseek r data", s.lseek(r, 0, SEEK_DATA));
    log.val("lseek r bad whence", s.lseek(r, 0, 99));
    log.val("lseek r negative whence", s.lseek(r, 0, -1));
    log.val("pread r", s.pread(r, 1, 0));
    log.val("pread r negative", s.pread(r, 1, -1));
    log.val("pwrite w", s.pwrite(w, b"x", 0));
    log.val("pread w", s.pread(w, 1, 0));
    let [a, _b] = log.fds("socketpair", s.socketpair(AF_UNIX, SOCK_STREAM, 0));
    log.val("lseek sock", s.lseek(a, 0, SEEK_SET));
    log.val("pread sock", s.pread(a, 1, 0));
    log.val("pwrite sock", s.pwrite(a, b"x", 0));
    let e = log.fd("eventfd", s.eventfd(0, 0));
    log.val("lseek eventfd", s.lseek(e, 5, SEEK_SET));
    log.val("lseek eventfd end", s.lseek(e, 5, SEEK_END));
    log.val("pread eventfd", s.pread(e, 8, 0));
    let n = log.fd("null", s.open("/dev/null", o(O_RDWR), 0));
    log.val("lseek null", s.lseek(n, 100, SEEK_SET));
    log.val("lseek null end", s.lseek(n, -5, SEEK_END));
    log.val("pread null", s.pread(n, 4, 9));
    let z = log.fd("zero", s.open("/dev/zero", o(O_RDONLY), 0));
    log.val("pread zero", s.pread(z, 4, 9));
    log.val("read zero", s.read(z, 3));
    log.val("lseek zero", s.lseek(z, 0, SEEK_CUR));
}

#[test]
fn pipes_and_sockets_cannot_seek_vs_kernel() {
    diff("espipe", pipes_and_sockets_cannot_seek);
}

#[test]
fn pipes_and_sockets_cannot_seek_host_adapter_vs_kernel() {
    diff_host("espipe (host fds)", pipes_and_sockets_cannot_seek);
}

fn unknown_and_generic_ioctls_per_file_type(s: &mut dyn Sys, log: &mut Log, tmpfs: bool) {
    let f = log.fd("file", s.open("f", O_RW_CREAT, 0o644));
    let [r, w] = log.fds("pipe", s.pipe2(0));
    let [a, _b] = log.fds("socketpair", s.socketpair(AF_UNIX, SOCK_STREAM, 0));
    let e = log.fd("eventfd", s.eventfd(0, 0));
    let n = log.fd("null", s.open("/dev/null", o(O_RDWR), 0));
    let d = log.fd("dir", s.open(".", o(O_RDONLY | O_DIRECTORY), 0));
    for (name, fd) in [
        ("file", f),
        ("pipe r", r),
        ("pipe w", w),
        ("sock", a),
        ("eventfd", e),
        ("null", n),
        ("dir", d),
    ] {
        log.val(&format!("unknown {name}"), s.ioctl_raw(fd, 0x1234, 0));
        log.val(
            &format!("driver-style {name}"),
            s.ioctl_raw(fd, ior(b'q', 1, 8), 0),
        );
        log.val(&format!("FIGETBSZ {name}"), s.ioctl_get_int(fd, FIGETBSZ));
        let q = s.ioctl_get_i64(fd, FIOQSIZE);
        // Directory and file sizes are file-system specific; tmpfs is what MemFs models.
        if tmpfs || q.is_err() || name != "dir" {
            log.val(&format!("FIOQSIZE {name}"), q);
        }
        log.val(&format!("FIONREAD {name}"), s.ioctl_get_int(fd, FIONREAD));
        log.val(&format!("FIOCLEX {name}"), s.ioctl_raw(fd, FIOCLEX, 0));
        log.val(&format!("getfd {name}"), s.fcntl(fd, F_GETFD, 0));
        log.val(&format!("FIONCLEX {name}"), s.ioctl_raw(fd, FIONCLEX, 0));
        log.val(&format!("FIONBIO null {name}"), s.ioctl_raw(fd, FIONBIO, 0));
        log.val(
            &format!("FIONBIO on {name}"),
            s.ioctl_set_int(fd, FIONBIO, 7),
        );
        log.val(&format!("getfl {name}"), s.fcntl(fd, F_GETFL, 0));
        log.val(
            &format!("FIONBIO off {name}"),
            s.ioctl_set_int(fd, FIONBIO, 0),
        );
        log.val(
            &format!("FIOASYNC on {name}"),
            s.ioctl_set_int(fd, FIOASYNC, 1),
        );
        log.val(&format!("getfl async {name}"), s.fcntl(fd, F_GETFL, 0));
        log.val(
            &format!("FIOASYNC off {name}"),
            s.ioctl_set_int(fd, FIOASYNC, 0),
        );
    }
    log.val("ioctl bad fd", s.ioctl_raw(BAD_FD, FIOCLEX, 0));
    log.val("ioctl negative fd", s.ioctl_raw(-1, FIONREAD, 0));
}

#[test]
fn unknown_and_generic_ioctls_per_file_type_vs_kernel() {
    diff("ioctl", unknown_and_generic_ioctls_per_file_type);
}

fn fionread_on_pipes_sockets_and_files(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let [r, w] = log.fds("pipe", s.pipe2(0));
    log.val("empty", s.ioctl_get_int(r, FIONREAD));
    log.val("write", s.write(w, b"hello"));
    log.val("after write", s.ioctl_get_int(r, FIONREAD));
    log.val("on write end", s.ioctl_get_int(w, FIONREAD));
    log.val("read 2", s.read(r, 2));
    log.val("after read", s.ioctl_get_int(r, FIONREAD));
    log.val("null pointer", s.ioctl_raw(r, FIONREAD, 0));
    let [a, b] = log.fds("socketpair", s.socketpair(AF_UNIX, SOCK_STREAM, 0));
    log.val("sock write", s.write(a, b"abcdefg"));
    log.val("sock peer", s.ioctl_get_int(b, FIONREAD));
    log.val("sock self", s.ioctl_get_int(a, FIONREAD));
    let f = log.fd("file", s.open("f", O_RW_CREAT, 0o644));
    log.val("file write", s.write(f, &[9u8; 5000]));
    log.val("at end", s.ioctl_get_int(f, FIONREAD));
    log.val("seek", s.lseek(f, 1000, SEEK_SET));
    log.val("at 1000", s.ioctl_get_int(f, FIONREAD));
    log.val("seek past", s.lseek(f, 6000, SEEK_SET));
    log.val("past end", s.ioctl_get_int(f, FIONREAD));
    log.val("file null pointer", s.ioctl_raw(f, FIONREAD, 0));
}

#[test]
fn fionread_on_pipes_sockets_and_files_vs_kernel() {
    diff("fionread", fionread_on_pipes_sockets_and_files);
}

#[test]
fn fionread_on_pipes_sockets_and_files_host_adapter_vs_kernel() {
    diff_host("fionread (host fds)", fionread_on_pipes_sockets_and_files);
}

fn directories_read_as_eisdir(s: &mut dyn Sys, log: &mut Log, tmpfs: bool) {
    log.val("mkdir", s.mkdir("d", 0o755));
    let d = log.fd("open dir", s.open("d", o(O_RDONLY), 0));
    log.val("read", s.read(d, 10));
    log.val("read 0", s.read(d, 0));
    log.val("pread", s.pread(d, 10, 0));
    log.val("readv", s.readv(d, &[4, 4]));
    log.val("readv empty", s.readv(d, &[0]));
    log.val("write", s.write(d, b"x"));
    log.val("ftruncate", s.ftruncate(d, 0));
    if tmpfs {
        log.val("lseek set", s.lseek(d, 3, SEEK_SET));
        log.val("lseek cur", s.lseek(d, 2, SEEK_CUR));
        log.val("lseek end", s.lseek(d, 0, SEEK_END));
        log.val("lseek neg", s.lseek(d, -10, SEEK_CUR));
        log.val("stat", s.fstat(d).map(|st| (st.mode, st.size, st.blocks)));
    }
    log.val("open wronly", s.open("d", o(O_WRONLY), 0));
    log.val("open rdwr", s.open("d", o(O_RDWR), 0));
    log.val("open trunc", s.open("d", o(O_RDONLY | O_TRUNC), 0));
    log.val("open creat", s.open("d", o(O_CREAT | O_RDONLY), 0o644));
    log.val("open creat excl", s.open("d", o(O_CREAT | O_EXCL), 0o644));
    log.fd("open path rdwr", s.open("d", o(O_PATH | O_RDWR), 0));
    log.fd("open dir flag", s.open("d", o(O_DIRECTORY), 0));
    log.fd("open dir slash", s.open("d/", o(O_RDONLY), 0));
    log.fd("open dir dot", s.open("d/.", o(O_RDONLY), 0));
    log.fd("open dir dotdot", s.open("d/..", o(O_RDONLY), 0));
}

#[test]
fn directories_read_as_eisdir_vs_kernel() {
    diff("eisdir", directories_read_as_eisdir);
}

fn namespace_errnos(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    log.val("missing", s.open("nope", o(O_RDONLY), 0));
    log.val("missing dir", s.open("nope/x", o(O_RDONLY), 0));
    log.val(
        "missing creat in missing dir",
        s.open("nope/x", O_RW_CREAT, 0o644),
    );
    let f = log.fd("create", s.open("f", O_RW_CREAT, 0o644));
    log.val("excl", s.open("f", o(O_CREAT | O_EXCL | O_RDWR), 0o644));
    log.fd("creat existing", s.open("f", O_RW_CREAT, 0o644));
    log.val("file as dir", s.open("f/x", o(O_RDONLY), 0));
    log.val("file as dir creat", s.open("f/x", O_RW_CREAT, 0o644));
    log.val("trailing slash", s.open("f/", o(O_RDONLY), 0));
    log.val("trailing slash creat", s.open("g/", O_RW_CREAT, 0o644));
    log.val(
        "trailing slash creat existing",
        s.open("f/", O_RW_CREAT, 0o644),
    );
    log.val("O_DIRECTORY file", s.open("f", o(O_DIRECTORY), 0));
    log.val(
        "O_DIRECTORY|O_CREAT",
        s.open("h", o(O_DIRECTORY | O_CREAT), 0o644),
    );
    log.val("empty", s.open("", o(O_RDONLY), 0));
    let long = "x".repeat(256);
    log.val("long name", s.open(&long, o(O_RDONLY), 0));
    log.val("long name creat", s.open(&long, O_RW_CREAT, 0o644));
    log.fd("255 creat", s.open(&"y".repeat(255), O_RW_CREAT, 0o644));
    log.val("mkdir", s.mkdir("d", 0o755));
    log.val("mkdir again", s.mkdir("d", 0o755));
    log.val("mkdir slash", s.mkdir("e/", 0o755));
    log.val("mkdir in missing", s.mkdir("nope/d", 0o755));
    log.val("mkdir in file", s.mkdir("f/d", 0o755));
    log.val("mkdir dot", s.mkdir("d/.", 0o755));
    log.fd("create in d", s.open("d/g", O_RW_CREAT, 0o600));
    log.val("rmdir nonempty", s.rmdir("d"));
    log.val("rmdir file", s.rmdir("f"));
    log.val("rmdir missing", s.rmdir("nope"));
    log.val("rmdir dot", s.rmdir("d/."));
    log.val("unlink dir", s.unlink("d"));
    log.val("unlink missing", s.unlink("nope"));
    log.val("unlink slash", s.unlink("f/"));
    log.val("unlink g", s.unlink("d/g"));
    log.val("rmdir", s.rmdir("d"));
    log.val("rmdir again", s.rmdir("d"));
    log.val("write before unlink", s.write(f, b"data"));
    log.val("unlink open file", s.unlink("f"));
    log.val("still writable", s.write(f, b"more"));
    log.val("pread unlinked", s.pread(f, 16, 0));
    log.val("nlink", s.fstat(f).map(|st| (st.nlink, st.size)));
    log.val("reopen", s.open("f", o(O_RDONLY), 0));
    log.fd("recreate", s.open("f", O_RW_CREAT, 0o644));
    log.val(
        "O_TRUNC of existing",
        s.open("f", o(O_WRONLY | O_TRUNC), 0).map(|_| ()),
    );
}

#[test]
fn namespace_errnos_vs_kernel() {
    diff("namespace", namespace_errnos);
}

fn o_append_writes(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let a = log.fd(
        "open append",
        s.open("f", o(O_CREAT | O_WRONLY | O_APPEND), 0o644),
    );
    log.val("write", s.write(a, b"ab"));
    log.val("seek 0", s.lseek(a, 0, SEEK_SET));
    log.val("write again", s.write(a, b"cd"));
    log.val("pos", s.lseek(a, 0, SEEK_CUR));
    log.val("pwrite at 0 appends", s.pwrite(a, b"X", 0));
    log.val("pos after pwrite", s.lseek(a, 0, SEEK_CUR));
    log.val("empty write", s.lseek(a, 1, SEEK_SET).and(s.write(a, b"")));
    log.val("pos after empty write", s.lseek(a, 0, SEEK_CUR));
    let p = log.fd("plain", s.open("f", o(O_RDWR), 0));
    log.val("overwrite at 0", s.write(p, b"Z"));
    log.val("setfl append", s.fcntl(p, F_SETFL, O_APPEND as i64));
    log.val("write via setfl", s.write(p, b"!"));
    log.val("pos plain", s.lseek(p, 0, SEEK_CUR));
    log.val("setfl clear", s.fcntl(a, F_SETFL, 0));
    log.val("seek a", s.lseek(a, 1, SEEK_SET));
    log.val("write no append", s.write(a, b"Y"));
    log.val("content", s.pread(p, 64, 0));
    log.val(
        "writev append",
        s.fcntl(a, F_SETFL, O_APPEND as i64)
            .and(s.writev(a, &[b"1", b"23"])),
    );
    log.val("content after writev", s.pread(p, 64, 0));
}

#[test]
fn o_append_writes_vs_kernel() {
    diff("append", o_append_writes);
}

#[test]
fn o_append_writes_host_adapter_vs_kernel() {
    diff_host("append (host fds)", o_append_writes);
}

fn positions_are_shared_after_dup_and_fork(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let a = log.fd("open", s.open("f", O_RW_CREAT, 0o644));
    let b = log.fd("dup", s.dup(a));
    let c = log.fd("F_DUPFD_CLOEXEC", s.fcntl(a, F_DUPFD_CLOEXEC, 0));
    log.val("write a", s.write(a, b"abc"));
    log.val("pos b", s.lseek(b, 0, SEEK_CUR));
    log.val("pos c", s.lseek(c, 0, SEEK_CUR));
    log.val("seek b", s.lseek(b, 1, SEEK_SET));
    log.val("read a", s.read(a, 10));
    log.val("getfd a", s.fcntl(a, F_GETFD, 0));
    log.val("getfd c", s.fcntl(c, F_GETFD, 0));
    log.val("setfl b", s.fcntl(b, F_SETFL, O_NONBLOCK as i64));
    log.val("getfl a", s.fcntl(a, F_GETFL, 0));
    let other = log.fd("second open", s.open("f", o(O_RDWR), 0));
    log.val("second open pos", s.lseek(other, 0, SEEK_CUR));
    log.val("second open flags", s.fcntl(other, F_GETFL, 0));
    s.fork_child(&[
        ChildOp::Write(a, b"de".to_vec()),
        ChildOp::Lseek(other, 2, SEEK_SET),
        ChildOp::Close(b),
    ]);
    log.val("pos after child write", s.lseek(a, 0, SEEK_CUR));
    log.val("other after child seek", s.lseek(other, 0, SEEK_CUR));
    log.val("b still open", s.lseek(b, 0, SEEK_CUR));
    log.val("content", s.pread(a, 10, 0));
    log.val("close b", s.close(b));
    log.val("c still shares", s.lseek(c, 0, SEEK_CUR));
    let [r, w] = log.fds("pipe", s.pipe2(0));
    s.fork_child(&[ChildOp::Write(w, b"from child".to_vec()), ChildOp::Close(r)]);
    log.val("pipe after fork", s.read(r, 32));
}

#[test]
fn positions_are_shared_after_dup_and_fork_vs_kernel() {
    diff_forking("shared pos", positions_are_shared_after_dup_and_fork);
}

#[test]
fn positions_are_shared_after_dup_and_fork_host_adapter_vs_kernel() {
    diff_host_forking(
        "shared pos (host fds)",
        positions_are_shared_after_dup_and_fork,
    );
}

fn o_path_descriptors(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    log.fd("create", s.open("f", O_RW_CREAT, 0o644));
    let p = log.fd(
        "open path",
        s.open("f", o(O_PATH | O_RDWR | O_APPEND | O_TRUNC), 0),
    );
    log.val("read", s.read(p, 1));
    log.val("write", s.write(p, b"x"));
    log.val("pread", s.pread(p, 1, 0));
    log.val("readv", s.readv(p, &[1]));
    log.val("lseek", s.lseek(p, 0, SEEK_SET));
    log.val("ftruncate", s.ftruncate(p, 0));
    log.val("FIOCLEX", s.ioctl_raw(p, FIOCLEX, 0));
    log.val("FIONREAD", s.ioctl_get_int(p, FIONREAD));
    log.val("getfl", s.fcntl(p, F_GETFL, 0));
    log.val("setfl", s.fcntl(p, F_SETFL, 0));
    log.val("getfd", s.fcntl(p, F_GETFD, 0));
    log.val("setfd", s.fcntl(p, F_SETFD, 1));
    log.val("getfd after", s.fcntl(p, F_GETFD, 0));
    log.val("unknown cmd", s.fcntl(p, 9999, 0));
    log.val("getpipe", s.fcntl(p, F_GETPIPE_SZ, 0));
    let d = log.fd("dupfd", s.fcntl(p, F_DUPFD, 0));
    log.val("dupfd getfl", s.fcntl(d, F_GETFL, 0));
    log.fd("dup", s.dup(p));
    log.val("fstat", s.fstat(p).map(|st| (st.mode, st.size)));
    log.val("poll", s.poll1(p, POLLIN));
    log.val("sendfile from", s.sendfile(d, p, None, 1));
    log.val("truncated?", s.open("f", o(O_RDONLY), 0).map(|_| ()));
    log.val(
        "path creat missing",
        s.open("g", o(O_PATH | O_CREAT), 0o644),
    );
    log.fd(
        "path dir",
        s.open(".", o(O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), 0),
    );
    log.val("close", s.close(p));
    log.val("close again", s.close(p));
}

#[test]
fn o_path_descriptors_vs_kernel() {
    diff("O_PATH", o_path_descriptors);
}

#[test]
fn o_path_descriptors_host_adapter_vs_kernel() {
    diff_host("O_PATH (host fds)", o_path_descriptors);
}

fn f_getfl_after_open_and_setfl_masking(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    for (name, flags) in [
        ("rdonly", O_RDONLY),
        ("wronly creat trunc excl", O_WRONLY | O_CREAT | O_TRUNC),
        ("rdwr cloexec noctty", O_RDWR | O_CLOEXEC | O_NOCTTY),
        ("append nonblock", O_RDWR | O_APPEND | O_NONBLOCK),
        ("sync", O_RDWR | O_SYNC),
        ("dsync noatime", O_RDWR | O_DSYNC | O_NOATIME),
        ("async", O_RDWR | O_ASYNC),
        ("direct", O_RDWR | O_DIRECT),
        ("unknown bits", O_RDWR | 0x4000_0000),
    ] {
        let fd = log.fd(
            &format!("open {name}"),
            s.open("f", o(flags | O_CREAT), 0o644),
        );
        log.val(&format!("getfl {name}"), s.fcntl(fd, F_GETFL, 0));
        log.val(&format!("getfd {name}"), s.fcntl(fd, F_GETFD, 0));
    }
    let fd = log.fd("open", s.open("f", o(O_WRONLY), 0));
    let all = (O_RDWR
        | O_APPEND
        | O_NONBLOCK
        | O_SYNC
        | O_CREAT
        | O_TRUNC
        | O_NOATIME
        | O_ASYNC
        | O_CLOEXEC) as i64;
    log.val("setfl everything", s.fcntl(fd, F_SETFL, all));
    log.val("getfl", s.fcntl(fd, F_GETFL, 0));
    log.val("setfl direct", s.fcntl(fd, F_SETFL, O_DIRECT as i64));
    log.val("getfl direct", s.fcntl(fd, F_GETFL, 0));
    log.val("setfl none", s.fcntl(fd, F_SETFL, 0));
    log.val("getfl none", s.fcntl(fd, F_GETFL, 0));
    log.val("setfl negative", s.fcntl(fd, F_SETFL, -1));
    log.val("getfl after negative", s.fcntl(fd, F_GETFL, 0));
    log.val("setfd junk", s.fcntl(fd, F_SETFD, 0xFE));
    log.val("getfd", s.fcntl(fd, F_GETFD, 0));
    log.val("unknown cmd", s.fcntl(fd, 9999, 0));
    log.val("bad fd", s.fcntl(BAD_FD, F_GETFL, 0));
    log.val("negative fd", s.fcntl(-1, F_GETFD, 0));
    log.val("dupfd negative", s.fcntl(fd, F_DUPFD, -1));
    // `arg` is an `unsigned long`, of which Linux keeps the low 32 bits (`(int)arg`, then
    // `f_dupfd`'s `unsigned int`): high bits are ignored, not EINVAL.
    log.fd("dupfd high bits", s.fcntl(fd, F_DUPFD, 0x1_0000_0040));
    log.fd("dupfd 1 << 40", s.fcntl(fd, F_DUPFD_CLOEXEC, 1 << 40));
    log.fd(
        "dupfd all high bits",
        s.fcntl(fd, F_DUPFD, 0xffff_ffff_0000_0050_u64 as i64),
    );
    log.val("dupfd 0xffffffff", s.fcntl(fd, F_DUPFD, 0xffff_ffff));
    log.val("dupfd 0x80000000", s.fcntl(fd, F_DUPFD, 0x8000_0000));
    let n = log.fd("null", s.open("/dev/null", o(O_RDWR), 0));
    log.val("null getfl", s.fcntl(n, F_GETFL, 0));
    log.val("null direct", s.fcntl(n, F_SETFL, O_DIRECT as i64));
    log.val("null async", s.fcntl(n, F_SETFL, O_ASYNC as i64));
    log.val("null getfl after", s.fcntl(n, F_GETFL, 0));
    let [r, w] = log.fds("pipe", s.pipe2(o(O_NONBLOCK)));
    log.val("pipe r getfl", s.fcntl(r, F_GETFL, 0));
    log.val("pipe w getfl", s.fcntl(w, F_GETFL, 0));
    log.val("pipe direct", s.fcntl(w, F_SETFL, O_DIRECT as i64));
    log.val("pipe async", s.fcntl(r, F_SETFL, O_ASYNC as i64));
    log.val("pipe r getfl after", s.fcntl(r, F_GETFL, 0));
    log.val("pipe w getfl after", s.fcntl(w, F_GETFL, 0));
    let [a, _] = log.fds(
        "socketpair",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    log.val("sock getfl", s.fcntl(a, F_GETFL, 0));
    log.val("sock direct", s.fcntl(a, F_SETFL, O_DIRECT as i64));
    log.val("sock async", s.fcntl(a, F_SETFL, O_ASYNC as i64));
    log.val("sock getfl after", s.fcntl(a, F_GETFL, 0));
    let e = log.fd(
        "eventfd",
        s.eventfd(1, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC),
    );
    log.val("eventfd getfl", s.fcntl(e, F_GETFL, 0));
    log.val("eventfd getfd", s.fcntl(e, F_GETFD, 0));
}

#[test]
fn f_getfl_after_open_and_setfl_masking_vs_kernel() {
    diff("F_SETFL", f_getfl_after_open_and_setfl_masking);
}

/// The host adapter: `F_SETFL` reaches the host descriptor at once (`O_DIRECT` answered by the
/// host's file system, `O_NOATIME` carried over).
#[test]
fn f_getfl_after_open_and_setfl_masking_host_adapter_vs_kernel() {
    diff_host("F_SETFL (host fds)", f_getfl_after_open_and_setfl_masking);
}

fn pipe_eof_epipe_eagain_and_capacity(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let [r, w] = log.fds("pipe", s.pipe2(o(O_NONBLOCK)));
    log.val("read empty", s.read(r, 10));
    log.val("read 0", s.read(r, 0));
    log.val("write 70000", s.write(w, &vec![1u8; 70000]));
    log.val("write full", s.write(w, b"x"));
    log.val("write 0 full", s.write(w, b""));
    log.val("poll w full", s.poll1(w, POLLOUT));
    log.val("poll r", s.poll1(r, POLLIN));
    log.val("fionread", s.ioctl_get_int(r, FIONREAD));
    log.val("read all", s.read(r, 100_000).map(|v| v.len()));
    log.val("write 1", s.write(w, b"a"));
    log.val("write page-aligned", s.write(w, &vec![2u8; 65536]));
    log.val("read back", s.read(r, 100_000).map(|v| v.len()));
    for i in 0..40 {
        log.val(&format!("small {i}"), s.write(w, b"abc"));
    }
    log.val("fionread small", s.ioctl_get_int(r, FIONREAD));
    log.val("read 5", s.read(r, 5));
    log.val("write 5000", s.write(w, &[7u8; 5000]));
    log.val("fionread", s.ioctl_get_int(r, FIONREAD));
    log.val("getpipe", s.fcntl(r, F_GETPIPE_SZ, 0));
    log.val("setpipe busy", s.fcntl(w, F_SETPIPE_SZ, 4096));
    log.val("setpipe 100000", s.fcntl(w, F_SETPIPE_SZ, 100_000));
    log.val("getpipe after", s.fcntl(r, F_GETPIPE_SZ, 0));
    log.val("setpipe huge", s.fcntl(w, F_SETPIPE_SZ, 1 << 40));
    log.val("close w", s.close(w));
    log.val("drain", s.read(r, 1 << 20).map(|v| v.len()));
    log.val("eof", s.read(r, 10));
    log.val("poll eof", s.poll1(r, POLLIN));
    let [r2, w2] = log.fds("pipe 2", s.pipe2(0));
    log.val("close r2", s.close(r2));
    log.val("epipe", s.write(w2, b"x"));
    log.val("epipe empty", s.write(w2, b""));
    log.val("epipe writev", s.writev(w2, &[b"a", b"b"]));
    log.val("poll epipe", s.poll1(w2, POLLOUT));
    log.val("pipe2 bad flags", s.pipe2(o(O_APPEND)).map(|_| ()));
    let [r3, w3] = log.fds("packet pipe", s.pipe2(o(O_DIRECT | O_NONBLOCK)));
    log.val("packet 1", s.write(w3, b"hello"));
    log.val("packet 2", s.write(w3, b"world"));
    log.val("packet read short", s.read(r3, 3));
    log.val("packet read", s.read(r3, 16));
    log.val("packet getfl r", s.fcntl(r3, F_GETFL, 0));
    log.val("packet getfl w", s.fcntl(w3, F_GETFL, 0));
    let [r4, w4] = log.fds("pipe 4", s.pipe2(o(O_NONBLOCK)));
    log.val("writev", s.writev(w4, &[b"ab", b"", b"cde"]));
    log.val("readv", s.readv(r4, &[1, 0, 2, 10]));
    log.val(
        "fstat pipe",
        s.fstat(r4).map(|st| (st.mode, st.size, st.blksize)),
    );
}

#[test]
fn pipe_eof_epipe_eagain_and_capacity_vs_kernel() {
    diff("pipe", pipe_eof_epipe_eagain_and_capacity);
}

fn unix_socketpairs(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let [a, b] = log.fds(
        "pair",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    log.val("read empty", s.read(a, 10));
    log.val("read 0", s.read(a, 0));
    log.val("a->b", s.write(a, b"ping"));
    log.val("b->a", s.write(b, b"pong!"));
    log.val("b fionread", s.ioctl_get_int(b, FIONREAD));
    log.val("b reads", s.read(b, 2));
    log.val("b reads rest", s.read(b, 10));
    log.val("a reads", s.read(a, 10));
    log.val("poll a", s.poll1(a, POLLIN | POLLOUT));
    log.val("writev", s.writev(a, &[b"x", b"yz"]));
    log.val("readv", s.readv(b, &[1, 5]));
    log.val("fstat", s.fstat(a).map(|st| (st.mode, st.size)));
    log.val("shutdown bad", s.shutdown(a, 7));
    log.val("shutdown wr", s.shutdown(a, libc::SHUT_WR));
    log.val("write after shut", s.write(a, b"x"));
    log.val("peer eof", s.read(b, 10));
    log.val("peer can write", s.write(b, b"back"));
    log.val("a reads back", s.read(a, 10));
    log.val("poll b", s.poll1(b, POLLIN | POLLOUT));
    log.val(
        "shutdown file",
        s.open("f", O_RW_CREAT, 0o644)
            .and_then(|f| s.shutdown(f as i32, 0)),
    );
    let [c, d] = log.fds(
        "pair 2",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    log.val("c->d", s.write(c, b"data"));
    log.val("close c", s.close(c));
    log.val("d reads data", s.read(d, 10));
    log.val("d eof", s.read(d, 10));
    log.val("d write", s.write(d, b"x"));
    log.val("d write 0", s.write(d, b""));
    log.val("poll d", s.poll1(d, POLLIN | POLLOUT));
    let [e, f] = log.fds(
        "pair 3",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    log.val("e->f unread", s.write(e, b"unread"));
    log.val("f->e", s.write(f, b"for e"));
    log.val("close f", s.close(f));
    log.val("e reads", s.read(e, 10));
    log.val("e reset", s.read(e, 10));
    log.val("e eof", s.read(e, 10));
    log.val(
        "bad flags",
        s.socketpair(AF_UNIX, SOCK_STREAM | 0x10000, 0).map(|_| ()),
    );
    log.val("bad type", s.socketpair(AF_UNIX, 99, 0).map(|_| ()));
    log.val(
        "bad protocol",
        s.socketpair(AF_UNIX, SOCK_STREAM, 5).map(|_| ()),
    );
    log.val(
        "inet",
        s.socketpair(libc::AF_INET, SOCK_STREAM, 0).map(|_| ()),
    );
    log.val("bad domain", s.socketpair(4242, SOCK_STREAM, 0).map(|_| ()));
    log.val("rdm", s.socketpair(AF_UNIX, libc::SOCK_RDM, 0).map(|_| ()));
}

#[test]
fn unix_socketpairs_vs_kernel() {
    diff("socketpair", unix_socketpairs);
}

fn eventfds(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let e = log.fd("eventfd", s.eventfd(3, libc::EFD_NONBLOCK));
    log.val("read short", s.read(e, 7));
    log.val("read", s.read(e, 8));
    log.val("read empty", s.read(e, 8));
    log.val("write short", s.write(e, &[1, 0, 0]));
    log.val("write max", s.write(e, &u64::MAX.to_ne_bytes()));
    log.val("write 5", s.write(e, &5u64.to_ne_bytes()));
    log.val("write overflow", s.write(e, &(u64::MAX - 2).to_ne_bytes()));
    log.val("poll", s.poll1(e, POLLIN | POLLOUT));
    log.val("read 16", s.read(e, 16));
    log.val("write 1", s.write(e, &1u64.to_ne_bytes()));
    log.val("readv split", s.readv(e, &[4, 4, 4]));
    log.val("readv short", s.readv(e, &[4, 3]));
    log.val("writev split", s.writev(e, &[&[1, 0, 0, 0], &[0, 0, 0, 0]]));
    log.val("writev whole", s.writev(e, &[&1u64.to_ne_bytes(), b"rest"]));
    log.val("fstat", s.fstat(e).map(|st| st.mode));
    let sem = log.fd(
        "semaphore",
        s.eventfd(2, libc::EFD_SEMAPHORE | libc::EFD_NONBLOCK),
    );
    log.val("sem 1", s.read(sem, 8));
    log.val("sem 2", s.read(sem, 8));
    log.val("sem 3", s.read(sem, 8));
    log.val("bad flags", s.eventfd(0, 0x10));
    log.val("sendfile from eventfd", s.sendfile(sem, e, None, 8));
}

#[test]
fn eventfds_vs_kernel() {
    diff("eventfd", eventfds);
}

fn lseek_and_holes_on_regular_files(s: &mut dyn Sys, log: &mut Log, tmpfs: bool) {
    let f = log.fd("open", s.open("f", O_RW_CREAT, 0o644));
    log.val("end empty", s.lseek(f, 0, SEEK_END));
    log.val("data empty", s.lseek(f, 0, SEEK_DATA));
    log.val("hole empty", s.lseek(f, 0, SEEK_HOLE));
    log.val("pwrite far", s.pwrite(f, b"tail", 3 * 4096 + 100));
    log.val("end", s.lseek(f, 0, SEEK_END));
    log.val("end -1", s.lseek(f, -1, SEEK_END));
    log.val("end +10", s.lseek(f, 10, SEEK_END));
    log.val("negative", s.lseek(f, -1, SEEK_SET));
    log.val("cur negative", s.lseek(f, -100_000, SEEK_CUR));
    log.val("cur", s.lseek(f, 0, SEEK_CUR));
    log.val("max", s.lseek(f, i64::MAX, SEEK_SET));
    log.val("max+cur", s.lseek(f, 1, SEEK_CUR));
    log.val("write at max", s.write(f, b"x"));
    log.val("end overflow", s.lseek(f, i64::MAX, SEEK_END));
    log.val("read hole", s.pread(f, 8, 10));
    log.val("read tail", s.pread(f, 8, 3 * 4096 + 98));
    log.val("size", s.fstat(f).map(|st| st.size));
    if tmpfs {
        log.val("data 0", s.lseek(f, 0, SEEK_DATA));
        log.val("hole 0", s.lseek(f, 0, SEEK_HOLE));
        log.val("hole in data", s.lseek(f, 3 * 4096 + 1, SEEK_HOLE));
        log.val("data past", s.lseek(f, 3 * 4096 + 104, SEEK_DATA));
        log.val("hole past", s.lseek(f, 3 * 4096 + 104, SEEK_HOLE));
        log.val("data negative", s.lseek(f, -1, SEEK_DATA));
        log.val("blocks", s.fstat(f).map(|st| (st.blocks, st.blksize)));
        log.val("FIOQSIZE", s.ioctl_get_i64(f, FIOQSIZE));
        log.val("pwrite 0", s.pwrite(f, b"head", 0));
        log.val("hole after head", s.lseek(f, 0, SEEK_HOLE));
        log.val("data after 1", s.lseek(f, 1, SEEK_DATA));
        log.val("data after 4096", s.lseek(f, 4096, SEEK_DATA));
    }
    log.val(
        "read at 0",
        s.lseek(f, 0, SEEK_SET)
            .and(s.read(f, 4).map(|v| v.len() as i64)),
    );
}

#[test]
fn lseek_and_holes_on_regular_files_vs_kernel() {
    diff("lseek", lseek_and_holes_on_regular_files);
}

#[test]
fn lseek_and_holes_on_regular_files_host_adapter_vs_kernel() {
    diff_host("lseek (host fds)", lseek_and_holes_on_regular_files);
}

fn ftruncate_rules(s: &mut dyn Sys, log: &mut Log, tmpfs: bool) {
    let f = log.fd("open", s.open("f", O_RW_CREAT, 0o644));
    log.val("write", s.write(f, b"hello world"));
    log.val("shrink", s.ftruncate(f, 5));
    log.val("pos kept", s.lseek(f, 0, SEEK_CUR));
    log.val("grow", s.ftruncate(f, 9000));
    log.val("content", s.pread(f, 16, 0));
    log.val("size", s.fstat(f).map(|st| st.size));
    if tmpfs {
        log.val("blocks", s.fstat(f).map(|st| st.blocks));
    }
    log.val("negative", s.ftruncate(f, -1));
    log.val("negative bad fd", s.ftruncate(BAD_FD, -1));
    log.val("bad fd", s.ftruncate(BAD_FD, 0));
    let [r, _w] = log.fds("pipe", s.pipe2(0));
    log.val("pipe", s.ftruncate(r, 0));
    let n = log.fd("null", s.open("/dev/null", o(O_RDWR), 0));
    log.val("null", s.ftruncate(n, 0));
    let ro = log.fd("ro", s.open("f", o(O_RDONLY), 0));
    log.val("read-only", s.ftruncate(ro, 0));
    log.val(
        "trunc on open",
        s.open("f", o(O_RDONLY | O_TRUNC), 0).map(|_| ()),
    );
    log.val("size after O_TRUNC", s.fstat(f).map(|st| st.size));
}

#[test]
fn ftruncate_rules_vs_kernel() {
    diff("ftruncate", ftruncate_rules);
}

#[test]
fn ftruncate_rules_host_adapter_vs_kernel() {
    diff_host("ftruncate (host fds)", ftruncate_rules);
}

fn vectored_io(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let f = log.fd("open", s.open("f", O_RW_CREAT, 0o644));
    log.val("writev", s.writev(f, &[b"ab", b"", b"cdef"]));
    log.val("writev none", s.writev(f, &[]));
    log.val("pos", s.lseek(f, 1, SEEK_SET));
    log.val("readv", s.readv(f, &[2, 0, 10]));
    log.val("readv eof", s.readv(f, &[4]));
    let many: Vec<&[u8]> = (0..1025).map(|_| &b"x"[..]).collect();
    log.val("writev 1025", s.writev(f, &many));
    log.val("writev 1024", s.writev(f, &many[..1024]));
    log.val("readv 1025", s.readv(f, &[1; 1025]).map(|v| v.len()));
    log.val("readv bad fd", s.readv(BAD_FD, &[1]));
}

#[test]
fn vectored_io_vs_kernel() {
    diff("readv/writev", vectored_io);
}

#[test]
fn vectored_io_host_adapter_vs_kernel() {
    diff_host("readv/writev (host fds)", vectored_io);
}

fn sendfile_rules(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let src = log.fd("src", s.open("src", O_RW_CREAT, 0o644));
    log.val("fill", s.write(src, &[5u8; 70_000]));
    log.val("seek", s.lseek(src, 100, SEEK_SET));
    let dst = log.fd("dst", s.open("dst", O_RW_CREAT, 0o644));
    log.val("file to file", s.sendfile(dst, src, None, 200_000));
    log.val("src pos", s.lseek(src, 0, SEEK_CUR));
    log.val("dst pos", s.lseek(dst, 0, SEEK_CUR));
    log.val("with offset", s.sendfile(dst, src, Some(7), 10));
    log.val("src pos unchanged", s.lseek(src, 0, SEEK_CUR));
    log.val("at eof", s.sendfile(dst, src, None, 10));
    log.val("count 0", s.sendfile(dst, src, Some(0), 0));
    log.val("negative offset", s.sendfile(dst, src, Some(-1), 10));
    let [r, w] = log.fds("pipe", s.pipe2(o(O_NONBLOCK)));
    log.val("file to pipe", s.sendfile(w, src, Some(0), 100));
    log.val("pipe to file", s.sendfile(dst, r, None, 10));
    log.val("pipe with offset", s.sendfile(dst, r, Some(0), 10));
    log.val("to read end", s.sendfile(r, src, Some(0), 10));
    let ro = log.fd("ro", s.open("dst", o(O_RDONLY), 0));
    log.val("to read-only", s.sendfile(ro, src, Some(0), 10));
    let wo = log.fd("wo", s.open("src", o(O_WRONLY), 0));
    log.val("from write-only", s.sendfile(dst, wo, Some(0), 10));
    let app = log.fd("append", s.open("dst", o(O_WRONLY | O_APPEND), 0));
    log.val("to O_APPEND", s.sendfile(app, src, Some(0), 10));
    // A pipe output takes splice_file_to_pipe: O_APPEND is not refused there.
    log.val(
        "pipe w append",
        s.fcntl(w, F_SETFL, (O_APPEND | O_NONBLOCK) as i64),
    );
    log.val("to O_APPEND pipe", s.sendfile(w, src, Some(0), 10));
    log.val("drain", s.read(r, 200));
    let [a, b] = log.fds(
        "socketpair",
        s.socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
    );
    log.val("file to socket", s.sendfile(a, src, Some(0), 1000));
    log.val("socket fionread", s.ioctl_get_int(b, FIONREAD));
    log.val("bad in", s.sendfile(dst, BAD_FD, None, 1));
    log.val("bad out", s.sendfile(BAD_FD, src, None, 1));
    let z = log.fd("zero", s.open("/dev/zero", o(O_RDONLY), 0));
    log.val("zero to file", s.sendfile(dst, z, None, 4096));
}

#[test]
fn sendfile_rules_vs_kernel() {
    diff("sendfile", sendfile_rules);
}

#[test]
fn sendfile_rules_host_adapter_vs_kernel() {
    diff_host("sendfile (host fds)", sendfile_rules);
}

fn dup_family_errnos(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    let a = log.fd("open", s.open("/dev/null", o(O_RDWR), 0));
    let b = log.fd("open 2", s.open("/dev/null", o(O_RDWR), 0));
    log.val("dup bad", s.dup(BAD_FD));
    log.val("dup negative", s.dup(-1));
    log.val("dup2 same", s.dup2(a, a).map(|fd| fd == a as i64));
    log.val("dup2 same bad", s.dup2(BAD_FD, BAD_FD));
    log.val("dup3 same", s.dup3(a, a, 0));
    log.val("dup3 bad flags", s.dup3(a, b, 1));
    log.val(
        "dup3 cloexec",
        s.dup3(a, b, o(O_CLOEXEC)).map(|fd| fd == b as i64),
    );
    log.val("getfd b", s.fcntl(b, F_GETFD, 0));
    log.val("dup2 clears cloexec", s.dup2(a, b).map(|fd| fd == b as i64));
    log.val("getfd b after", s.fcntl(b, F_GETFD, 0));
    log.val("dup2 bad old", s.dup2(BAD_FD, b));
    log.val("query same", s.fcntl(a, F_DUPFD_QUERY, b as i64));
    let c = log.fd("open 3", s.open("/dev/null", o(O_RDWR), 0));
    log.val("query other", s.fcntl(a, F_DUPFD_QUERY, c as i64));
    log.val("query bad", s.fcntl(a, F_DUPFD_QUERY, BAD_FD as i64));
    log.val("query negative", s.fcntl(a, F_DUPFD_QUERY, -1));
    let f = log.fd("created", s.open("new", O_RW_CREAT, 0o644));
    log.val("created query", s.fcntl(f, F_CREATED_QUERY, 0));
    let g = log.fd("reopened", s.open("new", O_RW_CREAT, 0o644));
    log.val("created query again", s.fcntl(g, F_CREATED_QUERY, 0));
    log.val("created query null", s.fcntl(a, F_CREATED_QUERY, 0));
    log.val(
        "close_range cloexec",
        s.close_range1(c, libc::CLOSE_RANGE_CLOEXEC),
    );
    log.val("getfd c", s.fcntl(c, F_GETFD, 0));
    log.val("close_range", s.close_range1(c, 0));
    log.val("closed", s.fcntl(c, F_GETFD, 0));
    log.val("close bad", s.close(BAD_FD));
    log.val("close negative", s.close(-1));
}

#[test]
fn dup_family_errnos_vs_kernel() {
    diff("dup", dup_family_errnos);
}

fn bad_descriptors_and_arguments(s: &mut dyn Sys, log: &mut Log, _tmpfs: bool) {
    for fd in [-1, -100, BAD_FD, i32::MIN] {
        log.val(&format!("read {fd}"), s.read(fd, 1));
        log.val(&format!("write {fd}"), s.write(fd, b"x"));
        log.val(&format!("lseek {fd}"), s.lseek(fd, 0, 99));
        log.val(&format!("pread neg off {fd}"), s.pread(fd, 1, -1));
        log.val(&format!("pwrite {fd}"), s.pwrite(fd, b"x", 0));
        log.val(&format!("fstat {fd}"), s.fstat(fd));
        log.val(&format!("fcntl {fd}"), s.fcntl(fd, 9999, 0));
        log.val(&format!("poll {fd}"), s.poll1(fd, POLLIN));
    }
    let f = log.fd("open", s.open("f", O_RW_CREAT, 0o644));
    log.val("pwrite negative", s.pwrite(f, b"x", -1));
    log.val("pread huge offset", s.pread(f, 1, i64::MAX));
    log.val("pwrite huge offset", s.pwrite(f, b"x", i64::MAX));
    log.val("pread max-1", s.pread(f, 1, i64::MAX - 1));
    log.val("lseek whence -1", s.lseek(f, 0, -1));
    log.val("poll file", s.poll1(f, POLLIN | POLLOUT | POLLPRI));
    log.val("read 0", s.read(f, 0));
}

#[test]
fn bad_descriptors_and_arguments_vs_kernel() {
    diff("bad input", bad_descriptors_and_arguments);
}

#[test]
fn bad_descriptors_and_arguments_host_adapter_vs_kernel() {
    diff_host("bad input (host fds)", bad_descriptors_and_arguments);
}

/* The descriptor arguments of failed calls (issue 15): negative and closed descriptors,
 * O_PATH descriptors (fdget refuses them, fdget_raw and path walks take them), errnos that
 * come after the descriptor lookup, the file's access mode (EBADF the replay cannot check),
 * and pidfd_getfd, whose target descriptor is looked up in the target's table.
 * Recorded with `fdtable record` as tests/data/extra/probe-args; tests/probe.rs builds and
 * records it again on the running kernel. Touches nothing but a temporary file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <linux/sched.h>
#include <unistd.h>

static int pidfd_open(pid_t pid) { return syscall(SYS_pidfd_open, pid, 0); }
static int pidfd_getfd(int pidfd, int fd, unsigned flags) { return syscall(SYS_pidfd_getfd, pidfd, fd, flags); }

int main(void) {
  char b[64]; struct stat st; struct statfs sf; struct flock fl = {.l_type = F_RDLCK};
  struct iovec iov = {b, 1}; struct epoll_event ev = {0}; struct sockaddr sa = {.sa_family = AF_UNIX};
  struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};

  /* Negative and closed descriptors: EBADF from the lookup. */
  read(-1, b, 1); write(77, b, 1); readv(77, &iov, 1); pread(-1, b, 1, 0);
  fstat(77, &st); fstatfs(77, &sf); lseek(77, 0, SEEK_SET); fsync(77);
  fdatasync(-1); ftruncate(77, 0); fchmod(77, 0644); fchown(77, 0, 0); fchdir(77);
  syscall(SYS_getdents64, 77, b, sizeof b); flock(77, LOCK_SH); posix_fadvise(77, 0, 0, 0);
  fcntl(-1, F_GETLK, &fl); fcntl(77, F_GETFL); fcntl(-1, F_SETFL, 0); fcntl(77, F_SETLK, &fl);
  mmap(0, 4096, PROT_READ, MAP_PRIVATE, -1, 0); mmap(0, 4096, PROT_READ, MAP_PRIVATE, 77, 0);
  ioctl(77, FIONREAD, b); ioctl(-1, TCGETS, b);
  fstatat(77, "x", &st, 0); fstatat(77, "", &st, AT_EMPTY_PATH); openat(77, "x", O_RDONLY);
  fstatat(77, "/etc", &st, 0); mkdirat(-5, "x", 0700);
  connect(77, &sa, sizeof sa); sendto(77, b, 1, 0, 0, 0); recvfrom(-1, b, 1, 0, 0, 0);
  getsockname(77, &sa, &(socklen_t){sizeof sa}); shutdown(77, SHUT_RD); listen(-1, 1);
  epoll_wait(77, &ev, 1, 0); fgetxattr(77, "user.x", b, sizeof b); syscall(SYS_utimensat, 77, NULL, ts, 0);

  /* Open descriptors failing after the lookup: the lookup found them. */
  int f = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
  int d = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int pp[2]; pipe2(pp, O_CLOEXEC | O_NONBLOCK);
  ioctl(f, TCGETS, b); lseek(pp[0], 0, SEEK_CUR); read(pp[0], b, 1); fchdir(f);
  fstatat(d, "missing", &st, 0); openat(d, "missing", O_RDONLY); connect(f, &sa, sizeof sa);
  fgetxattr(f, "user.none", b, sizeof b); syscall(SYS_getdents64, f, b, sizeof b);
  int ep = epoll_create1(EPOLL_CLOEXEC); epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev);
  epoll_ctl(ep, EPOLL_CTL_ADD, 77, &ev); epoll_ctl(77, EPOLL_CTL_ADD, f, &ev);
  /* The file's access mode, not the descriptor: EBADF the replay cannot check. */
  write(f, b, 1); read(pp[1], b, 1);

  /* O_PATH: refused by fdget (EBADF), taken by fdget_raw and path walks. */
  int p = open("/etc/hostname", O_PATH | O_CLOEXEC);
  int pd = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  read(p, b, 1); write(p, b, 1); pread(p, b, 1, 0); readv(p, &iov, 1); lseek(p, 0, SEEK_SET);
  fchmod(p, 0644); fchown(p, -1, -1); fsync(p); ftruncate(p, 0); flock(p, LOCK_SH);
  posix_fadvise(p, 0, 0, 0); syscall(SYS_getdents64, pd, b, sizeof b);
  mmap(0, 4096, PROT_READ, MAP_PRIVATE, p, 0); ioctl(p, FIONREAD, b); ioctl(p, TCGETS, b);
  fgetxattr(p, "user.x", b, sizeof b); fsetxattr(p, "user.x", "v", 1, 0); flistxattr(p, b, sizeof b);
  connect(p, &sa, sizeof sa); sendto(p, b, 1, 0, 0, 0); epoll_ctl(ep, EPOLL_CTL_ADD, p, &ev);
  epoll_wait(p, &ev, 1, 0); syscall(SYS_utimensat, p, NULL, ts, 0);
  fcntl(p, F_GETLK, &fl); fcntl(p, F_SETLK, &fl); fcntl(p, F_SETFL, O_NONBLOCK); fcntl(p, F_GETOWN);
  fcntl(p, F_GETFL); fcntl(p, F_GETFD); fcntl(p, F_SETFD, FD_CLOEXEC);
  fstat(p, &st); fstatfs(p, &sf); fstatat(p, "", &st, AT_EMPTY_PATH);
  statx(p, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &(struct statx){0});
  fchownat(p, "", -1, -1, AT_EMPTY_PATH); utimensat(p, "", ts, AT_EMPTY_PATH);
  fstatat(pd, "hostname", &st, 0); fstatat(pd, "missing", &st, 0); faccessat(pd, "hostname", R_OK, 0);
  int q = openat(pd, "hostname", O_RDONLY | O_CLOEXEC); fchdir(pd); fchdir(p); close(q);
  int pdup = dup(p); close(pdup); openat(p, "x", O_RDONLY);
  accept(p, 0, 0); accept(f, 0, 0); ioctl(p, TIOCGPTPEER, O_RDWR); ioctl(f, TIOCGPTPEER, O_RDWR);
  sigset_t m; sigemptyset(&m); signalfd(p, &m, 0); signalfd(f, &m, 0);
  /* utimensat(fd, NULL) looks the fd itself up with fdget; [UTIME_OMIT, UTIME_OMIT] looks
   * nothing up at all. */
  char tmp[] = "/tmp/fdtable-probe-args-XXXXXX"; int t = mkstemp(tmp);
  int tp = open(tmp, O_PATH | O_CLOEXEC); struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  syscall(SYS_utimensat, tp, NULL, now, 0); syscall(SYS_utimensat, t, NULL, now, 0);
  syscall(SYS_utimensat, 77, NULL, now, 0); utimensat(tp, "", now, AT_EMPTY_PATH);
  unlink(tmp); close(t); close(tp);

  /* pidfd_getfd: the target descriptor is looked up in the target's table (fget_task:
   * O_PATH included), the pidfd in the caller's (fdget). */
  int sync[2], go[2]; pipe2(sync, O_CLOEXEC); pipe2(go, O_CLOEXEC);
  int cpidfd = -1;
  struct clone_args ca = {.flags = CLONE_PIDFD, .pidfd = (unsigned long)&cpidfd, .exit_signal = SIGCHLD};
  pid_t c = syscall(SYS_clone3, &ca, sizeof ca);
  if (c == 0) {
    close(f); close(pp[0]);                     /* 3 and 5: open in the parent */
    open("/etc/passwd", O_PATH);                /* 3: an O_PATH descriptor of the child */
    int cf = open("/etc/group", O_RDONLY);      /* 5 */
    dup2(cf, 40); close(cf);                    /* 40: only the child has it; 5 closed */
    write(sync[1], "r", 1);
    read(go[0], b, 1);
    _exit(0);
  }
  read(sync[0], b, 1);
  int pfd = pidfd_open(c);
  close(pidfd_getfd(pfd, 40, 0));               /* open in the child only */
  close(pidfd_getfd(cpidfd, 3, 0));             /* the child's O_PATH descriptor */
  pidfd_getfd(pfd, pp[0], 0);                   /* closed in the child, open here: EBADF */
  pidfd_getfd(cpidfd, -1, 0); pidfd_getfd(pfd, 55, 0); pidfd_getfd(pfd, 40, 1);
  pidfd_getfd(77, 40, 0); pidfd_getfd(p, 40, 0); /* the pidfd itself: closed, O_PATH */
  pidfd_getfd(f, 40, 0);                        /* not a pidfd: EBADF the replay cannot check */
  write(go[1], "g", 1);
  waitpid(c, 0, 0);
  pidfd_getfd(pfd, 40, 0);                      /* reaped: ESRCH */
  close(pfd); close(cpidfd);
  return 0;
}

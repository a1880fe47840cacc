/* Garbage arguments: negative, huge and truncated descriptor numbers, bad pointers, bad
 * flags. Every call must fail (or succeed) exactly as it does natively. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r) {
    if (r < 0)
        printf("%s = -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%s = %ld\n", what, r);
    fflush(stdout);
}
#define T(call) do { errno = 0; show(#call, (long)(call)); } while (0)
#define BAD ((void *)16)

int main(void) {
    syscall(SYS_close_range, 3, ~0U, 0);
    int fd = open("/etc/hostname", O_RDONLY);
    T(fd);
    T(syscall(SYS_fcntl, 0x100000000L | fd, F_GETFD));
    T(syscall(SYS_close, -1L));
    T(syscall(SYS_close, 0x7fffffffL));
    T(syscall(SYS_read, 1L << 30, NULL, 0));
    T(syscall(SYS_read, -100L, NULL, 0));
    T(dup2(1, 0x7fffffff));
    T(fcntl(1, F_DUPFD, 0x7fffffff));
    T(fcntl(1, 99999));
    T(dup3(1, 5, -1));
    T(ioctl(99, FIOCLEX));
    T(ioctl(fd, FIONCLEX));
    T(ioctl(fd, 0x7777));
    T(poll(BAD, 1, 0));
    T(select(-1, NULL, NULL, NULL, NULL));
    fd_set s; FD_ZERO(&s); FD_SET(1, &s);
    struct timeval tv = {0, 0};
    T(select(1 << 20, NULL, &s, NULL, &tv));
    T(select(2, BAD, NULL, NULL, &tv));
    int ep = epoll_create1(0);
    T(epoll_ctl(ep, EPOLL_CTL_ADD, fd, BAD));
    T(epoll_ctl(-1, EPOLL_CTL_ADD, fd, NULL));
    T(epoll_wait(99, BAD, 1, 0));
    T(sendmsg(1, BAD, 0));
    T(recvmsg(99, BAD, 0));
    T(open(NULL, O_RDONLY));
    T(open(BAD, O_RDONLY));
    T(openat(12345, "relative", O_RDONLY));
    T(openat(12345, "/etc/hostname", O_RDONLY));
    T(openat(fd, "x", O_RDONLY));
    T(openat(AT_FDCWD, "/proc/self/fd/-1", O_RDONLY));
    T(openat(AT_FDCWD, "/proc/self/fd/03", O_RDONLY));
    T(openat(AT_FDCWD, "/dev/fd/1/", O_RDONLY));
    T(getrlimit(RLIMIT_NOFILE, BAD));
    T(setrlimit(RLIMIT_NOFILE, BAD));
    struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
    T(setrlimit(RLIMIT_NOFILE, &r));
    T(prlimit(999999, RLIMIT_NOFILE, NULL, &r));
    T(syscall(SYS_close_range, ~0U, 0, 0));
    T(syscall(SYS_close_range, 100000, ~0U, 0));
    T(pipe(BAD));
    T(socketpair(AF_UNIX, SOCK_STREAM, 0, BAD));
    T(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 99, 0) == MAP_FAILED ? -1 : 0);
    T(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, 99, 0) == MAP_FAILED ? -1 : 0);
    T(syscall(SYS_waitid, 3 /* P_PIDFD */, 99, NULL, WEXITED, NULL));
    int pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    T(pidfd);
    T(syscall(SYS_pidfd_getfd, pidfd, 99, 0));
    long g = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    T(g);
    T(fcntl(g, F_GETFD));
    T(syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, fd, g));
    T(syscall(SYS_kcmp, getpid(), getpid(), 0, fd, 99));
    T(syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0));
    T(fstat(fd, BAD));
    T(readlink("/proc/self/fd/99", BAD, 10));
    char buf[64];
    ssize_t n = readlink("/dev/stdin", buf, sizeof buf);
    T(n > 0 ? 0 : -1);
    T(faccessat(99, "x", R_OK, 0));
    T(faccessat(fd, "", R_OK, AT_EMPTY_PATH));
    T(fchdir(99));
    T(execve("/dev/fd/99", (char *[]){"x", NULL}, (char *[]){NULL}));
    T(syscall(SYS_dup, -1L));
    T(syscall(SYS_dup2, fd, -1L));
    T(syscall(SYS_dup3, fd, 0x100000005L, 0));
    T(fcntl(5, F_GETFD));
    T(close(5));
    return 0;
}

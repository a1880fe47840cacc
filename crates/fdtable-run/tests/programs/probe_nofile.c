/* Table errnos at RLIMIT_NOFILE 8: run natively under a limit of 8 and under
 * `fdtable run --nofile 8`; the two outputs must be identical. Every line is one call and its
 * result ("= N" or "= -1 ERRNO"); fd numbers are printed as the program sees them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#ifndef F_DUPFD_QUERY
#define F_DUPFD_QUERY 1027
#endif

static void show(const char *what, long r) {
    if (r < 0)
        printf("%s = -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%s = %ld\n", what, r);
    fflush(stdout);
}
#define T(call) do { errno = 0; show(#call, (long)(call)); } while (0)

static void fill(void) {
    int fd;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0)
        printf("fill %d\n", fd);
    show("fill end", -1);
}

int main(void) {
    /* Whatever the caller left open beyond 0-2 goes first, in both runs. */
    T(syscall(SYS_close_range, 3, ~0U, 0));
    struct rlimit rl;
    T(getrlimit(RLIMIT_NOFILE, &rl));
    printf("limit %llu %llu\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
    fill();
    /* At a full table: reserve-first calls answer EMFILE before their own errors;
     * create-first calls answer their own errors first. */
    T(open("/nonexistent", O_RDONLY));
    T(open("", O_RDONLY));
    T(socket(AF_INET, SOCK_STREAM, 0));
    T(socket(12345, SOCK_STREAM, 0));
    int p[2];
    T(pipe(p));
    T(pipe2(p, 0x12345678));
    T(socketpair(AF_UNIX, SOCK_STREAM, 0, p));
    T(dup(0));
    T(dup(99));
    T(dup(-1));
    T(fcntl(0, F_DUPFD, 0));
    T(fcntl(0, F_DUPFD, 7));
    T(fcntl(0, F_DUPFD, 8));
    T(fcntl(0, F_DUPFD, -1));
    T(fcntl(99, F_DUPFD, 0));
    T(epoll_create1(0));
    T(eventfd(0, 0));
    /* dup2 / dup3 bounds. */
    T(dup2(0, 8));
    T(dup2(0, 1000));
    T(dup2(0, -1));
    T(dup2(0, 7));
    T(dup2(99, 3));
    T(dup2(3, 3));
    T(dup2(99, 99));
    T(dup3(3, 3, 0));
    T(dup3(3, 4, 123));
    T(dup3(3, 4, O_CLOEXEC));
    T(fcntl(4, F_GETFD));
    T(fcntl(3, F_GETFD));
    T(fcntl(3, F_SETFD, FD_CLOEXEC));
    T(fcntl(3, F_GETFD));
    T(fcntl(3, F_DUPFD_QUERY, 3));
    T(fcntl(3, F_DUPFD_QUERY, 4));
    T(fcntl(3, F_DUPFD_QUERY, 5));
    T(fcntl(3, F_DUPFD_QUERY, 99));
    T(fcntl(99, F_GETFD));
    T(fcntl(-1, F_GETFD));
    T(fcntl(-1, F_GETLK, NULL));
    /* close. */
    T(close(99));
    T(close(-5));
    T(close(8));
    T(close(3));
    T(close(3));
    char buf[8];
    struct stat st0;
    T(read(3, buf, 1));
    T(write(-1, buf, 1));
    T(read(2147483647, buf, 1));
    T(fstat(3, &st0));
    /* Now one free slot: 3. */
    T(open("/dev/null", O_RDONLY));
    T(open("/dev/null", O_RDONLY));
    T(close(3));
    /* O_PATH descriptors: EBADF for everything that needs a real open file. */
    int op = open("/etc/hostname", O_PATH);
    printf("opath %d\n", op);
    T(read(op, buf, 1));
    T(write(op, buf, 1));
    T(fchmod(op, 0644));
    T(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, op, 0) == MAP_FAILED ? -1 : 0);
    T(ioctl(op, FIOCLEX));
    T(fcntl(op, F_GETFD));
    struct stat st;
    T(fstat(op, &st));
    T(close(op));
    /* close_range. */
    T(syscall(SYS_close_range, 5, 3, 0));
    T(syscall(SYS_close_range, 3, 10, 0x80));
    T(syscall(SYS_close_range, 5, ~0U, 0));
    T(open("/dev/null", O_RDONLY));
    T(syscall(SYS_close_range, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */));
    T(fcntl(3, F_GETFD));
    T(fcntl(4, F_GETFD));
    T(syscall(SYS_close_range, 3, ~0U, 0));
    /* poll and select. */
    struct pollfd pf[9];
    memset(pf, 0, sizeof pf);
    for (int i = 0; i < 9; i++) { pf[i].fd = i < 3 ? i : -1; pf[i].events = POLLOUT; }
    T(poll(pf, 9, 0));
    pf[0].fd = 99; pf[1].fd = -1; pf[2].fd = 1;
    T(poll(pf, 3, 0));
    printf("revents %d %d %d\n", pf[0].revents, pf[1].revents, pf[2].revents);
    fd_set w;
    FD_ZERO(&w); FD_SET(1, &w); FD_SET(5, &w);
    struct timeval tv = {0, 0};
    T(select(6, NULL, &w, NULL, &tv));
    FD_ZERO(&w); FD_SET(1, &w);
    T(select(6, NULL, &w, NULL, &tv));
    printf("isset %d\n", FD_ISSET(1, &w));
    /* epoll. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    printf("ep %d\n", ep);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 77};
    T(epoll_ctl(ep, EPOLL_CTL_ADD, 99, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev));
    T(epoll_ctl(ep, EPOLL_CTL_DEL, 1, NULL));
    T(close(ep));
    /* rlimits. */
    rl.rlim_cur = 16; rl.rlim_max = 8;
    T(setrlimit(RLIMIT_NOFILE, &rl));
    rl.rlim_cur = 4; rl.rlim_max = 8;
    T(setrlimit(RLIMIT_NOFILE, &rl));
    fill();
    T(dup2(0, 4));
    T(dup2(0, 3));
    T(fcntl(0, F_DUPFD, 4));
    T(syscall(SYS_close_range, 3, ~0U, 0));
    rl.rlim_cur = 8;
    T(setrlimit(RLIMIT_NOFILE, &rl));
    T(getrlimit(RLIMIT_NOFILE, &rl));
    printf("limit %llu %llu\n", (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
    T(sysconf(_SC_OPEN_MAX));
    /* SCM_RIGHTS into a nearly full table: what fits is installed, the rest is cut. */
    int sv[2];
    T(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
    int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
    printf("a %d b %d\n", a, b);
    char cbuf[CMSG_SPACE(3 * sizeof(int))];
    struct iovec iov = {.iov_base = "x", .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(3 * sizeof(int));
    int three[3] = {a, b, 0};
    memcpy(CMSG_DATA(c), three, sizeof three);
    T(sendmsg(sv[0], &m, 0));
    int bad[3] = {a, 99, 0};
    memcpy(CMSG_DATA(c), bad, sizeof bad);
    T(sendmsg(sv[0], &m, 0));
    /* fds now: 0-2, sv 3,4, a 5, b 6: one free (7). */
    char rbuf[4];
    struct iovec riov = {.iov_base = rbuf, .iov_len = sizeof rbuf};
    char rc[CMSG_SPACE(3 * sizeof(int))];
    memset(rc, 0, sizeof rc);
    struct msghdr rm = {.msg_iov = &riov, .msg_iovlen = 1, .msg_control = rc, .msg_controllen = sizeof rc};
    T(recvmsg(sv[1], &rm, 0));
    struct cmsghdr *rcm = CMSG_FIRSTHDR(&rm);
    printf("ctrunc %d\n", !!(rm.msg_flags & MSG_CTRUNC));
    if (rcm) {
        int got[3];
        int n = (rcm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        memcpy(got, CMSG_DATA(rcm), n * sizeof(int));
        printf("received %d:", n);
        for (int i = 0; i < n; i++) printf(" %d", got[i]);
        printf("\n");
    }
    T(syscall(SYS_close_range, 3, ~0U, 0));
    /* /dev/fd paths. */
    T(open("/dev/fd/0", O_RDONLY));
    T(open("/dev/fd/99", O_RDONLY));
    T(open("/proc/self/fd/2/x", O_RDONLY));
    char link[256];
    ssize_t n = readlink("/proc/self/fd/3", link, sizeof link);
    T(n > 0 ? 0 : -1);
    T(access("/dev/fd/3", R_OK));
    T(access("/dev/fd/4", R_OK));
    T(close(3));
    /* accept at a full table: EBADF first, then EMFILE. */
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    T(bind(ls, (struct sockaddr *)&sa, sizeof sa));
    T(listen(ls, 1));
    fill();
    T(accept(99, NULL, NULL));
    T(accept(ls, NULL, NULL));
    T(accept4(ls, NULL, NULL, 0x7777));
    T(syscall(SYS_close_range, 4, ~0U, 0));
    T(accept(ls, NULL, NULL));
    T(close(ls));
    /* 100 children: each gets the lowest free fd, and its own copy of the table. */
    int bad_children = 0;
    for (int i = 0; i < 100; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_RDONLY);
            int d = dup2(fd, 7);
            _exit(fd == 3 && d == 7 && close(99) == -1 && errno == EBADF ? 0 : 1);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad_children++;
    }
    printf("bad children %d\n", bad_children);
    T(fcntl(7, F_GETFD));
    T(open("/dev/null", O_RDONLY));
    return 0;
}

// A call that blocks, still not received by the supervisor when a signal arrives (red team,
// round 15): natively the signal finds it blocked, and under a handler without SA_RESTART
// it fails with EINTR. The supervisor is held for 20 ms by an F_SETOWN_EX whose argument is
// on a userfaultfd page nobody serves yet; the call starts 3 ms later and the signal comes
// once the main thread waits in it (read from /proc/self/task/<tid>/syscall). The page is served and the call released (a writer, a connection, a
// byte) 150 ms later, so a call restarted instead of interrupted completes ("opened").
// usage: probe_cut_blocking ROUNDS RESTART(0/1) OP (0 FIFO open, 1 accept, 2 recvmsg,
// 3 FIFO openat2, 4 waitid(P_PIDFD) of a child that has not exited, 5 recvmsg(MSG_WAITALL)
// of 2 bytes with 1 queued: natively the call takes the byte, waits for the second, and the
// signal makes it return 1; a call restarted instead returns 2, counted as "other"; 6 open
// of /proc/self/fd/N, N a FIFO's read end opened O_NONBLOCK with no writer: blocks, as the
// FIFO's own path; 7 open(FIFO, O_RDWR): never blocks; 8 recvmmsg of no message and 9
// recvmsg on a listening socket: return (0) or fail (EINVAL) at once)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <linux/userfaultfd.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/openat2.h>
static int op, lsock, sp[2];
static pid_t child;

static char fifo[64];
static volatile int got;
static pid_t mtid;
static int uffd; static char *page;
static void h(int s){ got++; }
static void msleep(int ms){ struct timespec t={ms/1000,(ms%1000)*1000000L}; nanosleep(&t,0); }

static volatile int go, done, ready;
static int sysf = -1;  // closed by the main thread after the round, so that no number moves
static void *stall(void *a){
    int fd = (int)(long)a;
    while (go < 1) ;
    int r = fcntl(fd, F_SETOWN_EX, page);
    (void)r;
    return 0;
}
// Whether the main thread is blocked in a call other than its sleeps: natively, in the call
// under test; under fdtable run, that call waiting for the supervisor (held by the stall).
static int main_in_call(int f){
    char buf[64];
    int n = pread(f, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    if (buf[0] < '0' || buf[0] > '9') return 0;  // "running"
    long nr = atol(buf);
    return nr != SYS_nanosleep && nr != SYS_clock_nanosleep && nr != SYS_futex;
}
static void *sig(void *a){
    // Opened before the main thread's call, so that its number does not depend on timing.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)mtid);
    int f = sysf = open(path, O_RDONLY | O_CLOEXEC);
    ready = 1;
    while (go < 1) ;
    // Once the main thread waits in the call (it starts 3 ms after the stall; a fixed delay
    // here lost that race on a loaded machine), and 1 ms more; at most 2 s.
    msleep(2);
    for (int i = 0; i < 20000 && !done && !main_in_call(f); i++) { struct timespec t = {0, 100000}; nanosleep(&t, 0); }
    msleep(1);
    syscall(SYS_tgkill, getpid(), mtid, SIGUSR1);
    msleep(150);
    // serve the page so that native's stalled thread is released
    struct uffdio_zeropage z = { .range = { (unsigned long)page, 4096 }, .mode = 0 };
    ioctl(uffd, UFFDIO_ZEROPAGE, &z);
    // release a restarted open
    if (op == 0 || op == 3 || op == 6) { int w = open(fifo, O_WRONLY|O_NONBLOCK);
    msleep(20);
    if (w >= 0) close(w); }
    else if (op == 1) { int c = socket(AF_UNIX, SOCK_STREAM, 0); struct sockaddr_un a = {AF_UNIX}; snprintf(a.sun_path, sizeof a.sun_path, "%s.s", fifo); connect(c, (void*)&a, sizeof a); msleep(20); close(c); }
    else if (op == 4) { kill(child, SIGKILL); }
    else { write(sp[1], "x", 1); }
    return 0;
}
int main(int argc, char **argv){
    int rounds = atoi(argv[1]), restart = atoi(argv[2]); op = argc > 3 ? atoi(argv[3]) : 0;
    snprintf(fifo, sizeof fifo, "ff.%d", getpid());
    mkfifo(fifo, 0600);
    { lsock = socket(AF_UNIX, SOCK_STREAM, 0); struct sockaddr_un a = {AF_UNIX}; snprintf(a.sun_path, sizeof a.sun_path, "%s.s", fifo); unlink(a.sun_path); bind(lsock, (void*)&a, sizeof a); listen(lsock, 5); socketpair(AF_UNIX, SOCK_STREAM, 0, sp); }
    struct sigaction sa = {0}; sa.sa_handler = h; sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGUSR1, &sa, 0);
    mtid = syscall(SYS_gettid);
    int eintr = 0, opened = 0, other = 0;
    for (int i = 0; i < rounds; i++) {
        uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
        if (uffd < 0) { int d = open("/dev/userfaultfd", O_RDWR|O_CLOEXEC); uffd = ioctl(d, USERFAULTFD_IOC_NEW, O_CLOEXEC); close(d); }
        if (uffd < 0) { perror("userfaultfd"); return 1; }
        struct uffdio_api api = { .api = UFFD_API };
        if (ioctl(uffd, UFFDIO_API, &api)) { perror("api"); return 1; }
        page = mmap(0, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
        struct uffdio_register reg = { .range = { (unsigned long)page, 4096 }, .mode = UFFDIO_REGISTER_MODE_MISSING };
        if (ioctl(uffd, UFFDIO_REGISTER, &reg)) { perror("register"); return 1; }
        int p[2]; pipe(p);
        int pidfd = -1;
        if (op == 4) { child = fork(); if (!child) { for (;;) pause(); } pidfd = syscall(SYS_pidfd_open, child, 0); }
        if (op == 5) write(sp[1], "x", 1);
        int rfd = -1; char self[64];
        if (op == 6) { rfd = open(fifo, O_RDONLY|O_NONBLOCK); snprintf(self, sizeof self, "/proc/self/fd/%d", rfd); }
        done = 0;
        got = 0;
        pthread_t ts, tg;
        go = 0; ready = 0;
        pthread_create(&ts, 0, stall, (void*)(long)p[0]);
        pthread_create(&tg, 0, sig, 0);
        while (!ready) ;
        msleep(5);
        go = 1;
        msleep(3);
        int fd;
        if (op == 0) fd = open(fifo, O_RDONLY);
        else if (op == 3) { struct open_how how = { .flags = O_RDONLY }; fd = syscall(SYS_openat2, AT_FDCWD, fifo, &how, sizeof how); }
        else if (op == 1) fd = accept(lsock, 0, 0);
        else if (op == 6) fd = open(self, O_RDONLY);
        else if (op == 8) { struct mmsghdr mm[1]; memset(mm, 0, sizeof mm); fd = syscall(SYS_recvmmsg, sp[0], mm, 0, 0, (void *)0); if (fd == 0) fd = dup(0); }
        else if (op == 9) { char b; struct iovec v = {&b, 1}; struct msghdr m = {0}; m.msg_iov = &v; m.msg_iovlen = 1; fd = recvmsg(lsock, &m, 0); }
        else if (op == 7) fd = open(fifo, O_RDWR);
        else if (op == 4) { siginfo_t si; fd = waitid(P_PIDFD, pidfd, &si, WEXITED); if (fd == 0) fd = dup(0); }
        else if (op == 5) { char b[2]; struct iovec v = {b, 2}; struct msghdr m = {0}; m.msg_iov = &v; m.msg_iovlen = 1; fd = recvmsg(sp[0], &m, MSG_WAITALL); if (fd == 1) fd = dup(0); else if (fd >= 0) { fd = -1; errno = 0; } }
        else { char b; struct iovec v = {&b, 1}; char c[64]; struct msghdr m = {0}; m.msg_iov = &v; m.msg_iovlen = 1; m.msg_control = c; m.msg_controllen = sizeof c; fd = recvmsg(sp[0], &m, 0); if (fd >= 0) fd = dup(0); }
        int e = errno;
        done = 1;
        if (fd < 0 && e == EINTR) eintr++; else if (fd >= 0) { opened++; close(fd);} else other++;
        pthread_join(tg, 0); pthread_join(ts, 0);
        // After the joins: the signal has come, whether or not it found the call.
        if (i < 3) printf("round %d: open=%d errno=%s handler=%d\n", i, fd, fd<0?strerror(e):"-", got);
        if (op == 1) { int c; fcntl(lsock, F_SETFL, O_NONBLOCK); while ((c = accept(lsock, 0, 0)) >= 0) close(c); fcntl(lsock, F_SETFL, 0); }
        if (op == 2 || op == 5) { char b[16]; while (recv(sp[0], b, sizeof b, MSG_DONTWAIT) > 0) ; }
        if (op == 4) { kill(child, SIGKILL); waitpid(child, 0, 0); close(pidfd); }
        if (rfd >= 0) close(rfd);
        close(sysf);
        close(p[0]); close(p[1]); close(uffd); munmap(page, 4096);
    }
    printf("rounds %d: EINTR %d opened %d other %d\n", rounds, eintr, opened, other);
    unlink(fifo); { char b[80]; snprintf(b, sizeof b, "%s.s", fifo); unlink(b); }
    return 0;
}

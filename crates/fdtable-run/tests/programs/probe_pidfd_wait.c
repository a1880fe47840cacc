// A child's pidfd is readable exactly when the child can be reaped: natively
// waitid(P_PIDFD, WEXITED | WNOHANG) right after poll() says so always finds it. Under a
// tracer the exit reaches the tracer first, and until it has collected the zombie the
// parent finds no child. Prints the rounds where WNOHANG found none, and those whose exit
// status was wrong (0 and 0 natively). The same for a pidfd that is non-blocking
// (PIDFD_NONBLOCK, or O_NONBLOCK set with F_SETFL), whose waitid acts as with WNOHANG and
// fails with EAGAIN when it finds no child (0 natively), while another thread starts and
// reaps children of its own, which keeps the supervisor busy. Then a blocking waitid(P_PIDFD) of a child that does
// not exit, timed out by a timer whose handler has no SA_RESTART: natively EINTR.
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static void on_alarm(int s) { (void)s; }

static volatile int stop;

static void *spawner(void *a) {
    (void)a;
    while (!stop) {
        pid_t c = fork();
        if (c == 0) _exit(0);
        if (c > 0) waitpid(c, 0, 0);
    }
    return 0;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300, none = 0, wrong = 0;
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0) return 1;
        if (c == 0) _exit(i & 7);
        int pf = syscall(SYS_pidfd_open, c, 0);
        if (pf < 0) { perror("pidfd_open"); return 1; }
        struct pollfd p = {pf, POLLIN, 0};
        poll(&p, 1, -1);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PIDFD, pf, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0) {
            none++;
            memset(&si, 0, sizeof si);
            waitid(P_PIDFD, pf, &si, WEXITED);
        }
        if (si.si_status != (i & 7)) wrong++;
        close(pf);
    }
    printf("readable but no child %d, wrong status %d\n", none, wrong);
    int eagain = 0;
    wrong = 0;
    pthread_t busy;
    pthread_create(&busy, 0, spawner, 0);
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0) return 1;
        if (c == 0) _exit(i & 7);
        int pf = syscall(SYS_pidfd_open, c, (i & 1) ? O_NONBLOCK : 0);
        if (pf < 0) { perror("pidfd_open"); return 1; }
        if (!(i & 1)) fcntl(pf, F_SETFL, O_NONBLOCK);
        struct pollfd p = {pf, POLLIN, 0};
        poll(&p, 1, -1);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PIDFD, pf, &si, WEXITED) < 0) {
            eagain += errno == EAGAIN;
            memset(&si, 0, sizeof si);
            waitid(P_PIDFD, pf, &si, WEXITED | __WALL);
            if (si.si_pid == 0) waitpid(c, 0, 0);
        }
        if (si.si_status != (i & 7)) wrong++;
        close(pf);
    }
    stop = 1;
    pthread_join(busy, 0);
    printf("non-blocking: readable but EAGAIN %d, wrong status %d\n", eagain, wrong);
    pid_t c = fork();
    if (c == 0) { for (;;) pause(); }
    int pf = syscall(SYS_pidfd_open, c, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval t = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &t, 0);
    siginfo_t si;
    int r = waitid(P_PIDFD, pf, &si, WEXITED);
    printf("a timed out wait: %s\n", r < 0 ? strerror(errno) : "returned");
    kill(c, SIGKILL);
    waitpid(c, 0, 0);
    return 0;
}

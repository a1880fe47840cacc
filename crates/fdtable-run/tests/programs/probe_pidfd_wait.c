// A child's pidfd is readable exactly when the child can be reaped: natively
// waitid(P_PIDFD, WEXITED | WNOHANG) right after poll() says so always finds it. Under a
// tracer the exit reaches the tracer first, and until it has collected the zombie the
// parent finds no child. Prints the rounds where WNOHANG found none, and those whose exit
// status was wrong (0 and 0 natively).
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

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
    return 0;
}

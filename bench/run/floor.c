/* floor MODE N: the loops the fdtable run targets are measured against, in one binary.
 *   read0     N x read(fd, buf, 0) on /dev/zero        (a call that only uses a descriptor)
 *   dupclose  N x dup(fd) + close()                     (two table-changing calls)
 *   bare      dupclose under the bare notification round trip: a supervisor process that
 *             answers every notification of dup and close with SECCOMP_USER_NOTIF_FLAG_CONTINUE
 *             (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP set, as fdtable run sets it)
 *   spawn     N x fork + exec /bin/true + wait          (the cost of a process)
 * Prints ns per iteration. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int zfd;

static double loop(const char *mode, long n) {
    char b;
    double t0 = 0;
    for (long i = -n / 10; i < n; i++) {
        if (i == 0) t0 = now();
        if (!strcmp(mode, "read0")) {
            if (read(zfd, &b, 0) != 0) abort();
        } else if (!strcmp(mode, "spawn")) {
            pid_t p = fork();
            if (p == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
            }
            waitpid(p, NULL, 0);
        } else {
            int d = dup(zfd);
            if (d < 0 || close(d) != 0) abort();
        }
    }
    return (now() - t0) / n;
}

static void supervise(int l) {
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    for (;;) {
        memset(&req, 0, sizeof req);
        if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req)) _exit(0);
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    long n = atol(argv[2]);
    zfd = open("/dev/zero", O_RDONLY);
    if (!strcmp(argv[1], "bare")) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_dup, 1, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {sizeof f / sizeof f[0], f};
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        int l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
        if (l < 0) return 1;
        ioctl(l, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1ULL);
        pid_t s = fork();
        if (s == 0) supervise(l);
        printf("%.1f\n", loop("dupclose", n));
        kill(s, SIGKILL);
        return 0;
    }
    printf("%.1f\n", loop(argv[1], n));
    return 0;
}

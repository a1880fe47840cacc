/* Tables following processes: fork, vfork, clone and clone3 with and without CLONE_FILES and
 * CLONE_PIDFD, threads, unshare(CLONE_FILES), close-on-exec across exec, exec from a thread,
 * execs that fail and one that runs in every shape of close-on-exec descriptors.
 * Prints every descriptor number it gets; run natively and under fdtable run, the outputs
 * must be identical. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int opennull(void) { return open("/dev/null", O_RDONLY); }

static long clone3_call(uint64_t flags, int *pidfd) {
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.flags = flags;
    a.exit_signal = SIGCHLD;
    if (pidfd) a.pidfd = (uint64_t)(uintptr_t)pidfd;
    return syscall(SYS_clone3, &a, sizeof a);
}

static int waitexit(pid_t p) {
    int st;
    if (waitpid(p, &st, __WALL) != p) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *thr(void *arg) {
    int *out = arg;
    *out = opennull();
    return NULL;
}

static void *thr_exec(void *arg) {
    (void)arg;
    char *argv[] = {"sh", "-c", "ls /proc/self/fd | wc -l", NULL};
    execv("/bin/sh", argv);
    _exit(127);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "exec-thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thr_exec, NULL);
        pthread_join(t, NULL);
        return 1;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    syscall(SYS_close_range, 3, ~0U, 0);
    /* fork: the child gets a copy; its opens do not show in the parent. */
    int a = opennull();
    pid_t p = fork();
    if (p == 0) {
        int c = opennull();
        close(a);
        _exit(c);
    }
    printf("fork child opened %d, parent next %d\n", waitexit(p), opennull());
    /* vfork + dup2 + exec, as posix_spawn does. */
    p = vfork();
    if (p == 0) {
        dup2(a, 9);
        execl("/bin/sh", "sh", "-c", "exit $(ls /proc/self/fd | wc -l)", (char *)NULL);
        _exit(127);
    }
    printf("vfork child saw %d fds\n", waitexit(p));
    /* clone3 with CLONE_PIDFD: the pidfd is installed in the parent only. */
    int pidfd = -1;
    long c = clone3_call(CLONE_PIDFD, &pidfd);
    if (c == 0) _exit(opennull());
    printf("clone3 pidfd %d, child opened %d\n", pidfd, waitexit(c));
    printf("pidfd cloexec %d\n", fcntl(pidfd, F_GETFD));
    close(pidfd);
    /* clone3 with CLONE_FILES: the child's open shows in the parent. */
    c = clone3_call(CLONE_FILES, NULL);
    if (c == 0) _exit(opennull());
    int got = waitexit(c);
    printf("clone3 CLONE_FILES child opened %d, parent sees it: %d\n", got, fcntl(got, F_GETFD) == 0);
    close(got);
    /* clone with CLONE_PIDFD (parent_tid receives the pidfd). */
    int pfd2 = -1;
    c = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pfd2, 0, 0);
    if (c == 0) _exit(opennull());
    printf("clone pidfd %d, child opened %d\n", pfd2, waitexit(c));
    close(pfd2);
    /* Threads share the table. */
    int t1 = -1, t2 = -1;
    pthread_t th;
    pthread_create(&th, NULL, thr, &t1); pthread_join(th, NULL);
    pthread_create(&th, NULL, thr, &t2); pthread_join(th, NULL);
    printf("threads opened %d %d, next %d\n", t1, t2, opennull());
    /* unshare(CLONE_FILES) in a CLONE_FILES child: its opens stop showing in the parent. */
    c = clone3_call(CLONE_FILES, NULL);
    if (c == 0) {
        if (unshare(CLONE_FILES) != 0) _exit(200);
        int x = opennull();
        _exit(x);
    }
    got = waitexit(c);
    printf("unshared child opened %d, parent has it: %d\n", got, fcntl(got, F_GETFD) == 0);
    /* close-on-exec across exec. */
    int ce = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int keep = dup(ce);
    syscall(SYS_close_range, keep, keep, 4 /* CLOSE_RANGE_CLOEXEC */);
    int keep2 = dup(ce);
    p = fork();
    if (p == 0) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "ls /proc/self/fd | tr '\\n' ' '; [ -e /dev/fd/%d ] && echo has%d", keep2, keep2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    waitexit(p);
    printf("\n");
    /* Execs that fail, then one that runs, with no close-on-exec descriptor (0), one at the
     * lowest free number (1), one above a free number (2), two (3): after each failure every
     * descriptor is still there with its bit; after the run the close-on-exec ones are gone. */
    for (int shape = 0; shape < 4; shape++) {
        p = fork();
        if (p == 0) {
            syscall(SYS_close_range, 3, ~0U, 0);
            int a = -1, b = -1, hole = -1;
            if (shape == 1) a = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (shape == 2) {
                hole = opennull();
                a = open("/dev/null", O_RDONLY | O_CLOEXEC);
                close(hole);
            }
            if (shape == 3) {
                a = open("/dev/null", O_RDONLY | O_CLOEXEC);
                b = open("/dev/null", O_RDONLY | O_CLOEXEC);
            }
            int plain = opennull();
            char *argv[] = {"x", NULL};
            int fails = 0;
            for (int i = 0; i < 3; i++) fails += execv("/nonexistent/x", argv) == -1 && errno == ENOENT;
            fails += execv("/dev/null", argv) == -1 && errno == EACCES;
            int ok = fails == 4 && (a < 0 || fcntl(a, F_GETFD) == FD_CLOEXEC) &&
                     (b < 0 || fcntl(b, F_GETFD) == FD_CLOEXEC) && fcntl(plain, F_GETFD) == 0;
            /* The lowest free number after the failures is where the library allocates. */
            int next = opennull();
            close(next);
            char cmd[160];
            snprintf(cmd, sizeof cmd, "echo \"exec shape %d: ok %d next %d, after: $(ls /proc/self/fd | tr '\\n' ' ')\"", shape, ok, next);
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
            _exit(127);
        }
        waitexit(p);
    }
    /* exec from a non-leader thread. */
    p = fork();
    if (p == 0) {
        execl("/proc/self/exe", "probe_tables", "exec-thread", (char *)NULL);
        _exit(127);
    }
    printf("thread exec exit %d\n", waitexit(p));
    /* 100 forks in a row, each child closing what it never opened. */
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        p = fork();
        if (p == 0) _exit(close(1000 + i) == -1 && errno == EBADF ? 0 : 1);
        bad += waitexit(p) != 0;
    }
    printf("100 forks, bad %d\n", bad);
    return 0;
}

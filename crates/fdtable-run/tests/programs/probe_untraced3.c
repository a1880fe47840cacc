/* clone3 with CLONE_UNTRACED in its arguments (in memory, where the supervisor does not read
 * them): the new task is not traced. The supervisor kills it when the caller's next notified
 * call shows that the clone3 made no clone event; these variants check that it is found:
 *
 *   probe_untraced3 plain    CLONE_UNTRACED alone
 *   probe_untraced3 fork     the stray forks at once: its child must be killed too
 *   probe_untraced3 parent   CLONE_UNTRACED|CLONE_PARENT: the stray is a child of the
 *                            caller's parent (found only when it makes a notified call:
 *                            every stray opens /dev/null every 100 ms)
 *
 * The caller makes a notified call 200 ms later, waits 300 ms, then prints whether the stray
 * (or, with fork, its child) still runs: natively "stray: running", under fdtable run
 * "stray: killed". It then kills what is left.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void msleep(int ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Whether process p exists and is not a zombie. */
static int running(int p) {
    char path[64], b[512];
    snprintf(path, sizeof path, "/proc/%d/stat", p);
    int f = open(path, O_RDONLY);
    if (f < 0) return 0;
    ssize_t n = read(f, b, sizeof b - 1);
    close(f);
    if (n <= 0) return 0;
    b[n] = 0;
    char *e = strrchr(b, ')');
    return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

int main(int argc, char **argv) {
    const char *v = argc > 1 ? argv[1] : "plain";
    volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return 1;
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.flags = CLONE_UNTRACED;
    a.exit_signal = SIGCHLD;
    if (!strcmp(v, "parent")) {
        a.flags |= CLONE_PARENT;
        a.exit_signal = 0;
    }
    long c = syscall(SYS_clone3, &a, sizeof a);
    if (c == 0) {
        if (!strcmp(v, "fork")) {
            pid_t g = fork();
            if (g == 0) {
                for (;;) msleep(100);
            }
            *shared = g;
        } else {
            *shared = getpid();
        }
        for (;;) {
            msleep(100);
            close(open("/dev/null", O_RDONLY));
        }
    }
    if (c < 0) {
        perror("clone3");
        return 1;
    }
    for (int i = 0; i < 100 && !*shared; i++) msleep(10);
    msleep(200);
    int f = open("/dev/null", O_RDONLY); /* notified: settles the clone3 */
    close(f);
    msleep(300);
    int watched = *shared;
    printf("stray: %s\n", watched > 0 && running(watched) ? "running" : "killed");
    if (watched > 0) kill(watched, SIGKILL);
    kill((pid_t)c, SIGKILL);
    return 0;
}

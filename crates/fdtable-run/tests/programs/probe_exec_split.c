/* A table shared by two tasks of the parent (two threads, or the parent and a CLONE_FILES
 * child) plus a CLONE_FILES child that execs. After the exec, the two remaining sharers must
 * still share one table: what one opens, the other sees (F_GETFD answers 0), and the next
 * open of the other takes the next number.
 *
 *   probe_exec_split thread [clone3|clone|vfork3|pidfd3]   the two sharers are threads of one process
 *   probe_exec_split procs  [clone3|clone|vfork3|pidfd3]   the sharers are the parent and a CLONE_FILES child
 *
 * Prints one line; natively: "T sees 4: 0, T opened 5, main sees 5: 0"
 */
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *how = "clone3";

static int spawn_exec(void) {
    pid_t c;
    int pidfd = -1;
    if (!strcmp(how, "clone")) {
        c = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
    } else {
        struct clone_args a;
        memset(&a, 0, sizeof a);
        a.exit_signal = SIGCHLD;
        a.flags = CLONE_FILES;
        if (!strcmp(how, "vfork3")) a.flags |= CLONE_VFORK;
        if (!strcmp(how, "pidfd3")) { a.flags |= CLONE_PIDFD | CLONE_VFORK; a.pidfd = (uint64_t)(uintptr_t)&pidfd; }
        c = syscall(SYS_clone3, &a, sizeof a);
    }
    if (c == 0) {
        char *av[] = {"true", NULL};
        execv("/bin/true", av);
        _exit(127);
    }
    if (c < 0) { perror("clone"); exit(1); }
    int st;
    waitpid(c, &st, 0);
    if (pidfd >= 0) close(pidfd);
    return st;
}

/* Shared memory steps between the sharers (futex-free busy waiting on a shared page). */
static volatile int *step;
static void wait_step(int n) { while (*step < n) usleep(100); }

static int fd_main, fd_other, got_other, got_main;

static void other_side(void) {
    wait_step(1);
    fcntl(0, F_GETFD);               /* first call after the exec */
    *step = 2;
    wait_step(3);
    got_other = fcntl(fd_main = step[10], F_GETFD);
    fd_other = open("/dev/null", O_RDONLY);
    step[11] = fd_other;
    step[12] = got_other;
    *step = 4;
}
static void *thr(void *u) { (void)u; other_side(); return NULL; }
static int child_fn(void *u) { (void)u; other_side(); return 0; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "thread";
    if (argc > 2) how = argv[2];
    step = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_t t;
    pid_t sharer = -1;
    static char stack[1 << 16];
    if (!strcmp(mode, "thread")) pthread_create(&t, NULL, thr, NULL);
    else sharer = clone(child_fn, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
    int st = spawn_exec();
    fcntl(0, F_GETFD);               /* first call after the exec */
    *step = 1;
    wait_step(2);
    int f = open("/dev/null", O_RDONLY);
    step[10] = f;
    *step = 3;
    wait_step(4);
    got_main = fcntl(step[11], F_GETFD);
    printf("child status %d; other sees %d: %d, other opened %d, main sees %d: %d\n", st, f, step[12],
           step[11], step[11], got_main);
    if (sharer > 0) waitpid(sharer, NULL, 0);
    else pthread_join(t, NULL);
    return 0;
}

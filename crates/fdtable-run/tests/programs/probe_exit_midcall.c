/* Processes that exit while their threads are inside notified calls, and vfork children that
 * change the table before they execute: a notification queued by a task whose process is
 * gone (and reaped) by the time it is read reaches nobody, and must not read as a task that
 * escaped the supervisor.
 *
 *   probe_exit_midcall [rounds]      prints "done"; an executed image exits with the
 *                                    number of descriptors it has below 64
 *   probe_exit_midcall shared [rounds]
 *                                    a process sharing the table (CLONE_FILES, no
 *                                    CLONE_THREAD) is killed while it closes and dups a
 *                                    number; the survivor's F_GETFD (the table's answer) and
 *                                    fstat (a use) must agree on it: prints the rounds where
 *                                    they did not ("disagreements 0")
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void *churn(void *unused) {
    (void)unused;
    for (;;) {
        int f = open("/dev/null", O_RDONLY);
        int g = dup2(0, 6);
        if (f >= 0) close(f);
        if (g >= 0) close(g);
    }
    return NULL;
}

static int sharer(void *unused) {
    (void)unused;
    for (;;) {
        dup2(0, 6);
        close(6);
    }
    return 0;
}

static int shared(int rounds) {
    static char stack[65536];
    int bad = 0;
    for (int k = 0; k < rounds; k++) {
        pid_t c = clone(sharer, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
        if (c < 0) return perror("clone"), 1;
        usleep(200 + (k * 89) % 1500);
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
        struct stat st;
        int table = fcntl(6, F_GETFD) >= 0;
        int use = fstat(6, &st) == 0;
        if (table != use) bad++;
        close(6);
    }
    printf("disagreements %d\n", bad);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "shared") == 0) return shared(argc > 2 ? atoi(argv[2]) : 40);
    if (argc > 1 && argv[1][0] == 'x') {
        int n = 0;
        for (int i = 0; i < 64; i++) n += fcntl(i, F_GETFD) >= 0;
        return n;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    for (int k = 0; k < rounds; k++) {
        pid_t c = fork();
        if (c == 0) {
            pthread_t t;
            for (int i = 0; i < 3; i++) pthread_create(&t, NULL, churn, NULL);
            usleep(500 + (k * 137) % 2500);
            _exit(0);
        }
        pid_t v = vfork();
        if (v == 0) {
            dup2(1, 5);
            close(5);
            dup2(0, 7);
            char *av[] = {argv[0], "x", NULL};
            execv(argv[0], av);
            _exit(127);
        }
        int st;
        waitpid(v, &st, 0);
        if (k == 0) printf("the executed image has %d descriptors\n", WEXITSTATUS(st));
    }
    while (wait(NULL) > 0) {
    }
    printf("done\n");
    return 0;
}

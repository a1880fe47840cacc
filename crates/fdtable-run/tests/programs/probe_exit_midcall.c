/* Processes that exit while their threads are inside notified calls, and vfork children that
 * change the table before they execute: a notification queued by a task whose process is
 * gone (and reaped) by the time it is read reaches nobody, and must not read as a task that
 * escaped the supervisor.
 *
 *   probe_exit_midcall [rounds]      prints "done"; an executed image exits with the
 *                                    number of descriptors it has below 64
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
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

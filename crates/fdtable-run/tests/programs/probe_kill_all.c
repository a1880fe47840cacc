/* kill(-1, SIGCONT) in a loop while two threads fork children that exit at once: the kernel
 * counts every process it meets (those it may not signal too) and fails only when it met
 * none, so natively no call fails. The supervisor, which carries the call out, used to fail
 * it with ESRCH when a child it had listed was reaped before its turn. SIGCONT: harmless to
 * whatever else it reaches.
 *
 *   probe_kill_all SECONDS   prints "calls N, errors 0"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *forker(void *unused) {
    (void)unused;
    while (!stop) {
        pid_t c = fork();
        if (c == 0)
            _exit(0);
        if (c > 0)
            waitpid(c, NULL, 0);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int secs = argc > 1 ? atoi(argv[1]) : 2;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, forker, NULL);
    time_t end = time(NULL) + secs;
    long calls = 0, errors = 0;
    while (time(NULL) < end) {
        if (kill(-1, SIGCONT) < 0) {
            if (errors++ == 0)
                fprintf(stderr, "kill(-1, SIGCONT): %s\n", strerror(errno));
        }
        calls++;
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("calls %s, errors %ld\n", calls > 0 ? "made" : "none", errors);
    return 0;
}

/* A process dies while its threads fork: a child made just before its creator is killed (after
 * the kernel's copy, before the creator's fork event, which a killed task never reports) must
 * still run, with its own table. Each child dups and closes a descriptor, then exits.
 *
 *   probe_fork_death exit|kill|execfork|spawn ROUNDS
 *     exit:     process P has two threads looping fork(); P's main thread calls _exit(0)
 *               after a random delay (exit_group kills the forking threads)
 *     kill:     the same threads; the top process SIGKILLs P after a random delay
 *     execfork: like exit, but P's main thread executes /bin/true (the exec kills them)
 *     spawn:    like exit, with posix_spawn of /bin/true in place of fork
 *
 * Prints "MODE: done ROUNDS rounds, children 0 failed".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static int spawn;
static int report = -1; /* a pipe: a child whose table is wrong writes one byte */

static void child(void) {
    int fd = dup(0);
    if (fd < 0 || close(fd) != 0 || fcntl(report, F_GETFD) < 0) {
        char b = 'x';
        if (write(report, &b, 1) < 0) _exit(2);
    }
    _exit(0);
}

static void *forker(void *u) {
    (void)u;
    for (;;) {
        if (spawn) {
            pid_t c;
            char *av[] = {"true", NULL};
            posix_spawn(&c, "/bin/true", NULL, NULL, av, environ);
        } else {
            pid_t c = fork();
            if (c == 0) child();
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "exit";
    int rounds = argc > 2 ? atoi(argv[2]) : 30;
    spawn = !strcmp(m, "spawn");
    int bykill = !strcmp(m, "kill");
    int byexec = !strcmp(m, "execfork");
    int p2[2];
    if (pipe2(p2, O_NONBLOCK) != 0) return 1;
    report = p2[1];
    srand(getpid());
    for (int r = 0; r < rounds; r++) {
        int d = 200 + rand() % 3000;
        pid_t p = fork();
        if (p < 0) return 1;
        if (p == 0) {
            signal(SIGCHLD, SIG_IGN);
            pthread_t t;
            pthread_create(&t, NULL, forker, NULL);
            pthread_create(&t, NULL, forker, NULL);
            if (bykill) pause();
            struct timespec ts = {0, d * 1000L};
            nanosleep(&ts, NULL);
            if (byexec) {
                char *av[] = {"true", NULL};
                execv("/bin/true", av);
            }
            _exit(0);
        }
        if (bykill) {
            struct timespec ts = {0, d * 1000L};
            nanosleep(&ts, NULL);
            kill(p, SIGKILL);
        }
        waitpid(p, NULL, 0);
    }
    close(p2[1]);
    /* Orphaned children may still be running: wait until every copy of the pipe's write end
     * is closed, with a bound. */
    int failed = 0;
    for (int i = 0; i < 2000; i++) {
        char b[64];
        ssize_t n = read(p2[0], b, sizeof b);
        if (n > 0) {
            failed += (int)n;
            continue;
        }
        if (n == 0) break;
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("%s: done %d rounds, children %d failed\n", m, rounds, failed);
    return 0;
}

/* A subreaper T with a thread that computes (spins) while T's main thread reaps. Each round,
 * T forks P; P's two threads loop fork() (children _exit(0)) and P's main thread calls _exit
 * after a random delay. Orphans are reparented to T. A child created just before P died is
 * claimed only once no task of its parent's group (now T) may be in a clone call; T's spinning
 * thread is always running.
 *   probe_reaper_spin ROUNDS [spin|nospin] [cparent]   (cparent: P's threads use CLONE_PARENT)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int done;
static void *spin(void *u) { (void)u; while (!done) ; return NULL; }
#include <sched.h>
#include <sys/syscall.h>
static int cparent;
static void *forker(void *u) { (void)u; for (;;) { pid_t c = cparent ? syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) : fork(); if (c == 0) _exit(0); } return NULL; }
int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    int dospin = !(argc > 2 && !strcmp(argv[2], "nospin"));
    cparent = argc > 3 && !strcmp(argv[3], "cparent");
    if (!cparent) prctl(PR_SET_CHILD_SUBREAPER, 1);
    pthread_t s;
    if (dospin) pthread_create(&s, NULL, spin, NULL);
    srand(getpid());
    for (int r = 0; r < rounds; r++) {
        pid_t p = fork();
        if (p == 0) {
            pthread_t t;
            pthread_create(&t, NULL, forker, NULL);
            pthread_create(&t, NULL, forker, NULL);
            struct timespec ts = {0, (200 + rand() % 3000) * 1000L};
            nanosleep(&ts, NULL);
            _exit(0);
        }
        while (waitpid(-1, NULL, 0) > 0) ;
    }
    done = 1;
    if (dospin) pthread_join(s, NULL);
    printf("reaper: done %d rounds\n", rounds);
    return 0;
}

/* Threads created while their process is being stopped. A child's threads keep creating
 * short-lived workers, each adding 20000 to a shared counter; the parent stops the child
 * with SIGSTOP, waits until waitpid(WUNTRACED) reports it stopped, and checks that the
 * counter stays still for 30 ms before it sends SIGCONT. A thread created as the stop
 * begins joins the group-stop (its first stop is the group-stop): natively the counter
 * never moves. `hogs` spinning processes make the creation and the stop overlap more often.
 *
 *   probe_group_stop ROUNDS CREATORS HOGS   prints "moved 0" (rounds where it moved)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long *counter;

static void *worker(void *unused) {
    (void)unused;
    for (int i = 0; i < 20000; i++)
        __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void *creator(void *unused) {
    (void)unused;
    for (;;) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    int creators = argc > 2 ? atoi(argv[2]) : 4;
    int hogs = argc > 3 ? atoi(argv[3]) : 0;
    counter = mmap(NULL, sizeof *counter, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (counter == MAP_FAILED)
        return 2;
    pid_t child = fork();
    if (child == 0) {
        for (int i = 1; i < creators; i++) {
            pthread_t t;
            pthread_create(&t, NULL, creator, NULL);
        }
        creator(NULL);
    }
    pid_t spin[8];
    for (int i = 0; i < hogs && i < 8; i++)
        if ((spin[i] = fork()) == 0)
            for (;;)
                ;
    srand((unsigned)getpid());
    int moved = 0, status;
    for (int r = 0; r < rounds; r++) {
        usleep((useconds_t)(rand() % 3000));
        kill(child, SIGSTOP);
        if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status)) {
            printf("round %d: wait status %#x\n", r, status);
            break;
        }
        usleep(2000);
        long before = *counter;
        usleep(30000);
        long after = *counter;
        if (after != before && moved++ < 3)
            fprintf(stderr, "round %d: the counter moved by %ld while stopped\n", r,
                    after - before);
        kill(child, SIGCONT);
        waitpid(child, &status, WCONTINUED);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    for (int i = 0; i < hogs && i < 8; i++) {
        kill(spin[i], SIGKILL);
        waitpid(spin[i], NULL, 0);
    }
    printf("moved %d\n", moved);
    return 0;
}

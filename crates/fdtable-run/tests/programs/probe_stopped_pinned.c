/* A process stopped (SIGSTOP from its parent) while two of its threads send signals through
 * the pidfd at number 20 and a third dup2s another pidfd onto 20. A stopped thread is out of
 * its call (a stop happens only on the way back to user space), so no call waits for it:
 * natively no call fails. The supervisor used to take a stopped thread for one still inside
 * its call, and refused the other threads' calls on 20 with EBUSY after 50 ms.
 *
 *   probe_stopped_pinned ROUNDS   prints "errors 0" (calls that failed, any errno)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int *done;
static int pf[2];
static long errors[2];

static void *send(void *unused) {
    (void)unused;
    long n = 0;
    while (!*done)
        if (syscall(SYS_pidfd_send_signal, 20, 0, NULL, 0) < 0) {
            fprintf(stderr, "pidfd_send_signal: %s\n", strerror(errno));
            n++;
        }
    __atomic_add_fetch(&errors[0], n, __ATOMIC_RELAXED);
    return NULL;
}

static void *swap(void *unused) {
    (void)unused;
    long n = 0;
    for (int i = 0; !*done; i++)
        if (dup2(pf[i & 1], 20) < 0) {
            fprintf(stderr, "dup2: %s\n", strerror(errno));
            n++;
        }
    __atomic_add_fetch(&errors[1], n, __ATOMIC_RELAXED);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (done == MAP_FAILED)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        pf[0] = syscall(SYS_pidfd_open, getpid(), 0);
        pf[1] = syscall(SYS_pidfd_open, getppid(), 0);
        if (pf[0] < 0 || pf[1] < 0 || dup2(pf[0], 20) != 20)
            return 1;
        pthread_t t[3];
        pthread_create(&t[0], NULL, send, NULL);
        pthread_create(&t[1], NULL, send, NULL);
        pthread_create(&t[2], NULL, swap, NULL);
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], NULL);
        printf("errors %ld\n", errors[0] + errors[1]);
        return 0;
    }
    sleep_ms(100);
    for (int r = 0; r < rounds; r++) {
        int st;
        kill(child, SIGSTOP);
        waitpid(child, &st, WUNTRACED);
        sleep_ms(100);
        kill(child, SIGCONT);
        sleep_ms(50);
    }
    *done = 1;
    int st;
    waitpid(child, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

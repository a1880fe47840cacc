/* Waits that fail with EINTR when any signal wakes them (epoll_wait, semop), woken only by
 * ignored signals: children exiting while SIGCHLD is at its default action (ignored), and
 * a SIGUSR1 set to SIG_IGN, sent by another thread. Natively an ignored signal is discarded
 * when sent and never wakes the wait. The main thread waits (no timeout); a helper thread
 * checks in /proc that it is blocked in the call before each signal, then ends the wait.
 *
 *   probe_ignored_signals epoll|semop ROUNDS   prints "EINTR N" (the waits that failed
 *                                              with it) and "done"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int use_semop, rounds, efd, semid;
static pid_t waiter;

/* Whether thread `tid` of this process is blocked in call `nr`. */
static int blocked_in(pid_t tid, long nr) {
    char path[64], buf[128] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    return ok && atol(buf) == nr;
}

static void wait_until_blocked(void) {
    long nr = use_semop ? SYS_semop : SYS_epoll_wait;
    while (!blocked_in(waiter, nr)) sched_yield();
}

static void *helper(void *arg) {
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        wait_until_blocked();
        pid_t c = fork();
        if (c == 0) _exit(0);
        waitpid(c, NULL, 0);
        wait_until_blocked();
        syscall(SYS_tgkill, getpid(), waiter, SIGUSR1);
    }
    wait_until_blocked();
    if (use_semop) {
        struct sembuf up = {0, 1, 0};
        semop(semid, &up, 1);
    } else {
        eventfd_write(efd, 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) return 2;
    use_semop = strcmp(argv[1], "semop") == 0;
    rounds = atoi(argv[2]);
    signal(SIGUSR1, SIG_IGN);
    waiter = syscall(SYS_gettid);
    efd = eventfd(0, 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    semid = semget(IPC_PRIVATE, 1, 0600);
    if (use_semop && semid < 0) {
        printf("unsupported: %s\n", strerrorname_np(errno));
        return 0;
    }
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    int eintr = 0;
    for (;;) {
        int r;
        if (use_semop) {
            /* The call itself: glibc's semop is semtimedop. */
            struct sembuf down = {0, -1, 0};
            r = syscall(SYS_semop, semid, &down, 1);
        } else {
            r = epoll_wait(ep, &ev, 1, -1);
        }
        if (r >= 0) break;
        if (errno != EINTR) {
            printf("failed: %s\n", strerrorname_np(errno));
            break;
        }
        eintr++;
    }
    pthread_join(t, NULL);
    if (semid >= 0) semctl(semid, 0, IPC_RMID);
    printf("EINTR %d\ndone\n", eintr);
    return 0;
}

/* Close-on-exec bits of a table whose other user dies mid-call. Each round a process P
 * shares its table (clone(CLONE_FILES), no CLONE_THREAD) with a checker C; three threads of
 * P churn on numbers 5-30 (dup2, dup3(O_CLOEXEC), close, F_SETFD, open with and without
 * O_CLOEXEC) until P is killed (`kill`: SIGKILL from the parent) or exits (`exit`:
 * exit_group from its main thread) at a random time, cutting calls short. Then C, alone on
 * the table, compares F_GETFD (the table's answer) of 3-63 with the flags in
 * /proc/self/fdinfo (the kernel's own).
 *
 *   probe_kill_bits ROUNDS kill|exit   prints "bad rounds N" (rounds where they differed),
 *                                      the first differences on stderr
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
    volatile int ready, go, done;
    int bad;
    char first[160];
};
static struct shared *sh;

static int kernel_cloexec(int fd) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY);
    if (f < 0)
        return -1;
    ssize_t k = read(f, buf, sizeof buf - 1);
    close(f);
    buf[k > 0 ? k : 0] = 0;
    char *s = strstr(buf, "flags:");
    return s && (strtol(s + 6, NULL, 8) & O_CLOEXEC) ? 1 : 0;
}

static void checker(void) {
    sh->ready = 1;
    while (!sh->go)
        usleep(200);
    for (int fd = 3; fd < 64; fd++) {
        int table = fcntl(fd, F_GETFD), kernel = kernel_cloexec(fd);
        if (table != kernel && sh->bad++ == 0)
            snprintf(sh->first, sizeof sh->first, "fd %d: F_GETFD %d, fdinfo %d", fd, table, kernel);
    }
    sh->done = 1;
}

static void *churn(void *arg) {
    unsigned s = (unsigned)(long)arg * 2654435761u;
    for (;;) {
        s = s * 1103515245 + 12345;
        int n = 5 + (int)((s >> 8) % 26);
        switch ((s >> 20) % 5) {
        case 0: dup2(0, n); break;
        case 1: dup3(0, n, O_CLOEXEC); break;
        case 2: close(n); break;
        case 3: fcntl(n, F_SETFD, (s >> 4) & 1); break;
        default: {
            int f = open("/dev/null", O_RDONLY | ((s >> 5) & 1 ? O_CLOEXEC : 0));
            if (f > 30)
                close(f);
        }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    int by_exit = argc > 2 && strcmp(argv[2], "exit") == 0;
    /* C outlives P: it must stay this process's child to be waited for. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 2;
    srand((unsigned)getpid());
    int bad_rounds = 0;
    for (int r = 0; r < rounds; r++) {
        memset((void *)sh, 0, sizeof *sh);
        long delay_us = 1000 + rand() % 20000;
        pid_t p = fork();
        if (p == 0) {
            pid_t c = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
            if (c == 0) {
                checker();
                _exit(0);
            }
            while (!sh->ready)
                usleep(100);
            for (long i = 0; i < 3; i++) {
                pthread_t t;
                pthread_create(&t, NULL, churn, (void *)(i + 3L * r + 1));
            }
            if (by_exit) {
                struct timespec ts = {0, delay_us * 1000};
                nanosleep(&ts, NULL);
                _exit(0);
            }
            pause();
        }
        if (!by_exit) {
            while (!sh->ready)
                usleep(100);
            struct timespec ts = {0, (delay_us + 2000) * 1000};
            nanosleep(&ts, NULL);
            kill(p, SIGKILL);
        }
        waitpid(p, NULL, 0);
        usleep(2000);
        sh->go = 1;
        while (!sh->done)
            usleep(200);
        while (waitpid(-1, NULL, 0) > 0)
            ;
        if (sh->bad) {
            bad_rounds++;
            fprintf(stderr, "round %d: %d differences, first %s\n", r, sh->bad, sh->first);
        }
    }
    printf("bad rounds %d\n", bad_rounds);
    return 0;
}

/* Threads of one table churning open, dup2, close and pipe on the same numbers, then
 * checks that the table is back where it started and fills up exactly at its limit.
 *
 * probe_churn THREADS ROUNDS: THREADS threads run ROUNDS rounds each of: open /dev/null;
 * dup2 it onto one of eight shared numbers (100..107); pipe2; close the open, the pipe and,
 * every third round, one of the shared numbers (which another thread may just have closed
 * or replaced). Errors other than the races' own (EBADF for a number another thread closed,
 * EBUSY for one another thread is opening) are counted.
 *
 * probe_churn dup2 GROUPS PER: GROUPS groups of PER threads, each group dup2'ing its own
 * source onto the same 64 numbers, all at once.
 *
 * Then: every shared number is closed, the descriptors left are listed (/proc/self/fd:
 * only the standard ones), and the table is filled with opens until EMFILE: the count is
 * the limit minus what is open, natively as under fdtable run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int rounds;
static atomic_int unexpected;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t opened = PTHREAD_COND_INITIALIZER;
static int go;

/* Every thread starts at once, when main opens the gate. */
static void wait_gate(void) {
    pthread_mutex_lock(&gate);
    while (!go) pthread_cond_wait(&opened, &gate);
    pthread_mutex_unlock(&gate);
}
static int sources[16];

static void bad(int e) {
    if (e != EBADF && e != EBUSY && e != EINTR) {
        atomic_fetch_add(&unexpected, 1);
    }
}

static void *churn(void *arg) {
    long id = (long)arg;
    wait_gate();
    for (int i = 0; i < rounds; i++) {
        int fd = open("/dev/null", (i + id) % 2 ? O_RDONLY | O_CLOEXEC : O_RDONLY);
        if (fd < 0) {
            bad(errno);
            continue;
        }
        int target = 100 + (int)((id + i) % 8);
        if (dup2(fd, target) < 0) bad(errno);
        int p[2];
        if (pipe2(p, (i % 3) ? O_CLOEXEC : 0) < 0) {
            bad(errno);
        } else {
            close(p[0]);
            close(p[1]);
        }
        if (close(fd) < 0) bad(errno);
        if (i % 3 == 2 && close(100 + (int)((id * 7 + i) % 8)) < 0 && errno != EBADF) bad(errno);
    }
    return NULL;
}

static void *dup2er(void *arg) {
    long g = (long)arg;
    wait_gate();
    for (int k = 0; k < 64; k++) {
        if (dup2(sources[g], 200 + k) < 0) bad(errno);
    }
    return NULL;
}

static int listing(char *out, size_t n) {
    DIR *d = opendir("/proc/self/fd");
    int self = dirfd(d), count = 0;
    int fds[64];
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd != self && count < 64) fds[count++] = fd;
    }
    closedir(d);
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            if (fds[j] < fds[i]) { int t = fds[i]; fds[i] = fds[j]; fds[j] = t; }
    out[0] = 0;
    for (int i = 0; i < count; i++) snprintf(out + strlen(out), n - strlen(out), "%d ", fds[i]);
    return count;
}

int main(int argc, char **argv) {
    int dup2mode = argc > 1 && strcmp(argv[1], "dup2") == 0;
    int groups = 0, nthreads;
    if (dup2mode) {
        groups = argc > 2 ? atoi(argv[2]) : 3;
        nthreads = groups * (argc > 3 ? atoi(argv[3]) : 600);
        for (int g = 0; g < groups; g++) sources[g] = open("/dev/null", O_RDONLY);
    } else {
        nthreads = argc > 1 ? atoi(argv[1]) : 2000;
        rounds = argc > 2 ? atoi(argv[2]) : 10;
    }
    pthread_t *t = calloc(nthreads, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    int made = 0;
    for (long i = 0; i < nthreads; i++) {
        void *(*f)(void *) = dup2mode ? dup2er : churn;
        if (pthread_create(&t[i], &a, f, (void *)(dup2mode ? i % groups : i)) != 0) break;
        made++;
    }
    pthread_mutex_lock(&gate);
    go = 1;
    pthread_cond_broadcast(&opened);
    pthread_mutex_unlock(&gate);
    for (int i = 0; i < made; i++) pthread_join(t[i], NULL);
    for (int k = 100; k < 264; k++) close(k);
    for (int g = 0; g < groups; g++) close(sources[g]);
    char buf[512];
    int open_now = listing(buf, sizeof buf);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    int filled = 0;
    while (open("/dev/null", O_RDONLY) >= 0) filled++;
    int e = errno;
    printf("threads %d, unexpected errors %d\nleft open: %s\nfilled %d (limit %llu, %d open): %s\n",
           made, atomic_load(&unexpected), buf, filled, (unsigned long long)rl.rlim_cur, open_now,
           strerror(e));
    return filled + open_now == (int)rl.rlim_cur ? 0 : 1;
}

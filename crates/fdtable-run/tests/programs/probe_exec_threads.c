/* Close-on-exec bits and tables around threads, exec and unshare: each mode compares, in the
 * table it ends with (and in a new image after an exec), F_GETFD (the library's answer) with
 * fstat and the fdinfo flags (the kernel's), and the lowest free number with a fresh open.
 *
 *   probe_exec_threads setfd-race [rounds]   two threads set and clear the bit of one
 *                                            descriptor at once, both joined: F_GETFD must be
 *                                            the kernel's bit ("F_GETFD differs ... 0")
 *   probe_exec_threads exec setfd|close|dup2 [rounds]
 *                                            two threads toggle bits (or close and dup3) on
 *                                            5-9 while a third executes this program: the new
 *                                            image's table must be the kernel's
 *   probe_exec_threads unshare-race [rounds] close_range(CLOSE_RANGE_UNSHARE) and unshare
 *                                            racing CLONE_FILES children and a churning leader,
 *                                            then an exec from a thread that unshared
 * Each prints a summary ending in "0 abnormal 0" (or "0 of N rounds"); the executed image
 * ("x") exits with its count of disagreements. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

static char *self;
/* F_GETFD (library) vs fstat and fdinfo flags (kernel) on 0..127; lowest free vs a fresh open */
static int check_table(const char *who) {
    int bad = 0;
    for (int n = 0; n < 128; n++) {
        struct stat st; int a = fcntl(n, F_GETFD); int b = fstat(n, &st) == 0;
        int c = -1;
        if (b) { char p[64]; snprintf(p, sizeof p, "/proc/thread-self/fdinfo/%d", n); FILE *f = fopen(p, "r");
            if (f) { char l[128]; while (fgets(l, sizeof l, f)) { unsigned fl; if (sscanf(l, "flags: %o", &fl) == 1) c = !!(fl & 02000000); } fclose(f); } }
        if ((a >= 0) != b) { bad++; if (getenv("V")) fprintf(stderr, "%s: %d F_GETFD %d fstat %d\n", who, n, a, b); }
        else if (b && c >= 0 && a != c) { bad++; if (getenv("V")) fprintf(stderr, "%s: %d F_GETFD %d kernel %d\n", who, n, a, c); }
    }
    struct stat st; int lo = 0; while (fstat(lo, &st) == 0) lo++;
    int o = open("/dev/null", O_RDONLY); if (o != lo) { bad += 100; if (getenv("V")) fprintf(stderr, "%s: open %d lowest %d\n", who, o, lo); }
    close(o);
    return bad;
}
static int dupt = 60;
static void churn_step(int k) {
    if (k == 0) { int f = open("/dev/null", O_RDONLY | (rand() & 1 ? O_CLOEXEC : 0)); int g = dup3(0, dupt, rand() & 1 ? O_CLOEXEC : 0); if (f >= 0) close(f); if (g >= 0) close(g); }
    else if (k == 1) { int p[2]; if (!pipe2(p, O_CLOEXEC)) { fcntl(p[0], F_SETFD, 0); close(p[0]); close(p[1]); } }
    else { int f = fcntl(0, F_DUPFD_CLOEXEC, 5); if (f >= 0) { fcntl(f, F_SETFD, rand() & 1); close(f); } }
}
static volatile int stop_churn;
static void *churn(void *u) { long k = (long)u; while (!stop_churn) churn_step(k % 3); return NULL; }

/* setfd-race */
static int iters = 1;
static pthread_barrier_t bar;
static void *setter(void *u) {
    long on = (long)u;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < iters; i++) fcntl(5 + i % 5, F_SETFD, on ? FD_CLOEXEC : 0);
    return NULL;
}
static int kbit(int n) {
    char p[64], l[128];
    snprintf(p, sizeof p, "/proc/self/fdinfo/%d", n);
    FILE *f = fopen(p, "r");
    int c = -1;
    while (f && fgets(l, sizeof l, f)) {
        unsigned fl;
        if (sscanf(l, "flags: %o", &fl) == 1) c = !!(fl & 02000000);
    }
    if (f) fclose(f);
    return c;
}
static int setfd_race(int rounds) {
    for (int n = 5; n < 10; n++) dup3(0, n, O_CLOEXEC);
    int bad = 0;
    pthread_barrier_init(&bar, NULL, 2);
    for (int k = 0; k < rounds; k++) {
        pthread_t a, b;
        pthread_create(&a, NULL, setter, (void *)0L);
        pthread_create(&b, NULL, setter, (void *)1L);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        for (int n = 5; n < 10 && n < 5 + iters; n++) bad += fcntl(n, F_GETFD) != kbit(n);
    }
    printf("F_GETFD differs from fdinfo: %d of %d rounds\n", bad, rounds);
    return 0;
}

/* exec */
static const char *op;
static void *toggler(void *u) {
    (void)u;
    for (unsigned i = 0;; i++) {
        int n = 5 + i % 5;
        if (!strcmp(op, "setfd")) fcntl(n, F_SETFD, (i / 5) & 1);
        else if (!strcmp(op, "close")) {
            if (i & 1) close(n);
            else dup3(0, n, O_CLOEXEC);
        } else dup3(0, n, (i / 5) & 1 ? O_CLOEXEC : 0);
    }
    return NULL;
}
static void *execer(void *u) {
    usleep((long)u);
    char *av[] = {self, "x", NULL};
    execv(self, av);
    _exit(126);
}
static int exec_race(int rounds) {
    int bad = 0, abn = 0;
    for (int k = 0; k < rounds; k++) {
        pid_t c = fork();
        if (c == 0) {
            for (int n = 5; n < 10; n++) dup3(0, n, O_CLOEXEC);
            pthread_t t;
            pthread_create(&t, NULL, toggler, NULL);
            pthread_create(&t, NULL, toggler, NULL);
            pthread_create(&t, NULL, execer, (void *)(long)(300 + (k * 137) % 1000));
            pause();
        }
        int st;
        waitpid(c, &st, 0);
        if (!WIFEXITED(st)) abn++;
        else bad += WEXITSTATUS(st);
    }
    printf("%s: disagreements %d abnormal %d\n", op, bad, abn);
    return 0;
}

/* unshare-race */
static int ubad;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void add(int b) {
    pthread_mutex_lock(&mu);
    ubad += b;
    pthread_mutex_unlock(&mu);
}
static void *unsharer_a(void *u) {
    usleep((long)u);
    syscall(SYS_close_range, 8, 20, CLOSE_RANGE_UNSHARE);
    for (int i = 0; i < 50; i++) churn_step(i % 3);
    add(check_table("A"));
    return NULL;
}
static char stk[4][65536];
static int sharer_fn(void *u) {
    (void)u;
    int f = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
    syscall(SYS_dup3, f, 40, O_CLOEXEC);
    syscall(SYS_close, f);
    return 0;
}
static void *sharers(void *u) {
    (void)u;
    for (int i = 0; i < 4; i++) {
        int c = clone(sharer_fn, stk[i] + 65536, CLONE_VM | CLONE_FILES | SIGCHLD, NULL);
        if (c > 0) waitpid(c, NULL, __WALL);
    }
    return NULL;
}
static void *unsharer_c(void *u) {
    usleep((long)u);
    unshare(CLONE_FILES);
    for (int i = 0; i < 50; i++) churn_step(i % 3);
    add(check_table("C"));
    return NULL;
}
static int unshare_race(int rounds) {
    int bad = 0, abn = 0;
    for (int k = 0; k < rounds; k++) {
        pid_t p = fork();
        if (p == 0) {
            ubad = 0;
            for (int n = 3; n < 15; n++) dup3(0, n, n & 1 ? O_CLOEXEC : 0);
            pthread_t ch, t[3];
            pthread_create(&ch, NULL, churn, (void *)0L);
            pthread_create(&t[0], NULL, unsharer_a, (void *)(long)(k * 37 % 300));
            pthread_create(&t[1], NULL, sharers, NULL);
            pthread_create(&t[2], NULL, unsharer_c, (void *)(long)(k * 53 % 300));
            for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
            stop_churn = 1;
            pthread_join(ch, NULL);
            add(check_table("leader"));
            if (k & 1) _exit(ubad ? 100 : 0);
            /* An exec from a thread that unshared. */
            stop_churn = 0;
            pthread_create(&ch, NULL, churn, (void *)1L);
            pthread_t d;
            pthread_create(&d, NULL, unsharer_c, (void *)0L);
            pthread_join(d, NULL);
            if (ubad) _exit(100);
            char *a[] = {self, "x", NULL};
            unshare(CLONE_FILES);
            execv(self, a);
            _exit(126);
        }
        int st;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st)) abn++;
        else if (WEXITSTATUS(st)) bad++;
    }
    printf("bad rounds %d abnormal %d\n", bad, abn);
    return 0;
}

int main(int argc, char **argv) {
    self = argv[0];
    if (argc > 1 && argv[1][0] == 'x') {
        int b = check_table("img");
        return b > 250 ? 250 : b;
    }
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "setfd-race")) return setfd_race(argc > 2 ? atoi(argv[2]) : 2000);
    if (!strcmp(m, "exec")) {
        op = argc > 2 ? argv[2] : "setfd";
        return exec_race(argc > 3 ? atoi(argv[3]) : 40);
    }
    if (!strcmp(m, "unshare-race")) return unshare_race(argc > 2 ? atoi(argv[2]) : 30);
    fprintf(stderr, "usage: probe_exec_threads setfd-race|exec OP|unshare-race [rounds]\n");
    return 2;
}

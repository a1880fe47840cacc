/* Two threads of one table: one clears the close-on-exec bit of 5..9 (F_SETFD 0, or
 * ioctl FIONCLEX), the other sets it with close_range(n, n, CLOSE_RANGE_CLOEXEC); both
 * joined, F_GETFD (the library's answer) must equal the kernel's bit (fdinfo), and an exec
 * must keep exactly the numbers whose kernel bit is clear.
 *
 *   crbits setfd|fionclex|dup3|dup2free ROUNDS [ITERS]
 *
 * dup3: the setter is dup3(0, n, O_CLOEXEC). dup2free: 5..9 are closed before each round;
 * one thread dup2s onto them while the other runs close_range(5, 9, CLOSE_RANGE_CLOEXEC),
 * which sets the bit of those the dup2s installed before it ran.
 * churn: four threads open /dev/null (with O_CLOEXEC or not), dup2 it onto 20..29, close it
 * or leave it, close any of 3..42 and set or clear the bit of any with F_SETFD, ITERS times;
 * then every number below 64 is compared, and the table emptied for the next round.
 * Prints "MODE: F_GETFD differs from fdinfo in R1 of R rounds".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int iters = 1, fion, viadup, freedup;
static pthread_barrier_t bar;
static void *clearer(void *u) {
    (void)u;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < iters; i++) {
        if (freedup) dup2(0, 5 + i % 5);
        else if (fion) ioctl(5 + i % 5, FIONCLEX);
        else fcntl(5 + i % 5, F_SETFD, 0);
    }
    return NULL;
}
static void *setter(void *u) {
    (void)u;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < iters; i++) {
        if (viadup) dup3(0, 5 + i % 5, O_CLOEXEC);
        else if (freedup) syscall(SYS_close_range, 5, 9, CLOSE_RANGE_CLOEXEC);
        else syscall(SYS_close_range, 5 + i % 5, 5 + i % 5, CLOSE_RANGE_CLOEXEC);
    }
    return NULL;
}
static void *churner(void *u) {
    unsigned seed = (unsigned)(long)u * 7919u + 1;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < iters; i++) {
        int a = open("/dev/null", O_RDONLY | (rand_r(&seed) & 1 ? O_CLOEXEC : 0));
        if (a >= 0) {
            dup2(a, 20 + rand_r(&seed) % 10);
            if (rand_r(&seed) & 1) close(a);
        }
        int c = 3 + rand_r(&seed) % 40;
        if (rand_r(&seed) % 3 == 0) close(c);
        if (rand_r(&seed) % 5 == 0) fcntl(c, F_SETFD, rand_r(&seed) & 1);
    }
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
int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "setfd";
    fion = !strcmp(m, "fionclex");
    viadup = !strcmp(m, "dup3");
    freedup = !strcmp(m, "dup2free");
    int churn = !strcmp(m, "churn");
    int rounds = argc > 2 ? atoi(argv[2]) : 500;
    iters = argc > 3 ? atoi(argv[3]) : 1;
    for (int n = 5; n < 10; n++) dup3(0, n, O_CLOEXEC);
    pthread_barrier_init(&bar, NULL, churn ? 4 : 2);
    int bad = 0;
    for (int k = 0; churn && k < rounds; k++) {
        pthread_t t[4];
        for (long j = 0; j < 4; j++) pthread_create(&t[j], NULL, churner, (void *)(k * 4 + j));
        for (int j = 0; j < 4; j++) pthread_join(t[j], NULL);
        int d = 0;
        for (int n = 3; n < 64; n++) {
            char p[64], l[256];
            snprintf(p, sizeof p, "/proc/self/fd/%d", n);
            int present = readlink(p, l, sizeof l) >= 0;
            int g = fcntl(n, F_GETFD);
            int diff = g < 0 ? present : g != kbit(n);
            if (diff) { d = 1; if (getenv("V")) fprintf(stderr, "round %d: %d F_GETFD %d\n", k, n, g); }
        }
        bad += d;
        syscall(SYS_close_range, 3, ~0U, 0);
    }
    for (int k = 0; !churn && k < rounds; k++) {
        pthread_t a, b;
        if (freedup)
            for (int n = 5; n < 10; n++) close(n);
        pthread_create(&a, NULL, clearer, NULL);
        pthread_create(&b, NULL, setter, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        int d = 0;
        for (int n = 5; n < 10 && n < 5 + iters; n++) {
            int g = fcntl(n, F_GETFD), kb = kbit(n);
            if (g < 0) g = -1; /* not installed: fdinfo has none either */
            if (g != kb) { d = 1; if (getenv("V")) fprintf(stderr, "round %d: %d F_GETFD %d kernel %d\n", k, n, g, kb); }
        }
        bad += d;
    }
    printf("%s: F_GETFD differs from fdinfo in %d of %d rounds\n", m, bad, rounds);
    return 0;
}

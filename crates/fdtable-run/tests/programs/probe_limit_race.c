/* One thread moves RLIMIT_NOFILE up and down while five others open, dup2 and F_DUPFD near
 * it and close what they got: a call the supervisor let run with no number reserved (no room
 * under the limit it knew) finds room under a limit raised meanwhile. At the end, every
 * number the kernel has (/proc/self/fd) must be one F_GETFD (the library, under the
 * supervisor) knows, and no other.
 *
 *   probe_limit_race [milliseconds]      prints the numbers that disagree, then "done"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile int stop;

static void *move_limit(void *seed) {
    unsigned s = (unsigned)(long)seed;
    while (!stop) {
        struct rlimit r = {20 + rand_r(&s) % 40, 100};
        setrlimit(RLIMIT_NOFILE, &r);
    }
    return NULL;
}

static void *churn(void *seed) {
    unsigned s = (unsigned)(long)seed;
    while (!stop) {
        int a = open("/dev/null", O_RDONLY);
        int b = dup2(0, 25 + rand_r(&s) % 40);
        int c = fcntl(0, F_DUPFD, 30 + rand_r(&s) % 30);
        if (b >= 0) close(b);
        if (c >= 0) close(c);
        if (a >= 0) close(a);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int ms = argc > 1 ? atoi(argv[1]) : 1500;
    struct rlimit r = {100, 100};
    setrlimit(RLIMIT_NOFILE, &r);
    pthread_t t[6];
    pthread_create(&t[0], NULL, move_limit, (void *)1L);
    for (long i = 1; i < 6; i++) pthread_create(&t[i], NULL, churn, (void *)(i + 1));
    usleep(ms * 1000);
    stop = 1;
    for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
    for (int n = 0; n < 100; n++) {
        char path[64], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%d", n);
        int kernel = readlink(path, target, sizeof target) > 0;
        int library = fcntl(n, F_GETFD) >= 0;
        if (kernel != library) printf("%d: in /proc/self/fd %d, F_GETFD %d\n", n, kernel, library);
    }
    printf("done\n");
    return 0;
}

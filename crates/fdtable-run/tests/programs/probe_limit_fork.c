/* A thread sets a new RLIMIT_NOFILE and then waits in a call nobody notifies (a read), so
 * its setrlimit is not settled yet, while the main thread forks: the child has the new
 * limit (the kernel copies it with the process), and its table errnos and F_GETFD answers
 * must follow it.
 *
 *   probe_limit_fork lower   the limit goes from 1024 to 5; the child dup2s to 7 and
 *                            F_DUPFDs from 6 (EBADF, EINVAL), then F_GETFD and fstat of
 *                            5-8 must agree
 *   probe_limit_fork raise   the limit goes from 8 to 1024; the child dup2s to 700, F_DUPFDs
 *                            from 600 and opens four descriptors (one past 8)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int ready[2], done[2];
static rlim_t new_limit;

static void *setter(void *unused) {
    (void)unused;
    struct rlimit r = {new_limit, 1024};
    setrlimit(RLIMIT_NOFILE, &r);
    char c = 1;
    if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1) return NULL;
    return NULL;
}

static void child(int raise) {
    struct stat s;
    errno = 0;
    int d = dup2(0, raise ? 700 : 7);
    printf("dup2: %d %s;", d, d < 0 ? strerror(errno) : "");
    errno = 0;
    d = fcntl(0, F_DUPFD, raise ? 600 : 6);
    printf(" F_DUPFD: %d %s;", d, d < 0 ? strerror(errno) : "");
    if (raise)
        for (int i = 0; i < 4; i++) printf(" open %d", open("/dev/null", O_RDONLY));
    int bad = 0;
    for (int fd = 3; fd < 16; fd++) bad += (fcntl(fd, F_GETFD) >= 0) != (fstat(fd, &s) == 0);
    printf("; F_GETFD and fstat disagree on %d\n", bad);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int raise = argc > 1 && strcmp(argv[1], "raise") == 0;
    if (raise) {
        struct rlimit r = {8, 1024};
        setrlimit(RLIMIT_NOFILE, &r);
    }
    new_limit = raise ? 1024 : 5;
    /* The pipes: 3-6 under the limit of 8; else high (100-103), out of the way of the
     * numbers the child tries. */
    int p[4];
    if (pipe(p) || pipe(p + 2)) return 1;
    for (int i = 0; i < 4 && !raise; i++) {
        int d = fcntl(p[i], F_DUPFD, 100 + i);
        close(p[i]);
        p[i] = d;
    }
    ready[0] = p[0], ready[1] = p[1], done[0] = p[2], done[1] = p[3];
    pthread_t t;
    pthread_create(&t, NULL, setter, NULL);
    char c;
    if (read(ready[0], &c, 1) != 1) return 1;
    pid_t k = fork();
    if (k == 0) {
        child(raise);
        _exit(0);
    }
    waitpid(k, NULL, 0);
    if (write(done[1], &c, 1) != 1) return 1;
    pthread_join(t, NULL);
    return 0;
}

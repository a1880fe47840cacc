// RLIMIT_NOFILE changed by a process outside the program (the test, as `prlimit --pid`
// would), while the program waits on stdin; then every call whose answer depends on the
// limit, around the new one.
//
//   probe_outside_limit lower   # the test then lowers the soft limit to 20
//   probe_outside_limit raise   # soft limit 64 first; the test then raises it to 5000
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void show(const char *call, long r) {
    if (r < 0)
        printf("%s = -1 %s\n", call, strerrorname_np(errno));
    else
        printf("%s = %ld\n", call, r);
}

int main(int argc, char **argv) {
    struct rlimit rl;
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "raise") == 0) {
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = 64;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return 3;
        // A later table call, so that the new limit is known before the outside change.
        close(dup(1));
    }
    printf("ready\n");
    fflush(stdout);
    char c;
    if (read(0, &c, 1) != 1)
        return 4;
    getrlimit(RLIMIT_NOFILE, &rl);
    printf("soft limit %ld\n", (long)rl.rlim_cur);
    show("dup2(1, 40)", dup2(1, 40));
    show("fcntl(40, F_GETFD)", fcntl(40, F_GETFD));
    show("fcntl(1, F_DUPFD, 30)", fcntl(1, F_DUPFD, 30));
    show("dup3(1, 3000, O_CLOEXEC)", dup3(1, 3000, O_CLOEXEC));
    show("fcntl(3000, F_GETFD)", fcntl(3000, F_GETFD));
    show("fcntl(1, F_DUPFD_CLOEXEC, 2500)", fcntl(1, F_DUPFD_CLOEXEC, 2500));
    show("close(3000)", close(3000));
    show("close(2500)", close(2500));
    int n = 0, last = -1;
    for (; n < 100; n++) {
        int fd = dup(1);
        if (fd < 0) {
            printf("dup %d: %s\n", n, strerrorname_np(errno));
            break;
        }
        last = fd;
    }
    printf("dups %d, last %d\n", n, last);
    show("open(\"/dev/null\")", open("/dev/null", O_RDONLY));
    show("pipe2 ends", ({ int p[2]; pipe2(p, 0) ? -1L : (long)p[0] * 1000 + p[1]; }));
    for (int fd = 3; fd < 3100; fd++) {
        int f = fcntl(fd, F_GETFD);
        if (f >= 0)
            printf("open %d%s\n", fd, f & FD_CLOEXEC ? " cloexec" : "");
    }
    return 0;
}

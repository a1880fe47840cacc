/* fdcalls MODE N: N iterations of one kind of descriptor call, for `bench/run/bench.py`.
 * Modes: read (translated argument: two stops), getfd (answered by the library: one stop),
 * open (open + close: a new descriptor and its close), dup (dup + close), pipe (pipe2 + two
 * closes), poll (a pollfd array translated in scratch memory), getpid (not traced at all). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fdcalls read|getfd|open|dup|pipe|poll|getpid N\n");
        return 2;
    }
    const char *m = argv[1];
    long n = atol(argv[2]);
    int z = open("/dev/zero", O_RDONLY);
    char b[1];
    int p[2];
    struct pollfd pf = {.fd = z, .events = POLLIN};
    for (long i = 0; i < n; i++) {
        if (!strcmp(m, "read")) {
            if (read(z, b, 1) != 1) return 1;
        } else if (!strcmp(m, "getfd")) {
            if (fcntl(z, F_GETFD) < 0) return 1;
        } else if (!strcmp(m, "open")) {
            int f = open("/dev/null", O_RDONLY);
            if (f < 0 || close(f)) return 1;
        } else if (!strcmp(m, "dup")) {
            int f = dup(z);
            if (f < 0 || close(f)) return 1;
        } else if (!strcmp(m, "pipe")) {
            if (pipe2(p, O_CLOEXEC) || close(p[0]) || close(p[1])) return 1;
        } else if (!strcmp(m, "poll")) {
            if (poll(&pf, 1, 0) != 1) return 1;
        } else if (!strcmp(m, "getpid")) {
            syscall(SYS_getpid);
        } else {
            return 2;
        }
    }
    return 0;
}

// RLIMIT_NOFILE flipped between 40 and 70 by a process outside the program (the test), as
// fast as it can, while the program makes calls whose result depends on the limit and then
// asks the library (`F_GETFD`, notified) and the kernel (`F_GETFL`, not notified) about the
// number. Natively both always agree. Under `fdtable run` a change that landed between the
// supervisor's decision and the call's run in the kernel left them disagreeing (red team,
// round 14).
//
//   probe_limit_flips dup2|dupfd|dup|open   # then the test flips the limit; a byte on stdin ends it
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    // 0..39 in use: under a limit of 40 nothing more fits, under 70 thirty more do.
    for (int f = 3; f < 40; f++)
        if (dup2(2, f) != f)
            return 3;
    if (fcntl(0, F_SETFL, O_NONBLOCK) != 0)
        return 4;
    printf("ready\n");
    fflush(stdout);
    long iters = 0, hits = 0;
    char c;
    for (;; iters++) {
        if ((iters & 63) == 0 && read(0, &c, 1) == 1)
            break;
        int d, at;
        if (strcmp(mode, "dup2") == 0) {
            d = dup2(1, 50);
            at = 50;
        } else if (strcmp(mode, "dupfd") == 0) {
            d = fcntl(1, F_DUPFD, 50);
            at = d >= 0 ? d : 50;
        } else if (strcmp(mode, "dup") == 0) {
            d = dup(1);
            at = d >= 0 ? d : 40;
        } else {
            d = open("/dev/null", O_RDONLY);
            at = d >= 0 ? d : 40;
        }
        int e = errno;
        int lib = fcntl(at, F_GETFD);
        int kernel = fcntl(at, F_GETFL);
        if ((lib < 0) != (kernel < 0)) {
            if (++hits <= 3)
                printf("%s = %d (%s), then F_GETFD(%d) = %d, F_GETFL(%d) = %d\n", mode, d,
                       d < 0 ? strerrorname_np(e) : "ok", at, lib, at, kernel);
        }
        if (d >= 0)
            close(d);
        // A number the kernel installed and the library did not know of would stay.
        if (kernel >= 0 && d < 0)
            close(at);
    }
    printf("%s: %ld calls, %ld disagreements\n", mode, iters, hits);
    return 0;
}

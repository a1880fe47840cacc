/* A static program (it opens nothing to start): how many of its descriptors below 16 are
 * open, and what an open gives under its RLIMIT_NOFILE. Exits 3.
 *
 *   probe_static      prints "open below 16: N; open: FD or -ERRNO" */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

int main(void) {
    int n = 0;
    for (int i = 0; i < 16; i++) n += fcntl(i, F_GETFD) >= 0;
    int fd = open("/dev/null", O_RDONLY);
    printf("open below 16: %d; open: %d\n", n, fd >= 0 ? fd : -errno);
    return 3;
}

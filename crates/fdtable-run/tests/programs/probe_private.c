/* The private range: a program cannot see, reach or close the supervisor's descriptors.
 * Counts the open descriptors among the first 70000 numbers, closes everything with
 * close_range, and goes on working: opens, pipes, fork and exec. Exit 0 when all held. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int count(void) {
    int n = 0;
    for (int fd = 0; fd < 70000; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

int main(void) {
    int before = count();
    printf("open below 70000: %d\n", before);
    fflush(stdout);
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0) return 10;
    if (count() != 3) return 11;
    /* Everything, the standard streams included. */
    int out = dup(1);
    if (syscall(SYS_close_range, 0, ~0U, 0) != 0) return 12;
    if (count() != 0) return 13;
    if (open("/dev/null", O_RDONLY) != 0) return 14;
    int p[2];
    if (pipe(p) != 0 || p[0] != 1 || p[1] != 2) return 15;
    pid_t c = fork();
    if (c == 0) {
        execl("/bin/sh", "sh", "-c", "echo from child >&2; exit 7", (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(c, &st, 0) != c || WEXITSTATUS(st) != 7) return 16;
    char buf[32] = {0};
    if (read(p[0], buf, sizeof buf) <= 0 || strcmp(buf, "from child\n") != 0) return 17;
    (void)out;
    return 0;
}

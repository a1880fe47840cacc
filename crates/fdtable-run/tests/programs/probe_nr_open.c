/* fs.nr_open lowered below the process's RLIMIT_NOFILE after the limit was set (root only):
 * no table grows to hold a number at or above it, so the dup family fails there (dup2 and
 * dup3 with EBADF, F_DUPFD with EMFILE) although the limit allows the number. The probe
 * sets its limit, lowers fs.nr_open to NR, makes its calls, and puts the old value back.
 *
 *   probe_nr_open LIMIT NR    prints each call and its result, or "unsupported: ERRNO"
 *                             (no permission to write fs.nr_open)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int set_nr_open(const char *v) {
    int f = open("/proc/sys/fs/nr_open", O_WRONLY);
    if (f < 0) return -1;
    int ok = write(f, v, strlen(v)) == (ssize_t)strlen(v);
    close(f);
    return ok ? 0 : -1;
}

static void show(const char *what, long r) {
    printf("%s -> %ld %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

#define CALL(what, expr) \
    do { \
        errno = 0; \
        long r_ = (expr); \
        show(what, r_); \
    } while (0)

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) return 2;
    long limit = atol(argv[1]), nr = atol(argv[2]);
    char old[32] = {0};
    int f = open("/proc/sys/fs/nr_open", O_RDONLY);
    if (f < 0 || read(f, old, sizeof old - 1) <= 0) {
        printf("unsupported: %s\n", strerrorname_np(errno));
        return 0;
    }
    close(f);
    struct rlimit l = {limit, limit};
    if (setrlimit(RLIMIT_NOFILE, &l) != 0) {
        printf("unsupported: %s\n", strerrorname_np(errno));
        return 0;
    }
    char v[32];
    snprintf(v, sizeof v, "%ld", nr);
    if (set_nr_open(v) != 0) {
        printf("unsupported: %s\n", strerrorname_np(errno));
        return 0;
    }
    char name[64];
    snprintf(name, sizeof name, "dup2(0, %ld)", nr + 10);
    CALL(name, syscall(SYS_dup2, 0, nr + 10));
    CALL("F_GETFD of it", syscall(SYS_fcntl, nr + 10, F_GETFD));
    snprintf(name, sizeof name, "dup3(0, %ld, O_CLOEXEC)", nr);
    CALL(name, syscall(SYS_dup3, 0, nr, O_CLOEXEC));
    CALL("F_GETFD of it", syscall(SYS_fcntl, nr, F_GETFD));
    snprintf(name, sizeof name, "F_DUPFD(0, %ld)", nr + 5);
    CALL(name, syscall(SYS_fcntl, 0, F_DUPFD, nr + 5));
    snprintf(name, sizeof name, "F_DUPFD(0, %ld)", nr - 1);
    CALL(name, syscall(SYS_fcntl, 0, F_DUPFD, nr - 1));
    CALL("the same again", syscall(SYS_fcntl, 0, F_DUPFD, nr - 1));
    snprintf(name, sizeof name, "dup2(0, %ld)", nr - 1);
    CALL(name, syscall(SYS_dup2, 0, nr - 1));
    CALL("close_range(64, ~0U, 0)", syscall(SYS_close_range, 64, ~0U, 0));
    CALL("dup(0)", syscall(SYS_dup, 0));
    set_nr_open(old);
    return 0;
}

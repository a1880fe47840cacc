/*
 * libfdtable's C tests: every call's errno cases (mirroring Linux), ownership (release runs
 * exactly once: the callbacks count), light lookups, fork / CLONE_FILES / unshare / exec,
 * and threads on a shared table. Run by ci/ctest under AddressSanitizer and UBSan.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure.
 */
#define _GNU_SOURCE
#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* The header's constants are the kernel's (and so the C library's) values. */
_Static_assert(FDT_O_RDONLY == O_RDONLY && FDT_O_WRONLY == O_WRONLY && FDT_O_RDWR == O_RDWR, "");
_Static_assert(FDT_O_APPEND == O_APPEND && FDT_O_NONBLOCK == O_NONBLOCK, "");
_Static_assert(FDT_O_CLOEXEC == O_CLOEXEC && FDT_O_PATH == O_PATH, "");
_Static_assert(FDT_FD_CLOEXEC == FD_CLOEXEC, "");
_Static_assert(FDT_F_DUPFD == F_DUPFD && FDT_F_GETFD == F_GETFD && FDT_F_SETFD == F_SETFD, "");
_Static_assert(FDT_F_GETFL == F_GETFL && FDT_F_SETFL == F_SETFL, "");
_Static_assert(FDT_F_DUPFD_CLOEXEC == F_DUPFD_CLOEXEC, "");
_Static_assert(FDT_FIOCLEX == FIOCLEX && FDT_FIONCLEX == FIONCLEX && FDT_FIONBIO == FIONBIO, "");
_Static_assert(FDT_FIOASYNC == FIOASYNC && FDT_FIONREAD == FIONREAD, "");
_Static_assert(FDT_SEEK_SET == SEEK_SET && FDT_SEEK_CUR == SEEK_CUR && FDT_SEEK_END == SEEK_END, "");
#ifdef CLOSE_RANGE_CLOEXEC
_Static_assert(FDT_CLOSE_RANGE_CLOEXEC == CLOSE_RANGE_CLOEXEC, "");
_Static_assert(FDT_CLOSE_RANGE_UNSHARE == CLOSE_RANGE_UNSHARE, "");
#endif

static int passed, failed;

#define CHECK_EQ(got, want)                                                                \
    do {                                                                                   \
        long long g_ = (long long)(got), w_ = (long long)(want);                           \
        if (g_ == w_) {                                                                    \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %lld, want %s == %lld\n", __FILE__, __LINE__,    \
                    #got, g_, #want, w_);                                                  \
        }                                                                                  \
    } while (0)
#define CHECK(cond) CHECK_EQ(!!(cond), 1)

/* ---- a probe file: counts every callback ---- */

struct probe {
    atomic_int reads, writes, ioctls, flushes, releases;
    int flush_ret;
};

static ssize_t p_read(void *pd, void *buf, size_t count, int64_t *pos)
{
    struct probe *p = pd;
    size_t n = count < 5 ? count : 5;
    int64_t start = pos ? *pos : 0;
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)buf)[i] = (unsigned char)(start + (int64_t)i);
    if (pos)
        *pos += (int64_t)n;
    atomic_fetch_add(&p->reads, 1);
    return (ssize_t)n;
}

static ssize_t p_write(void *pd, const void *buf, size_t count, int64_t *pos)
{
    struct probe *p = pd;
    (void)buf;
    if (pos)
        *pos += (int64_t)count;
    atomic_fetch_add(&p->writes, 1);
    return (ssize_t)count;
}

static long p_ioctl(void *pd, unsigned int cmd, unsigned long arg)
{
    struct probe *p = pd;
    atomic_fetch_add(&p->ioctls, 1);
    if (cmd == 0x1234)
        return (long)(arg + 1);
    if (cmd == FIONREAD) {
        *(int *)arg = 42;
        return 0;
    }
    return -ENOTTY;
}

static long p_compat_ioctl(void *pd, unsigned int cmd, unsigned long arg)
{
    (void)pd;
    (void)cmd;
    return (long)arg;
}

static int p_flush(void *pd)
{
    struct probe *p = pd;
    atomic_fetch_add(&p->flushes, 1);
    return p->flush_ret;
}

static void p_release(void *pd)
{
    struct probe *p = pd;
    atomic_fetch_add(&p->releases, 1);
}

static int64_t p_llseek(void *pd, int64_t pos, int64_t offset, int whence)
{
    (void)pd;
    int64_t r = whence == SEEK_SET ? offset : whence == SEEK_CUR ? pos + offset : -EINVAL;
    return r < 0 ? -EINVAL : r;
}

static const struct fdt_file_ops probe_ops = {
    .read = p_read,
    .write = p_write,
    .ioctl = p_ioctl,
    .compat_ioctl = p_compat_ioctl,
    .flush = p_flush,
    .release = p_release,
    .llseek = p_llseek,
};

/* Only flush and release: read/write/ioctl/llseek are missing. */
static const struct fdt_file_ops bare_ops = {.flush = p_flush, .release = p_release};

static struct fdt_file *probe_file(struct probe *p, unsigned int open_flags)
{
    memset(p, 0, sizeof *p);
    struct fdt_file *f = fdt_file_new(&probe_ops, p, open_flags);
    if (!f) {
        fprintf(stderr, "fdt_file_new failed\n");
        exit(2);
    }
    return f;
}

/* ---- tests ---- */

static void test_null_handles(void)
{
    struct fdt_files *n = NULL;
    struct fdt_files **nn = NULL;
    char buf[4];
    int on = 1;
    fdt_files_put(NULL);
    errno = 0;
    CHECK(fdt_files_fork(NULL) == NULL);
    CHECK(errno == EINVAL);
    errno = 0;
    CHECK(fdt_files_share(NULL) == NULL);
    CHECK(errno == EINVAL);
    CHECK_EQ(fdt_unshare(nn), -EINVAL);
    CHECK_EQ(fdt_unshare(&n), -EINVAL);
    CHECK_EQ(fdt_exec(NULL), -EINVAL);
    CHECK_EQ(fdt_set_nofile(NULL, 1, 1), -EINVAL);
    CHECK_EQ(fdt_get_nofile(NULL, NULL, NULL), -EINVAL);
    CHECK(fdt_file_new(NULL, NULL, 0) == NULL);
    fdt_file_get(NULL);
    fdt_file_put(NULL);
    CHECK(fdt_file_private_data(NULL) == NULL);
    CHECK_EQ(fdt_file_count(NULL), -EINVAL);
    CHECK_EQ(fdt_install(NULL, NULL, 0), -EINVAL);
    CHECK_EQ(fdt_get_unused_fd(NULL, 0), -EINVAL);
    fdt_put_unused_fd(NULL, 0);
    fdt_fd_install(NULL, 0, NULL);
    CHECK_EQ(fdt_close(NULL, 0), -EINVAL);
    CHECK_EQ(fdt_dup(NULL, 0), -EINVAL);
    CHECK_EQ(fdt_dup2(NULL, 0, 1), -EINVAL);
    CHECK_EQ(fdt_dup3(NULL, 0, 1, 0), -EINVAL);
    CHECK_EQ(fdt_fcntl(NULL, 0, F_GETFD, 0), -EINVAL);
    CHECK_EQ(fdt_close_range(NULL, 0, ~0U, 0), -EINVAL);
    struct fdt_fd f = fdt_fdget(NULL, 0);
    CHECK(fdt_fd_file(f) == NULL);
    fdt_fdput(f);
    CHECK(fdt_fget(NULL, 0) == NULL);
    CHECK_EQ(fdt_read(NULL, 0, buf, 4), -EINVAL);
    CHECK_EQ(fdt_write(NULL, 0, buf, 4), -EINVAL);
    CHECK_EQ(fdt_pread(NULL, 0, buf, 4, 0), -EINVAL);
    CHECK_EQ(fdt_pwrite(NULL, 0, buf, 4, 0), -EINVAL);
    CHECK_EQ(fdt_lseek(NULL, 0, 0, SEEK_SET), -EINVAL);
    CHECK_EQ(fdt_ioctl(NULL, 0, FIONBIO, (unsigned long)&on), -EINVAL);
    CHECK_EQ(fdt_compat_ioctl(NULL, 0, FIOCLEX, 0), -EINVAL);

    /* fdt_file_new rejects unknown ops flags without calling release. */
    struct probe p = {0};
    struct fdt_file_ops bad = probe_ops;
    bad.flags = 0x100;
    CHECK(fdt_file_new(&bad, &p, O_RDWR) == NULL);
    CHECK_EQ(p.releases, 0);
}

static void test_install_and_emfile(void)
{
    struct probe p0, p1, p2;
    struct fdt_files *t = fdt_files_new();
    CHECK(t != NULL);
    unsigned long soft = 0, hard = 0;
    CHECK_EQ(fdt_get_nofile(t, &soft, &hard), 0);
    CHECK_EQ(soft, FDT_NOFILE_SOFT_DEFAULT);
    CHECK_EQ(hard, FDT_NOFILE_HARD_DEFAULT);

    CHECK_EQ(fdt_install(t, probe_file(&p0, O_RDWR), 0), 0);
    CHECK_EQ(fdt_install(t, probe_file(&p1, O_RDWR), O_CLOEXEC), 1);
    CHECK_EQ(fdt_fcntl(t, 1, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_fcntl(t, 0, F_GETFD, 0), 0);

    /* EMFILE when full; install consumes the reference also on failure. */
    CHECK_EQ(fdt_set_nofile(t, 2, 2), 0);
    CHECK_EQ(fdt_install(t, probe_file(&p2, O_RDWR), 0), -EMFILE);
    CHECK_EQ(p2.releases, 1);
    CHECK_EQ(fdt_get_unused_fd(t, 0), -EMFILE);
    CHECK_EQ(fdt_dup(t, 0), -EMFILE);

    /* NULL handle: the reference is put too. */
    CHECK_EQ(fdt_install(NULL, probe_file(&p2, O_RDWR), 0), -EINVAL);
    CHECK_EQ(p2.releases, 1);

    /* setrlimit rules. */
    CHECK_EQ(fdt_set_nofile(t, 5, 4), -EINVAL);
    CHECK_EQ(fdt_set_nofile(t, 4, ~0UL), -EPERM);
    CHECK_EQ(fdt_set_nofile(t, 1024, 4096), 0);

    fdt_files_put(t);
    CHECK_EQ(p0.flushes, 1);
    CHECK_EQ(p0.releases, 1);
    CHECK_EQ(p1.releases, 1);
}

static void test_reserve_install(void)
{
    struct probe p, q, r;
    struct fdt_files *t = fdt_files_new();
    /* open-style: reserve, build, install. */
    int fd = fdt_get_unused_fd(t, O_CLOEXEC);
    CHECK_EQ(fd, 0);
    struct fdt_fd l = fdt_fdget(t, fd);
    CHECK(fdt_fd_file(l) == NULL); /* reserved is not open */
    fdt_fdput(l);
    CHECK_EQ(fdt_close(t, fd), -EBADF);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), -EBADF);
    CHECK_EQ(fdt_install(t, probe_file(&q, O_RDWR), 0), 1); /* skips the reserved fd */
    CHECK_EQ(fdt_dup2(t, 1, fd), -EBUSY);                      /* EBUSY onto a reserved fd */
    CHECK_EQ(fdt_dup3(t, 1, fd, 0), -EBUSY);
    fdt_fd_install(t, fd, probe_file(&p, O_RDWR));
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), FD_CLOEXEC);

    /* A failed open gives the fd back. */
    int fd2 = fdt_get_unused_fd(t, 0);
    CHECK_EQ(fd2, 2);
    fdt_put_unused_fd(t, fd2);
    fdt_put_unused_fd(t, -1);
    fdt_put_unused_fd(t, 1 << 30);
    fdt_put_unused_fd(t, fd); /* installed: left alone */
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_get_unused_fd(t, 0), 2);

    /* fd_install onto a free fd drops the reference. */
    fdt_fd_install(t, 9, probe_file(&r, O_RDWR));
    CHECK_EQ(r.releases, 1);
    CHECK_EQ(fdt_fcntl(t, 9, F_GETFD, 0), -EBADF);
    fdt_fd_install(t, -3, NULL);

    fdt_files_put(t); /* reserved fd 2 simply disappears */
    CHECK_EQ(p.releases, 1);
    CHECK_EQ(q.releases, 1);
}

static void test_dup_family(void)
{
    struct probe p, q;
    struct fdt_files *t = fdt_files_new();
    int fd = fdt_install(t, probe_file(&p, O_RDWR), 0);
    CHECK_EQ(fd, 0);
    CHECK_EQ(fdt_dup(t, fd), 1);
    CHECK_EQ(fdt_dup(t, 77), -EBADF);
    CHECK_EQ(fdt_dup(t, -1), -EBADF);

    CHECK_EQ(fdt_dup2(t, fd, 1023), 1023);
    CHECK_EQ(fdt_dup2(t, fd, 1024), -EBADF); /* past RLIMIT_NOFILE: EBADF */
    CHECK_EQ(fdt_dup2(t, fd, -2), -EBADF);
    CHECK_EQ(fdt_dup2(t, 500, 5), -EBADF);
    CHECK_EQ(fdt_dup2(t, fd, fd), fd);
    CHECK_EQ(fdt_dup2(t, 500, 500), -EBADF);

    CHECK_EQ(fdt_dup3(t, fd, fd, 0), -EINVAL);
    CHECK_EQ(fdt_dup3(t, fd, 5, O_NONBLOCK), -EINVAL);
    CHECK_EQ(fdt_dup3(t, fd, 5, O_CLOEXEC), 5);
    CHECK_EQ(fdt_fcntl(t, 5, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_dup2(t, fd, 5), 5); /* dup2 clears close-on-exec */
    CHECK_EQ(fdt_fcntl(t, 5, F_GETFD, 0), 0);

    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD, 1024), -EINVAL); /* F_DUPFD past the limit: EINVAL */
    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD, (unsigned long)-1), -EINVAL);
    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD, 1000), 1000);
    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD_CLOEXEC, 1000), 1001);
    CHECK_EQ(fdt_fcntl(t, 1001, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_fcntl(t, fd, FDT_F_DUPFD_QUERY, 1001), 1);
    CHECK_EQ(fdt_fcntl(t, fd, FDT_F_DUPFD_QUERY, 900), -EBADF);
    CHECK_EQ(fdt_fcntl(t, fd, F_SETFD, FD_CLOEXEC), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_fcntl(t, fd, F_SETFD, 0), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFL, 0), O_RDWR);
    CHECK_EQ(fdt_fcntl(t, fd, F_SETFL, O_APPEND | O_NONBLOCK), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFL, 0), O_RDWR | O_APPEND | O_NONBLOCK);
    CHECK_EQ(fdt_fcntl(t, fd, 12345, 0), -EINVAL);
    CHECK_EQ(fdt_fcntl(t, 4000, F_GETFD, 0), -EBADF);

    /* dup2 over an open fd flushes what it displaces (released: last reference). */
    int other = fdt_install(t, probe_file(&q, O_RDWR), 0);
    CHECK_EQ(fdt_dup2(t, fd, other), other);
    CHECK_EQ(q.flushes, 1);
    CHECK_EQ(q.releases, 1);

    /* EMFILE from dup and F_DUPFD when the table is full up to the limit. */
    CHECK_EQ(fdt_set_nofile(t, 8, 8), 0);
    CHECK_EQ(fdt_close(t, 1000), 0);
    CHECK_EQ(fdt_close(t, 1001), 0);
    CHECK_EQ(fdt_close(t, 1023), 0);
    while (fdt_dup(t, fd) >= 0)
        ;
    CHECK_EQ(fdt_dup(t, fd), -EMFILE);
    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD, 3), -EMFILE);
    CHECK_EQ(fdt_fcntl(t, fd, F_DUPFD, 8), -EINVAL);
    CHECK_EQ(fdt_dup2(t, fd, 8), -EBADF);
    CHECK_EQ(p.releases, 0);
    fdt_files_put(t);
    /* 8 fds at the end, 3 closed before, 1 displaced when dup2 put p over its own fd 5 */
    CHECK_EQ(p.flushes, 8 + 3 + 1);
    CHECK_EQ(p.releases, 1);
}

static void test_close_and_close_range(void)
{
    struct probe p, q;
    struct fdt_files *t = fdt_files_new();
    int fd = fdt_install(t, probe_file(&p, O_RDWR), 0);
    p.flush_ret = -EIO;
    CHECK_EQ(fdt_close(t, fd), -EIO); /* flush's error... */
    CHECK_EQ(fdt_close(t, fd), -EBADF); /* ...and closed anyway */
    CHECK_EQ(p.releases, 1);
    CHECK_EQ(fdt_close(t, -1), -EBADF);
    CHECK_EQ(fdt_close(t, 1 << 30), -EBADF);

    int a = fdt_install(t, probe_file(&q, O_RDWR), 0);
    for (int i = 1; i < 10; i++)
        CHECK_EQ(fdt_dup2(t, a, i), i);
    CHECK_EQ(fdt_close_range(t, 5, 4, 0), -EINVAL);
    CHECK_EQ(fdt_close_range(t, 0, 10, 1), -EINVAL);
    CHECK_EQ(fdt_close_range(t, 0, 10, 0x80), -EINVAL);
    CHECK_EQ(fdt_close_range(t, 3, 5, FDT_CLOSE_RANGE_CLOEXEC), 0);
    CHECK_EQ(fdt_fcntl(t, 3, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_fcntl(t, 6, F_GETFD, 0), 0);
    CHECK_EQ(fdt_close_range(t, 7, ~0U, 0), 0);
    CHECK_EQ(fdt_fcntl(t, 9, F_GETFD, 0), -EBADF);
    CHECK_EQ(q.flushes, 3);
    CHECK_EQ(fdt_close_range(t, 1000, ~0U, 0), 0); /* beyond the table: nothing */
    CHECK_EQ(fdt_close_range(t, 0, ~0U, FDT_CLOSE_RANGE_UNSHARE), 0);
    CHECK_EQ(q.flushes, 10);
    CHECK_EQ(q.releases, 1);
    fdt_files_put(t);
}

static void test_light_lookup(void)
{
    struct probe p, q;
    struct fdt_files *t = fdt_files_new();
    int fd = fdt_install(t, probe_file(&p, O_RDWR), 0);

    struct fdt_fd l = fdt_fdget(t, fd);
    struct fdt_file *file = fdt_fd_file(l);
    CHECK(file != NULL);
    CHECK_EQ(l.flags, 0); /* unshared: borrowed, no reference */
    CHECK_EQ(fdt_file_count(file), 1);
    CHECK(fdt_file_private_data(file) == &p);
    fdt_fdput(l);

    int bad[] = {-1, 1, 63, 64, 1023, 1 << 20, 0x7fffffff};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        l = fdt_fdget(t, bad[i]);
        CHECK(fdt_fd_file(l) == NULL);
        fdt_fdput(l);
    }

    /* Keeping the file past the lookup: take a reference. */
    l = fdt_fdget(t, fd);
    file = fdt_fd_file(l);
    fdt_file_get(file);
    fdt_fdput(l);
    CHECK_EQ(fdt_close(t, fd), 0);
    CHECK_EQ(p.releases, 0);
    CHECK(fdt_file_private_data(file) == &p);
    fdt_file_put(file);
    CHECK_EQ(p.releases, 1);

    /* Shared table: the lookup takes a reference, fdput drops it. */
    fd = fdt_install(t, probe_file(&q, O_RDWR), 0);
    struct fdt_files *sib = fdt_files_share(t);
    l = fdt_fdget(t, fd);
    CHECK_EQ(l.flags, FDT_FDPUT_FPUT);
    CHECK_EQ(fdt_file_count(fdt_fd_file(l)), 2);
    CHECK_EQ(fdt_close(sib, fd), 0); /* the other task closes it */
    CHECK_EQ(q.releases, 0);         /* our lookup still holds it */
    fdt_fdput(l);
    CHECK_EQ(q.releases, 1);
    fdt_files_put(sib);

    /* fget always takes a reference. */
    fd = fdt_install(t, probe_file(&p, O_RDWR), 0);
    struct fdt_file *f = fdt_fget(t, fd);
    CHECK(f != NULL);
    CHECK_EQ(fdt_file_count(f), 2);
    CHECK(fdt_fget(t, fd + 1) == NULL);
    CHECK(fdt_fget(t, -1) == NULL);
    fdt_file_put(f);

    /* O_PATH files: lookups refuse them, fcntl works. */
    struct probe r;
    int pf = fdt_install(t, probe_file(&r, O_PATH), 0);
    l = fdt_fdget(t, pf);
    CHECK(fdt_fd_file(l) == NULL);
    fdt_fdput(l);
    CHECK(fdt_fget(t, pf) == NULL);
    CHECK_EQ(fdt_fcntl(t, pf, F_GETFL, 0), O_PATH);
    char c;
    CHECK_EQ(fdt_read(t, pf, &c, 1), -EBADF);
    fdt_files_put(t);
    CHECK_EQ(p.releases, 1);
    CHECK_EQ(r.releases, 1);
}

static void test_fork_share_exec(void)
{
    struct probe p, q;
    struct fdt_files *t = fdt_files_new();
    int fd = fdt_install(t, probe_file(&p, O_RDWR), 0);
    int cx = fdt_install(t, probe_file(&q, O_RDWR), O_CLOEXEC);
    int res = fdt_get_unused_fd(t, 0);
    CHECK_EQ(res, 2);

    /* fork copies: same files, one more reference each, own descriptors. */
    struct fdt_files *child = fdt_files_fork(t);
    CHECK(child != NULL);
    struct fdt_file *f = fdt_fget(child, fd);
    CHECK_EQ(fdt_file_count(f), 3);
    fdt_file_put(f);
    CHECK_EQ(fdt_fcntl(child, cx, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_get_unused_fd(child, 0), res); /* the reservation was not copied */
    CHECK_EQ(fdt_close(t, fd), 0);
    CHECK_EQ(fdt_fcntl(child, fd, F_GETFD, 0), 0);
    CHECK_EQ(fdt_dup2(child, fd, 10), 10);
    CHECK_EQ(fdt_fcntl(t, 10, F_GETFD, 0), -EBADF);
    CHECK_EQ(fdt_set_nofile(child, 16, 16), 0);
    unsigned long soft;
    CHECK_EQ(fdt_get_nofile(t, &soft, NULL), 0);
    CHECK_EQ(soft, 1024);

    /* exec closes close-on-exec fds only. */
    CHECK_EQ(fdt_exec(child), 0);
    CHECK_EQ(fdt_fcntl(child, cx, F_GETFD, 0), -EBADF);
    CHECK_EQ(fdt_fcntl(child, fd, F_GETFD, 0), 0);
    CHECK_EQ(q.flushes, 1);
    CHECK_EQ(q.releases, 0); /* the parent still has it */
    fdt_files_put(child);
    CHECK_EQ(p.releases, 1);

    /* CLONE_FILES: one table, two handles, separate limits. */
    struct fdt_files *sib = fdt_files_share(t);
    CHECK(sib != NULL);
    int d = fdt_dup(t, cx);
    CHECK_EQ(fdt_fcntl(sib, d, F_GETFD, 0), 0);
    CHECK_EQ(fdt_set_nofile(sib, 4, 4), 0);
    CHECK_EQ(fdt_get_nofile(t, &soft, NULL), 0);
    CHECK_EQ(soft, 1024);
    CHECK_EQ(fdt_dup2(sib, cx, 4), -EBADF);
    CHECK_EQ(fdt_dup2(t, cx, 4), 4);

    /* unshare: a private copy. */
    struct fdt_files *before = sib;
    CHECK_EQ(fdt_unshare(&sib), 0);
    CHECK(sib == before);
    CHECK_EQ(fdt_close(t, d), 0);
    CHECK_EQ(fdt_fcntl(sib, d, F_GETFD, 0), 0);
    CHECK_EQ(fdt_unshare(&sib), 0); /* already private: nothing */

    /* exec on a shared table unshares first; the other handle keeps its fds. */
    struct fdt_files *sib2 = fdt_files_share(sib);
    CHECK_EQ(fdt_exec(sib), 0);
    CHECK_EQ(fdt_fcntl(sib, cx, F_GETFD, 0), -EBADF);
    CHECK_EQ(fdt_fcntl(sib2, cx, F_GETFD, 0), FD_CLOEXEC);
    fdt_files_put(sib);
    fdt_files_put(sib2);
    fdt_files_put(t);
    CHECK_EQ(q.releases, 1);
}

static void test_io(void)
{
    struct probe p, ro, s;
    struct fdt_files *t = fdt_files_new();
    int fd = fdt_install(t, probe_file(&p, O_RDWR), 0);
    int rd = fdt_install(t, probe_file(&ro, O_RDONLY), 0);
    unsigned char buf[16];

    CHECK_EQ(fdt_read(t, fd, buf, sizeof buf), 5);
    CHECK_EQ(buf[4], 4);
    CHECK_EQ(fdt_lseek(t, fd, 0, SEEK_CUR), 5);
    CHECK_EQ(fdt_write(t, fd, buf, 3), 3);
    CHECK_EQ(fdt_lseek(t, fd, 0, SEEK_CUR), 8);
    CHECK_EQ(fdt_pread(t, fd, buf, 2, 100), 2);
    CHECK_EQ(buf[0], 100);
    CHECK_EQ(fdt_lseek(t, fd, 0, SEEK_CUR), 8);
    CHECK_EQ(fdt_pread(t, fd, buf, 2, -1), -EINVAL);
    CHECK_EQ(fdt_pwrite(t, fd, buf, 2, 7), 2);
    CHECK_EQ(fdt_lseek(t, fd, -1, SEEK_SET), -EINVAL);
    CHECK_EQ(fdt_lseek(t, fd, 0, 17), -EINVAL);
    CHECK_EQ(fdt_lseek(t, fd, 3, SEEK_SET), 3);
    CHECK_EQ(fdt_read(t, fd, buf, 1), 1);
    CHECK_EQ(buf[0], 3);
    CHECK_EQ(fdt_write(t, rd, buf, 1), -EBADF);
    CHECK_EQ(fdt_read(t, 99, buf, 1), -EBADF);
    CHECK_EQ(fdt_read(t, -1, buf, 1), -EBADF);
    CHECK_EQ(fdt_read(t, fd, NULL, 4), -EFAULT);
    CHECK_EQ(fdt_write(t, fd, NULL, 4), -EFAULT);
    CHECK_EQ(fdt_read(t, 99, NULL, 4), -EBADF);
    CHECK_EQ(fdt_read(t, fd, NULL, 0), 5 - 5); /* count 0: the callback reads nothing */
    CHECK_EQ(atomic_load(&p.reads), 4);

    /* A file without read/write/llseek: EINVAL, ESPIPE; ioctl ENOTTY. */
    memset(&s, 0, sizeof s);
    int bare = fdt_install(t, fdt_file_new(&bare_ops, &s, O_RDWR), 0);
    CHECK_EQ(fdt_read(t, bare, buf, 1), -EINVAL);
    CHECK_EQ(fdt_write(t, bare, buf, 1), -EINVAL);
    CHECK_EQ(fdt_read(t, bare, NULL, 1), -EINVAL);
    CHECK_EQ(fdt_lseek(t, bare, 0, SEEK_SET), -ESPIPE);
    CHECK_EQ(fdt_ioctl(t, bare, 0x1234, 0), -ENOTTY);
    CHECK_EQ(fdt_compat_ioctl(t, bare, 0x1234, 0), -ENOTTY);

    /* A stream file: no position, no pread. */
    struct probe st;
    struct fdt_file_ops sops = probe_ops;
    sops.flags = FDT_FILE_STREAM;
    memset(&st, 0, sizeof st);
    int sfd = fdt_install(t, fdt_file_new(&sops, &st, O_RDWR), 0);
    CHECK_EQ(fdt_read(t, sfd, buf, 8), 5);
    CHECK_EQ(fdt_read(t, sfd, buf, 8), 5);
    CHECK_EQ(buf[0], 0); /* pos was NULL both times */
    CHECK_EQ(fdt_pread(t, sfd, buf, 1, 0), -ESPIPE);
    CHECK_EQ(fdt_pwrite(t, sfd, buf, 1, 0), -ESPIPE);

    /* ioctl: generic commands here, the rest to the callback. */
    int on = 1, n = 0;
    CHECK_EQ(fdt_ioctl(t, fd, 0x1234, 41), 42);
    CHECK_EQ(fdt_ioctl(t, fd, 0x4321, 0), -ENOTTY);
    CHECK_EQ(fdt_ioctl(t, fd, FIONREAD, (unsigned long)&n), 0);
    CHECK_EQ(n, 42);
    CHECK_EQ(fdt_ioctl(t, fd, FIOCLEX, 0), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), FD_CLOEXEC);
    CHECK_EQ(fdt_ioctl(t, fd, FIONCLEX, 0), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFD, 0), 0);
    CHECK_EQ(fdt_ioctl(t, fd, FIONBIO, (unsigned long)&on), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFL, 0), O_RDWR | O_NONBLOCK);
    on = 0;
    CHECK_EQ(fdt_ioctl(t, fd, FIONBIO, (unsigned long)&on), 0);
    CHECK_EQ(fdt_fcntl(t, fd, F_GETFL, 0), O_RDWR);
    CHECK_EQ(fdt_ioctl(t, fd, FIONBIO, 0), -EFAULT);
    on = 1;
    CHECK_EQ(fdt_ioctl(t, fd, FIOASYNC, (unsigned long)&on), -ENOTTY);
    CHECK_EQ(fdt_ioctl(t, 77, FIOCLEX, 0), -EBADF);
    CHECK_EQ(fdt_ioctl(t, fd, 0x1234, (unsigned long)-6), -5); /* callback's -EIO */
    CHECK_EQ(fdt_compat_ioctl(t, fd, 0x9, 0x100000007UL), 7);
    CHECK_EQ(fdt_compat_ioctl(t, fd, FIONBIO, (unsigned long)&on), -EFAULT);
    CHECK_EQ(fdt_compat_ioctl(t, fd, FIOCLEX, 0), 0);

    fdt_files_put(t);
    CHECK_EQ(p.releases, 1);
    CHECK_EQ(ro.releases, 1);
    CHECK_EQ(s.releases, 1);
    CHECK_EQ(st.releases, 1);
}

static void test_nr_open(void)
{
    CHECK_EQ(fdt_get_nr_open(), 1048576);
    CHECK_EQ(fdt_set_nr_open(10), -EINVAL);
    CHECK_EQ(fdt_set_nr_open(1UL << 40), -EINVAL);
    struct fdt_files *t = fdt_files_new();
    struct probe p;
    CHECK_EQ(fdt_install(t, probe_file(&p, O_RDWR), 0), 0);
    CHECK_EQ(fdt_set_nr_open(64), 0);
    CHECK_EQ(fdt_set_nofile(t, 64, 65), -EPERM);
    CHECK_EQ(fdt_set_nofile(t, 100, 100), -EPERM);
    CHECK_EQ(fdt_set_nofile(t, 64, 64), 0);
    CHECK_EQ(fdt_dup2(t, 0, 63), 63);
    CHECK_EQ(fdt_set_nr_open(1048576), 0);
    fdt_files_put(t);
    CHECK_EQ(p.releases, 1);
}

/* ---- threads on a shared table: each thread has its own handle ---- */

#define THREADS 4
#define ROUNDS 2000

static struct probe thread_probes[THREADS][ROUNDS / 100];
static struct probe shared_probe;
static int shared_fd;

struct worker {
    struct fdt_files *files;
    int id;
    int errors;
};

static void *worker(void *arg)
{
    struct worker *w = arg;
    unsigned char buf[8];
    int mine = -1, made = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if (i % 100 == 0) {
            if (mine >= 0 && fdt_close(w->files, mine) != 0)
                w->errors++;
            mine = fdt_install(w->files, probe_file(&thread_probes[w->id][made++], O_RDWR), 0);
            if (mine < 0)
                w->errors++;
        }
        /* Light lookups of our own fd and of the shared one (references: shared table). */
        struct fdt_fd l = fdt_fdget(w->files, mine);
        if (fdt_fd_file(l) == NULL || l.flags != FDT_FDPUT_FPUT)
            w->errors++;
        fdt_fdput(l);
        if (fdt_read(w->files, shared_fd, buf, sizeof buf) != 5)
            w->errors++;
        /* dup/close churn through the allocator. */
        int d = fdt_dup(w->files, mine);
        if (d < 0 || fdt_close(w->files, d) != 0)
            w->errors++;
        /* Another thread's descriptors come and go: lookups of them must be safe. */
        l = fdt_fdget(w->files, (i * 7 + w->id) % 16);
        if (fdt_fd_file(l) != NULL && fdt_file_private_data(fdt_fd_file(l)) == NULL)
            w->errors++;
        fdt_fdput(l);
    }
    if (fdt_close(w->files, mine) != 0)
        w->errors++;
    fdt_files_put(w->files);
    return NULL;
}

static void test_threads(void)
{
    struct fdt_files *t = fdt_files_new();
    shared_fd = fdt_install(t, probe_file(&shared_probe, O_RDWR), 0);
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.files = fdt_files_share(t), .id = i};
        CHECK(w[i].files != NULL);
    }
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_join(th[i], NULL), 0);
        CHECK_EQ(w[i].errors, 0);
    }
    /* Every file made by a thread was released exactly once, flushed once per close. */
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < ROUNDS / 100; j++) {
            CHECK_EQ(thread_probes[i][j].releases, 1);
            CHECK_EQ(thread_probes[i][j].flushes, 1 + 100);
        }
    CHECK_EQ(atomic_load(&shared_probe.reads), THREADS * ROUNDS);
    CHECK_EQ(shared_probe.releases, 0);
    /* The table is unshared again: light lookups borrow. */
    struct fdt_fd l = fdt_fdget(t, shared_fd);
    CHECK_EQ(l.flags, 0);
    fdt_fdput(l);
    CHECK_EQ(fdt_lseek(t, shared_fd, 0, SEEK_CUR), 5LL * THREADS * ROUNDS);
    fdt_files_put(t);
    CHECK_EQ(shared_probe.releases, 1);
}

int main(void)
{
    test_null_handles();
    test_install_and_emfile();
    test_reserve_install();
    test_dup_family();
    test_close_and_close_range();
    test_light_lookup();
    test_fork_share_exec();
    test_io();
    test_nr_open();
    test_threads();
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout); /* before LeakSanitizer's exit-time check, which may abort */
    return failed ? 1 : 0;
}

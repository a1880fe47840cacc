/*
 * libfdtable's C tests of the 0.4 calls, as a C runtime uses them: the atomic renumber
 * (fdt_renumber, fdt_renumber_onto: WASI's fd_renumber), the per-fd payload (installed with
 * the file, read, set, compare-and-swapped, looked up with the file), and the owned
 * reservation (fdt_reserve_owned), installed from another thread or given back. Compiled with
 * FDTABLE_WARN_DEPRECATED and -Werror. Run by ci/ctest under AddressSanitizer and UBSan,
 * against the static and the shared library, and on musl.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure.
 */
#define _GNU_SOURCE
#define FDTABLE_WARN_DEPRECATED
#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if FDT_VERSION < FDT_VERSION_NUMBER(0, 4, 0)
#error "the calls tested here came with 0.4"
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

/* WASI preview 1's rights, as a runtime would keep them in the payload. */
#define RIGHT_FD_READ (UINT64_C(1) << 1)
#define RIGHT_FD_WRITE (UINT64_C(1) << 6)
#define RIGHT_FD_SEEK (UINT64_C(1) << 2)

/* ---- a file that knows its id and counts its flushes and its release ---- */

struct obj {
    int id;
    atomic_int flushes, releases;
};

static int o_flush(void *pd)
{
    atomic_fetch_add(&((struct obj *)pd)->flushes, 1);
    return 0;
}

static void o_release(void *pd)
{
    atomic_fetch_add(&((struct obj *)pd)->releases, 1);
}

static const struct fdt_file_ops obj_ops = {.flush = o_flush, .release = o_release};

static struct fdt_file *obj_file(struct obj *o, int id, unsigned int flags)
{
    memset(o, 0, sizeof *o);
    o->id = id;
    struct fdt_file *f = NULL;
    int r = fdt_file_new2(&obj_ops, sizeof obj_ops, o, flags, &f);
    if (r != 0 || f == NULL) {
        fprintf(stderr, "fdt_file_new2: %d\n", r);
        exit(2);
    }
    return f;
}

static int id_of(struct fdt_file *f)
{
    return ((struct obj *)fdt_file_private_data(f))->id;
}

/* The id of the file at fd and its payload, through the rights-check lookup; -errno. */
static int lookup(struct fdt_files *t, int fd, uint64_t *payload, unsigned int *flags)
{
    struct fdt_fd f;
    int r = fdt_fdget_with_payload(t, fd, &f, payload);
    if (r < 0)
        return r;
    if (flags)
        *flags = f.flags;
    int id = id_of(fdt_fd_file(f));
    fdt_fdput(f);
    return id;
}

static uint64_t payload_of(struct fdt_files *t, int fd)
{
    uint64_t p = 12345;
    int r = fdt_fd_payload(t, fd, &p);
    return r < 0 ? (uint64_t)(int64_t)r : p;
}

/* ---- tests ---- */

static void test_renumber(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj a, b;
    int fa = fdt_install_with(t, obj_file(&a, 1, FDT_O_RDWR), FDT_O_CLOEXEC, RIGHT_FD_READ);
    int fb = fdt_install_with(t, obj_file(&b, 2, FDT_O_RDWR), 0, RIGHT_FD_WRITE);
    CHECK_EQ(fa, 0);
    CHECK_EQ(fb, 1);
    /* Onto a free number: fdt_renumber creates it, fdt_renumber_onto refuses. */
    CHECK_EQ(fdt_renumber_onto(t, fa, 9), -EBADF);
    CHECK_EQ(fdt_renumber(t, fa, 9), 9);
    CHECK_EQ(fdt_fcntl(t, 9, FDT_F_GETFD, 0), 0); /* close-on-exec clear, as after dup2 */
    CHECK_EQ(payload_of(t, 9), RIGHT_FD_READ);    /* the payload moves with the file */
    CHECK_EQ(payload_of(t, fa), -EBADF);
    CHECK_EQ(a.flushes, 0);                       /* no descriptor to it was closed */
    /* Onto an open fd: what was there is closed. */
    CHECK_EQ(fdt_renumber_onto(t, 9, fb), fb);
    CHECK_EQ(lookup(t, fb, &(uint64_t){0}, NULL), 1);
    CHECK_EQ(b.flushes, 1);
    CHECK_EQ(b.releases, 1);
    CHECK_EQ(fdt_next_open_fd(t, 0), fb);
    CHECK_EQ(fdt_next_open_fd(t, fb + 1), -ENOENT);
    /* Same fd; errors change nothing. */
    CHECK_EQ(fdt_renumber(t, fb, fb), fb);
    CHECK_EQ(fdt_renumber_onto(t, fb, fb), fb);
    CHECK_EQ(fdt_renumber(t, 9, 9), -EBADF);
    CHECK_EQ(fdt_renumber(t, 9, 3), -EBADF);
    CHECK_EQ(fdt_renumber(t, fb, -1), -EBADF);
    CHECK_EQ(fdt_renumber(t, fb, FDT_NOFILE_SOFT_DEFAULT), -EBADF);
    CHECK_EQ(fdt_renumber(NULL, fb, 3), -EINVAL);
    CHECK_EQ(fdt_renumber_onto(NULL, fb, fb), -EINVAL);
    /* A reserved target: dup2's EBUSY for fdt_renumber, WASI's EBADF for _onto. */
    int r = fdt_get_unused_fd(t, 0);
    CHECK_EQ(fdt_renumber(t, fb, r), -EBUSY);
    CHECK_EQ(fdt_renumber_onto(t, fb, r), -EBADF);
    CHECK_EQ(fdt_put_unused_fd2(t, r), 0); /* still a reservation */
    CHECK_EQ(lookup(t, fb, &(uint64_t){0}, NULL), 1);
    fdt_files_put(t);
    CHECK_EQ(a.releases, 1);
}

static void test_payload(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj o[6];
    int fd = fdt_install(t, obj_file(&o[0], 0, FDT_O_RDWR), 0);
    CHECK_EQ(payload_of(t, fd), 0); /* 0 unless installed with one */
    CHECK_EQ(fdt_set_fd_payload(t, fd, UINT64_MAX), 0);
    /* dup, F_DUPFD, dup2, dup3 and fork copy it; each descriptor keeps its own. */
    int d = fdt_dup(t, fd);
    int f = fdt_fcntl(t, fd, FDT_F_DUPFD_CLOEXEC, 30);
    CHECK_EQ(fdt_dup2(t, fd, 20), 20);
    CHECK_EQ(fdt_dup3(t, fd, 21, FDT_O_CLOEXEC), 21);
    CHECK_EQ(payload_of(t, d), UINT64_MAX);
    CHECK_EQ(payload_of(t, f), UINT64_MAX);
    CHECK_EQ(payload_of(t, 20), UINT64_MAX);
    CHECK_EQ(payload_of(t, 21), UINT64_MAX);
    CHECK_EQ(fdt_set_fd_payload(t, d, 7), 0);
    CHECK_EQ(payload_of(t, fd), UINT64_MAX);
    struct fdt_files *child = NULL;
    CHECK_EQ(fdt_files_fork2(t, &child), 0);
    CHECK_EQ(payload_of(child, d), 7);
    fdt_files_put(child);
    /* Installed with one: at a chosen fd, and at a reserved one. */
    CHECK_EQ(fdt_install_at_with(t, 50, obj_file(&o[1], 1, FDT_O_RDWR), 0, 5), 50);
    CHECK_EQ(payload_of(t, 50), 5);
    CHECK_EQ(fdt_install_at_with(t, 50, obj_file(&o[2], 2, FDT_O_RDWR), FDT_O_RDWR, 6), -EINVAL);
    CHECK_EQ(o[2].releases, 1); /* consumed on failure */
    CHECK_EQ(payload_of(t, 50), 5);
    CHECK_EQ(fdt_install_at_with(t, 50, obj_file(&o[3], 3, FDT_O_RDWR), 0, 6), 50);
    CHECK_EQ(o[1].releases, 1); /* displaced */
    CHECK_EQ(payload_of(t, 50), 6);
    int r = fdt_get_unused_fd(t, 0);
    CHECK_EQ(payload_of(t, r), -EBADF); /* reserved: not open */
    CHECK_EQ(fdt_set_fd_payload(t, r, 1), -EBADF);
    CHECK_EQ(fdt_fd_install_with(t, r, obj_file(&o[4], 4, FDT_O_RDWR), 9), 0);
    CHECK_EQ(payload_of(t, r), 9);
    CHECK_EQ(fdt_fd_install_with(t, r, obj_file(&o[5], 5, FDT_O_RDWR), 9), -EBADF);
    CHECK_EQ(o[5].releases, 1);
    /* Errors and NULLs. */
    uint64_t p = 3;
    CHECK_EQ(fdt_fd_payload(t, 999, &p), -EBADF);
    CHECK_EQ(p, 0); /* 0 on failure */
    CHECK_EQ(fdt_fd_payload(t, -1, &p), -EBADF);
    CHECK_EQ(fdt_fd_payload(t, fd, NULL), -EINVAL);
    CHECK_EQ(fdt_fd_payload(NULL, fd, &p), -EINVAL);
    CHECK_EQ(fdt_set_fd_payload(NULL, fd, 1), -EINVAL);
    CHECK_EQ(fdt_install_with(NULL, NULL, 0, 1), -EINVAL);
    CHECK_EQ(fdt_install_with(t, NULL, 0, 1), -EINVAL);
    CHECK_EQ(fdt_install_at_with(t, 5, NULL, 0, 1), -EINVAL);
    CHECK_EQ(fdt_fd_install_with(t, 5, NULL, 1), -EINVAL);
    fdt_files_put(t);
    int releases = 0;
    for (int i = 0; i < 6; i++)
        releases += o[i].releases;
    CHECK_EQ(releases, 6);
}

static void test_cmpxchg(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj o;
    uint64_t all = RIGHT_FD_READ | RIGHT_FD_WRITE | RIGHT_FD_SEEK;
    int fd = fdt_install_with(t, obj_file(&o, 1, FDT_O_RDWR), 0, all);
    /* C11's compare-exchange: 1 and the value replaced, or 0 and *expected updated. */
    uint64_t expected = all;
    CHECK_EQ(fdt_cmpxchg_fd_payload(t, fd, &expected, all & ~RIGHT_FD_WRITE), 1);
    CHECK_EQ(expected, all);
    CHECK_EQ(fdt_cmpxchg_fd_payload(t, fd, &expected, 0), 0);
    CHECK_EQ(expected, all & ~RIGHT_FD_WRITE);
    CHECK_EQ(payload_of(t, fd), all & ~RIGHT_FD_WRITE);
    /* The narrowing loop of the header's example. */
    uint64_t rights;
    int r = fdt_fd_payload(t, fd, &rights);
    while (r >= 0 && (r = fdt_cmpxchg_fd_payload(t, fd, &rights, rights & ~RIGHT_FD_SEEK)) == 0)
        ;
    CHECK_EQ(r, 1);
    CHECK_EQ(payload_of(t, fd), RIGHT_FD_READ);
    CHECK_EQ(fdt_cmpxchg_fd_payload(t, 77, &expected, 0), -EBADF);
    CHECK_EQ(fdt_cmpxchg_fd_payload(t, fd, NULL, 0), -EINVAL);
    CHECK_EQ(fdt_cmpxchg_fd_payload(NULL, fd, &expected, 0), -EINVAL);
    fdt_files_put(t);
    CHECK_EQ(o.releases, 1);
}

static void test_fdget_with_payload(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj a, p;
    int fd = fdt_install_with(t, obj_file(&a, 1, FDT_O_RDWR), 0, RIGHT_FD_READ);
    int pfd = fdt_install_with(t, obj_file(&p, 2, FDT_O_PATH), 0, RIGHT_FD_READ);
    uint64_t rights = 0;
    unsigned int flags = 99;
    /* Unshared: the light lookup, no reference. */
    CHECK_EQ(lookup(t, fd, &rights, &flags), 1);
    CHECK_EQ(rights, RIGHT_FD_READ);
    CHECK_EQ(flags, 0);
    /* The rights check of the header's example. */
    struct fdt_fd f;
    CHECK_EQ(fdt_fdget_with_payload(t, fd, &f, &rights), 0);
    CHECK(rights & RIGHT_FD_READ);
    CHECK(!(rights & RIGHT_FD_WRITE));
    fdt_fdput(f);
    /* Errors: the empty result and 0. */
    rights = 5;
    CHECK_EQ(fdt_fdget_with_payload(t, pfd, &f, &rights), -EBADF); /* O_PATH, as fdget2 */
    CHECK(f.file == NULL && f.flags == 0 && rights == 0);
    CHECK_EQ(fdt_fdget_with_payload(t, 40, &f, &rights), -EBADF);
    CHECK_EQ(fdt_fdget_with_payload(t, -1, &f, &rights), -EBADF);
    CHECK_EQ(fdt_fdget_with_payload(NULL, fd, &f, &rights), -EINVAL);
    CHECK_EQ(fdt_fdget_with_payload(t, fd, NULL, &rights), -EINVAL);
    CHECK_EQ(fdt_fdget_with_payload(t, fd, &f, NULL), -EINVAL);
    CHECK(f.file == NULL);
    /* Shared: a reference, which fdt_fdput drops. */
    struct fdt_files *other = NULL;
    CHECK_EQ(fdt_files_share2(t, &other), 0);
    CHECK_EQ(lookup(other, fd, &rights, &flags), 1);
    CHECK_EQ(flags, FDT_FDPUT_FPUT);
    CHECK_EQ(rights, RIGHT_FD_READ);
    fdt_files_put(other);
    fdt_files_put(t);
    CHECK_EQ(a.releases + p.releases, 2);
}

/* ---- the owned reservation ---- */

struct opener {
    struct fdt_reservation *res;
    struct obj *o;
    int installed;
};

static void *open_later(void *arg)
{
    struct opener *op = arg;
    op->installed = fdt_reservation_install_with(op->res, obj_file(op->o, 7, FDT_O_RDWR),
                                                 RIGHT_FD_READ | RIGHT_FD_WRITE);
    return NULL;
}

static void test_reservation(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj a, b, c, x;
    struct fdt_reservation *res = (struct fdt_reservation *)1;
    int fd = fdt_reserve_owned(t, FDT_O_CLOEXEC, &res);
    CHECK_EQ(fd, 0);
    CHECK(res != NULL);
    CHECK_EQ(fdt_reservation_fd(res), fd);
    /* Taken: skipped by allocation, not open, and the table counts as shared. */
    int other = fdt_install(t, obj_file(&a, 1, FDT_O_RDWR), 0);
    CHECK_EQ(other, 1);
    CHECK_EQ(fdt_close(t, fd), -EBADF);
    CHECK_EQ(fdt_dup2(t, other, fd), -EBUSY);
    unsigned int flags = 0;
    CHECK_EQ(lookup(t, other, &(uint64_t){0}, &flags), 1);
    CHECK_EQ(flags, FDT_FDPUT_FPUT);
    /* Installed on another thread, with its rights. */
    struct opener op = {res, &b, -1};
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, open_later, &op), 0);
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK_EQ(op.installed, fd);
    uint64_t rights = 0;
    CHECK_EQ(lookup(t, fd, &rights, NULL), 7);
    CHECK_EQ(rights, RIGHT_FD_READ | RIGHT_FD_WRITE);
    CHECK_EQ(fdt_fcntl(t, fd, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
    /* Released (a cancelled open): the number is free again. */
    CHECK_EQ(fdt_reserve_owned(t, 0, &res), 2);
    fdt_reservation_release(res);
    CHECK_EQ(fdt_install(t, obj_file(&c, 3, FDT_O_RDWR), 0), 2);
    /* NULLs: refused, and what was handed over is given back. */
    fdt_reservation_release(NULL);
    CHECK_EQ(fdt_reservation_fd(NULL), -EINVAL);
    CHECK_EQ(fdt_reservation_install(NULL, obj_file(&x, 9, FDT_O_RDWR)), -EINVAL);
    CHECK_EQ(x.releases, 1);
    CHECK_EQ(fdt_reserve_owned(t, 0, &res), 3);
    CHECK_EQ(fdt_reservation_install_with(res, NULL, 1), -EINVAL);
    CHECK_EQ(fdt_get_unused_fd(t, 0), 3); /* given back */
    res = (struct fdt_reservation *)1;
    CHECK_EQ(fdt_reserve_owned(NULL, 0, &res), -EINVAL);
    CHECK(res == NULL);
    CHECK_EQ(fdt_reserve_owned(t, 0, NULL), -EINVAL);
    /* A misuse: the reservation's number given back through the raw call. Its install says
     * so (-EBADF) and puts the file; nothing is installed there. */
    CHECK_EQ(fdt_put_unused_fd2(t, 3), 0);
    CHECK_EQ(fdt_reserve_owned(t, 0, &res), 3);
    CHECK_EQ(fdt_put_unused_fd2(t, 3), 0);
    struct obj y = {0};
    CHECK_EQ(fdt_reservation_install(res, obj_file(&y, 10, FDT_O_RDWR)), -EBADF);
    CHECK_EQ(y.releases, 1);
    CHECK_EQ(fdt_close(t, 3), -EBADF);
    CHECK_EQ(fdt_get_unused_fd(t, 0), 3);
    /* The limit: EMFILE. */
    CHECK_EQ(fdt_set_nofile(t, 4, 4), 0);
    CHECK_EQ(fdt_reserve_owned(t, 0, &res), -EMFILE);
    CHECK(res == NULL);
    fdt_files_put(t);
    CHECK_EQ(a.releases + b.releases + c.releases, 3);
}

/* A reservation holds its table: the table closes when the reservation ends. */
static void test_reservation_outlives_the_handle(void)
{
    struct fdt_files *t = fdt_files_new();
    struct obj a, b;
    struct fdt_reservation *res = NULL;
    CHECK_EQ(fdt_install(t, obj_file(&a, 1, FDT_O_RDWR), 0), 0);
    CHECK_EQ(fdt_reserve_owned(t, 0, &res), 1);
    fdt_files_put(t);
    CHECK_EQ(a.releases, 0);
    CHECK_EQ(fdt_reservation_install(res, obj_file(&b, 2, FDT_O_RDWR)), 1);
    CHECK_EQ(a.flushes, 1);
    CHECK_EQ(a.releases + b.releases, 2);
}

int main(void)
{
    test_renumber();
    test_payload();
    test_cmpxchg();
    test_fdget_with_payload();
    test_reservation();
    test_reservation_outlives_the_handle();
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout); /* before LeakSanitizer's exit-time check, which may abort */
    return failed ? 1 : 0;
}

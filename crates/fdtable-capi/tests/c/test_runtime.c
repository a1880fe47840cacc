/*
 * libfdtable's C tests of the 0.2 calls, as a C runtime uses them: the version, the `...2`
 * forms (one error convention: -errno, objects through out-parameters, errno untouched), the
 * sized struct fdt_file_ops, fdt_next_open_fd, fdt_install_at, fdt_file_has_ops, fdt_poll and
 * fdt_fstat. Compiled with FDTABLE_WARN_DEPRECATED and -Werror: nothing here uses a legacy
 * call. Run by ci/ctest under AddressSanitizer and UBSan, against the static and the shared
 * library.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure.
 */
#define _GNU_SOURCE
#define FDTABLE_WARN_DEPRECATED
#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

/* The header's poll constants and struct are <poll.h>'s. */
_Static_assert(FDT_POLLIN == POLLIN && FDT_POLLPRI == POLLPRI && FDT_POLLOUT == POLLOUT, "");
_Static_assert(FDT_POLLERR == POLLERR && FDT_POLLHUP == POLLHUP && FDT_POLLNVAL == POLLNVAL, "");
_Static_assert(FDT_POLLRDNORM == POLLRDNORM && FDT_POLLWRNORM == POLLWRNORM, "");
_Static_assert(FDT_POLLRDBAND == POLLRDBAND && FDT_POLLWRBAND == POLLWRBAND, "");
_Static_assert(FDT_POLLRDHUP == POLLRDHUP, "");
/* The file types (0.3) are <sys/stat.h>'s. */
_Static_assert(FDT_S_IFMT == S_IFMT && FDT_S_IFREG == S_IFREG && FDT_S_IFDIR == S_IFDIR, "");
_Static_assert(FDT_S_IFCHR == S_IFCHR && FDT_S_IFBLK == S_IFBLK && FDT_S_IFIFO == S_IFIFO, "");
_Static_assert(FDT_S_IFSOCK == S_IFSOCK && FDT_S_IFLNK == S_IFLNK, "");
_Static_assert(sizeof(struct fdt_pollfd) == sizeof(struct pollfd), "");
_Static_assert(offsetof(struct fdt_pollfd, events) == offsetof(struct pollfd, events), "");
_Static_assert(offsetof(struct fdt_pollfd, revents) == offsetof(struct pollfd, revents), "");
/* The growth rules' fixed points. */
_Static_assert(sizeof(struct fdt_stat) == 128, "struct fdt_stat keeps its size");
_Static_assert(FDT_FILE_OPS_SIZE_VER1 == sizeof(struct fdt_file_ops), "0.2's struct");
_Static_assert(FDT_FILE_OPS_SIZE_VER0 < FDT_FILE_OPS_SIZE_VER1, "");
#if FDT_VERSION != FDT_VERSION_NUMBER(FDT_VERSION_MAJOR, FDT_VERSION_MINOR, FDT_VERSION_PATCH)
#error "FDT_VERSION is FDT_VERSION_NUMBER(MAJOR, MINOR, PATCH)"
#endif
#if FDT_VERSION < FDT_VERSION_NUMBER(0, 2, 0)
#error "the calls tested here came with 0.2"
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

/* ---- a file kind of our own: counts callbacks; poll and getattr from its fields ---- */

struct obj {
    atomic_int flushes, releases, getattrs;
    unsigned int ready;   /* what poll reports */
    unsigned int mode;    /* st_mode; 0: getattr fails with EIO */
    long long size;
};

static ssize_t o_read(void *pd, void *buf, size_t count, int64_t *pos)
{
    (void)pd;
    size_t n = count < 4 ? count : 4;
    memset(buf, 'r', n);
    if (pos)
        *pos += (int64_t)n;
    return (ssize_t)n;
}

static int64_t o_llseek(void *pd, int64_t pos, int64_t offset, int whence)
{
    (void)pd;
    int64_t r = whence == SEEK_SET ? offset : whence == SEEK_CUR ? pos + offset : -1;
    return r < 0 ? -EINVAL : r;
}

static int o_flush(void *pd)
{
    atomic_fetch_add(&((struct obj *)pd)->flushes, 1);
    return 0;
}

static void o_release(void *pd)
{
    atomic_fetch_add(&((struct obj *)pd)->releases, 1);
}

static unsigned int o_poll(void *pd)
{
    return ((struct obj *)pd)->ready;
}

static int o_getattr(void *pd, struct fdt_stat *st)
{
    struct obj *o = pd;
    atomic_fetch_add(&o->getattrs, 1);
    if (o->mode == 0)
        return -EIO;
    /* The library hands a zeroed struct. */
    if (st->mode != 0 || st->size != 0 || st->reserved[9] != 0)
        return -EBADMSG;
    st->mode = o->mode;
    st->nlink = 1;
    st->ino = 42;
    st->size = o->size;
    st->blksize = 4096;
    st->blocks = (uint64_t)(o->size + 511) / 512;
    return 0;
}

/* One ops table per kind of file, for the program's life: what fdt_file_has_ops compares. */
static const struct fdt_file_ops obj_ops = {
    .read = o_read,
    .llseek = o_llseek,
    .flush = o_flush,
    .release = o_release,
    .poll = o_poll,
    .getattr = o_getattr,
};
static const struct fdt_file_ops other_ops = {.release = o_release};

static struct fdt_file *obj_file(struct obj *o, unsigned int ready, unsigned int mode)
{
    memset(o, 0, sizeof *o);
    o->ready = ready;
    o->mode = mode;
    o->size = 100;
    struct fdt_file *f = (struct fdt_file *)1;
    int r = fdt_file_new2(&obj_ops, sizeof obj_ops, o, FDT_O_RDWR, &f);
    if (r != 0 || f == NULL) {
        fprintf(stderr, "fdt_file_new2: %d\n", r);
        exit(2);
    }
    return f;
}

static struct fdt_files *new_table(void)
{
    struct fdt_files *t = fdt_files_new(); /* cannot fail */
    CHECK(t != NULL);
    return t;
}

/* ---- tests ---- */

static void test_version(void)
{
    CHECK_EQ(fdt_version(), FDT_VERSION);
    CHECK_EQ(FDT_VERSION_NUMBER(0, 2, 0), 0x000200);
    CHECK(FDT_VERSION_NUMBER(1, 0, 0) > FDT_VERSION_NUMBER(0, 255, 255));
    CHECK_EQ(fdt_version() >> 16, FDT_VERSION_MAJOR);
}

static void test_errno_forms_leave_errno_alone(void)
{
    struct fdt_files *t = new_table(), *out = (struct fdt_files *)1;
    struct fdt_file *f = (struct fdt_file *)1;
    struct fdt_fd l = {(struct fdt_file *)1, 7};
    errno = 12345;
    CHECK_EQ(fdt_files_fork2(NULL, &out), -EINVAL);
    CHECK(out == NULL);
    CHECK_EQ(fdt_files_fork2(t, NULL), -EINVAL);
    CHECK_EQ(fdt_files_share2(NULL, &out), -EINVAL);
    CHECK_EQ(fdt_files_share2(t, NULL), -EINVAL);
    CHECK_EQ(fdt_file_new2(NULL, sizeof(struct fdt_file_ops), NULL, 0, &f), -EINVAL);
    CHECK(f == NULL);
    CHECK_EQ(fdt_file_new2(&obj_ops, sizeof obj_ops, NULL, 0, NULL), -EINVAL);
    CHECK_EQ(fdt_fget2(t, 0, &f), -EBADF);
    CHECK_EQ(fdt_fget2(NULL, 0, &f), -EINVAL);
    CHECK_EQ(fdt_fget2(t, 0, NULL), -EINVAL);
    CHECK_EQ(fdt_fdget2(t, 0, &l), -EBADF);
    CHECK(l.file == NULL && l.flags == 0);
    fdt_fdput(l); /* the empty result: nothing to drop */
    CHECK_EQ(fdt_fdget2(NULL, 0, &l), -EINVAL);
    CHECK_EQ(fdt_fdget2(t, 0, NULL), -EINVAL);
    CHECK_EQ(fdt_fd_install2(t, 0, NULL), -EINVAL);
    CHECK_EQ(fdt_put_unused_fd2(t, 0), -EBADF);
    CHECK_EQ(fdt_put_unused_fd2(NULL, 0), -EINVAL);
    CHECK_EQ(fdt_next_open_fd(NULL, 0), -EINVAL);
    CHECK_EQ(fdt_install_at(NULL, 0, NULL, 0), -EINVAL);
    CHECK_EQ(fdt_file_has_ops(NULL, &obj_ops), -EINVAL);
    CHECK_EQ(fdt_poll(NULL, NULL, 0), -EINVAL);
    CHECK_EQ(fdt_fstat(NULL, 0, NULL), -EINVAL);
    CHECK_EQ(errno, 12345);
    fdt_files_put(t);
}

static void test_fork2_share2(void)
{
    struct fdt_files *t = new_table(), *child = NULL, *sib = NULL;
    struct obj o;
    int fd = fdt_install(t, obj_file(&o, 0, S_IFREG), 0);
    CHECK_EQ(fd, 0);
    CHECK_EQ(fdt_files_fork2(t, &child), 0);
    CHECK(child != NULL);
    CHECK_EQ(fdt_files_share2(t, &sib), 0);
    CHECK(sib != NULL);
    CHECK_EQ(fdt_close(sib, fd), 0);
    CHECK_EQ(fdt_close(t, fd), -EBADF); /* shared: gone from both */
    CHECK_EQ(fdt_close(child, fd), 0);  /* forked: the child's copy */
    CHECK_EQ(o.releases, 1);
    fdt_files_put(sib);
    fdt_files_put(child);
    /* fork2's EMFILE is in test_install_at_nr_open. */
    fdt_files_put(t);
}

static void test_file_new2_sizes(void)
{
    struct obj o;
    memset(&o, 0, sizeof o);
    o.ready = FDT_POLLIN;
    o.mode = S_IFREG | 0600;
    struct fdt_file *f = NULL;
    struct fdt_files *t = new_table();

    /* A caller built against the 0.1 header: its struct ends at `flags`. */
    struct ops_v0 {
        ssize_t (*read)(void *, void *, size_t, int64_t *);
        ssize_t (*write)(void *, const void *, size_t, int64_t *);
        long (*ioctl)(void *, unsigned int, unsigned long);
        long (*compat_ioctl)(void *, unsigned int, unsigned long);
        int (*flush)(void *);
        void (*release)(void *);
        int64_t (*llseek)(void *, int64_t, int64_t, int);
        unsigned int flags;
    } v0 = {.read = o_read, .release = o_release};
    _Static_assert(sizeof(struct ops_v0) == FDT_FILE_OPS_SIZE_VER0, "the 0.1 struct");
    CHECK_EQ(fdt_file_new2((const struct fdt_file_ops *)&v0, sizeof v0, &o, FDT_O_RDWR, &f), 0);
    int fd = fdt_install(t, f, 0);
    struct fdt_pollfd p = {fd, FDT_POLLIN | FDT_POLLOUT, 0};
    CHECK_EQ(fdt_poll(t, &p, 1), 1);
    CHECK_EQ(p.revents, FDT_POLLIN | FDT_POLLOUT); /* no poll member: the default */
    struct fdt_stat st;
    CHECK_EQ(fdt_fstat(t, fd, &st), 0);
    CHECK_EQ(st.mode, 0); /* no getattr member */
    CHECK_EQ(fdt_close(t, fd), 0);
    CHECK_EQ(o.releases, 1);

    /* A caller built against a later header: members this library does not know. */
    struct ops_later {
        struct fdt_file_ops known;
        int (*future)(void *);
        void *future2;
    } later = {.known = obj_ops};
    o.releases = 0;
    CHECK_EQ(fdt_file_new2(&later.known, sizeof later, &o, FDT_O_RDWR, &f), 0);
    fdt_file_put(f);
    CHECK_EQ(o.releases, 1);
    later.future2 = &later;
    f = (struct fdt_file *)1;
    CHECK_EQ(fdt_file_new2(&later.known, sizeof later, &o, FDT_O_RDWR, &f), -E2BIG);
    CHECK(f == NULL);
    CHECK_EQ(o.releases, 1); /* nothing made, nothing released */

    /* Sizes that are no struct's. */
    CHECK_EQ(fdt_file_new2(&obj_ops, 0, &o, 0, &f), -EINVAL);
    CHECK_EQ(fdt_file_new2(&obj_ops, FDT_FILE_OPS_SIZE_VER0 - 1, &o, 0, &f), -EINVAL);
    CHECK_EQ(fdt_file_new2(&obj_ops, FDT_FILE_OPS_SIZE_VER0 + 1, &o, 0, &f), -EINVAL);
    CHECK_EQ(fdt_file_new2(&obj_ops, 1 << 20, &o, 0, &f), -E2BIG);
    struct fdt_file_ops bad = obj_ops;
    bad.flags = 0x10;
    CHECK_EQ(fdt_file_new2(&bad, sizeof bad, &o, 0, &f), -EINVAL);
    CHECK_EQ(o.releases, 1);
    fdt_files_put(t);
}

static void test_reserve_install2(void)
{
    struct fdt_files *t = new_table();
    struct obj a, b, c;
    int fd = fdt_get_unused_fd(t, FDT_O_CLOEXEC);
    CHECK_EQ(fd, 0);
    CHECK_EQ(fdt_fd_install2(t, 5, obj_file(&a, 0, S_IFREG)), -EBADF); /* not reserved */
    CHECK_EQ(a.releases, 1);
    CHECK_EQ(fdt_fd_install2(NULL, fd, obj_file(&a, 0, S_IFREG)), -EINVAL);
    CHECK_EQ(a.releases, 1);
    CHECK_EQ(fdt_fd_install2(t, fd, obj_file(&b, 0, S_IFREG)), 0);
    CHECK_EQ(fdt_fcntl(t, fd, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
    CHECK_EQ(fdt_fd_install2(t, fd, obj_file(&c, 0, S_IFREG)), -EBADF); /* installed */
    CHECK_EQ(c.releases, 1);
    CHECK_EQ(fdt_put_unused_fd2(t, fd), -EBADF); /* installed, not reserved */
    int r = fdt_get_unused_fd(t, 0);
    CHECK_EQ(fdt_put_unused_fd2(t, r), 0);
    CHECK_EQ(fdt_put_unused_fd2(t, r), -EBADF);
    CHECK_EQ(fdt_put_unused_fd2(t, -1), -EBADF);
    CHECK_EQ(fdt_get_unused_fd(t, 0), r); /* free again */
    fdt_files_put(t);
    CHECK_EQ(b.releases, 1);
}

static void test_lookups2(void)
{
    struct fdt_files *t = new_table(), *sib = NULL;
    struct obj o, q;
    int fd = fdt_install(t, obj_file(&o, 0, S_IFREG), 0);
    struct fdt_file *f = NULL;
    CHECK_EQ(fdt_fget2(t, fd, &f), 0);
    CHECK_EQ(fdt_file_count(f), 2);
    CHECK(fdt_file_private_data(f) == &o);
    fdt_file_put(f);
    struct fdt_fd l;
    CHECK_EQ(fdt_fdget2(t, fd, &l), 0);
    CHECK(fdt_fd_file(l) != NULL);
    CHECK_EQ(l.flags, 0); /* unshared: borrowed */
    fdt_fdput(l);
    CHECK_EQ(fdt_files_share2(t, &sib), 0);
    CHECK_EQ(fdt_fdget2(t, fd, &l), 0);
    CHECK_EQ(l.flags, FDT_FDPUT_FPUT); /* shared: a reference */
    CHECK_EQ(fdt_close(sib, fd), 0);
    CHECK_EQ(o.releases, 0); /* the lookup's reference */
    fdt_fdput(l);
    CHECK_EQ(o.releases, 1);
    fdt_files_put(sib);
    /* O_PATH: refused by both lookups. */
    struct fdt_file *pf = NULL;
    memset(&q, 0, sizeof q);
    CHECK_EQ(fdt_file_new2(&other_ops, sizeof other_ops, &q, FDT_O_PATH, &pf), 0);
    int p = fdt_install(t, pf, 0);
    CHECK_EQ(fdt_fget2(t, p, &f), -EBADF);
    CHECK_EQ(fdt_fdget2(t, p, &l), -EBADF);
    fdt_files_put(t);
    CHECK_EQ(q.releases, 1);
}

static void test_next_open_fd(void)
{
    struct fdt_files *t = new_table();
    struct obj o;
    int fd = fdt_install(t, obj_file(&o, 0, S_IFREG), 0);
    CHECK_EQ(fdt_dup2(t, fd, 3), 3);
    CHECK_EQ(fdt_dup2(t, fd, 700), 700);
    int r = fdt_get_unused_fd(t, 0); /* 1: reserved, not listed */
    CHECK_EQ(r, 1);
    int seen[8], n = 0, at;
    for (at = fdt_next_open_fd(t, 0); at >= 0 && n < 8; at = fdt_next_open_fd(t, at + 1))
        seen[n++] = at;
    CHECK_EQ(at, -ENOENT);
    CHECK_EQ(n, 3);
    CHECK_EQ(seen[0], 0);
    CHECK_EQ(seen[1], 3);
    CHECK_EQ(seen[2], 700);
    CHECK_EQ(fdt_next_open_fd(t, 4), 700);
    CHECK_EQ(fdt_next_open_fd(t, 701), -ENOENT);
    CHECK_EQ(fdt_next_open_fd(t, -5), -EINVAL);
    CHECK_EQ(fdt_put_unused_fd2(t, r), 0);
    fdt_files_put(t);
}

static void test_install_at(void)
{
    struct fdt_files *t = new_table();
    struct obj a, b, c, d;
    int fd = fdt_install(t, obj_file(&a, 0, S_IFREG), 0);
    /* At a chosen free fd far up, close-on-exec. */
    CHECK_EQ(fdt_install_at(t, 900, obj_file(&b, 0, S_IFREG), FDT_O_CLOEXEC), 900);
    CHECK_EQ(fdt_fcntl(t, 900, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
    /* Over an open fd: what was there is flushed and released, as dup2 does. */
    CHECK_EQ(fdt_install_at(t, fd, obj_file(&c, 0, S_IFREG), 0), fd);
    CHECK_EQ(a.flushes, 1);
    CHECK_EQ(a.releases, 1);
    struct fdt_file *f = NULL;
    CHECK_EQ(fdt_fget2(t, fd, &f), 0);
    CHECK(fdt_file_private_data(f) == &c);
    fdt_file_put(f);
    /* The kernel's errnos; the reference is put every time (released: d's only reference). */
    CHECK_EQ(fdt_install_at(t, 1024, obj_file(&d, 0, S_IFREG), 0), -EBADF);
    CHECK_EQ(d.releases, 1);
    CHECK_EQ(d.flushes, 0);
    CHECK_EQ(fdt_install_at(t, -1, obj_file(&d, 0, S_IFREG), 0), -EBADF);
    CHECK_EQ(d.releases, 1);
    CHECK_EQ(fdt_install_at(t, 5, obj_file(&d, 0, S_IFREG), FDT_O_NONBLOCK), -EINVAL);
    CHECK_EQ(d.releases, 1);
    CHECK_EQ(fdt_install_at(t, 5, NULL, 0), -EINVAL);
    int r = fdt_get_unused_fd(t, 0);
    CHECK_EQ(fdt_install_at(t, r, obj_file(&d, 0, S_IFREG), 0), -EBUSY);
    CHECK_EQ(d.releases, 1);
    CHECK_EQ(fdt_put_unused_fd2(t, r), 0); /* still the caller's reservation */
    CHECK_EQ(fdt_set_nofile(t, 16, 16), 0);
    CHECK_EQ(fdt_install_at(t, 16, obj_file(&d, 0, S_IFREG), 0), -EBADF);
    CHECK_EQ(fdt_install_at(t, 15, obj_file(&d, 0, S_IFREG), 0), 15);
    fdt_files_put(t);
    CHECK_EQ(b.releases, 1);
    CHECK_EQ(c.releases, 1);
    CHECK_EQ(d.releases, 1);
}

static void test_install_at_nr_open(void)
{
    struct fdt_files *t = new_table(), *child = (struct fdt_files *)1;
    struct obj a, b;
    CHECK_EQ(fdt_install(t, obj_file(&a, 0, S_IFREG), 0), 0);
    CHECK_EQ(fdt_dup2(t, 0, 100), 100); /* a table of 128 */
    CHECK_EQ(fdt_set_nr_open(64), 0);
    /* Below the soft limit (1024), but the table cannot grow past nr_open there. */
    CHECK_EQ(fdt_install_at(t, 500, obj_file(&b, 0, S_IFREG), 0), -EMFILE);
    CHECK_EQ(b.releases, 1);
    CHECK_EQ(fdt_install_at(t, 120, obj_file(&b, 0, S_IFREG), 0), 120); /* no growth */
    CHECK_EQ(fdt_files_fork2(t, &child), -EMFILE); /* the copy would need 128 > 64 */
    CHECK(child == NULL);
    CHECK_EQ(fdt_set_nr_open(1048576), 0);
    fdt_files_put(t);
    CHECK_EQ(a.releases, 1);
    CHECK_EQ(b.releases, 1);
}

static void test_has_ops(void)
{
    struct fdt_files *t = new_table();
    struct obj o, q;
    int fd = fdt_install(t, obj_file(&o, 0, S_IFREG), 0);
    struct fdt_file *pf = NULL;
    memset(&q, 0, sizeof q);
    CHECK_EQ(fdt_file_new2(&other_ops, sizeof other_ops, &q, FDT_O_RDWR, &pf), 0);
    int other = fdt_install(t, pf, 0);
    /* A runtime walks its descriptors and picks out its own kind. */
    int mine = 0;
    for (int at = fdt_next_open_fd(t, 0); at >= 0; at = fdt_next_open_fd(t, at + 1)) {
        struct fdt_file *f = NULL;
        CHECK_EQ(fdt_fget2(t, at, &f), 0);
        if (fdt_file_has_ops(f, &obj_ops) == 1) {
            CHECK(fdt_file_private_data(f) == &o);
            mine++;
        } else {
            CHECK_EQ(fdt_file_has_ops(f, &other_ops), 1);
            CHECK_EQ(at, other);
        }
        fdt_file_put(f);
    }
    CHECK_EQ(mine, 1);
    /* The address, not the contents. */
    struct fdt_file_ops copy = obj_ops;
    struct fdt_file *f = NULL;
    CHECK_EQ(fdt_fget2(t, fd, &f), 0);
    CHECK_EQ(fdt_file_has_ops(f, &copy), 0);
    CHECK_EQ(fdt_file_has_ops(f, NULL), -EINVAL);
    fdt_file_put(f);
    fdt_files_put(t);
}

static void test_poll(void)
{
    struct fdt_files *t = new_table();
    struct obj in, out, hup, err;
    int a = fdt_install(t, obj_file(&in, FDT_POLLIN | FDT_POLLRDNORM, S_IFREG), 0);
    int b = fdt_install(t, obj_file(&out, FDT_POLLOUT, S_IFREG), 0);
    int c = fdt_install(t, obj_file(&hup, FDT_POLLIN | FDT_POLLHUP, S_IFREG), 0);
    int d = fdt_install(t, obj_file(&err, FDT_POLLERR, S_IFREG), 0);
    /* A `struct pollfd` array is taken as it is. */
    struct pollfd fds[] = {
        {a, POLLIN, 0x55}, {b, POLLIN, 0x55}, {c, POLLOUT, 0x55}, {d, 0, 0x55},
        {-1, POLLIN, 0x55}, {77, POLLIN, 0x55},
    };
    CHECK_EQ(fdt_poll(t, (struct fdt_pollfd *)fds, 6), 4);
    CHECK_EQ(fds[0].revents, POLLIN);  /* only the events asked for... */
    CHECK_EQ(fds[1].revents, 0);
    CHECK_EQ(fds[2].revents, POLLHUP); /* ...and POLLERR, POLLHUP always */
    CHECK_EQ(fds[3].revents, POLLERR);
    CHECK_EQ(fds[4].revents, 0);       /* negative: skipped */
    CHECK_EQ(fds[5].revents, POLLNVAL);
    CHECK_EQ(fdt_poll(t, NULL, 0), 0);
    CHECK_EQ(fdt_poll(t, NULL, 1), -EFAULT);
    CHECK_EQ(fdt_set_nofile(t, 4, 4), 0);
    CHECK_EQ(fdt_poll(t, (struct fdt_pollfd *)fds, 5), -EINVAL); /* nfds > RLIMIT_NOFILE */
    CHECK_EQ(fdt_poll(t, NULL, 5), -EINVAL);                    /* checked first */
    fdt_files_put(t);
}

static void test_fstat(void)
{
    struct fdt_files *t = new_table();
    struct obj reg, fifo, bad;
    int r = fdt_install(t, obj_file(&reg, 0, S_IFREG | 0640), 0);
    CHECK_EQ(reg.getattrs, 1); /* once when made: the file's type */
    struct fdt_stat st;
    memset(&st, 0xff, sizeof st);
    CHECK_EQ(fdt_fstat(t, r, &st), 0);
    CHECK_EQ(st.mode, S_IFREG | 0640);
    CHECK_EQ(st.ino, 42);
    CHECK_EQ(st.nlink, 1);
    CHECK_EQ(st.size, 100);
    CHECK_EQ(st.blksize, 4096);
    CHECK_EQ(st.blocks, 1);
    CHECK_EQ(st.reserved0, 0);
    CHECK_EQ(st.reserved[0], 0);
    /* A regular file: FIONREAD is its size minus the position, without the ioctl callback. */
    int n = -1;
    CHECK_EQ(fdt_lseek(t, r, 40, FDT_SEEK_SET), 40);
    CHECK_EQ(fdt_ioctl(t, r, FIONREAD, (unsigned long)&n), 0);
    CHECK_EQ(n, 60);
    /* An O_PATH file is answered too. */
    struct fdt_file *pf = NULL;
    memset(&fifo, 0, sizeof fifo);
    fifo.mode = S_IFIFO | 0600;
    CHECK_EQ(fdt_file_new2(&obj_ops, sizeof obj_ops, &fifo, FDT_O_PATH, &pf), 0);
    int p = fdt_install(t, pf, 0);
    CHECK_EQ(fdt_fstat(t, p, &st), 0);
    CHECK_EQ(st.mode, S_IFIFO | 0600);
    /* The callback's error; and the kernel's order: EBADF, then EFAULT. */
    int b = fdt_install(t, obj_file(&bad, 0, 0), 0);
    CHECK_EQ(fdt_fstat(t, b, &st), -EIO);
    CHECK_EQ(fdt_fstat(t, 99, NULL), -EBADF);
    CHECK_EQ(fdt_fstat(t, r, NULL), -EFAULT);
    /* Without a getattr callback: zeros. */
    struct fdt_file *of = NULL;
    struct obj plain;
    memset(&plain, 0, sizeof plain);
    CHECK_EQ(fdt_file_new2(&other_ops, sizeof other_ops, &plain, FDT_O_RDWR, &of), 0);
    int o = fdt_install(t, of, 0);
    CHECK_EQ(fdt_fstat(t, o, &st), 0);
    CHECK_EQ(st.mode, 0);
    CHECK_EQ(st.size, 0);
    fdt_files_put(t);
    CHECK_EQ(reg.releases + fifo.releases + bad.releases + plain.releases, 4);
}

int main(void)
{
    test_version();
    test_errno_forms_leave_errno_alone();
    test_fork2_share2();
    test_file_new2_sizes();
    test_reserve_install2();
    test_lookups2();
    test_next_open_fd();
    test_install_at();
    test_install_at_nr_open();
    test_has_ops();
    test_poll();
    test_fstat();
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout); /* before LeakSanitizer's exit-time check, which may abort */
    return failed ? 1 : 0;
}

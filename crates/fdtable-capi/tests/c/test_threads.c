/*
 * libfdtable from several threads at once, as a multi-threaded C runtime uses it: one table,
 * one handle per thread (fdt_files_share2). Readers look descriptors up (fdt_fdget2,
 * fdt_fdget_rcu, the rights check fdt_fdget_with_payload, fdt_fget2, fdt_read) while writers replace, move and close
 * them (fdt_dup2, fdt_renumber, fdt_renumber_onto, fdt_install_at_with, fdt_close) and
 * openers reserve numbers and install new files from other threads (fdt_reserve_owned).
 * Files are malloc'd and freed by their release callback, on whichever thread drops the last
 * reference.
 *
 * Every file is installed with its own id as its payload, and every descriptor operation
 * keeps a descriptor's payload with its file, so a lookup that pairs a file with another
 * file's payload is a failure. At the end every file made must have been released exactly
 * once.
 *
 * Run by ci/ctest under AddressSanitizer + UBSan (as the other C tests), and under
 * ThreadSanitizer against a library built with -Zsanitizer=thread (docs/C-ABI.md,
 * "ThreadSanitizer"), where it must produce no report.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure.
 */
#define _GNU_SOURCE
#include "fdtable.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READERS 3
#define WRITERS 1
#define OPENERS 1
#define SLOTS 16         /* the descriptors the threads work on: 0..SLOTS-1 */
#define FIXED (SLOTS + 7) /* one more file, never replaced (the soft limit is SLOTS + 8) */
#define ROUNDS 4000      /* writer and opener iterations */

static atomic_int made, released, mismatches, checked, lent, kept;
static atomic_int stop;

struct obj {
    int id;             /* written before the file is made, then only read */
    char byte;          /* what read() returns */
    atomic_int reads;
};

static void o_release(void *pd)
{
    free(pd);
    atomic_fetch_add(&released, 1);
}

static ssize_t o_read(void *pd, void *buf, size_t count, int64_t *pos)
{
    struct obj *o = pd;
    atomic_fetch_add(&o->reads, 1);
    size_t n = count < 1 ? count : 1;
    memset(buf, o->byte, n);
    if (pos)
        *pos += (int64_t)n;
    return (ssize_t)n;
}

/* No callback waits: fdt_fdget_rcu lends these files without a reference (0.5). */
static const struct fdt_file_ops ops = {
    .read = o_read, .release = o_release, .flags = FDT_FILE_NEVER_BLOCKS};

/* A new file whose payload will be its id, with one reference for the caller. */
static struct fdt_file *new_file(int id)
{
    struct obj *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->id = id;
    o->byte = (char)('a' + id % 26);
    struct fdt_file *f = NULL;
    if (fdt_file_new2(&ops, sizeof ops, o, FDT_O_RDWR, &f) != 0)
        abort();
    atomic_fetch_add(&made, 1);
    return f;
}

static int id_of(struct fdt_file *f)
{
    return ((struct obj *)fdt_file_private_data(f))->id;
}

static atomic_int next_id = 1;

static int fresh_id(void)
{
    return atomic_fetch_add(&next_id, 1);
}

static struct fdt_files *share(struct fdt_files *t)
{
    struct fdt_files *h = NULL;
    if (fdt_files_share2(t, &h) != 0)
        abort();
    return h;
}

static void *reader(void *arg)
{
    struct fdt_files *h = arg;
    unsigned int n = 0;
    while (!atomic_load(&stop)) {
        int fd = (int)(n++ % SLOTS);
        /* The rights check: file and payload from the same installation. */
        struct fdt_fd f;
        uint64_t payload;
        if (fdt_fdget_with_payload(h, fd, &f, &payload) == 0) {
            if ((uint64_t)id_of(fdt_fd_file(f)) != payload)
                atomic_fetch_add(&mismatches, 1);
            atomic_fetch_add(&checked, 1);
            fdt_fdput(f);
        }
        /* The light lookup, the counted one, and I/O through the table. */
        if (fdt_fdget2(h, fd, &f) == 0) {
            (void)id_of(fdt_fd_file(f));
            fdt_fdput(f);
        }
        /* The RCU lookup: a section of this thread instead of a reference, ended by
         * fdt_fdput; releases by other threads wait for it. A file kept past it with
         * fdt_fd_get_file, unless its last reference went meanwhile. The file at FIXED is
         * never replaced, so it is looked up often enough to be lent. */
        if (fdt_fdget_rcu(h, fd, &f) == 0) {
            (void)id_of(fdt_fd_file(f));
            struct fdt_file *k = NULL;
            if (n % 16 == 0 && fdt_fd_get_file(f, &k) == 0) {
                atomic_fetch_add(&kept, 1);
                fdt_fdput(f);
                (void)id_of(k);
                fdt_file_put(k);
            } else {
                fdt_fdput(f);
            }
        }
        if (fdt_fdget_rcu(h, FIXED, &f) == 0) {
            if (f.flags == FDT_FDPUT_RCU)
                atomic_fetch_add(&lent, 1);
            (void)id_of(fdt_fd_file(f));
            fdt_fdput(f);
        }
        struct fdt_file *ref = NULL;
        if (fdt_fget2(h, fd, &ref) == 0) {
            (void)id_of(ref);
            fdt_file_put(ref);
        }
        char c;
        ssize_t r = fdt_read(h, fd, &c, 1);
        if (r != 1 && r != -EBADF)
            atomic_fetch_add(&mismatches, 1);
    }
    fdt_files_put(h);
    return NULL;
}

static void *writer(void *arg)
{
    struct fdt_files *h = arg;
    for (int i = 0; i < ROUNDS; i++) {
        int a = i % SLOTS, b = (i * 7 + 3) % SLOTS;
        switch (i % 5) {
        case 0: /* dup2 copies the payload with the file */
            fdt_dup2(h, a, b);
            break;
        case 1: /* the atomic move */
            fdt_renumber(h, a, b);
            break;
        case 2: /* WASI's: onto an open fd only */
            fdt_renumber_onto(h, a, b);
            break;
        case 3: { /* a new file at a chosen number, with its payload */
            int id = fresh_id();
            fdt_install_at_with(h, b, new_file(id), 0, (uint64_t)id);
            break;
        }
        default:
            fdt_close(h, a);
        }
    }
    fdt_files_put(h);
    return NULL;
}

struct pending {
    struct fdt_reservation *res;
    int id;
};

static void *complete(void *arg)
{
    struct pending *p = arg;
    if (p->id % 3 == 0)
        fdt_reservation_release(p->res); /* a cancelled open */
    else
        fdt_reservation_install_with(p->res, new_file(p->id), (uint64_t)p->id);
    return NULL;
}

/* Reserves on its own handle, and has each open finish on another thread. */
static void *opener(void *arg)
{
    struct fdt_files *h = arg;
    for (int i = 0; i < ROUNDS / 8; i++) {
        struct pending p = {NULL, fresh_id()};
        int fd = fdt_reserve_owned(h, 0, &p.res);
        if (fd < 0) {
            if (fd != -EMFILE)
                atomic_fetch_add(&mismatches, 1);
            continue;
        }
        pthread_t th;
        if (pthread_create(&th, NULL, complete, &p) != 0)
            abort();
        pthread_join(th, NULL);
        if (fd >= SLOTS)
            fdt_close(h, fd); /* keep the table small */
    }
    fdt_files_put(h);
    return NULL;
}

int main(void)
{
    struct fdt_files *t = fdt_files_new();
    /* A soft limit just above the slots: openers also meet EMFILE. */
    if (fdt_set_nofile(t, SLOTS + 8, SLOTS + 8) != 0)
        abort();
    for (int fd = 0; fd < SLOTS; fd += 2) {
        int id = fresh_id();
        if (fdt_install_with(t, new_file(id), 0, (uint64_t)id) < 0)
            abort();
    }
    if (fdt_install_at(t, FIXED, new_file(fresh_id()), 0) != FIXED)
        abort();
    pthread_t r[READERS], w[WRITERS], o[OPENERS];
    for (int i = 0; i < READERS; i++)
        pthread_create(&r[i], NULL, reader, share(t));
    for (int i = 0; i < WRITERS; i++)
        pthread_create(&w[i], NULL, writer, share(t));
    for (int i = 0; i < OPENERS; i++)
        pthread_create(&o[i], NULL, opener, share(t));
    for (int i = 0; i < WRITERS; i++)
        pthread_join(w[i], NULL);
    for (int i = 0; i < OPENERS; i++)
        pthread_join(o[i], NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < READERS; i++)
        pthread_join(r[i], NULL);
    fdt_files_put(t);

    int passed = 0, failed = 0;
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            fprintf(stderr, __VA_ARGS__);                                                  \
        }                                                                                  \
    } while (0)
    CHECK(atomic_load(&mismatches) == 0, "%d lookups paired a file with another's payload\n",
          atomic_load(&mismatches));
    CHECK(atomic_load(&checked) > 0, "the readers checked no lookup\n");
    CHECK(atomic_load(&lent) > 0, "no fdt_fdget_rcu lookup was lent without a reference\n");
    CHECK(atomic_load(&made) == atomic_load(&released), "%d files made, %d released\n",
          atomic_load(&made), atomic_load(&released));
    printf("%d passed, %d failed (%d files, %d rights checks, %d lent lookups, %d kept)\n",
           passed, failed, atomic_load(&made), atomic_load(&checked), atomic_load(&lent),
           atomic_load(&kept));
    fflush(stdout);
    return failed ? 1 : 0;
}

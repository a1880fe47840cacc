/*
 * The C light lookup through the ABI: fdt_fdget + fdt_fd_file + fdt_fdput, on a table of
 * 8 open files with the handle unshared (the common case: one task, no lock, no refcount),
 * and on a shared table (two handles: the lookup takes and drops a reference); and
 * fdt_fdget_rcu on the shared table (an RCU section instead of the reference, 0.5).
 *
 *   fdget-bench [iters-per-sample [samples [case]]]
 *
 * Prints one line per case: the median ns per lookup over the samples. With a case
 * ("unshared", "shared" or "rcu-shared"), runs only that case's loop once, without warm-up
 * (but for the lookups that make the file lendable, outside the loop): under callgrind,
 * `--toggle-collect=measured_c_fdget*` then counts exactly `iters` lookups (see bench/run).
 */
#define _POSIX_C_SOURCE 200809L
#include <fdtable.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Built twice by bench/run: as a C user writes it (the header's inline fdt_fd_file /
 * fdt_fdput: one call per lookup), and with FDTABLE_NO_INLINE (three calls per lookup). */
#ifdef FDTABLE_NO_INLINE
#define NAME "c-3calls"
#else
#define NAME "c"
#endif

static void nop_release(void *pd) { (void)pd; }

static const struct fdt_file_ops ops = {.release = nop_release, .flags = FDT_FILE_NEVER_BLOCKS};

/* The measured loop. noinline so that callgrind can toggle on it and the compiler cannot
 * hoist the lookup: every iteration is one full lookup through the ABI. */
__attribute__((noinline)) uintptr_t measured_c_fdget(struct fdt_files *t, int fd, uint64_t iters)
{
    uintptr_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        struct fdt_fd f = fdt_fdget(t, fd);
        acc += (uintptr_t)fdt_fd_file(f);
        fdt_fdput(f);
    }
    return acc;
}

/* The same with fdt_fdget2, the call new code uses (the result through a pointer, -errno). */
__attribute__((noinline)) uintptr_t measured_c_fdget2(struct fdt_files *t, int fd, uint64_t iters)
{
    uintptr_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        struct fdt_fd f;
        if (fdt_fdget2(t, fd, &f) == 0)
            acc += (uintptr_t)fdt_fd_file(f);
        fdt_fdput(f);
    }
    return acc;
}

__attribute__((noinline)) uintptr_t measured_c_fdget_rcu(struct fdt_files *t, int fd, uint64_t iters)
{
    uintptr_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        struct fdt_fd f;
        if (fdt_fdget_rcu(t, fd, &f) == 0)
            acc += (uintptr_t)fdt_fd_file(f);
        fdt_fdput(f);
    }
    return acc;
}

/* Looks fd up until its file is lent without a reference; 0 if it never is. */
static int make_lendable(struct fdt_files *t, int fd)
{
    for (int i = 0; i < 1000; i++) {
        struct fdt_fd f;
        if (fdt_fdget_rcu(t, fd, &f) != 0)
            return 0;
        unsigned int flags = f.flags;
        fdt_fdput(f);
        if (flags == FDT_FDPUT_RCU)
            return 1;
    }
    return 0;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef uintptr_t (*loop_fn)(struct fdt_files *, int, uint64_t);

static double median_ns(loop_fn run, struct fdt_files *t, int fd, uint64_t iters, int samples)
{
    double *s = malloc(sizeof(double) * (size_t)samples);
    volatile uintptr_t sink = run(t, fd, iters / 4 + 1); /* warm-up */
    for (int i = 0; i < samples; i++) {
        double t0 = now_ns();
        sink = run(t, fd, iters);
        s[i] = (now_ns() - t0) / (double)iters;
    }
    (void)sink;
    qsort(s, (size_t)samples, sizeof *s, cmp);
    double m = s[samples / 2];
    free(s);
    return m;
}

int main(int argc, char **argv)
{
    uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    int samples = argc > 2 ? atoi(argv[2]) : 15;
    if (iters == 0 || samples <= 0)
        return 2;
    struct fdt_files *t = fdt_files_new();
    for (int i = 0; i < 8; i++)
        if (fdt_install(t, fdt_file_new(&ops, NULL, FDT_O_RDWR), 0) != i)
            return 1;
    const int fd = 5;
    struct fdt_fd probe = fdt_fdget(t, fd);
    if (!fdt_fd_file(probe) || probe.flags != 0)
        return 1;
    fdt_fdput(probe);

    const char *only = argc > 3 ? argv[3] : NULL;
    if (only && strcmp(only, "unshared") == 0) {
        printf("%lu\n", (unsigned long)measured_c_fdget(t, fd, iters));
        fdt_files_put(t);
        return 0;
    }
    if (only && strcmp(only, "unshared2") == 0) {
        printf("%lu\n", (unsigned long)measured_c_fdget2(t, fd, iters));
        fdt_files_put(t);
        return 0;
    }
    struct fdt_files *sib = NULL;
    if (!only) {
        printf(NAME "-fdget-unshared %.3f\n", median_ns(measured_c_fdget, t, fd, iters, samples));
        printf(NAME "-fdget2-unshared %.3f\n", median_ns(measured_c_fdget2, t, fd, iters, samples));
        sib = fdt_files_share(t);
        printf(NAME "-fdget-shared %.3f\n", median_ns(measured_c_fdget, t, fd, iters, samples));
        if (!make_lendable(t, fd))
            return 1;
        printf(NAME "-fdget-rcu-shared %.3f\n",
               median_ns(measured_c_fdget_rcu, t, fd, iters, samples));
    } else if (strcmp(only, "shared") == 0) {
        sib = fdt_files_share(t);
        printf("%lu\n", (unsigned long)measured_c_fdget(t, fd, iters));
    } else if (strcmp(only, "rcu-shared") == 0) {
        sib = fdt_files_share(t);
        if (!make_lendable(t, fd))
            return 1;
        printf("%lu\n", (unsigned long)measured_c_fdget_rcu(t, fd, iters));
    } else {
        return 2;
    }
    fdt_files_put(sib);
    fdt_files_put(t);
    return 0;
}

/*
 * A tour of libfdtable from C: a custom file type with callbacks, an open done the kernel's
 * way (reserve the fd, build the file, install it), light lookups, dup2, close-on-exec, fork
 * and exec, listing the open fds, installing at a chosen fd, fstat and poll. Every call that
 * can fail returns -errno (the 0.2 calls; FDTABLE_WARN_DEPRECATED flags the legacy ones).
 *
 *   make -C examples/c run
 */
#define FDTABLE_WARN_DEPRECATED
#include <fdtable.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a custom file: an in-memory buffer ---- */

struct memfile {
    char name[32];
    char data[256];
    int64_t size;
};

static ssize_t mem_read(void *pd, void *buf, size_t count, int64_t *pos)
{
    struct memfile *m = pd;
    if (*pos >= m->size)
        return 0;
    size_t n = (size_t)(m->size - *pos);
    if (n > count)
        n = count;
    memcpy(buf, m->data + *pos, n);
    *pos += (int64_t)n;
    return (ssize_t)n;
}

static ssize_t mem_write(void *pd, const void *buf, size_t count, int64_t *pos)
{
    struct memfile *m = pd;
    if (*pos >= (int64_t)sizeof m->data)
        return -ENOSPC;
    size_t n = sizeof m->data - (size_t)*pos;
    if (n > count)
        n = count;
    memcpy(m->data + *pos, buf, n);
    *pos += (int64_t)n;
    if (*pos > m->size)
        m->size = *pos;
    return (ssize_t)n;
}

static int64_t mem_llseek(void *pd, int64_t pos, int64_t offset, int whence)
{
    struct memfile *m = pd;
    int64_t base = whence == FDT_SEEK_SET ? 0 : whence == FDT_SEEK_CUR ? pos : whence == FDT_SEEK_END ? m->size : -1;
    if (base < 0 || base + offset < 0)
        return -EINVAL;
    return base + offset;
}

static int mem_flush(void *pd)
{
    struct memfile *m = pd;
    printf("  [%s] flush (a descriptor to it was closed)\n", m->name);
    return 0;
}

static void mem_release(void *pd)
{
    struct memfile *m = pd;
    printf("  [%s] release (last reference gone): freeing it\n", m->name);
    free(m);
}

static unsigned int mem_poll(void *pd)
{
    (void)pd;
    return FDT_POLLIN | FDT_POLLOUT; /* memory never blocks */
}

static int mem_getattr(void *pd, struct fdt_stat *st)
{
    struct memfile *m = pd;
    st->mode = FDT_S_IFREG | 0600; /* a regular file: FIONREAD answers size - position */
    st->nlink = 1;
    st->size = m->size;
    st->blksize = sizeof m->data;
    return 0;
}

static const struct fdt_file_ops memfile_ops = {
    .read = mem_read,
    .write = mem_write,
    .flush = mem_flush,
    .release = mem_release,
    .llseek = mem_llseek,
    .poll = mem_poll,
    .getattr = mem_getattr,
    /* .ioctl and .compat_ioctl are NULL: fdt_ioctl answers -ENOTTY for unknown commands. */
};

static struct memfile *memfile_new(const char *name)
{
    struct memfile *m = calloc(1, sizeof *m);
    if (m)
        snprintf(m->name, sizeof m->name, "%s", name);
    return m;
}

/* open(): reserve the lowest free fd first, then build the file, then install it. If building
 * fails, give the fd back: nothing else needs undoing. */
static int memfile_open(struct fdt_files *files, const char *name, unsigned int flags)
{
    int fd = fdt_get_unused_fd(files, flags);
    if (fd < 0)
        return fd; /* -EMFILE: nothing was built */
    struct memfile *m = memfile_new(name);
    if (!m) {
        fdt_put_unused_fd2(files, fd);
        return -ENOMEM;
    }
    struct fdt_file *file;
    int err = fdt_file_new2(&memfile_ops, sizeof memfile_ops, m, FDT_O_RDWR, &file);
    if (err < 0) {
        free(m); /* not made: m is still ours */
        fdt_put_unused_fd2(files, fd);
        return err;
    }
    err = fdt_fd_install2(files, fd, file); /* the table takes our reference */
    return err < 0 ? err : fd;
}

/* A syscall handler in a runtime: look the fd up (no lock, no refcount while the table is
 * unshared), use the file, put it. */
static void show(struct fdt_files *files, int fd)
{
    struct fdt_fd f;
    int err = fdt_fdget2(files, fd, &f);
    if (err < 0) {
        printf("  fd %d: not open (%d)\n", fd, err);
        return;
    }
    struct fdt_file *file = fdt_fd_file(f);
    if (fdt_file_has_ops(file, &memfile_ops) == 1) { /* one of ours: its private_data is a memfile */
        struct memfile *m = fdt_file_private_data(file);
        int cloexec = fdt_fcntl(files, fd, FDT_F_GETFD, 0);
        printf("  fd %d -> %-6s %s refs=%ld  \"%.*s\"\n", fd, m->name,
               cloexec ? "cloexec" : "       ", fdt_file_count(file), (int)m->size, m->data);
    }
    fdt_fdput(f);
}

int main(void)
{
    printf("libfdtable %u.%u.%u (built against %d.%d.%d)\n", fdt_version() >> 16,
           (fdt_version() >> 8) & 0xff, fdt_version() & 0xff, FDT_VERSION_MAJOR,
           FDT_VERSION_MINOR, FDT_VERSION_PATCH);
    struct fdt_files *files = fdt_files_new(); /* cannot fail */

    puts("open three files (lowest free fd, like Linux):");
    int log = memfile_open(files, "log", 0);
    int cfg = memfile_open(files, "config", FDT_O_CLOEXEC);
    int tmp = memfile_open(files, "tmp", 0);
    fdt_write(files, log, "hello", 5);
    fdt_write(files, cfg, "key=value", 9);
    show(files, log);
    show(files, cfg);
    show(files, tmp);

    puts("close(tmp), then open again: fd 2 is reused:");
    fdt_close(files, tmp);
    tmp = memfile_open(files, "tmp2", 0);
    show(files, tmp);

    puts("dup2(log, 10): fd 10 shares the open file (and its position):");
    printf("  dup2 -> %d\n", fdt_dup2(files, log, 10));
    fdt_write(files, 10, ", world", 7);
    show(files, log);
    printf("  dup2(log, 5000) -> %d (-EBADF: past RLIMIT_NOFILE 1024)\n", fdt_dup2(files, log, 5000));
    printf("  dup2(99, 3) -> %d (-EBADF: 99 is not open)\n", fdt_dup2(files, 99, 3));

    puts("dup2(log, tmp): tmp's file is displaced (flushed and released):");
    fdt_dup2(files, log, tmp);

    puts("list the open fds (fdt_next_open_fd, as /proc/self/fd):");
    printf("  ");
    for (int fd = fdt_next_open_fd(files, 0); fd >= 0; fd = fdt_next_open_fd(files, fd + 1))
        printf("%d ", fd);
    printf("\n");

    puts("install a file at a chosen fd (a restore): fdt_install_at(files, 7, ...):");
    struct memfile *restored = memfile_new("restored");
    struct fdt_file *rf;
    if (restored && fdt_file_new2(&memfile_ops, sizeof memfile_ops, restored, FDT_O_RDWR, &rf) == 0) {
        printf("  -> %d\n", fdt_install_at(files, 7, rf, 0));
        show(files, 7);
    } else {
        free(restored);
    }
    struct fdt_stat st;
    if (fdt_fstat(files, log, &st) == 0)
        printf("  fstat(log): regular=%d size=%lld\n", (st.mode & FDT_S_IFMT) == FDT_S_IFREG,
               (long long)st.size);
    struct fdt_pollfd pfd = {log, FDT_POLLIN, 0};
    int ready = fdt_poll(files, &pfd, 1);
    printf("  poll(log, POLLIN) -> %d, revents %#x\n", ready, (unsigned)pfd.revents);

    puts("fork: the child gets a copy of the table; files gain a reference:");
    struct fdt_files *child;
    int err = fdt_files_fork2(files, &child);
    if (err < 0) {
        printf("  fork: %d\n", err);
        return 1;
    }
    show(child, log);
    show(child, cfg);

    puts("the child execs: its close-on-exec fds are closed:");
    fdt_exec(child);
    show(child, cfg);
    show(files, cfg);

    char buf[64];
    fdt_lseek(child, log, 0, FDT_SEEK_SET);
    ssize_t n = fdt_read(child, log, buf, sizeof buf);
    printf("  the child reads log from 0: \"%.*s\"\n", (int)n, buf);
    printf("  ioctl(log, 0x1234) -> %ld (-ENOTTY: no ioctl callback)\n", fdt_ioctl(child, log, 0x1234, 0));

    puts("the child exits, then the parent:");
    fdt_files_put(child);
    fdt_files_put(files);
    puts("done.");
    return 0;
}

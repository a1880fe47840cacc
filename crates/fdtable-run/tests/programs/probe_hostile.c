/* Hostile programs: every way a program once reached real numbers, another table or the
 * supervisor under a translating supervisor. Each mode prints what it found; natively and
 * under fdtable run the output must be the same ("supervisor" mode: everything refused). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int same_file(int a, int b) {
    struct stat x, y;
    return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_ino == y.st_ino && x.st_dev == y.st_dev;
}

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

/* 1. The kernel reporting numbers back. */
static volatile int sig_fd = -1;
static void on_io(int s, siginfo_t *i, void *c) { (void)s; (void)c; sig_fd = i->si_fd; }
static int blocked_fd;
static volatile long blocked_tid;
static void *blocker(void *a) {
    char c;
    (void)a;
    blocked_tid = syscall(SYS_gettid);
    read(blocked_fd, &c, 1);
    return NULL;
}

static void report(void) {
    int p[2];
    pipe(p);
    int hi = fcntl(p[0], F_DUPFD, 40);
    struct sigaction sa = {.sa_sigaction = on_io, .sa_flags = SA_SIGINFO};
    sigaction(SIGRTMIN, &sa, NULL);
    fcntl(hi, F_SETOWN, getpid());
    fcntl(hi, F_SETSIG, SIGRTMIN);
    fcntl(hi, F_SETFL, O_ASYNC | O_NONBLOCK);
    write(p[1], "x", 1);
    for (int i = 0; i < 100 && sig_fd < 0; i++) usleep(1000);
    printf("si_fd is the program's number: %d\n", sig_fd == hi);
    /* /proc/<tid>/syscall of a thread blocked in read(fd): its argument is the number. */
    int q[2];
    pipe(q);
    blocked_fd = fcntl(q[0], F_DUPFD, 50);
    pthread_t t;
    pthread_create(&t, NULL, blocker, NULL);
    usleep(50000);
    char path[64], buf[256] = "";
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", blocked_tid);
    int sf = open(path, O_RDONLY);
    ssize_t n = sf >= 0 ? read(sf, buf, sizeof buf - 1) : -1;
    long nr = -2, a0 = -1;
    if (n > 0) sscanf(buf, "%ld 0x%lx", &nr, &a0);
    printf("/proc/self/task/TID/syscall shows read(%ld): %d\n", (long)blocked_fd, nr == 0 && a0 == blocked_fd);
    write(q[1], "y", 1);
    pthread_join(t, NULL);
    /* The program's own filter sees its own numbers: dup2 onto 60 refused, onto 61 not. */
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_dup2, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 60, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    printf("own filter: %s; dup2 onto 60: %s", err(r), err(dup2(0, 60)));
    const char *d61 = err(dup2(0, 61));
    printf("; dup2 onto 61: %s; 61 open: %d\n", d61, fcntl(61, F_GETFD) >= 0);
}

/* 2. Paths to descriptors: every spelling is the kernel's own. */
static void paths(void) {
    int fd = open("/etc/hostname", O_RDONLY);
    int hi = fcntl(fd, F_DUPFD, 70);
    char p[128];
    snprintf(p, sizeof p, "/proc/self/fd/%d", hi);
    int a = open(p, O_RDONLY);
    printf("/proc/self/fd/N: %d\n", same_file(a, hi));
    snprintf(p, sizeof p, "/proc/%d/fd/%d", getpid(), hi);
    int b = open(p, O_RDONLY);
    printf("/proc/PID/fd/N: %d\n", same_file(b, hi));
    snprintf(p, sizeof p, "/proc/thread-self/fd/%d", hi);
    int c = open(p, O_RDONLY);
    printf("/proc/thread-self/fd/N: %d\n", same_file(c, hi));
    char l[256] = "";
    readlink("/proc/1/root", l, sizeof l - 1);
    printf("/proc/1/root: %s\n", l[0] ? l : strerror(errno));
    /* openat2 with resolve flags on /proc. */
    int proc = open("/proc", O_PATH | O_DIRECTORY);
    struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_IN_ROOT};
    snprintf(p, sizeof p, "self/fd/%d", hi);
    int d = syscall(SYS_openat2, proc, p, &how, sizeof how);
    printf("openat2 RESOLVE_IN_ROOT: %s %d\n", err(d), d >= 0 && same_file(d, hi));
    how.resolve = RESOLVE_NO_MAGICLINKS;
    int e = syscall(SYS_openat2, proc, p, &how, sizeof how);
    printf("openat2 RESOLVE_NO_MAGICLINKS: %s\n", err(e));
    /* A procfs of its own, and a detached clone of /proc, in a mount namespace of its own. */
    pid_t k = fork();
    if (k == 0) {
        if (unshare(CLONE_NEWNS) == 0) {
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
            mkdir("newproc", 0700);
            int m = mount("proc", "newproc", "proc", 0, NULL);
            snprintf(p, sizeof p, "newproc/self/fd/%d", hi);
            int g = open(p, O_RDONLY);
            printf("new procfs: %s %d\n", err(m), g >= 0 && same_file(g, hi));
            int tree = syscall(SYS_open_tree, AT_FDCWD, "/proc", 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC);
            snprintf(p, sizeof p, "self/fd/%d", hi);
            int h = openat(tree, p, O_RDONLY);
            printf("open_tree: %d\n", h >= 0 && same_file(h, hi));
            /* chroot into /proc. */
            if (chroot("/proc") == 0) {
                snprintf(p, sizeof p, "/self/fd/%d", hi);
                int i = open(p, O_RDONLY);
                printf("chroot /proc: %d\n", i >= 0 && same_file(i, hi));
            }
        } else {
            printf("new procfs: %s\n", strerror(errno));
        }
        fflush(stdout);
        _exit(0);
    }
    waitpid(k, NULL, 0);
    rmdir("newproc");
    /* A non-dumpable program forks and executes: its tables are still the library's. */
    prctl(PR_SET_DUMPABLE, 0);
    k = fork();
    if (k == 0) {
        execl("/bin/sh", "sh", "-c", "exec 5</dev/null; ls /proc/self/fd | tr '\\n' ' '; echo", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(k, &st, 0);
    printf("non-dumpable exec: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* 3. Another thread rewriting memory mid-call. */
static volatile int flipping = 1;
static char flip_path[32] = "/dev/null";
static void *flipper(void *a) {
    (void)a;
    while (flipping) {
        memcpy(flip_path, "/nonexistent", 13);
        memcpy(flip_path, "/dev/null", 10);
    }
    return NULL;
}

static void race(void) {
    pthread_t t;
    pthread_create(&t, NULL, flipper, NULL);
    int opened = 0, failed = 0;
    for (int i = 0; i < 2000; i++) {
        int fd = open(flip_path, O_RDONLY);
        if (fd >= 0) {
            opened++;
            close(fd);
        } else {
            failed++;
        }
    }
    flipping = 0;
    pthread_join(t, NULL);
    /* Whatever the interleaving, the table is back where it was. */
    int probe = open("/dev/null", O_RDONLY);
    printf("opens under a flipping path: %d in all; next descriptor %d\n", opened + failed, probe);
}

/* 4. Memory the supervisor cannot read. */
static void memory(void) {
    int s = syscall(SYS_memfd_secret, 0);
    if (s >= 0) {
        ftruncate(s, 4096);
        char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s, 0);
        if (m != MAP_FAILED) {
            strcpy(m, "/dev/null");
            int fd = open(m, O_RDONLY);
            printf("path in memfd_secret: %s\n", err(fd));
            close(fd);
        } else {
            printf("path in memfd_secret: %s\n", strerror(errno));
        }
        close(s);
    } else {
        printf("path in memfd_secret: %s\n", strerror(errno));
    }
}

/* 5. The supervisor: find it (this program's tracer; natively there is none). */
static int tracer_pid(void) {
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    int t = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "TracerPid:", 10)) t = atoi(line + 10);
    if (f) fclose(f);
    return t;
}

static void *dup2_and_pause(void *a) {
    int *p = a;
    dup2(p[0], p[1]);
    for (;;) pause();
    return NULL;
}

static void supervisor(void) {
    int found = 0;
    int pid = tracer_pid();
    if (pid > 0) {
        char p[64];
        found++;
        printf("kill SIGSTOP: %s\n", err(kill(pid, SIGSTOP)));
        printf("kill group: %s\n", err(kill(-pid, SIGSTOP)));
        printf("tgkill: %s\n", err(syscall(SYS_tgkill, pid, pid, SIGSTOP)));
        printf("pidfd_open: %s\n", err(syscall(SYS_pidfd_open, pid, 0)));
        char buf[8];
        struct iovec l = {buf, 8}, r = {(void *)0x400000, 8};
        printf("process_vm_readv: %s\n", err(process_vm_readv(pid, &l, 1, &r, 1, 0)));
        struct rlimit rl = {0, 0};
        printf("prlimit: %s\n", err(syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &rl, NULL)));
        int opened = 0;
        for (int n = 0; n < 64; n++) {
            snprintf(p, sizeof p, "/proc/%d/fd/%d", pid, n);
            int x = open(p, O_RDONLY);
            if (x >= 0) { opened++; close(x); }
        }
        printf("its descriptors opened through /proc: %d\n", opened);
        snprintf(p, sizeof p, "/proc/%d/mem", pid);
        printf("its memory: %s\n", err(open(p, O_RDONLY)));
        snprintf(p, sizeof p, "/proc/%d", pid);
        int dir = open(p, O_RDONLY | O_DIRECTORY);
        printf("pidfd_send_signal on /proc/PID: %s\n", err(syscall(SYS_pidfd_send_signal, dir, SIGSTOP, NULL, 0)));
        /* The same directory at a number another thread has just dup2'd it to, and is not
         * back from: the supervisor cannot have settled it yet. */
        pthread_t t;
        int pin[2] = {dir, 100};
        pthread_create(&t, NULL, dup2_and_pause, pin);
        usleep(100000);
        printf("pidfd_send_signal on a number another thread just dup2'd: %s\n",
               err(syscall(SYS_pidfd_send_signal, 100, SIGSTOP, NULL, 0)));
        close(dir);
        /* The signal a file's I/O raises, owned by the supervisor: F_SETSIG makes it SIGSTOP. */
        int pp[2];
        pipe(pp);
        fcntl(pp[0], F_SETSIG, SIGSTOP);
        printf("F_SETOWN: %s\n", err(fcntl(pp[0], F_SETOWN, pid)));
        printf("F_SETOWN group: %s\n", err(fcntl(pp[0], F_SETOWN, -pid)));
        struct f_owner_ex o = {F_OWNER_TID, pid};
        printf("F_SETOWN_EX: %s\n", err(fcntl(pp[0], F_SETOWN_EX, &o)));
        int sp[2];
        socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
        printf("FIOSETOWN: %s\n", err(ioctl(sp[0], FIOSETOWN, &pid)));
        printf("SIOCSPGRP: %s\n", err(ioctl(sp[0], SIOCSPGRP, &pid)));
        fcntl(pp[0], F_SETFL, O_ASYNC | O_NONBLOCK);
        fcntl(sp[0], F_SETFL, O_ASYNC | O_NONBLOCK);
        write(pp[1], "x", 1);
        write(sp[1], "x", 1);
        /* Every thread of the supervisor, by its own id (the filter refuses only the ids
         * it was given; signal 0 and a read-only prlimit64 harm nothing if one got through). */
        snprintf(p, sizeof p, "/proc/%d/task", pid);
        DIR *td = opendir(p);
        struct dirent *te;
        int threads = 0, reached = 0;
        while (td && (te = readdir(td))) {
            int tid = atoi(te->d_name);
            if (tid <= 0) continue;
            threads++;
            struct rlimit old;
            reached += syscall(SYS_tkill, tid, 0) == 0;
            reached += syscall(SYS_prlimit64, tid, RLIMIT_NOFILE, NULL, &old) == 0;
        }
        if (td) closedir(td);
        printf("its threads reached by tkill or prlimit64: %d%s\n", reached, threads > 2 ? "" : " (too few threads seen)");
        /* Every process of this user: the supervisor's too (to the nice it has, if this
         * ever went through). */
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, pid);
        printf("setpriority(PRIO_USER): %s\n", err(setpriority(PRIO_USER, 0, errno ? 0 : nice)));
    }
    printf("supervisors found: %d; kill(-1, 0): %s\n", found, err(kill(-1, 0)));
}

/* 6. Descriptors inside structures and clone flags. */
static int child(void *a) { (void)a; return 0; }
static void hidden(void) {
    int ns = open("/proc/self/ns/mnt", O_RDONLY);
    struct { unsigned size, nr; unsigned long long id; } info = {16, 0, 0};
    long r = ioctl(ns, 0x8010b70b /* NS_MNT_GET_NEXT */, &info);
    printf("NS_MNT_GET_NEXT: %s\n", r >= 0 ? "a descriptor" : strerror(errno));
    if (r >= 0) close(r);
    int tp = open("/dev/ptmx", O_RDWR | O_NOCTTY);
    if (tp >= 0) {
        unlockpt(tp);
        long peer = ioctl(tp, 0x5441 /* TIOCGPTPEER */, O_RDWR | O_NOCTTY | O_CLOEXEC);
        printf("TIOCGPTPEER: %s, close-on-exec %d\n", err(peer), peer >= 0 ? fcntl(peer, F_GETFD) : -1);
    }
    char *stack = malloc(65536);
    long c = clone(child, stack + 65536, CLONE_UNTRACED | SIGCHLD, NULL);
    if (c > 0) waitpid(c, NULL, 0);
    printf("clone(CLONE_UNTRACED): %s\n", err(c));
}

/* 7. Look-alikes and bits the kernel sets by itself: a directory with a FIFO called stat
 * (pidfd_send_signal takes only procfs directories; reading this one would block), and the
 * close-on-exec bit of an SCM_PIDFD descriptor (always set, MSG_CMSG_CLOEXEC or not). */
static void lookalike(void) {
    char d[] = "/tmp/fdtable-lookalike-XXXXXX";
    if (!mkdtemp(d)) return;
    char f[128];
    snprintf(f, sizeof f, "%s/stat", d);
    mkfifo(f, 0600);
    int dir = open(d, O_RDONLY | O_DIRECTORY);
    printf("pidfd_send_signal on a directory with a FIFO stat: %s\n",
           err(syscall(SYS_pidfd_send_signal, dir, 0, NULL, 0)));
    close(dir);
    unlink(f);
    rmdir(d);
    int sp[2], one = 1;
    socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
    if (setsockopt(sp[1], SOL_SOCKET, 76 /* SO_PASSPIDFD */, &one, sizeof one) == 0) {
        write(sp[0], "x", 1);
        char c, ctl[64];
        struct iovec v = {&c, 1};
        struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        long r = recvmsg(sp[1], &m, 0);
        struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
        if (h && h->cmsg_type == 4 /* SCM_PIDFD */) {
            int fd;
            memcpy(&fd, CMSG_DATA(h), sizeof fd);
            printf("SCM_PIDFD: close-on-exec %d\n", fcntl(fd, F_GETFD));
            close(fd);
        } else {
            printf("SCM_PIDFD: none\n");
        }
    }
    close(sp[0]);
    close(sp[1]);
}

/* 8. A pid namespace of the program's: a pid in a SIGIO owner is the namespace's, so an
 * owner the supervisor sets for it (with its own view of pids) would be another process;
 * kill(-1) there signals the namespace's processes, as natively. */
static void pidns(void) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
        printf("unshare: %s\n", strerror(errno));
        return;
    }
    pid_t c = fork();
    if (c == 0) {
        int p[2];
        pipe(p);
        struct f_owner_ex o = {F_OWNER_PID, 1}, got = {0, 0};
        int r = fcntl(p[0], F_SETOWN_EX, &o);
        fcntl(p[0], F_GETOWN_EX, &got);
        printf("F_SETOWN_EX of pid 1 in a pid namespace: %s, owner %d\n", err(r), got.pid);
        /* kill(-1) there reaches the namespace's processes only (never the supervisor). */
        pid_t s = fork();
        if (s == 0) {
            for (;;) pause();
        }
        r = kill(-1, SIGKILL);
        int st = 0;
        waitpid(s, &st, 0);
        printf("kill(-1) in a pid namespace: %s, its other process killed: %d\n", err(r),
               WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        _exit(0);
    }
    waitpid(c, NULL, 0);
}

/* 9. The program's parent (the caller of fdtable run) is not the supervisor: signalling it
 * through a pidfd or a /proc/<pid> directory works as kill() does. */
static void parent(void) {
    int pfd = syscall(SYS_pidfd_open, getppid(), 0);
    printf("pidfd_send_signal to the parent: %s\n",
           err(syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0)));
    char p[64];
    snprintf(p, sizeof p, "/proc/%d", getppid());
    int d = open(p, O_RDONLY | O_DIRECTORY);
    printf("through /proc/<parent>: %s\n", err(syscall(SYS_pidfd_send_signal, d, 0, NULL, 0)));
    printf("kill of the parent: %s\n", err(kill(getppid(), 0)));
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "report")) report();
    else if (!strcmp(m, "paths")) paths();
    else if (!strcmp(m, "race")) race();
    else if (!strcmp(m, "memory")) memory();
    else if (!strcmp(m, "supervisor")) supervisor();
    else if (!strcmp(m, "hidden")) hidden();
    else if (!strcmp(m, "lookalike")) lookalike();
    else if (!strcmp(m, "pidns")) pidns();
    else if (!strcmp(m, "parent")) parent();
    else return 2;
    return 0;
}

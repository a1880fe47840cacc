/* Calls that block inside the kernel while other threads of the same table keep changing it:
 * a FIFO opened by a reader and a writer in two threads, an accept waiting for a thread's
 * connect, descriptors passed between threads with SCM_RIGHTS, forks while threads churn.
 * None may wait for another thread's call to be answered. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *fifo_reader(void *arg) {
    int fd = open((char *)arg, O_RDONLY);
    char c = 0;
    if (fd < 0 || read(fd, &c, 1) != 1) return (void *)1;
    close(fd);
    return c == 'x' ? NULL : (void *)1;
}

static void *acceptor(void *arg) {
    int ls = *(int *)arg;
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return (void *)1;
    char b;
    int ok = read(c, &b, 1) == 1 && b == 'y';
    close(c);
    return ok ? NULL : (void *)1;
}

static void *receiver(void *arg) {
    int s = *(int *)arg;
    char b;
    struct iovec io = {&b, 1};
    union { struct cmsghdr h; char buf[CMSG_SPACE(3 * sizeof(int))]; } u;
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1) return (void *)1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS) return (void *)1;
    int fds[3];
    memcpy(fds, CMSG_DATA(c), sizeof fds);
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        if (fcntl(fds[i], F_GETFD) != FD_CLOEXEC) bad++;
        close(fds[i]);
    }
    return bad ? (void *)1 : NULL;
}

static void *churner(void *arg) {
    (void)arg;
    while (!stop) {
        int a = open("/dev/null", O_RDONLY);
        int p[2];
        if (pipe(p) == 0) {
            close(p[0]);
            close(p[1]);
        }
        int b = dup(a);
        close(a);
        close(b);
    }
    return NULL;
}

/* A forked child's table must be usable as it is: every number it lists is open. */
static int child_table_ok(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int self = dirfd(d), ok = 1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd != self && fcntl(fd, F_GETFD) < 0) ok = 0;
    }
    closedir(d);
    return ok;
}

int main(void) {
    pthread_t t, c[4];
    /* FIFO: the reader blocks in open until the writer opens. */
    mkfifo("fifo", 0600);
    pthread_create(&t, NULL, fifo_reader, "fifo");
    usleep(50000);
    int w = open("fifo", O_WRONLY);
    int wok = w >= 0 && write(w, "x", 1) == 1;
    void *r;
    pthread_join(t, &r);
    close(w);
    unlink("fifo");
    printf("fifo %s\n", wok && !r ? "ok" : "FAILED");
    /* accept in one thread, connect in another. */
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, "sock");
    unlink("sock");
    bind(ls, (struct sockaddr *)&a, sizeof a);
    listen(ls, 1);
    pthread_create(&t, NULL, acceptor, &ls);
    usleep(50000);
    int cs = socket(AF_UNIX, SOCK_STREAM, 0);
    int cok = connect(cs, (struct sockaddr *)&a, sizeof a) == 0 && write(cs, "y", 1) == 1;
    pthread_join(t, &r);
    close(cs);
    close(ls);
    unlink("sock");
    printf("accept %s\n", cok && !r ? "ok" : "FAILED");
    /* SCM_RIGHTS between two threads of the table, while others churn. */
    for (int i = 0; i < 4; i++) pthread_create(&c[i], NULL, churner, NULL);
    int sp[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
    pthread_create(&t, NULL, receiver, &sp[1]);
    usleep(20000);
    int fds[3] = {open("/dev/null", O_RDONLY), open("/dev/zero", O_RDONLY), dup(1)};
    char b = 'z';
    struct iovec io = {&b, 1};
    union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof fds)]; } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(h), fds, sizeof fds);
    int sok = sendmsg(sp[0], &m, 0) == 1;
    pthread_join(t, &r);
    for (int i = 0; i < 3; i++) close(fds[i]);
    printf("scm_rights %s\n", sok && !r ? "ok" : "FAILED");
    /* Forks while the threads churn: each child's copy is usable. */
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        pid_t p = fork();
        if (p == 0) _exit(child_table_ok() ? 0 : 1);
        int st;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) bad++;
    }
    stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(c[i], NULL);
    close(sp[0]);
    close(sp[1]);
    printf("forks while churning: %d bad\n", bad);
    return 0;
}

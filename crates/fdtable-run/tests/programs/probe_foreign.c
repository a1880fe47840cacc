/* Descriptors made outside the program whose read() installs descriptors in the reader's
 * table, where no call the supervisor sees announces them (red team round 17): a userfaultfd
 * with UFFD_FEATURE_EVENT_FORK, or a fanotify group whose events carry descriptors.
 *
 *   probe_foreign outer KIND CMD...    makes one (KIND: uffd, fanotify) at descriptor 3,
 *                                      inheritable, and executes CMD (fdtable run ...)
 *   probe_foreign sender KIND CMD...   starts a child outside CMD that makes one and sends
 *                                      it over the Unix socket at CMD's descriptor 3
 *   probe_foreign receive              receives it, then opens /dev/null
 *   probe_foreign receive-fork         receives it and forks at once (fork is not a call the
 *                                      supervisor is asked about); the child opens /dev/null
 *   probe_foreign receive-thread-fork  one thread receives it and sleeps; another forks as
 *                                      soon as it is installed; the child opens /dev/null
 *   probe_foreign receive-exec         one thread receives it and sleeps; another, as soon as
 *                                      it is installed, executes this program (after-exec),
 *                                      which prints and opens /dev/null
 *
 * outer/sender print "unsupported: ..." and exit 0 where the object cannot be made here
 * (fanotify needs CAP_SYS_ADMIN). receive prints what it received and what open returned.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static int make(const char *kind) {
    if (!strcmp(kind, "fanotify"))
        return fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
    int u = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    if (u < 0) u = syscall(SYS_userfaultfd, O_CLOEXEC);
    if (u < 0) return -1;
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_EVENT_FORK};
    if (ioctl(u, UFFDIO_API, &api) < 0) return -1;
    return u;
}

/* Receives one descriptor on the Unix socket at 3: its number, or -1. */
static int receive_one(void) {
    char c;
    struct iovec iv = {&c, 1};
    union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr h; } u;
    struct msghdr mh = {.msg_iov = &iv, .msg_iovlen = 1, .msg_control = u.b,
                        .msg_controllen = sizeof u.b};
    ssize_t r = recvmsg(3, &mh, 0);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    int got = -1;
    if (r > 0 && cm && cm->cmsg_type == SCM_RIGHTS) memcpy(&got, CMSG_DATA(cm), sizeof got);
    return got;
}

static void *receive_and_sleep(void *u) {
    (void)u;
    receive_one();
    for (;;) pause();
    return NULL;
}

/* Starts a thread that receives the descriptor and sleeps, and returns once it is installed
 * (at 4). F_GETFL is not a call the supervisor sees: it learns of the received descriptor
 * only when the receiving thread makes its next call, which it never does. */
static void receive_in_a_thread(void) {
    alarm(20); /* never waits forever for the descriptor */
    pthread_t t;
    pthread_create(&t, NULL, receive_and_sleep, NULL);
    while (fcntl(4, F_GETFL) < 0) {
    }
}

/* Forks a child that opens /dev/null, and reports how it ended. */
static int fork_and_report(void) {
    pid_t k = syscall(SYS_fork); /* not a call the supervisor is asked about */
    if (k == 0) {
        printf("child open: %d\n", open("/dev/null", O_RDONLY));
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(k, &st, 0);
    printf("child %s %d\n", WIFSIGNALED(st) ? "killed by signal" : "exit",
           WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "after-exec")) {
        printf("executed, open: %d\n", open("/dev/null", O_RDONLY));
        return 0;
    }
    if (!strcmp(mode, "receive-thread-fork")) {
        receive_in_a_thread();
        return fork_and_report();
    }
    if (!strcmp(mode, "receive-exec")) {
        receive_in_a_thread();
        execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
        return 127;
    }
    if (!strcmp(mode, "receive-fork")) {
        receive_one();
        return fork_and_report();
    }
    if (!strcmp(mode, "receive")) {
        printf("received %d\n", receive_one());
        fflush(stdout);
        printf("open: %d\n", open("/dev/null", O_RDONLY));
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: probe_foreign outer|sender KIND CMD... | receive\n");
        return 2;
    }
    const char *kind = argv[2];
    if (!strcmp(argv[1], "outer")) {
        int f = make(kind);
        if (f < 0) {
            printf("unsupported: %s\n", strerror(errno));
            return 0;
        }
        if (f != 3 && dup2(f, 3) < 0) return 2;
        fcntl(3, F_SETFD, 0); /* inherited by CMD */
        execvp(argv[3], argv + 3);
        return 127;
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0) return 2;
    int probe = make(kind);
    if (probe < 0) {
        printf("unsupported: %s\n", strerror(errno));
        return 0;
    }
    close(probe);
    pid_t child = fork();
    if (child == 0) {
        close(sp[0]);
        int f = make(kind);
        char c = 'x';
        struct iovec iv = {&c, 1};
        union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr h; } u;
        memset(&u, 0, sizeof u);
        struct msghdr mh = {.msg_iov = &iv, .msg_iovlen = 1, .msg_control = u.b,
                            .msg_controllen = sizeof u.b};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &f, sizeof f);
        _exit(sendmsg(sp[1], &mh, 0) == 1 ? 0 : 1);
    }
    close(sp[1]);
    if (dup2(sp[0], 3) < 0) return 2;
    if (sp[0] != 3) close(sp[0]);
    pid_t p = fork();
    if (p == 0) {
        execvp(argv[3], argv + 3);
        _exit(127);
    }
    int st;
    waitpid(child, &st, 0);
    waitpid(p, &st, 0);
    if (WIFSIGNALED(st)) printf("killed by signal %d\n", WTERMSIG(st));
    else printf("exit %d\n", WEXITSTATUS(st));
    return 0;
}

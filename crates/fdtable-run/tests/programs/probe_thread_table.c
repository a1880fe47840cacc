/* Threads whose table is not their thread group leader's: one that unshared its table
 * (unshare(CLONE_FILES)), or one whose leader has exited (pthread_exit: the leader has no
 * table left). Whatever the supervisor looks up for such a thread must be the thread's.
 *
 *   probe_thread_table signal SIG        an unshared thread holds /proc/<sibling> at 3 (the
 *                                        leader has /dev/null there) and signals it with
 *                                        pidfd_send_signal; natively the sibling is a child
 *                                        of ours, under fdtable run the supervisor
 *   probe_thread_table zombie-signal SIG the same from a thread whose leader has exited
 *   probe_thread_table zombie-owner      F_SETOWN_EX and FIOSETOWN from such a thread
 *   probe_thread_table owner             F_SETOWN_EX on the unshared thread's socket at 3
 *                                        (the leader has another socket at 3)
 *   probe_thread_table recv              the unshared thread receives SCM_RIGHTS on a Unix
 *                                        socket whose number is the leader's UDP socket
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int sig, target;
static const char *mode = "";

/* The supervisor under fdtable run: this program's tracer. Natively nothing traces it, so
 * a child of our own stands in. Returns that child (0 under fdtable run). */
static pid_t find_target(void) {
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "TracerPid:", 10)) target = atoi(line + 10);
    if (f) fclose(f);
    if (target) return 0;
    pid_t kid = fork();
    if (kid == 0) {
        pause();
        _exit(0);
    }
    target = kid;
    return kid;
}

static void signal_target(void) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%d", target);
    int d = open(p, O_RDONLY | O_DIRECTORY);
    long r = syscall(SYS_pidfd_send_signal, d, sig, NULL, 0);
    /* Natively our own child gets it (allowed); the supervisor must refuse it. */
    printf("pidfd_send_signal at %d: %s\n", d, r == 0 ? "sent" : strerror(errno));
    fflush(stdout);
}

static void owner_calls(void) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    struct f_owner_ex o = {F_OWNER_PID, getpid()};
    int r = fcntl(sv[0], F_SETOWN_EX, &o);
    struct f_owner_ex g = {0, 0};
    fcntl(sv[0], F_GETOWN_EX, &g);
    printf("F_SETOWN_EX %d %s, owner is us %d\n", r, r ? strerror(errno) : "", g.pid == getpid());
    int pid = getpid();
    r = ioctl(sv[1], FIOSETOWN, &pid);
    printf("FIOSETOWN %d %s, owner is us %d\n", r, r ? strerror(errno) : "",
           fcntl(sv[1], F_GETOWN) == getpid());
}

static int sendfd(int s, int fd) {
    char c = 'x', buf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&c, 1};
    memset(buf, 0, sizeof buf);
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
    return sendmsg(s, &m, 0);
}

static int recvfd(int s) {
    char c, buf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&c, 1};
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
    if (recvmsg(s, &m, 0) < 0) return -1;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (!h) return -2;
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof fd);
    return fd;
}

static void *thread(void *u) {
    (void)u;
    if (strncmp(mode, "zombie", 6) == 0) {
        usleep(100000); /* the leader has exited by now */
        if (strcmp(mode, "zombie-signal") == 0) signal_target();
        else owner_calls();
        int x = open("/dev/null", O_RDONLY); /* a notified call: the supervisor still answers */
        printf("open after: %d\n", x);
        exit(0);
    }
    if (unshare(CLONE_FILES)) {
        perror("unshare");
        return NULL;
    }
    close(3);
    if (strcmp(mode, "signal") == 0) {
        signal_target();
    } else if (strcmp(mode, "owner") == 0) {
        int s = socket(AF_UNIX, SOCK_DGRAM, 0);
        struct f_owner_ex o = {F_OWNER_PID, getpid()};
        int r = fcntl(s, F_SETOWN_EX, &o);
        struct f_owner_ex g = {0, 0};
        fcntl(s, F_GETOWN_EX, &g);
        printf("thread: socket %d F_SETOWN_EX %d, owner is us %d\n", s, r, g.pid == getpid());
    } else if (strcmp(mode, "recv") == 0) {
        int sv[2];
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
        printf("thread: socketpair %d %d\n", sv[0], sv[1]);
        sendfd(sv[1], 0);
        int r = recvfd(sv[0]);
        struct stat st;
        printf("received %d: F_GETFD %d fstat %d\n", r, fcntl(r, F_GETFD), fstat(r, &st) == 0);
        int o = open("/dev/null", O_RDONLY);
        printf("open %d: F_GETFD %d fstat %d\n", o, fcntl(o, F_GETFD), fstat(o, &st) == 0);
    }
    return NULL;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "";
    sig = argc > 2 ? atoi(argv[2]) : 0;
    pid_t kid = 0;
    if (strstr(mode, "signal")) kid = find_target();
    /* The leader's 3: /dev/null, a Unix socket, or a UDP socket. */
    if (strcmp(mode, "owner") == 0) socket(AF_UNIX, SOCK_DGRAM, 0);
    else if (strcmp(mode, "recv") == 0) socket(AF_INET, SOCK_DGRAM, 0);
    else open("/dev/null", O_RDONLY);
    pthread_t t;
    pthread_create(&t, NULL, thread, NULL);
    if (strncmp(mode, "zombie", 6) == 0) pthread_exit(NULL);
    pthread_join(t, NULL);
    if (strcmp(mode, "owner") == 0)
        printf("leader: socket 3 owner is us %d\n", fcntl(3, F_GETOWN) == getpid());
    int x = open("/dev/null", O_RDONLY);
    printf("leader: open after: %d\n", x);
    if (kid) {
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
    }
    return 0;
}

/* Two threads receive SCM_RIGHTS (without MSG_CMSG_CLOEXEC: F_GETFD must answer 0) on a
 * shared table while the main thread creates short threads (clone3, whose possible pidfd is
 * reserved) and opens with O_CLOEXEC (F_GETFD must answer 1): the received descriptors may
 * take the numbers reserved for the others. Prints the wrong F_GETFD answers and the
 * F_GETFD/fstat disagreements ("disagreements 0 wrong-bits 0").
 *
 *   probe_recv_bits [rounds] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
static int sv[2], iters, bad, wrongbit;
static volatile int stop;
static void sendfds(int s, int n) {
    char c = 'x'; struct iovec iov = {&c, 1};
    char buf[CMSG_SPACE(sizeof(int) * 4)]; memset(buf, 0, sizeof buf);
    struct msghdr m = {0};
    m.msg_iov = &iov; m.msg_iovlen = 1; m.msg_control = buf; m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET; h->cmsg_type = SCM_RIGHTS; h->cmsg_len = CMSG_LEN(sizeof(int) * n);
    int fds[4] = {0, 1, 2, 0}; memcpy(CMSG_DATA(h), fds, sizeof(int) * n);
    sendmsg(s, &m, 0);
}
static void *recvr(void *u) {
    (void)u;
    while (!stop) {
        sendfds(sv[1], 3);
        char c; struct iovec iov = {&c, 1};
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct msghdr m = {0};
        m.msg_iov = &iov; m.msg_iovlen = 1; m.msg_control = buf; m.msg_controllen = sizeof buf;
        if (recvmsg(sv[0], &m, 0) <= 0) continue;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
            int n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            int *fd = (int *)CMSG_DATA(h);
            for (int k = 0; k < n; k++) {
                struct stat st;
                int g = fcntl(fd[k], F_GETFD), u2 = fstat(fd[k], &st) == 0;
                if ((g >= 0) != u2) __sync_fetch_and_add(&bad, 1);
                else if (g != 0) __sync_fetch_and_add(&wrongbit, 1);
                close(fd[k]);
            }
        }
    }
    return NULL;
}
static void *noop(void *u) { return u; }
int main(int argc, char **argv) {
    iters = argc > 1 ? atoi(argv[1]) : 300;
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    pthread_t r1, r2, t;
    pthread_create(&r1, NULL, recvr, NULL);
    pthread_create(&r2, NULL, recvr, NULL);
    for (int i = 0; i < iters; i++) {
        pthread_create(&t, NULL, noop, NULL);
        pthread_join(t, NULL);
        int o = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct stat st;
        int g = fcntl(o, F_GETFD), u2 = fstat(o, &st) == 0;
        if ((g >= 0) != u2) bad++;
        else if (g != 1) wrongbit++;
        close(o);
    }
    stop = 1;
    pthread_join(r1, NULL); pthread_join(r2, NULL);
    printf("disagreements %d wrong-bits %d\n", bad, wrongbit);
    return 0;
}

/* Two threads dup two different sockets at the same instant, round after round: the kernel
 * may hand them their numbers in the other order than the supervisor reserved them. What
 * the library remembers of each description must follow the kernel's number, not the
 * reservation: here whether the description is a Unix socket, which decides whether a
 * recvmsg on it is settled (a descriptor received over it that the library missed would
 * make close() of it EBADF under the supervisor).
 *
 *   probe_swap [rounds]      prints "rounds N, closes failing F"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int inet, pair[2];
static pthread_barrier_t start;
static volatile int from_inet, from_unix;

static void *dup_inet(void *unused) {
    (void)unused;
    pthread_barrier_wait(&start);
    from_inet = dup(inet);
    return NULL;
}

static void *dup_unix(void *unused) {
    (void)unused;
    pthread_barrier_wait(&start);
    from_unix = dup(pair[0]);
    return NULL;
}

/* One byte with descriptor `fd` attached. */
static void pass(int sock, int fd) {
    char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec v = {&byte, 1};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    sendmsg(sock, &m, 0);
}

/* The descriptor that came with one byte, or -1. */
static int take(int sock) {
    char byte, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec v = {&byte, 1};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(sock, &m, MSG_DONTWAIT) < 0) return -1;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    int fd = -1;
    if (h) memcpy(&fd, CMSG_DATA(h), sizeof fd);
    return fd;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    inet = socket(AF_INET, SOCK_DGRAM, 0);
    socketpair(AF_UNIX, SOCK_DGRAM, 0, pair);
    /* A receive on the inet socket first, so that the library has asked what it is. */
    char byte;
    struct iovec v = {&byte, 1};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
    recvmsg(inet, &m, MSG_DONTWAIT);
    int failing = 0, swapped = 0;
    for (int i = 0; i < rounds; i++) {
        pthread_t a, b;
        pthread_barrier_init(&start, NULL, 2);
        pthread_create(&a, NULL, dup_inet, NULL);
        pthread_create(&b, NULL, dup_unix, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        pthread_barrier_destroy(&start);
        swapped |= from_inet > from_unix;
        pass(pair[1], 0);
        int got = take(from_unix);
        if (got >= 0 && close(got) != 0 && failing++ < 3)
            fprintf(stderr, "round %d: close(%d) of a received descriptor: %s\n", i, got, strerror(errno));
        close(from_inet);
        close(from_unix);
    }
    /* Whether the kernel ever swapped them is the machine's timing (not compared): with
     * SWAPS set, it is said on stderr. */
    if (getenv("SWAPS"))
        fprintf(stderr, "numbers swapped in some round: %s\n", swapped ? "yes" : "no");
    printf("rounds %d, closes failing %d\n", rounds, failing);
    return 0;
}

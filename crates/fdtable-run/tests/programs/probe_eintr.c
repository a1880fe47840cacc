/* Signals whose handler has no SA_RESTART, arriving during table calls. A SIGALRM timer
 * fires every 100 us while the program loops over calls that natively never fail with EINTR
 * (open of /dev/null, dup, dup2, F_GETFD, pipe, socket, close); then an open of a FIFO with
 * no writer, which natively blocks until the signal and fails with EINTR.
 *
 *   probe_eintr ROUNDS   prints "eintr 0, fifo Interrupted system call" natively: the
 *                        number of EINTR failures of the first calls, then the FIFO open's
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
static void tick(int sig) {
    (void)sig;
    ticks++;
}

static long failures;
static void check(int r) {
    if (r < 0 && errno == EINTR)
        failures++;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tick; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &every, NULL);
    for (int i = 0; i < rounds; i++) {
        int f = open("/dev/null", O_RDONLY);
        check(f);
        int d = dup(0);
        check(d);
        check(dup2(0, 20));
        check(fcntl(0, F_GETFD));
        int p[2];
        if (pipe(p) == 0) {
            check(close(p[0]));
            check(close(p[1]));
        } else {
            check(-1);
        }
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        check(s);
        if (s >= 0)
            check(close(s));
        if (f >= 0)
            check(close(f));
        if (d >= 0)
            check(close(d));
        check(close(20));
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    char fifo[64];
    snprintf(fifo, sizeof fifo, "probe_eintr.%d", getpid());
    mkfifo(fifo, 0600);
    struct itimerval once = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &once, NULL);
    int r = open(fifo, O_RDONLY);
    int e = errno;
    unlink(fifo);
    printf("eintr %ld, fifo %s\n", failures, r < 0 ? strerror(e) : "opened");
    return 0;
}

/* An exec by P while its CLONE_FILES children churn open/close on the shared table; child D is
 * blocked in open(FIFO) (a call in flight that never settles, so the table never goes quiet).
 * After P's exec and the churners' stop, checker C compares F_GETFD of 3..127 with
 * /proc/self/fd (only C runs then: natively exact). The FIFO is made in the working directory.
 *   probe_exec_moved ROUNDS [DELAY_US]
 * Prints "moved: rounds R bad rounds 0 bad answers 0".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shm { volatile int stop, done, go, turn; long bad; char msg[4][160]; };
static struct shm *S;
static void check(void);
static char fifo[64];

static void churn(void); static void blocker(void);
static pid_t spawn(void (*fn)(void)) {
    pid_t c = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
    if (c == 0) { fn(); _exit(0); }
    if (getenv("V")) dprintf(2, "role %s %d\n", fn == churn ? "churn" : fn == blocker ? "blocker" : "checker", c);
    return c;
}
static void churn(void) {
    int i = getpid() * 7;
    while (!S->stop) { int n = open("/dev/null", O_RDONLY); int x = dup2(n, 20 + (i++ % 100)); close(n); close(x); }
    int me = __sync_fetch_and_add(&S->done, 1);
    while (S->turn != me || S->done < 2) usleep(500);
    check();
    S->turn++;
}
static void blocker(void) { int f = open(fifo, O_RDONLY); (void)f; pause(); }
static void check(void) {
    int kern[128] = {0};
    DIR *d = opendir("/proc/self/fd"); struct dirent *e; int dn = dirfd(d);
    while ((e = readdir(d))) { int n = atoi(e->d_name); if (e->d_name[0] != '.' && n != dn && n < 128) kern[n] = 1; }
    closedir(d);
    for (int n = 3; n < 128; n++) {
        if (n == dn) continue;
        int g = fcntl(n, F_GETFD);
        if ((g >= 0) != kern[n]) {
            char p[64], l[80] = ""; snprintf(p, sizeof p, "/proc/self/fd/%d", n); readlink(p, l, 79);
            if (S->bad < 4) snprintf(S->msg[S->bad], 160, "pid %d fd %d: F_GETFD %d (errno %d), kernel %s (%s)", getpid(), n, g, errno, kern[n] ? "open" : "closed", l);
            S->bad++;
        }
    }
}
static void checker(void) { while (!S->go) usleep(500); check(); S->go = 2; }

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int dmax = argc > 2 ? atoi(argv[2]) : 3000;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    snprintf(fifo, sizeof fifo, "fifo.%d", getpid());
    mkfifo(fifo, 0600);
    srand(getpid());
    long bad = 0, badrounds = 0;
    for (int r = 0; r < rounds; r++) {
        memset((void *)S, 0, sizeof *S);
        int d = rand() % dmax;
        pid_t p = fork();
        if (p == 0) {
            if (!getenv("NOBLOCK")) spawn(blocker);
            spawn(churn); spawn(churn); spawn(checker);
            struct timespec ts = {0, d * 1000L}; nanosleep(&ts, NULL);
            if (argc > 3 && !strcmp(argv[3], "exit")) _exit(0);
            char *av[] = {"true", NULL}; execv("/bin/true", av); _exit(1);
        }
        waitpid(p, NULL, 0);
        S->stop = 1;
        while (S->done < 2 || S->turn < 2) usleep(500);
        usleep(2000);
        S->go = 1;
        while (S->go != 2) usleep(500);
        if (!getenv("NOBLOCK")) { int w = open(fifo, O_WRONLY); close(w); } /* release the blocker */
        /* kill the remaining children (blocker pauses) */
        char pth[64], buf[4096]; snprintf(pth, sizeof pth, "/proc/%d/task/%d/children", getpid(), getpid());
        int f = open(pth, O_RDONLY); int n = read(f, buf, sizeof buf - 1); close(f); buf[n > 0 ? n : 0] = 0;
        for (char *q = strtok(buf, " \n"); q; q = strtok(NULL, " \n")) kill(atoi(q), SIGKILL);
        while (waitpid(-1, NULL, 0) > 0) ;
        if (S->bad) { badrounds++; for (int i = 0; i < 4 && i < S->bad; i++) fprintf(stderr, "round %d: %s\n", r, S->msg[i]); }
        bad += S->bad;
    }
    unlink(fifo);
    printf("moved: rounds %d bad rounds %ld bad answers %ld\n", rounds, badrounds, bad);
    return 0;
}

/* PR_GET_DUMPABLE across fork and exec after PR_SET_DUMPABLE(0): a fork keeps the cleared
 * flag, a failed exec keeps it, an exec that runs sets it again, whether or not the table
 * has a close-on-exec descriptor for the exec to close. Run as a user without
 * CAP_SYS_PTRACE, `fdtable run` keeps the flag for the program: it must answer the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

static void again(const char *self, const char *stage) {
    fflush(stdout);
    execl(self, self, stage, (char *)NULL);
    printf("exec %s: %s\n", stage, strerror(errno));
}

int main(int argc, char **argv) {
    const char *self = argv[0];
    const char *stage = argc > 1 ? argv[1] : "start";
    printf("%s: %d\n", stage, dumpable());
    if (!strcmp(stage, "start")) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        printf("cleared: %d\n", dumpable());
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            printf("fork child: %d\n", dumpable());
            fflush(stdout);
            _exit(0);
        }
        waitpid(c, NULL, 0);
        fflush(stdout);
        execl("/nonexistent/probe", "probe", (char *)NULL);
        printf("failed exec (%s): %d\n", strerror(errno), dumpable());
        /* No close-on-exec descriptor: the table is the same after the exec. */
        again(self, "plain");
    } else if (!strcmp(stage, "plain")) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* One close-on-exec descriptor, which the exec closes. */
        if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
            perror("open");
        again(self, "cloexec");
    } else if (!strcmp(stage, "cloexec")) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        fflush(stdout);
        pid_t c = fork();
        if (c == 0)
            again(self, "child");
        waitpid(c, NULL, 0);
        printf("parent after its child's exec: %d\n", dumpable());
    }
    return 0;
}

// Strict seccomp mode, entered by a child through prctl(PR_SET_SECCOMP) and through
// seccomp(SECCOMP_SET_MODE_STRICT). Natively both succeed (the child then writes and exits,
// the only calls strict mode allows); under a seccomp filter the kernel refuses them
// (EINVAL), which fdtable run reports by name.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *how, long r) {
    char m[128];
    int n = snprintf(m, sizeof m, "%s: %s\n", how, r ? strerror(errno) : "strict");
    write(1, m, n);
}

int main(void) {
    for (int how = 0; how < 2; how++) {
        pid_t p = fork();
        if (p == 0) {
            long r = how ? syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL)
                         : prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
            say(how ? "seccomp" : "prctl", r);
            syscall(SYS_exit, 0);
        }
        int st;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) printf("child %d: status %#x\n", how, st);
    }
    return 0;
}

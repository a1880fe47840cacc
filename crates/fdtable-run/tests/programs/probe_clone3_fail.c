/* clone3 calls that return without making a task (EINVAL: a size below the first version's;
 * EFAULT: arguments at NULL), each followed by a notified call that settles it. The
 * supervisor then looks for a task the call made untraced; the caller's other children are
 * not the program's and must be left alone.
 *
 *   probe_clone3_fail            prints each call's errno and "done"
 *   probe_clone3_fail sandboxed  a sandboxed job: installs a seccomp filter that allows
 *                                everything, says "ready", and waits to be killed
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "sandboxed") == 0) {
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {1, &allow};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
            printf("seccomp: %s\n", strerrorname_np(errno));
            return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) pause();
    }
    long sizes[] = {0, 8, 64};
    for (int i = 0; i < 3; i++) {
        errno = 0;
        long r = syscall(SYS_clone3, NULL, sizes[i]);
        printf("clone3(NULL, %ld) = %ld %s\n", sizes[i], r, strerrorname_np(errno));
        close(dup(0));
    }
    printf("done\n");
    return 0;
}

/* clone3 calls that return without making a task (EINVAL: a size below the first version's;
 * EFAULT: arguments at NULL), each followed by a notified call that settles it. The
 * supervisor then looks for a task the call made untraced; the caller's other children are
 * not the program's and must be left alone.
 *
 *   probe_clone3_fail    prints each call's errno and "done"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
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

/* BPF programs run in the caller's process that change its descriptor table: a
 * BPF_PROG_TYPE_SYSCALL program (libbpf's light skeleton loaders) run with
 * bpf(BPF_PROG_TEST_RUN) creates a map with bpf_sys_bpf(BPF_MAP_CREATE) (the lowest free
 * number, close-on-exec) and closes a descriptor with bpf_sys_close. The table is printed
 * after each step (F_GETFD of 0-15, and /proc/self/fd), and the numbers later opens get.
 *
 *   probe_bpf_run       prints the steps, or "unsupported: ERRNO" (no CAP_BPF, an old
 *                       kernel) and exits 0
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) \
    ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

static void show(const char *when) {
    printf("%s: F_GETFD", when);
    for (int n = 0; n < 16; n++) {
        int r = fcntl(n, F_GETFD);
        if (r >= 0) printf(" %d%s", n, r & FD_CLOEXEC ? "c" : "");
    }
    int seen[64], count = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) && count < 64)
            seen[count++] = atoi(e->d_name);
    if (d) closedir(d);
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && seen[j] < seen[j - 1]; j--) {
            int t = seen[j];
            seen[j] = seen[j - 1];
            seen[j - 1] = t;
        }
    printf("; /proc/self/fd");
    for (int i = 0; i < count; i++) printf(" %d", seen[i]);
    printf("\n");
}

static int load(struct bpf_insn *insns, int n) {
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SYSCALL;
    a.insns = (unsigned long)insns;
    a.insn_cnt = n;
    a.license = (unsigned long)"GPL";
    a.prog_flags = BPF_F_SLEEPABLE;
    return syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
}

static long run(int prog, int *ctx, int len) {
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.test.prog_fd = prog;
    a.test.ctx_in = (unsigned long)ctx;
    a.test.ctx_size_in = len;
    if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &a, sizeof a) < 0) return -errno - 1000;
    return (int)a.test.retval;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A 48-byte bpf_attr on the stack for BPF_MAP_CREATE (an array of one 4-byte value),
     * then bpf_sys_bpf(cmd, attr, size): returns the map's descriptor. */
    struct bpf_insn create[] = {
        INSN(0x7a, 10, 0, -48, 0), INSN(0x7a, 10, 0, -40, 0), INSN(0x7a, 10, 0, -32, 0),
        INSN(0x7a, 10, 0, -24, 0), INSN(0x7a, 10, 0, -16, 0), INSN(0x7a, 10, 0, -8, 0),
        INSN(0x62, 10, 0, -48, BPF_MAP_TYPE_ARRAY), INSN(0x62, 10, 0, -44, 4),
        INSN(0x62, 10, 0, -40, 4), INSN(0x62, 10, 0, -36, 1),
        INSN(0xb7, 1, 0, 0, BPF_MAP_CREATE), INSN(0xbf, 2, 10, 0, 0), INSN(0x07, 2, 0, 0, -48),
        INSN(0xb7, 3, 0, 0, 48), INSN(0x85, 0, 0, 0, BPF_FUNC_sys_bpf), INSN(0x95, 0, 0, 0, 0),
    };
    /* bpf_sys_close(ctx[0]). */
    struct bpf_insn close_it[] = {
        INSN(0x61, 1, 1, 0, 0), INSN(0x85, 0, 0, 0, BPF_FUNC_sys_close), INSN(0x95, 0, 0, 0, 0),
    };
    int p1 = load(create, sizeof create / sizeof *create);
    int p2 = p1 < 0 ? -1 : load(close_it, sizeof close_it / sizeof *close_it);
    if (p1 < 0 || p2 < 0) {
        printf("unsupported: %s\n", strerrorname_np(errno));
        return 0;
    }
    printf("programs at %d and %d\n", p1, p2);
    show("start");
    int ctx[4] = {0};
    long map = run(p1, ctx, sizeof ctx);
    printf("bpf_sys_bpf(BPF_MAP_CREATE) -> %ld\n", map);
    show("after the map");
    printf("open -> %d\n", open("/dev/null", O_RDONLY));
    int victim = open("/dev/null", O_RDONLY);
    printf("open -> %d\n", victim);
    show("before the close");
    ctx[0] = victim;
    printf("bpf_sys_close(%d) -> %ld\n", victim, run(p2, ctx, sizeof ctx));
    errno = 0;
    int r = fcntl(victim, F_GETFD);
    printf("F_GETFD(%d) -> %d %s\n", victim, r, r < 0 ? strerrorname_np(errno) : "");
    show("after the close");
    printf("open -> %d\n", open("/dev/null", O_RDONLY));
    printf("dup -> %d\n", dup(0));
    show("end");
    return 0;
}

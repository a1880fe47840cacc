/* membarrier_register [threads]: how long MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED takes in a
 * process with one thread (no argument) or two (any argument), and one PRIVATE_EXPEDITED
 * barrier after it. The kernel registers a process whose mm has several users only after an
 * RCU grace period (sync_runqueues_membarrier_state), which is why the library registers
 * when it is loaded (crates/fdtable/src/rcu/epoch.rs, REGISTER_AT_LOAD).
 *   gcc -O2 -o /tmp/mbr bench/rcu/membarrier_register.c -lpthread && /tmp/mbr && /tmp/mbr 2 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *idle(void *arg) {
    (void)arg;
    sleep(2);
    return NULL;
}

int main(int argc, char **argv) {
    (void)argv;
    pthread_t t;
    if (argc > 1 && pthread_create(&t, NULL, idle, NULL) != 0)
        return 1;
    double a = now_us();
    long r = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    double b = now_us();
    long r2 = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    double c = now_us();
    printf("threads %d: register %ld in %.1f us, barrier %ld in %.1f us\n", argc > 1 ? 2 : 1, r,
           b - a, r2, c - b);
    return 0;
}

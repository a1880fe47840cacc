// A 64-bit process calls through i386's entry point (`int 0x80`), where call 20 is getpid
// (x86_64's 20 is writev): prints what the call returned.
#include <stdio.h>

int main(void) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
    printf("int 0x80 getpid: %s\n", r > 0 ? "a pid" : r == -38 ? "ENOSYS" : "other");
    return 0;
}

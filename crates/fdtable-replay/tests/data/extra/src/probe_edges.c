#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <pthread.h>
#include <linux/close_range.h>
#ifndef F_DUPFD_QUERY
#define F_DUPFD_QUERY 1027
#endif
static void *thr(void *a) { for (int i = 0; i < 200; i++) { int fd = open("/etc/hostname", O_RDONLY|O_CLOEXEC); int p[2]; pipe2(p, O_CLOEXEC); int d = dup(fd); close(p[0]); close(fd); close(p[1]); close(d); open("/nonexistent", O_RDONLY); } return a; }
int main(void) {
  char b[8]; struct stat st;
  int p = open("/etc", O_PATH|O_DIRECTORY);
  read(p, b, 1); write(p, b, 1); ioctl(p, FIONREAD, b); fstat(p, &st); fchdir(p);
  int q = openat(p, "hostname", O_RDONLY);
  fcntl(p, F_GETFL); fcntl(p, F_SETFD, FD_CLOEXEC); fcntl(p, F_GETFD); ioctl(p, FIOCLEX);
  int d = dup(p); fcntl(d, F_DUPFD_QUERY, p); fcntl(d, F_DUPFD_QUERY, q); fcntl(d, F_DUPFD_QUERY, 99);
  close(d); close(q);
  int e = eventfd(0, EFD_CLOEXEC|EFD_NONBLOCK); eventfd_t v; eventfd_read(e, &v);
  sigset_t m; sigemptyset(&m); sigaddset(&m, SIGUSR1); int s = signalfd(-1, &m, SFD_CLOEXEC); signalfd(s, &m, 0); signalfd(77, &m, 0); signalfd(e, &m, 0);
  int t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC); int in = inotify_init1(IN_CLOEXEC); inotify_add_watch(in, "/etc", IN_ALL_EVENTS);
  epoll_create1(12345); int ep = epoll_create1(EPOLL_CLOEXEC); struct epoll_event ev = {0}; epoll_ctl(ep, EPOLL_CTL_ADD, 99, &ev); epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev);
  socket(12345, SOCK_STREAM, 0); int ls = socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK, 0); listen(ls, 1); accept4(ls, 0, 0, SOCK_CLOEXEC); accept(99, 0, 0);
  close(e); close(s); close(t); close(in); close(ep); close(ls);
  dup3(0, 0, 0); dup3(0, 5, 12345); dup3(99, 5, 0); dup2(99, 5); dup2(0, -1); dup2(1, 1); dup2(99, 99);
  fcntl(0, F_DUPFD, -1); fcntl(99, F_DUPFD, 0); fcntl(0, F_SETFD, 12345); fcntl(0, F_GETFD);
  close_range(50, 10, 0); close_range(0, 10, 12345); syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  close(-1); close(1000000);
  struct rlimit r = {10, 10}; setrlimit(RLIMIT_NOFILE, &r);
  int fds[20]; int n = 0; while ((fds[n] = open("/dev/null", O_RDONLY)) >= 0) n++;
  dup(0); dup2(0, 10); dup2(0, 9); fcntl(0, F_DUPFD, 9); fcntl(0, F_DUPFD, 10); int pp[2]; pipe(pp); socketpair(AF_UNIX, SOCK_STREAM, 0, pp); eventfd(0, 0); epoll_create1(0); accept(ls, 0, 0);
  for (int i = 0; i < n; i++) close(fds[i]);
  r.rlim_cur = r.rlim_max = 1000; prlimit(0, RLIMIT_NOFILE, &r, 0);
  pthread_t th[4]; for (int i = 0; i < 4; i++) pthread_create(&th[i], 0, thr, 0); for (int i = 0; i < 4; i++) pthread_join(th[i], 0);
  pid_t c = fork(); if (c == 0) { int x = open("/etc/hostname", O_RDONLY); dup2(x, 900); execl("/bin/true", "true", (char*)0); _exit(1); } waitpid(c, 0, 0);
  return 0;
}

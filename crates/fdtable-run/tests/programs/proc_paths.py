# Every spelling that names a descriptor or a descriptor directory, natively and under
# fdtable run: listings, reads, writes, readlink and stat through /proc/self, /proc/<pid>,
# /proc/thread-self, /proc/self/task/<tid>, /proc/<pid>/task/<tid>, /dev/fd, `..`, repeated
# slashes, directory descriptors of /proc/self and of an fd directory, a working directory
# in /proc/self, fdinfo; and names that must fail as they do natively.
import os
import stat
import sys
import threading

out = []


def say(*a):
    out.append(" ".join(str(x) for x in a))


def real(template):
    """A path template with this process's ids."""
    return template.replace("PID", str(pid)).replace("TID", str(tid))


def attempt(what, f):
    try:
        say(what, f())
    except OSError as e:
        say(what, "error", e.strerror)


with open("data", "w") as f:
    f.write("contents of data\n")
fd = os.open("data", os.O_RDONLY)  # 3
pid = os.getpid()
tid = threading.get_native_id()
say("fd", fd)

dirs = [
    "/proc/self/fd",
    "/proc/PID/fd",
    "/proc/thread-self/fd",
    "/proc/self/task/TID/fd",
    "/proc/PID/task/TID/fd",
    "/dev/fd",
    "/proc/self/fd/../fd",
    "//proc//self/./fd/",
    "/proc/self/task/TID/../../fd",
    "/proc/self/root/proc/self/fd",
]
for t in dirs:
    d = real(t)
    attempt("list " + t, lambda: sorted(os.listdir(d), key=int))
    attempt("size " + t, lambda: os.stat(d).st_size)
    attempt("read " + t + "/3", lambda: open(d + "/3").read().strip())
    attempt("readlink " + t + "/3", lambda: os.path.basename(os.readlink(d + "/3")))
    attempt("stat " + t + "/3", lambda: os.stat(d + "/3").st_size)
    attempt("lstat " + t + "/3", lambda: stat.S_ISLNK(os.lstat(d + "/3").st_mode))
    attempt("missing " + t + "/777", lambda: os.stat(d + "/777").st_size)

# fdinfo: the entry of the program's descriptor, whatever the spelling.
for t in ["/proc/self", "/proc/thread-self", "/proc/self/task/TID"]:
    d = real(t)
    attempt(
        "fdinfo " + t,
        lambda: [line for line in open(d + "/fdinfo/3").read().split("\n") if line.startswith(("pos", "flags"))],
    )
    attempt("list fdinfo " + t, lambda: sorted(os.listdir(d + "/fdinfo"), key=int))

# Writes through the entries reach the program's own standard output.
for t in ["/proc/self/task/TID/fd/1", "/proc/thread-self/fd/1", "/proc/PID/task/TID/fd/1"]:
    with open(real(t), "w") as w:
        w.write("written through %s\n" % t)

# Relative to a directory descriptor of /proc/self, and of an fd directory.
procself = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
attempt("dirfd list fd", lambda: sorted(os.listdir(os.open("fd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=procself)), key=int))
attempt("dirfd read fd/3", lambda: os.read(os.open("fd/3", os.O_RDONLY, dir_fd=procself), 100))
attempt("dirfd readlink fd/3", lambda: os.path.basename(os.readlink("fd/3", dir_fd=procself)))
attempt("dirfd stat task/TID/fd/3", lambda: os.stat("task/%d/fd/3" % tid, dir_fd=procself).st_size)
fddir = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
attempt("fd dirfd size", lambda: os.fstat(fddir).st_size)
attempt("fd dirfd read 3", lambda: os.read(os.open("3", os.O_RDONLY, dir_fd=fddir), 100))
attempt("fd dirfd readlink 3", lambda: os.path.basename(os.readlink("3", dir_fd=fddir)))
attempt("through fd entry of /proc/self", lambda: os.read(os.open("/proc/self/fd/%d/fd/3" % procself, os.O_RDONLY), 100))
attempt("listing a dup of /proc/self fd", lambda: sorted(os.listdir(os.dup(fddir)), key=int))

# A working directory in /proc/self, then in /proc/self/fd.
here = os.getcwd()
os.chdir("/proc/self")
attempt("cwd list fd", lambda: sorted(os.listdir("fd"), key=int))
attempt("cwd read fd/3", lambda: open("fd/3").read().strip())
attempt("cwd readlink fd/3", lambda: os.path.basename(os.readlink("fd/3")))
os.chdir("fd")
attempt("cwd fd list .", lambda: sorted(os.listdir("."), key=int))
attempt("cwd fd read 3", lambda: open("3").read().strip())
attempt("cwd fd stat ../fd/3", lambda: os.stat("../fd/3").st_size)
os.chdir(here)


def in_thread():
    t = threading.get_native_id()
    f2 = os.open("data", os.O_RDONLY)
    say("thread opened", f2)
    attempt("thread list thread-self", lambda: sorted(os.listdir("/proc/thread-self/fd"), key=int))
    attempt("thread list task", lambda: sorted(os.listdir("/proc/self/task/%d/fd" % t), key=int))
    attempt("thread read", lambda: open("/proc/thread-self/fd/%d" % f2).read().strip())
    os.close(f2)


th = threading.Thread(target=in_thread)
th.start()
th.join()
print("\n".join(out))
sys.stdout.flush()

# Calls that carry a descriptor inside another number: a dynamic clock id
# (FD_TO_CLOCKID(fd) = ((~fd) << 3) | 3, as for /dev/ptp*) in the clock_* calls, and
# keyctl(KEYCTL_WATCH_KEY, key, watch_queue_fd, id). Prints each result ("ok" or the errno
# name), which must be the same natively and under fdtable run.
import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long


class Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(L(nr), *[L(a) if isinstance(a, int) else a for a in args])
    if r == -1:
        e = ctypes.get_errno()
        return errno.errorcode.get(e, str(e))
    return "ok"


def fd_clock(fd):
    return ctypes.c_int(((~fd) << 3) | 3).value


ts = Timespec()
timex = ctypes.create_string_buffer(256)
timerid = ctypes.c_int()
data = os.open("data", os.O_RDWR | os.O_CREAT, 0o644)
for label, fd in [("file", data), ("closed", 999), ("stdin", 0)]:
    clk = fd_clock(fd)
    print(
        label,
        "gettime", call(228, clk, ctypes.byref(ts)),
        "getres", call(229, clk, ctypes.byref(ts)),
        "settime", call(227, clk, ctypes.byref(ts)),
        "adjtime", call(305, clk, timex),
        "nanosleep", call(230, clk, 0, ctypes.byref(ts), 0),
        "timer_create", call(222, clk, 0, ctypes.byref(timerid)),
    )
print("monotonic", call(228, 1, ctypes.byref(ts)))
print("own cpu clock", call(228, ((~os.getpid()) << 3) | 2, ctypes.byref(ts)))

KEYCTL_WATCH_KEY = 32
KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_PROCESS_KEYRING = -2
print("keyctl file", call(250, KEYCTL_WATCH_KEY, KEY_SPEC_PROCESS_KEYRING, data, 1))
print("keyctl closed", call(250, KEYCTL_WATCH_KEY, KEY_SPEC_PROCESS_KEYRING, 999, 1))
try:
    r, w = os.pipe2(os.O_EXCL)  # O_NOTIFICATION_PIPE
except OSError as e:
    r = None
    print("notification pipe", errno.errorcode[e.errno])
if r is not None:
    print("notification pipe", r, w)
    # IOC_WATCH_QUEUE_SET_SIZE
    try:
        import fcntl
        fcntl.ioctl(r, 0x5760, 1)
        print("set size ok")
    except OSError as e:
        print("set size", errno.errorcode[e.errno])
    print("keyctl watch", call(250, KEYCTL_WATCH_KEY, KEY_SPEC_PROCESS_KEYRING, r, 1))
    print("keyctl unwatch", call(250, KEYCTL_WATCH_KEY, KEY_SPEC_PROCESS_KEYRING, -1, 1))

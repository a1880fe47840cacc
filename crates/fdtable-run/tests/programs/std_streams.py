# What a program sees of its standard streams: which of 0, 1, 2 are open, the numbers its
# next opens get (the lowest free: a closed standard descriptor first), and what Python made
# of them. Printed on whichever of 1 and 2 is open; the exit status says which were closed.
import os
import sys


def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError as e:
        return e.strerror


state = [is_open(fd) for fd in (0, 1, 2)]
new = [os.open("/dev/null", os.O_RDONLY) for _ in range(3)]
msg = "%r %r %r\n" % (state, new, [sys.stdin is None, sys.stdout is None, sys.stderr is None])
for fd in (1, 2):
    if state[fd] is True:
        os.write(fd, msg.encode())
sys.exit(16 + sum(1 << fd for fd in (0, 1, 2) if state[fd] is not True))

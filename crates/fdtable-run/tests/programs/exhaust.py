# Opens /dev/null until the table is full; prints the limit, how many opens succeeded and
# the error. With "raise", first raises the soft limit to the hard one (as Go and the JVM do
# at start-up), and forks once at the end (the child's table is the full one).
import os
import resource
import sys

raise_soft = sys.argv[1:] == ["raise"]
if raise_soft:
    s, h = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (h, h))
    print("soft was", s)
n = 0
try:
    while True:
        os.open("/dev/null", os.O_RDONLY)
        n += 1
except OSError as e:
    print(resource.getrlimit(resource.RLIMIT_NOFILE), n, e.strerror, flush=True)
if raise_soft:
    if os.fork() == 0:
        os._exit(0)
    os.wait()

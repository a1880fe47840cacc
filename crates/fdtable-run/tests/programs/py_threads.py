# Threads sharing one table: concurrent opens, pipes, dups and closes.
import os, threading
from concurrent.futures import ThreadPoolExecutor
def work(i):
    n = 0
    for _ in range(50):
        fd = os.open("/etc/hostname", os.O_RDONLY)
        r, w = os.pipe()
        d = os.dup(fd)
        os.write(w, b"x"); n += len(os.read(r, 1))
        for f in (fd, r, w, d):
            os.close(f)
    return n
with ThreadPoolExecutor(8) as ex:
    print(sum(ex.map(work, range(16))))
lock = threading.Lock(); seen = []
def opener():
    with lock:
        fd = os.open("/dev/null", os.O_RDONLY); seen.append(fd)
ts = [threading.Thread(target=opener) for _ in range(6)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(seen) == list(range(min(seen), min(seen) + 6)))
for f in seen: os.close(f)
print(os.open("/dev/null", os.O_RDONLY))

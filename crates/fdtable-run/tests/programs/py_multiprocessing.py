# multiprocessing with fork, spawn and forkserver (descriptors passed with SCM_RIGHTS).
import multiprocessing as mp, os
def sq(x):
    return x * x
def fdcount(_):
    return len(os.listdir("/proc/self/fd")) > 2
if __name__ == "__main__":
    for method in ["fork", "spawn", "forkserver"]:
        ctx = mp.get_context(method)
        with ctx.Pool(2) as pool:
            print(method, pool.map(sq, range(6)), all(pool.map(fdcount, range(2))))
        q = ctx.Queue(); p = ctx.Process(target=q.put, args=(method,)); p.start(); print(q.get()); p.join()
        print("exit", p.exitcode)
    r, w = mp.Pipe(); w.send({"k": 1}); print(r.recv())

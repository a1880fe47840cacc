#!/usr/bin/env python3
"""The targets of `fdtable run` on a mirrored table, each against its baseline in the same run.

    bench/run/targets.py [--reps K] [--load] [--soft]

Builds fdtable (release) and bench/run/floor.c, then measures, best of K runs each:

- a call that only uses a descriptor (`read(fd, buf, 0)` loop): run / native (target <= 1.1);
- a table-changing pair (`dup` + `close`): run / the bare notification round trip, a
  supervisor that CONTINUEs every notification with SYNC_WAKE_UP (target <= 1.2);
- a process (fork + exec + wait of /bin/true): microseconds above native (target <= 200);
- real programs natively, under `fdtable run` and under `strace -f -o /dev/null`: make -j2
  of 11 files (<= 1.25), tar czf of 2,000 files (<= 1.5), find (<= 2), git status (<= 2),
  a Python start-up with one subprocess (<= 1.2).

The process and program rows are also measured under `fdtable run --floor`: the same seccomp
filter, processes and ptrace events, with a supervisor that lets every call run and keeps no
table. That is the floor of the design on this machine: what the interception alone costs,
before the library does anything. `--floor-untraced` is the floor of a design without ptrace
(the fork-family calls and execve notified instead): what a supervisor that does not trace
processes would start from.

--load keeps both CPUs busy (two spinning processes) while measuring: the figures of a
loaded machine; without it the machine is as idle as it is. --soft runs everything under a
soft RLIMIT_NOFILE below the hard one (1024 / 524288, as systemd sets; the hard limit is the
caller's where that is lower and cannot be raised). Markdown on stdout.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPS = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 5
LOAD = "--load" in sys.argv
SOFT = "--soft" in sys.argv


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def hard_limit():
    """systemd's hard limit (524288), or the caller's if it is lower and cannot be raised."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 524288 if hard == resource.RLIM_INFINITY else min(524288, hard)


def prefix():
    return ["prlimit", f"--nofile=1024:{hard_limit()}"] if SOFT else []


def timed(cmd, cwd, out=False):
    t = time.perf_counter()
    r = subprocess.run(prefix() + cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{cmd} failed: {r.returncode}")
    return (dt, r.stdout) if out else dt


def best(cmd, cwd, setup=None):
    ts = []
    for _ in range(REPS):
        if setup:
            setup()
        ts.append(timed(cmd, cwd))
    return min(ts), statistics.median(ts)


def floor(exe, mode, n, run=None, extra=()):
    vals = []
    for _ in range(REPS):
        cmd = ([run, "run", *extra, "--"] if run else []) + [exe, mode, str(n)]
        vals.append(float(timed(cmd, None, out=True)[1].split()[-1]))
    return min(vals)


def main():
    sh(["cargo", "build", "--release", "-q", "--bin", "fdtable"], cwd=ROOT)
    fd = os.path.join(ROOT, "target/release/fdtable")
    work = tempfile.mkdtemp(prefix="fdtable-run-targets-")
    exe = os.path.join(work, "floor")
    sh(["gcc", "-O2", "-o", exe, os.path.join(ROOT, "bench/run/floor.c")])
    load = []
    if LOAD:
        for _ in range(os.cpu_count() or 2):
            load.append(subprocess.Popen(["sh", "-c", "while :; do :; done"]))
    try:
        rows = []
        read_n, read_r = floor(exe, "read0", 200000), floor(exe, "read0", 200000, fd)
        rows.append(("read(fd, buf, 0): run / native", read_r / read_n, 1.1,
                     f"{read_n:.0f} / {read_r:.0f} ns"))
        bare, pair = floor(exe, "bare", 50000), floor(exe, "dupclose", 50000, fd)
        rows.append(("dup + close: run / bare notification round trip", pair / bare, 1.2,
                     f"{bare:.0f} / {pair:.0f} ns"))
        sp_n, sp_r = floor(exe, "spawn", 300), floor(exe, "spawn", 300, fd)
        sp_f = floor(exe, "spawn", 300, fd, ["--floor"])
        sp_u = floor(exe, "spawn", 300, fd, ["--floor-untraced"])
        rows.append(("fork + exec + wait of /bin/true: µs above native", (sp_r - sp_n) / 1000,
                     200, f"{sp_n / 1000:.0f} / {sp_r / 1000:.0f} µs"))
        print(f"CPU: {cpu()}; load: {'both CPUs busy' if LOAD else 'as it is'}; "
              f"RLIMIT_NOFILE: {f'1024 / {hard_limit()}' if SOFT else 'the caller'}; best of {REPS}\n")
        print("| measure | value | target | met | native / run |")
        print("|---|---|---|---|---|")
        for name, v, t, raw in rows:
            print(f"| {name} | {v:.2f} | <= {t} | {'yes' if v <= t else 'no'} | {raw} |")
        print()
        print(f"Per process under `--floor` (the interception alone): {sp_f / 1000:.0f} µs, "
              f"{(sp_f - sp_n) / 1000:.0f} µs above native; `fdtable run` adds "
              f"{(sp_r - sp_f) / 1000:.0f} µs to that. Without ptrace (`--floor-untraced`: the "
              f"process calls notified instead of traced): {(sp_u - sp_n) / 1000:.0f} µs above "
              f"native.\n")
        programs(fd, work)
    finally:
        for p in load:
            p.kill()
        shutil.rmtree(work, ignore_errors=True)


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def programs(fd, work):
    def make_setup():
        d = os.path.join(work, "make")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        objs = []
        for i in range(10):
            open(os.path.join(d, f"f{i}.c"), "w").write(
                "#include <stdio.h>\n" f"int f{i}(int x) {{ return x * {i} + printf(\"\"); }}\n")
            objs.append(f"f{i}.o")
        open(os.path.join(d, "main.c"), "w").write("int main(void) { return 0; }\n")
        open(os.path.join(d, "Makefile"), "w").write(
            f"prog: main.o {' '.join(objs)}\n\t$(CC) -o $@ $^\n%.o: %.c\n\t$(CC) -O1 -c $<\n")
    tree = os.path.join(work, "tree")
    os.makedirs(tree)
    for i in range(2000):
        sub = os.path.join(tree, f"d{i % 20}")
        os.makedirs(sub, exist_ok=True)
        open(os.path.join(sub, f"f{i}"), "w").write(f"file {i}\n" * 4)
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    sh(["git", "init", "-q"], cwd=repo, env=env)
    for i in range(50):
        open(os.path.join(repo, f"f{i}"), "w").write(f"{i}\n")
    sh(["git", "add", "."], cwd=repo, env=env)
    sh(["git", "commit", "-qm", "x"], cwd=repo, env=env)
    open(os.path.join(repo, "f3"), "w").write("changed\n")
    progs = [
        ("make -j2 (10 .c + main, gcc -O1)", ["make", "-s", "-j2"],
         os.path.join(work, "make"), make_setup, 1.25),
        ("tar czf (2000 small files)", ["tar", "czf", os.path.join(work, "t.tgz"), "tree"],
         work, None, 1.5),
        ("find / -xdev -maxdepth 3 -type f", ["sh", "-c", "find / -xdev -maxdepth 3 -type f | wc -l"],
         work, None, 2.0),
        ("git status (50 files, one change)", ["git", "status", "--porcelain"], repo, None, 2.0),
        ("python3 start-up with one subprocess",
         ["python3", "-c", "import json, subprocess; subprocess.run(['true'])"], work, None, 1.2),
    ]
    print("| program | native s | fdtable run s | --floor s | strace -f s | run / native | target "
          "| met | floor / native | run / floor | untraced floor / native | strace / native |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, cmd, cwd, setup, target in progs:
        n = best(cmd, cwd, setup)[0]
        r = best([fd, "run", "--"] + cmd, cwd, setup)[0]
        f = best([fd, "run", "--floor", "--"] + cmd, cwd, setup)[0]
        u = best([fd, "run", "--floor-untraced", "--"] + cmd, cwd, setup)[0]
        s = best(["strace", "-f", "-o", "/dev/null"] + cmd, cwd, setup)[0]
        print(f"| `{name}` | {n:.3f} | {r:.3f} | {f:.3f} | {s:.3f} | {r / n:.2f} | <= {target} | "
              f"{'yes' if r / n <= target else 'no'} | {f / n:.2f} | {r / f:.2f} | {u / n:.2f} | "
              f"{s / n:.2f} |")


if __name__ == "__main__":
    main()

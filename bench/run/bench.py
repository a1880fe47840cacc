#!/usr/bin/env python3
"""Cost per descriptor system call under `fdtable run`, against native and `strace -f`.

    bench/run/bench.py [--reps K] [--quick]

Builds bench/run/fdcalls.c and the fdtable binary (release), then for each workload times
K runs natively, under `fdtable run` and under `strace -f -o /dev/null`, and reports the
best (least disturbed) run of each. Per-call costs: (time - native time) / calls, where
`calls` counts the descriptor calls that stopped in the supervisor (its --stats), so the
cost is what each traced call adds. Markdown on stdout.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPS = 5
QUICK = "--quick" in sys.argv
if "--reps" in sys.argv:
    REPS = int(sys.argv[sys.argv.index("--reps") + 1])

def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)

def timed(cmd, cwd):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{cmd} failed: {r.returncode}")
    return dt

def best(cmd, cwd, setup=None):
    ts = []
    for _ in range(REPS):
        if setup:
            setup()
        ts.append(timed(cmd, cwd))
    return min(ts), statistics.median(ts)

def main():
    sh(["cargo", "build", "--release", "-q", "--bin", "fdtable"], cwd=ROOT)
    fdtable = os.path.join(ROOT, "target/release/fdtable")
    work = tempfile.mkdtemp(prefix="fdtable-run-bench-")
    exe = os.path.join(work, "fdcalls")
    sh(["gcc", "-O2", "-o", exe, os.path.join(ROOT, "bench/run/fdcalls.c")])
    n = 5000 if QUICK else 20000
    micro = ["read", "getfd", "open", "dup", "pipe", "poll", "getpid"]
    # Real programs: (name, command, setup).
    def make_setup():
        d = os.path.join(work, "make")
        shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
        for i in range(4):
            open(os.path.join(d, f"f{i}.c"), "w").write(f"int f{i}(void) {{ return {i}; }}\n")
        open(os.path.join(d, "main.c"), "w").write("int main(void) { return 0; }\n")
        open(os.path.join(d, "Makefile"), "w").write(
            "prog: main.o f0.o f1.o f2.o f3.o\n\t$(CC) -o $@ $^\n")
    programs = [
        ("bash script (pipes, redirections, forks)", ["bash", "-c",
            "for i in $(seq 20); do echo $i | cat > /dev/null; done; ls /proc/self/fd | wc -l > /dev/null"], None),
        ("coreutils pipeline", ["sh", "-c", "seq 200000 | sort -rn | head -1 > /dev/null"], None),
        ("python3 -c 'import json, email, http.client, asyncio'",
            ["python3", "-c", "import json, email, http.client, asyncio"], None),
        ("make -j2 (gcc, 5 files)", ["make", "-s", "-j2", "-C", os.path.join(work, "make")], make_setup),
        ("git status in this repository", ["git", "-C", ROOT, "status", "--short"], None),
    ]
    if QUICK:
        programs = programs[:2]
    rows = []
    for m in micro:
        cmd = [exe, m, str(n)]
        stats = os.path.join(work, "stats.json")
        sh([fdtable, "run", "--stats", stats, "--"] + cmd, stdout=subprocess.DEVNULL)
        st = json.load(open(stats))
        nat = best(cmd, work)
        run = best([fdtable, "run", "--"] + cmd, work)
        stc = best(["strace", "-f", "-o", "/dev/null", "--"] + cmd, work)
        rows.append((m, n, st, nat, run, stc))
    prog_rows = []
    for name, cmd, setup in programs:
        stats = os.path.join(work, "stats.json")
        if setup: setup()
        sh([fdtable, "run", "--stats", stats, "--"] + cmd, cwd=work, stdout=subprocess.DEVNULL,
           stderr=subprocess.DEVNULL)
        st = json.load(open(stats))
        nat = best(cmd, work, setup)
        run = best([fdtable, "run", "--"] + cmd, work, setup)
        stc = best(["strace", "-f", "-o", "/dev/null", "--"] + cmd, work, setup)
        prog_rows.append((name, st, nat, run, stc))

    us = lambda s: f"{s * 1e6:.1f}"
    print(f"Best of {REPS} runs (median in parentheses); {os.cpu_count()} cores.\n")
    print("| call (x N) | traced calls | native µs/iter | fdtable run µs/iter | strace -f µs/iter | run / native | strace / run |")
    print("|---|---|---|---|---|---|---|")
    for m, n, st, nat, run, stc in rows:
        print(f"| {m} (x{n}) | {st['seccomp_stops']} | {us(nat[0]/n)} ({us(nat[1]/n)}) | "
              f"{us(run[0]/n)} ({us(run[1]/n)}) | {us(stc[0]/n)} ({us(stc[1]/n)}) | "
              f"{run[0]/nat[0]:.0f}x | {stc[0]/run[0]:.2f} |")
    print()
    print("| program | traced calls | exit stops | native s | fdtable run s | strace -f s | run / native | strace / run | µs added per traced call |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, st, nat, run, stc in prog_rows:
        calls = st["seccomp_stops"]
        per = (run[0] - nat[0]) / calls * 1e6 if calls else 0
        print(f"| {name} | {calls} | {st['exit_stops']} | {nat[0]:.3f} ({nat[1]:.3f}) | "
              f"{run[0]:.3f} ({run[1]:.3f}) | {stc[0]:.3f} ({stc[1]:.3f}) | "
              f"{run[0]/nat[0]:.1f}x | {stc[0]/run[0]:.2f} | {per:.1f} |")
    shutil.rmtree(work, ignore_errors=True)

main()

#!/bin/bash
# In a pid namespace of its own (run under `unshare -fp --mount-proc`): a process raises its
# waiting sibling's RLIMIT_NOFILE with prlimit(1), naming it by a pid of this namespace;
# the sibling then dups past its old limit.
ulimit -Sn 64
coproc P { exec python3 -c '
import os, sys, resource
sys.stdin.readline()
print("limit", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
fds = [os.dup(1) for _ in range(100)]
print("dups", len(fds), "highest", max(fds))
'; }
# Kept: bash unsets P_PID once the coprocess has exited, which may be before the `wait`.
pid=$P_PID
# Until the sibling waits in its read (its own limit is then set).
until grep -q '^State:.*S' /proc/$pid/status 2>/dev/null && [ "$(readlink /proc/$pid/exe)" != "$(readlink /proc/$$/exe)" ]; do sleep 0.01; done
prlimit --pid "$pid" --nofile=4000: && echo raised
echo go >&"${P[1]}"
cat <&"${P[0]}"
wait "$pid"

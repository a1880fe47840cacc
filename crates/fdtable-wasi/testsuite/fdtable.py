"""wasi-testsuite adapter for `fdtable wasi` (run by ci/wasi).

The runner calls compute_argv for each test and runs the result from the test's directory.
FDTABLE names the fdtable binary (default: `fdtable` on PATH); it may carry options, e.g.
FDTABLE="target/release/fdtable".
"""

import os
import shlex
import subprocess
from typing import Dict, List, Optional, Tuple

FDTABLE = shlex.split(os.getenv("FDTABLE", "fdtable"))


def get_name() -> str:
    return "fdtable"


def get_version() -> str:
    result = subprocess.run(FDTABLE[0:1] + ["--version"],
                            encoding="UTF-8", capture_output=True,
                            check=True)
    # "fdtable 0.1.0"
    return result.stdout.split()[1]


def get_wasi_versions() -> List[str]:
    return ["wasm32-wasip1"]


def get_wasi_worlds() -> List[str]:
    return ["wasi:cli/command"]


def compute_argv(test_path: str,
                 args_env_root: Tuple[List[str], Dict[str, str], Optional[str]],
                 proposals: List[str],
                 wasi_world: str,
                 wasi_version: str) -> List[str]:
    args, env, root = args_env_root
    argv = FDTABLE + ["wasi"]
    for k, v in env.items():
        argv += ["--env", f"{k}={v}"]
    if root:
        argv += ["--dir", f"{root}::/"]
    # `--` so that a test argument starting with '-' reaches the program.
    argv += ["--", test_path]
    argv += args
    return argv

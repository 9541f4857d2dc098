"""Start-up benchmark: whole-process time of the commands that solve nothing (issue 34's target:
`gpuplan --help`, shell completion and `gpuplan estimate` in ≤ 0.3 s on a quiet machine).

Not a test (tests/cli/test_startup.py checks which modules load, with no clock). Each command
runs REPEAT times in a fresh process; the table gives the median wall and CPU seconds, and the
same for a bare `python -c pass` measured in the same run, so a noisy machine shows as a slow
baseline rather than a slow command. Say `uptime`'s load beside the numbers (tests/bench/HISTORY.md).

    python tests/bench/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "gpuplan --help": ["gpuplan", "--help"],
    "gpuplan solve --help": ["gpuplan", "solve", "--help"],
    "completion (gpuplan so<Tab>)": ["gpuplan"],
    "gpuplan estimate": ["gpuplan", "estimate", "--params", "7e9", "--tokens", "2e11"],
}
COMPLETION_ENV = {"_GPUPLAN_COMPLETE": "bash_complete", "COMP_WORDS": "gpuplan so", "COMP_CWORD": "1"}


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("gpuplan") is None:
        sys.exit("gpuplan is not on PATH: activate the venv (pip install -e .)")
    print(f"load average {os.getloadavg()[0]:.2f}, {args.repeat} runs each, median")
    print(f"{'command':32} {'wall s':>7} {'cpu s':>7}")
    for name, argv in COMMANDS.items():
        env = {**os.environ, **(COMPLETION_ENV if name.startswith("completion") else {})}
        runs = [measure(argv, env) for _ in range(args.repeat)]
        print(f"{name:32} {statistics.median(w for w, _ in runs):7.3f} {statistics.median(c for _, c in runs):7.3f}")


if __name__ == "__main__":
    main()

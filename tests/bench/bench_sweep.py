"""Sweep throughput: scenarios per second with 1 and N processes, and the Ray executor's overhead.

Not a test (pytest ignores tests/bench) and it asserts nothing about time. It sweeps one
problem over a generated grid (default: problems/hybrid-burst.yaml, 21Vianet price
factors × Shunyi power quotas = 200 scenarios) with each executor and prints a table:

    python tests/bench/bench_sweep.py                         # 200 scenarios; 1 and 2 processes; Ray
    python tests/bench/bench_sweep.py --scenarios 40 --jobs 1,2,4 --no-ray
    python tests/bench/bench_sweep.py --problem problems/seed-7b-200b-30d.yaml

Columns: `wall_s` is the wall time of the whole `run_sweep` call (pool start-up, or for
`ray cold` ray.init and shutdown, included); `scen/s` = scenarios ÷ wall_s; `solve_s` is
the sum of the rows' own seconds (edit + solve inside the workers); `vs process` is wall_s
÷ the wall time of the process executor with the same number of workers. `ray warm` runs
on an instance started beforehand, so it is the per-task overhead without start-up.
Every executor's table is compared with the first one's (all columns but seconds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from solver.analysis.sweep import run_sweep, scenarios_from_grid  # noqa: E402
from solver.load import load_problem  # noqa: E402


def grid(problem_name: str, n: int) -> dict:
    """n scenarios: n/4 price factors 0.8–1.2 × 4 values of a second key (power quota or redundancy)."""
    factors = [round(0.8 + 0.4 * i / max(1, n // 4 - 1), 4) for i in range(n // 4)]
    if problem_name == "hybrid-burst":      # 21Vianet's prices and Shunyi's quota change the plan, not only its cost
        return {"grid": {"offers[vendor=21vianet].price*=": factors,
                         "datacenters.Shunyi.power_quota_kw=": [250, 300, 350, 400]}}
    return {"grid": {"offers[*].price*=": factors, "redundancy=": [0.2, 0.25, 0.3, 0.35]}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default=str(ROOT / "problems" / "hybrid-burst.yaml"))
    ap.add_argument("--scenarios", type=int, default=200, help="rounded down to a multiple of 4")
    ap.add_argument("--jobs", default="1,2", help="process counts to measure, e.g. 1,2,4")
    ap.add_argument("--ray-jobs", type=int, default=None, help="Ray CPUs (default: the largest of --jobs)")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()

    problem, catalog = load_problem(args.problem)
    scenarios = scenarios_from_grid(grid(problem.name, args.scenarios))
    n = len(scenarios)
    counts = [int(j) for j in args.jobs.split(",")]
    ray_jobs = args.ray_jobs or max(counts)
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=ROOT).stdout
    print(f"# {dt.datetime.now():%Y-%m-%d %H:%M}  rev {rev.strip() or '?'}  {problem.name}: {n} scenarios  "
          f"cpus {os.cpu_count()}  load {os.getloadavg()[0]:.2f}", flush=True)

    results: list[tuple[str, int, float, pd.DataFrame]] = []

    def measure(label: str, jobs: int, **kw) -> None:
        print(f"  running {label} ({jobs} workers) ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        df = run_sweep(problem, catalog, scenarios, jobs=jobs, **kw)
        results.append((label, jobs, time.perf_counter() - start, df))

    for jobs in counts:
        measure("process", jobs, executor="process")
    if not args.no_ray:
        import ray
        measure("ray cold", ray_jobs, executor="ray")
        ray.init(num_cpus=ray_jobs, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        try:
            measure("ray warm", ray_jobs, executor="ray")
        finally:
            ray.shutdown()

    first = results[0][3].drop(columns="seconds")
    process_wall = {jobs: wall for label, jobs, wall, _ in results if label == "process"}
    print(f"{'executor':<10} {'workers':>7} {'wall_s':>8} {'scen/s':>7} {'solve_s':>8} {'vs process':>10}  "
          f"{'statuses':<22} same table")
    for label, jobs, wall, df in results:
        ratio = f"{wall / process_wall[jobs]:.2f}" if jobs in process_wall else "-"
        statuses = ", ".join(f"{c} {s}" for s, c in df["status"].value_counts().items())
        same = "yes" if df.drop(columns="seconds").equals(first) else "NO"
        print(f"{label:<10} {jobs:>7} {wall:>8.1f} {n / wall:>7.2f} {df['seconds'].sum():>8.1f} {ratio:>10}  "
              f"{statuses:<22} {same}")
    print(f"# load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

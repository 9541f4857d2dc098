"""Frontier benchmark: one N-point frontier against N independent solves of the same caps.

Not part of `python -m pytest` (pytest ignores tests/bench); it measures and prints, and
exits 1 only when a frontier point's cost differs from its independent solve's.

    python tests/bench/bench_frontier.py                          # bundled problems, 20 points
    python tests/bench/bench_frontier.py --points 20 --problems seed-13b-100b,hybrid-burst
    python tests/bench/bench_frontier.py --axis deadline --repeat 1 --no-lp-variant

For each problem:
- `frontier`: solver.analysis.frontier.frontier(problem, axis, N) — one model built
  once, re-bounded between points, swept from loose to tight (see its module doc);
  also with `lp_bounds=False` (each fabric choice bounded by its LP once, as
  solver.milp.decompose does) unless --no-lp-variant;
- `independent`: for every ε the frontier tried, solver.api.solve_problem(problem,
  constrain=constrain_to(ε)) — build, bound, search, verify, from scratch.
The ratio is frontier ÷ independent, in CPU seconds of this process (all backends run
single-threaded in-process, so CPU time is less sensitive to a shared machine's load
than wall time, which is printed too). Every independent cost is compared with the
frontier's candidate at the same ε (relative 1e-4, the solvers' gap).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import ortools

from solver.analysis.frontier import frontier
from solver.limits import constrain_to
from solver.api import solve_problem
from solver.errors import Infeasible
from solver.load import load_problem
from solver.milp.instance import build_instance

PROBLEMS = ["seed-7b-200b-30d", "hybrid-burst", "seed-13b-100b", "debug-then-train"]


def clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def since(start: tuple[float, float]) -> tuple[float, float]:
    cpu, wall = clock()
    return cpu - start[0], wall - start[1]


def limits_for(axis: str, eps: float, required: float) -> dict:
    return {"deadline": {"cap": int(eps)}, "budget": {"budget": eps * (1 + 1e-9)},
            "spot_share": {"spot": eps * required}, "vendors": {"vendors": int(eps)}}[axis]


def run(name: str, axis: str, points: int, lp_variant: bool) -> tuple[list[str], bool]:
    problem, catalog = load_problem(ROOT / "problems" / f"{name}.yaml")
    start = clock()
    result = frontier(problem, catalog, axis, points)
    f_cpu, f_wall = since(start)
    rows, ok = [], True
    if lp_variant:
        start = clock()
        frontier(problem, catalog, axis, points, lp_bounds=False)
        p_cpu, p_wall = since(start)
    candidates = {}
    for eps, _outcome, cost in result.tried:
        candidates.setdefault(eps, cost)
    required = sum(build_instance(problem, catalog).required.values())
    i_cpu = i_wall = 0.0
    solves = 0
    mismatches = []
    for eps, expected in candidates.items():
        start = clock()
        try:
            plan = solve_problem(problem, catalog, constrain=constrain_to(**limits_for(axis, eps, required)))
            cost = plan.total_cost
        except Infeasible:
            cost = None
        cpu, wall = since(start)
        i_cpu, i_wall, solves = i_cpu + cpu, i_wall + wall, solves + 1
        if axis != "budget" and expected is not None and cost is not None and abs(cost - expected) > 1e-4 * cost:
            mismatches.append(f"ε={eps}: frontier {expected:,.2f}, independent {cost:,.2f}")
    if mismatches:
        ok = False
    rows.append(f"| {name} | {axis} | {points} | {len(candidates)} | {len(result.points)} | "
                f"{result.milp_solves} / {result.lp_solves} / {result.probes} | {f_cpu:.2f} ({f_wall:.2f}) | "
                + (f"{p_cpu:.2f} ({p_wall:.2f}) | " if lp_variant else "- | ")
                + f"{i_cpu:.2f} ({i_wall:.2f}) | {f_cpu / i_cpu:.2f} | "
                + (f"{p_cpu / i_cpu:.2f} |" if lp_variant else "- |"))
    for m in mismatches:
        rows.append(f"  MISMATCH {name}: {m}")
    return rows, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated names in problems/")
    parser.add_argument("--axis", default="deadline", choices=["deadline", "budget", "spot_share", "vendors"])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--no-lp-variant", action="store_true", help="skip the lp_bounds=False frontier")
    args = parser.parse_args()
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, check=False)
    print(f"# {dt.datetime.now():%Y-%m-%d %H:%M}, {rev.stdout.strip()}, OR-Tools {ortools.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print("CPU seconds (wall in parentheses); solves = MILPs / LPs / feasibility probes of the frontier\n")
    print("| problem | axis | N | ε tried | points | solves | frontier | frontier, LP once | "
          "independent | ratio | ratio, LP once |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for name in args.problems.split(","):
        rows, good = run(name.strip(), args.axis, args.points, not args.no_lp_variant)
        ok &= good
        print("\n".join(rows), flush=True)
    print(f"\nload at the end {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""How well `--time-limit` holds: wall seconds of `solve_problem` against the limit, per input.

The limit bounds each solve, packing rounds and the tie-break included; the repair of a plan
that does not pack may run REPAIR_FLOOR seconds past it (solver.engine.repair). Loading and
building the model come before the clock and are printed apart. Prints one line per input:
build seconds, solve seconds, the ratio to the limit, and the outcome. Not a test: nothing is
asserted (the seconds depend on the machine); the history is in tests/bench/HISTORY.md.

    python tests/bench/bench_time_limit.py            # limit 5 s: bundled, bench and synthetic inputs
    python tests/bench/bench_time_limit.py 10 big     # limit 10 s, the synthetic instances only
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from bench_milp import generate, parse_sizes  # noqa: E402
from solver.api import build, solve_built  # noqa: E402
from solver.errors import Infeasible  # noqa: E402
from solver.load import load_problem  # noqa: E402


def inputs(which: str):
    if which in ("all", "files"):
        for path in sorted((ROOT / "problems").glob("*.yaml")) + sorted((ROOT / "problems" / "bench").glob("*.yaml")):
            yield path.stem, lambda path=path: load_problem(path)
    if which in ("all", "big"):
        for size in ("medium", "large", "target"):
            yield f"synthetic-{size}-1", lambda size=size: generate(parse_sizes(size)[0], 1)


def main(limit: float, which: str) -> None:
    print(f"time limit {limit:g} s, load {os.getloadavg()[0]:.1f}")
    print(f"{'input':32} {'build s':>8} {'solve s':>8} {'ratio':>6}  outcome")
    worst = 0.0
    for name, make in inputs(which):
        start = time.perf_counter()
        prob, cat = make()
        inst, milp = build(prob, cat)
        built = time.perf_counter()
        try:
            plan = solve_built(inst, milp, time_limit=limit)
            outcome = f"{plan.status} {plan.total_cost:,.0f}"
        except Infeasible as exc:
            outcome = f"no plan ({'proven' if exc.proven else 'not proven'})"
        seconds = time.perf_counter() - built
        worst = max(worst, seconds / limit)
        print(f"{name:32} {built - start:8.1f} {seconds:8.1f} {seconds / limit:6.2f}  {outcome}", flush=True)
    print(f"worst ratio {worst:.2f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(float(args[0]) if args else 5.0, args[1] if len(args) > 1 else "all")

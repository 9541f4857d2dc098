"""Where a solve's time goes: finding the optimal plan, proving it, the tie-break, packing rounds.

For each problem (default: problems/*.yaml and problems/bench/*.yaml) it builds the model,
solves it with HiGHS the way `gpuplan solve` does but with the tie-break timed apart, and
prints one row: the first stage's seconds, when (from its start) HiGHS' log first showed a
plan and first showed the optimal one (within the optimality gap of the final cost), the
tie-break's seconds and outcome, and how many `Pack` rows packing rounds added.

Why: issue 23 asked why the user-sized suite is slow. On it the proof mostly follows
within a second of the optimal plan being found (HiGHS' reduced-cost fixing then restarts
on a model a tenth the size), so "optimum found at" is the number to move; the rows where
it is not (a large root gap) need a stronger bound instead (tests/bench/HISTORY.md,
2026-12-06 "Why the suite is slow").

Milestones come from HiGHS' branch-and-bound log lines (solver.engine.progress), which HiGHS
prints at intervals, so they are read to a tenth of a second or so. It never asserts on
time, and pytest ignores tests/bench.

    python tests/bench/bench_phases.py [PROBLEM.yaml ...] [--time-limit 120]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from solver.api import build  # noqa: E402
from solver.engine.progress import PROGRESS  # noqa: E402
from solver.engine.solve import solve_milp  # noqa: E402
from solver.engine.tiebreak import break_ties  # noqa: E402
from solver.load import load_problem  # noqa: E402
from solver.milp.solution import OPTIMALITY_GAP  # noqa: E402


@dataclass
class Heard:
    """What HiGHS' log said during one solve, with the seconds since `start` it said it."""

    start: float
    plans: list[tuple[float, float]] = field(default_factory=list)   # (seconds, plan cost)

    def __call__(self, plan: float | None, _bound: float | None) -> None:
        if plan is not None:
            self.plans.append((time.perf_counter() - self.start, plan))

    def first_plan(self) -> float | None:
        return self.plans[0][0] if self.plans else None

    def optimum_found(self, cost: float) -> float | None:
        """When a plan within the optimality gap of `cost` was first heard."""
        return next((s for s, plan in self.plans if plan <= cost * (1 + OPTIMALITY_GAP)), None)



def measure(path: Path, time_limit: float) -> dict:
    """One problem's row."""
    problem, catalog = load_problem(path)
    _inst, milp = build(problem, catalog)
    packs = sum(name.startswith("Pack-") for name in milp.rows)
    heard = Heard(time.perf_counter())
    PROGRESS.listener = heard
    try:
        first = solve_milp(milp, time_limit=time_limit)
    finally:
        PROGRESS.listener = None
    start = time.perf_counter()
    final = break_ties(milp, first, "highs", time_limit - first.seconds)
    return {"instance": path.stem if path.parent.name == "problems" else f"{path.parent.name}/{path.stem}",
            "vars": milp.model.num_variables, "status": first.status, "cost": first.objective,
            "first_s": first.seconds, "plan_at": heard.first_plan(), "optimum_at": heard.optimum_found(first.objective),
            "tiebreak_s": time.perf_counter() - start, "tiebreak": final.tie_break,
            "pack_rows": sum(name.startswith("Pack-") for name in milp.rows) - packs}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(rows: list[dict]) -> str:
    head = ("| instance | vars | status | cost | first stage s | first plan at s | optimum found at s "
            "| tie-break s | tie-break | Pack rows |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [f"| {r['instance']} | {r['vars']:,} | {r['status']} | {r['cost']:,.0f} | {r['first_s']:.1f} | "
             f"{_seconds(r['plan_at'])} | {_seconds(r['optimum_at'])} | "
             f"{r['tiebreak_s']:.2f} | "
             f"{r['tiebreak']} | {r['pack_rows']} |" for r in rows]
    return "\n".join([head, *lines])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", type=Path,
                        help="problem files (default: problems/*.yaml and problems/bench/*.yaml)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds for both stages together")
    args = parser.parse_args(argv)
    paths = args.problems or sorted((ROOT / "problems").glob("*.yaml")) + sorted((ROOT / "problems" / "bench").glob("*.yaml"))
    print(f"# bench_phases  {time.strftime('%Y-%m-%dT%H:%M:%S')}  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for path in paths:
        print(f"  {path.name} ...", file=sys.stderr, flush=True)
        rows.append(measure(path, args.time_limit))
    print(table(rows))
    print(f"# done  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue 43, item 2 (second design): what the column bound (Dantzig–Wolfe on the jobs) gives.

Per problem: the plain LP relaxation's value and seconds (tests/bench/realistic.py's
`lp_relaxation`, the built model with its integrality dropped), the best plan of the normal
engine (`solve_milp` within --time-limit; `status` optimal = proven) and its own proven
bound, the column bound (solver.engine.experimental.columns, within --dw-seconds, its
generation started from the engine's plan and the LP's duals; `converged` when the master
LP met the Lagrangian bound, else the bound is the best L(π) reached), and price-and-branch
(the restricted master as a MIP over the columns generated, the engine's plan among them,
verified by solver.verify). Gaps are to the best plan: (plan − bound) ÷ plan. `dw_gap` is the
valid bound's; `master_gap` the restricted master LP's, which is at or above the Dantzig–Wolfe
bound: the converged bound's gap lies between the two (equal when `converged`).

    python tests/bench/bench_columns.py --seeds 1-30 [--suite 2] [--files problems/bench/*.yaml]
    python tests/bench/bench_columns.py --seeds none --files tests/bench/problems/issue33-2job-45d-storage.yaml

Never asserts on time; pytest ignores tests/bench. The machine is shared: read `load1`.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.engine.experimental import columns  # noqa: E402
from solver.engine.solve import solve_milp  # noqa: E402
from solver.errors import PlanRejected  # noqa: E402
from solver.milp.build import build_milp  # noqa: E402
from solver.milp.extract import extract_plan  # noqa: E402
from solver.milp.instance import build_instance  # noqa: E402
from solver.milp.solution import NoSolution, Solution  # noqa: E402
from solver.verify import check_plan  # noqa: E402
from tests.bench import user_like  # noqa: E402
from tests.bench.realistic import lp_relaxation, parse_seeds, problems  # noqa: E402

COLUMNS = ["instance", "jobs", "vars", "blocks", "master_rows", "lp_s", "status", "best", "lp_gap", "engine_gap",
           "dw_gap", "master_gap", "dw_s", "iterations", "cols", "converged", "pb_cost", "pb_verified", "load1"]
BUG_TOLERANCE = 1e-6


def values_of(solution: Solution, n: int) -> np.ndarray:
    x = np.zeros(n)
    for k, v in solution.values.items():
        x[k] = v
    return x


def verified(inst, milp, x: np.ndarray, cost: float) -> str:
    """Whether the independent verifier accepts the plan of these values ('yes', or why not)."""
    solution = Solution(milp, "feasible", cost, -math.inf, 0.0, "columns", {k: float(v) for k, v in enumerate(x)})
    try:
        check_plan(inst.problem, inst.as_given or inst.catalog, extract_plan(solution))
    except PlanRejected as exc:
        return f"no: {str(exc)[:60]}"
    return "yes"


def measure(name: str, problem, catalog, args) -> dict:
    inst = build_instance(problem, catalog)
    milp = build_milp(inst)
    row: dict = dict(instance=name, jobs=len(problem.jobs), vars=milp.model.num_variables)
    row["lp_value"], row["lp_s"] = lp_relaxation(inst)
    try:
        sol = solve_milp(build_milp(inst), time_limit=args.time_limit)
    except NoSolution as exc:
        row["status"] = "infeasible" if exc.proven else "no plan"
        return _done(row)
    best = sol.objective
    row.update(status=sol.status, best=best, engine_bound=sol.bound)
    row["engine_gap"] = (best - sol.bound) / best if math.isfinite(sol.bound) else None
    if row["lp_value"] is not None:
        row["lp_gap"] = (best - row["lp_value"]) / best
    try:
        bound, gen = columns.column_bound(milp, args.dw_seconds, ownership=args.ownership,
                                          start=values_of(sol, milp.model.num_variables),
                                          block_seconds=args.block_seconds)
    except RuntimeError as exc:  # the restricted master failed (seed 26: infeasible within Glop's tolerance)
        row["status"] = f"{row['status']}; columns: {exc}"
        return _done(row)
    row.update(blocks=len(gen.parts.blocks), master_rows=gen.rows, dw=bound.bound, dw_s=bound.seconds,
               iterations=bound.iterations, cols=bound.columns, converged=bound.converged,
               dw_gap=(best - bound.bound) / best,
               master_gap=(best - bound.master) / best if math.isfinite(bound.master) else None)
    if bound.bound > best + BUG_TOLERANCE * abs(best) + 1e-6:
        row["bug"] = f"column bound {bound.bound:,.2f} above a plan of {best:,.2f}"
    if args.pb_seconds > 0:
        picked = gen.price_and_branch(args.pb_seconds)
        if picked is not None:
            row["pb_cost"] = picked[0]
            row["pb_verified"] = verified(inst, milp, picked[1], picked[0])
    return _done(row)


def _done(row: dict) -> dict:
    row["load1"] = round(os.getloadavg()[0], 2)
    print(f"  {row}", file=sys.stderr, flush=True)
    return row


def markdown(rows: list[dict]) -> str:
    """The rows as HISTORY.md's Markdown table: gaps in %, money whole, seconds to 0.1."""
    def cell(col: str, v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        if col.endswith("_gap"):
            return f"{v:.1%}"
        if col.endswith("_s") or col == "load1":
            return f"{v:.1f}"
        if isinstance(v, float):
            return f"{v:,.0f}"
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell(c, r.get(c)) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    done = [r for r in rows if r.get("dw_gap") is not None]
    if not done:
        return "nothing measured"
    med = {k: statistics.median(r[k] for r in done if r.get(k) is not None)
           for k in ("lp_gap", "dw_gap", "master_gap", "dw_s", "lp_s") if any(r.get(k) is not None for r in done)}
    proven = [r for r in done if r["status"] == "optimal"]
    bugs = [r["instance"] for r in rows if r.get("bug")]
    closed = [(r["lp_gap"] - r["dw_gap"]) / r["lp_gap"] for r in done if r.get("lp_gap")]
    return (f"{len(done)} problems ({len(proven)} proven optimal, {sum(bool(r['converged']) for r in done)} "
            f"converged): median LP gap {med['lp_gap']:.2%}, median column-bound gap {med['dw_gap']:.2%}, "
            f"median share of the LP's gap closed {statistics.median(closed) if closed else math.nan:.1%}, "
            f"median master-LP gap (the converged bound's is at least this) {med.get('master_gap', math.nan):.2%}, "
            f"median seconds LP {med['lp_s']:.1f} / columns {med['dw_s']:.1f}; bound above a plan: "
            f"{', '.join(bugs) or 'never'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, default=list(user_like.SEEDS), help="e.g. 1-30 or 3,7,9; none")
    ap.add_argument("--suite", type=int, choices=(1, 2), default=user_like.SUITE)
    ap.add_argument("--extra", action="store_true", help="also issue 33's two problem files after the seeds")
    ap.add_argument("--files", type=Path, nargs="*", default=(), help="problem files measured after the seeds")
    ap.add_argument("--time-limit", type=float, default=60.0, help="the engine's solve, seconds (default 60)")
    ap.add_argument("--dw-seconds", type=float, default=120.0, help="column generation, seconds (default 120)")
    ap.add_argument("--block-seconds", type=float, default=20.0, help="one pricing MILP, seconds (default 20)")
    ap.add_argument("--pb-seconds", type=float, default=10.0, help="price-and-branch MIP, seconds (0: none)")
    ap.add_argument("--ownership", choices=(columns.PRIVATE, columns.POOLED), default=columns.PRIVATE)
    ap.add_argument("--out", type=Path, default=None, help="also write the rows to this CSV (after each problem)")
    args = ap.parse_args(argv)
    print(f"# column bound  {time.strftime('%Y-%m-%dT%H:%M:%S')}  load "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}  engine {args.time_limit:g} s, columns "
          f"{args.dw_seconds:g} s ({args.ownership})", flush=True)
    rows: list[dict] = []
    try:
        for name, _cat, problem, catalog in problems(args.seeds, args.extra, args.suite, tuple(args.files)):
            print(f"  {name} …", file=sys.stderr, flush=True)
            rows.append(measure(name, problem, catalog, args))
            if args.out:
                with args.out.open("w", newline="", encoding="utf-8") as fh:
                    writer = csv.DictWriter(fh, COLUMNS + ["lp_value", "engine_bound", "dw", "bug"],
                                            extrasaction="ignore")
                    writer.writeheader()
                    writer.writerows(rows)
    except KeyboardInterrupt:
        print("interrupted: partial results below", file=sys.stderr)
    print(markdown(rows))
    print(summary(rows))
    print(f"# done  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

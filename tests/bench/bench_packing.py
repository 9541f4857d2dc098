"""Many single-node jobs on few offers: what a time-limited solve gives when its first plan does not pack.

40 synchronous jobs of 2-7 GPU-days (seeded), each in a window of 1-3 days within 10 days,
on 5 hourly ethernet offers of 8-GPU nodes (5.0-7.0 CNY/GPU-h, 8 nodes each). Across
ethernet nodes such a job runs at 0.6, so each wants one node, and the first plan (nodes
counted, not placed) usually does not fit; solver.engine.solve then adds slot rows, repairs
that plan and solves again from it. Prints, per time limit, the plan's status, cost, bound
and seconds. Not a test: nothing is asserted.

    python tests/bench/bench_packing.py            # time limits 10 and 60 s
    python tests/bench/bench_packing.py 3 10 30
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.builders

from tests.builders import catalog, hourly, job, problem  # noqa: E402
from solver.api import build, solve_built  # noqa: E402
from solver.errors import Infeasible  # noqa: E402


def instance(seed: int = 7):
    rng = random.Random(seed)
    cat = catalog(*(hourly(f"H{k}", 5 + k * 0.5, max_nodes=8, interconnect=("ethernet",)) for k in range(5)))
    jobs = []
    for i in range(40):
        start = rng.randint(0, 8)
        jobs.append(job(f"j{i}", days=rng.randint(2, 7) * (1 - 1e-9), start_day=start,
                        deadline_days=min(10, start + rng.randint(1, 3))))
    return problem(*jobs, horizon_days=10), cat


def main(limits: list[float]) -> None:
    prob, cat = instance()
    print(f"{'limit_s':>7} {'status':>9} {'cost':>9} {'bound':>9} {'seconds':>7}")
    for limit in limits:
        inst, milp = build(prob, cat)
        start = time.perf_counter()
        try:
            plan = solve_built(inst, milp, time_limit=limit)
            row = (plan.status, f"{plan.total_cost:,.0f}", f"{plan.lower_bound:,.0f}")
        except Infeasible as exc:
            row = ("no plan", "-", "-") if not exc.proven else ("infeasible", "-", "-")
        print(f"{limit:>7g} {row[0]:>9} {row[1]:>9} {row[2]:>9} {time.perf_counter() - start:>7.1f}", flush=True)


if __name__ == "__main__":
    main([float(x) for x in sys.argv[1:]] or [10.0, 60.0])

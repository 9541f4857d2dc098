"""What the optimum is worth: the same problem solved the spreadsheet way.

Why: a planner's answer is trusted when it is compared with what a team would have
done without it — one vendor quote for everything, or one rental mode for everything
(seed 002: debug on hourly, then train on monthly saves 30 %+). Each baseline is the
same problem with an extra allow-list, solved to optimality by the same API, so the
saving printed is exact for the catalog at hand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from solver.clock import OutOfTime, RunClock
from solver.api import build_instance, solve_problem
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem, Restrict

MODE_BASELINES = {"all hourly": ["hourly"], "all monthly": ["monthly"]}


@dataclass(frozen=True)
class Baseline:
    name: str
    cost: float | None          # None: no plan this way (infeasible, or not determined)
    detail: str
    status: str = "optimal"     # optimal | feasible (time limit: cost is an upper bound) | infeasible | undetermined

    def saving(self, optimum: float) -> float | None:
        """Fraction of the baseline's cost the optimum saves (at most this much when the
        baseline is only `feasible`: its own optimum may be cheaper)."""
        if self.cost is None or self.cost <= 0:
            return None
        return (self.cost - optimum) / self.cost

    def to_dict(self, optimum: float) -> dict:
        return {"name": self.name, "cost": self.cost, "status": self.status, "saving": self.saving(optimum),
                "detail": self.detail}


def with_restrict(problem: Problem, **allow: list[str]) -> Problem:
    """The problem with allow-lists narrowed (intersected with any the user already has)."""
    base = problem.restrict or Restrict()
    update = {}
    for field, values in allow.items():
        mine = getattr(base, field)
        update[field] = [v for v in values if not mine or v in mine] or ["<none>"]
    return problem.model_copy(update={"restrict": base.model_copy(update=update)})


def _solve(problem: Problem, catalog: Catalog, clock: RunClock, options: dict) -> Plan | str:
    """The plan, or why there is none: "infeasible" (proven) or "undetermined"."""
    try:
        return solve_problem(problem, catalog, **{**options, "time_limit": clock.next_limit()})
    except OutOfTime:
        return "undetermined"
    except Infeasible as exc:
        return "infeasible" if exc.proven else "undetermined"


def best_single_offer(problem: Problem, catalog: Catalog, *, stop_at: float | None = None,
                      **solve_options) -> Baseline:
    """The cheapest plan that uses one offer (any of its interconnect options) for every job.

    An offer whose solve stopped without a plan, or that the run had no time left for, is
    named in the detail, and the baseline is then only `feasible`: that offer might have
    been cheaper, so the saving against it is an upper bound."""
    clock = RunClock(solve_options.pop("time_limit", None), stop_at)
    best: tuple[float, str, str] | None = None
    unknown, bounds = [], []
    for name in sorted(catalog.offers):
        alone = with_restrict(problem, offers=[name])
        if not _carries(alone, catalog):  # no solve, no time: most offers fail on GPU, memory or capacity
            continue
        plan = _solve(alone, catalog, clock, solve_options)
        if plan == "undetermined":
            unknown.append(name)
        elif isinstance(plan, Plan):
            bounds.append((plan.lower_bound, name))
            if best is None or plan.total_cost < best[0]:
                best = (plan.total_cost, name, plan.status)
    if best is None:
        if unknown:
            return Baseline("best single offer", None, f"not determined: {_unsolved(unknown)}", "undetermined")
        return Baseline("best single offer", None, "no single offer can carry the problem alone", "infeasible")
    # an offer stopped before its proof may still beat the best plan found: only an upper bound then
    unknown += [name for bound, name in bounds if name != best[1] and bound < best[0] * (1 - 1e-4)]
    detail = best[1] + (f" ({_unsolved(unknown)})" if unknown else "")
    return Baseline("best single offer", best[0], detail, "feasible" if unknown else best[2])


def _carries(problem: Problem, catalog: Catalog) -> bool:
    """Every job has some configuration left after preprocessing (what solve_problem checks first)."""
    inst = build_instance(problem, catalog)
    return all(any(o.job == job.name for o in inst.options) for job in problem.jobs)


def _unsolved(offers: list[str]) -> str:
    shown = ", ".join(offers[:3]) + (f" and {len(offers) - 3} more" if len(offers) > 3 else "")
    return f"{len(offers)} offer{'s' if len(offers) != 1 else ''} not solved in the time given: {shown}"


def mode_baselines(problem: Problem, catalog: Catalog, *, stop_at: float | None = None,
                   **solve_options) -> list[Baseline]:
    """Everything on hourly, everything on monthly contracts."""
    clock = RunClock(solve_options.pop("time_limit", None), stop_at)
    out = []
    for name, modes in MODE_BASELINES.items():
        plan = _solve(with_restrict(problem, modes=modes), catalog, clock, solve_options)
        if isinstance(plan, Plan):
            out.append(Baseline(name, plan.total_cost, ", ".join(sorted({a.offer for a in plan.allocations})),
                                plan.status))
        elif plan == "infeasible":
            out.append(Baseline(name, None, f"infeasible with {'/'.join(modes)} only", "infeasible"))
        else:
            out.append(Baseline(name, None, "not determined: no plan found in the time given", "undetermined"))
    return out


def all_baselines(problem: Problem, catalog: Catalog, *, max_seconds: float | None = None,
                  **solve_options) -> list[Baseline]:
    """The mode baselines first (two solves), then every single offer, all within max_seconds."""
    stop_at = None if max_seconds is None else time.perf_counter() + max_seconds
    modes = mode_baselines(problem, catalog, stop_at=stop_at, **solve_options)
    return [best_single_offer(problem, catalog, stop_at=stop_at, **solve_options), *modes]

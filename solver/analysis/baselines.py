"""What the optimum is worth: the same problem solved the spreadsheet way.

Why: a planner's answer is trusted when it is compared with what a team would have
done without it — one vendor quote for everything, or one rental mode for everything
(seed 002: debug on hourly, then train on monthly saves 30 %+). Each baseline is the
same problem with an extra allow-list, solved to optimality by the same API, so the
saving printed is exact for the catalog at hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.api import solve_problem
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.problem import Problem, Restrict

MODE_BASELINES = {"all hourly": ["hourly"], "all monthly": ["monthly"]}


@dataclass(frozen=True)
class Baseline:
    name: str
    cost: float | None          # None: no feasible plan this way
    detail: str

    def saving(self, optimum: float) -> float | None:
        """Fraction of the baseline's cost the optimum saves."""
        if self.cost is None or self.cost <= 0:
            return None
        return (self.cost - optimum) / self.cost


def with_restrict(problem: Problem, **allow: list[str]) -> Problem:
    """The problem with allow-lists narrowed (intersected with any the user already has)."""
    base = problem.restrict or Restrict()
    update = {}
    for field, values in allow.items():
        mine = getattr(base, field)
        update[field] = [v for v in values if not mine or v in mine] or ["<none>"]
    return problem.model_copy(update={"restrict": base.model_copy(update=update)})


def best_single_offer(problem: Problem, catalog: Catalog, **solve_options) -> Baseline:
    """The cheapest plan that uses one offer (any of its interconnect options) for every job."""
    best: tuple[float, str] | None = None
    for name in sorted(catalog.offers):
        try:
            plan = solve_problem(with_restrict(problem, offers=[name]), catalog, **solve_options)
        except Infeasible:
            continue
        if best is None or plan.total_cost < best[0]:
            best = (plan.total_cost, name)
    if best is None:
        return Baseline("best single offer", None, "no single offer can carry the problem alone")
    return Baseline("best single offer", best[0], best[1])


def mode_baselines(problem: Problem, catalog: Catalog, **solve_options) -> list[Baseline]:
    """Everything on hourly, everything on monthly contracts."""
    out = []
    for name, modes in MODE_BASELINES.items():
        try:
            plan = solve_problem(with_restrict(problem, modes=modes), catalog, **solve_options)
            out.append(Baseline(name, plan.total_cost, ", ".join(sorted({a.offer for a in plan.allocations}))))
        except Infeasible:
            out.append(Baseline(name, None, f"infeasible with {'/'.join(modes)} only"))
    return out


def all_baselines(problem: Problem, catalog: Catalog, **solve_options) -> list[Baseline]:
    return [best_single_offer(problem, catalog, **solve_options), *mode_baselines(problem, catalog, **solve_options)]

"""Run a built MILP on one of OR-Tools' bundled solvers and read the result."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import COST_PARTS, Milp

BACKENDS = {"scip": "scip", "highs": "highs", "cp_sat": "sat"}
DEFAULT_BACKEND = "scip"
"""Measured with tests/bench/bench_milp.py: see README, Performance."""


class NoSolution(Exception):
    """The solver stopped without any plan: proven infeasible, or out of time with none found."""

    def __init__(self, message: str, *, proven: bool) -> None:
        self.proven = proven
        super().__init__(message)


@dataclass
class Solution:
    """Values of a solved MILP, with the solver's own bound."""

    milp: Milp
    status: str                 # optimal | feasible
    objective: float
    bound: float
    seconds: float
    backend: str
    values: dict[int, float]    # variable index → value

    def value(self, var: mb.Variable) -> float:
        return self.values.get(var.index, 0.0)

    def count(self, var: mb.Variable) -> int:
        return int(round(self.value(var)))

    def cost_parts(self) -> dict[str, float]:
        parts = {name: 0.0 for name in COST_PARTS}
        for name, terms in self.milp.cost.items():
            parts[name] = sum(coef * self.value(var) for var, coef in terms)
        return parts

    @property
    def gap(self) -> float:
        """Relative distance between the plan's cost and the proven lower bound."""
        return max(0.0, (self.objective - self.bound) / max(abs(self.objective), 1e-9))


def solve_milp(milp: Milp, *, backend: str = DEFAULT_BACKEND, time_limit: float | None = None,
               gap: float | None = None, log: bool = False) -> Solution:
    """Solve; raise NoSolution when there is no plan (proven or not)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    solver = mb.Solver(BACKENDS[backend])
    if not solver.solver_is_supported():
        raise ValueError(f"backend {backend!r} is not available in this OR-Tools build")
    if time_limit:
        solver.set_time_limit_in_seconds(time_limit)
    params = _parameters(backend, gap)
    if params:
        solver.set_solver_specific_parameters(params)
    solver.enable_output(log)
    start = time.perf_counter()
    status = solver.solve(milp.model)
    seconds = time.perf_counter() - start
    if status not in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
        proven = status == mb.SolveStatus.INFEASIBLE
        why = "proven infeasible" if proven else f"solver stopped with status {status.name}"
        raise NoSolution(f"no plan: {why} after {seconds:.1f} s", proven=proven)
    variables = milp.model.get_variables()
    values = dict(zip((v.index for v in variables), solver.values(variables).to_numpy()))
    objective = solver.objective_value
    bound = solver.best_objective_bound if status == mb.SolveStatus.FEASIBLE else min(
        objective, solver.best_objective_bound)
    kind = "optimal" if status == mb.SolveStatus.OPTIMAL else "feasible"
    return Solution(milp, kind, objective, bound, seconds, backend, values)


def _parameters(backend: str, gap: float | None) -> str:
    """Solver-specific settings: the relative gap, and HiGHS kept quiet (it ignores enable_output)."""
    lines = ["output_flag=false"] if backend == "highs" else []
    if gap is not None:
        lines.append({"scip": f"limits/gap = {gap}", "highs": f"mip_rel_gap={gap}",
                      "cp_sat": f"relative_gap_limit:{gap}"}[backend])
    return "\n".join(lines)

"""What a solve of the MILP gives: the variables' values with the solver's bound (`Solution`),
or `NoSolution`.

Why a module of its own: the solve loop (solver.engine.solve), the backend calls and the
repair of a plan that does not pack all make or read solutions, and the plan's extraction
and the analyses read them; with the types here, below all of those, they import in one
direction only.

Why in solver.milp, not the solve engine (solver.engine) that makes them: a Solution is the
model's variables read at their values, nothing of how they were found, and the formulation
reads it: each constraint family's binding reader (solver.milp.binding, a part of its
solver.milp.registry entry) and the plan's extraction (solver.milp.extract). The engine
imports the formulation, never the reverse, so the type sits on the formulation's side.
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import COST_PARTS, Milp

OPTIMALITY_GAP = 1e-4
"""A plan is called optimal only when proven within this relative gap (the solvers' default)."""


PROVEN, UNPROVEN, SKIPPED, NOT_APPLIED = "proven", "not proven", "proven without re-solve", "not applied"
"""What Solution.tie_break says (solver.engine.tiebreak sets it): the re-solve proved the
earliest finish and fewest rentals at the optimal cost (contracts and fabric domains as the
first plan chose them); it stopped at its node or time limit with the best plan found; the
bound of tiebreak._finish_floor proved it without a re-solve; no tie-break (the cost is not
proven optimal). Here, beside the field, so that the plan's extraction (solver.milp.extract)
reads them without importing the engine."""


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
    integral: bool = True       # False: the values are an LP relaxation's
    tie_break: str = NOT_APPLIED  # solver.engine.tiebreak: PROVEN, UNPROVEN, ...

    def value(self, var: mb.Variable) -> float:
        return self.values.get(var.index, 0.0)

    def count(self, var: mb.Variable) -> int:
        return int(round(self.value(var)))

    def cost_parts(self) -> dict[str, float]:
        """Each cost part of the plan; an integer plan's integer variables at their whole values.

        Why whole values: a solver's 2.9999999 nodes carry its tolerance into the cost, and one
        plan then read 1,329.35 CNY from HiGHS and 1,329.34 from SCIP and CP-SAT (exact:
        1,329.345; a differential test found it)."""
        def value(var: mb.Variable) -> float:
            return self.count(var) if self.integral and var.is_integral else self.value(var)
        parts = {name: 0.0 for name in COST_PARTS}
        for name, terms in self.milp.cost.items():
            parts[name] = sum(coef * value(var) for var, coef in terms)
        return parts

    @property
    def gap(self) -> float:
        """Relative distance between the plan's cost and the proven lower bound."""
        return max(0.0, (self.objective - self.bound) / max(abs(self.objective), 1e-9))

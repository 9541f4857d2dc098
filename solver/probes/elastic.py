"""Elastic probes: each relaxable family's slack added once and switched off (`add_slacks`,
`slack_on`), the least weighted slack as the objective (`Objective`), and why's elastic twin of
the base model (`twin`). Their plans break written limits on purpose: asked with verify=False.
And `only_these`, the row keeping a forced runner-up's job on its own configurations (why's
`constrain=` hook), so that no analysis writes a row with OR-Tools itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver import api
from solver.probes.changes import Change, Undo, VarBounds
from solver.probes.engine import Probes


@dataclass(eq=False)
class Objective(Change):
    """The objective replaced by Σ weight·variable (an elastic probe: the least slack), the
    cost put back after. Its plan breaks written limits on purpose: ask with verify=False."""

    terms: Sequence[tuple[mb.Variable, float]] = ()
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        milp.model.minimize(mb.LinearExpr.weighted_sum([v for v, _ in self.terms], [w for _, w in self.terms]))

        def undo() -> None:
            milp.model.minimize(milp.total_cost())
        return undo


def add_slacks(probes: Probes, slack: Callable[..., dict[str, mb.Variable]], **kw) -> dict[str, tuple[mb.Variable, float]]:
    """A family's elastic slack (solver.api.FAMILIES' `slack`: one variable per target in its
    rows) added to the built model once, switched off (upper bound 0): the model stays the
    problem's, and a probe switches a slack on by its bound, `{target: (variable, its upper
    bound when on)}`. Plans kept as starts stay plans of it (a new variable is 0 in them)."""
    out = {}
    for target, var in slack(probes.milp, **kw).items():
        out[target] = (var, var.upper_bound)
        var.upper_bound = 0.0
    return out


def slack_on(words: str, slacks: Sequence[tuple[mb.Variable, float]]) -> list[Change]:
    """Changes letting each slack variable up to its bound when on."""
    return [VarBounds(words, False, [var], upper=upper) for var, upper in slacks]




# `why` asks its elastic questions ("which limit does this forced runner-up need most?") of a
# twin of the base model: the same Instance, built again, with every family's slack added once
# and switched off. Why a twin and not the base model: the stock slack raises the offers' node
# bounds and widens the volume discounts' rows (solver.milp.families.stock), which loosens the LP the
# runners-up's bounds are read from and moves HiGHS' path among equally cheap plans.

def twin(probes: Probes) -> Probes:
    """A second model of the engine's Instance (no second build_instance), on the engine's clock,
    with no base and no plans in hand: its probes are bounded by nothing the base proved."""
    import copy

    other = copy.copy(probes)
    other.milp = api.build_milp(probes.inst)
    other.base, other.known = None, []
    other.solves = other.answered_without_solve = 0
    return other


def only_these(milp: api.Milp, name: str, variables: Sequence[mb.Variable]) -> None:
    """Row `name`: Σ variables ≤ 0 (each non-negative, so all of them held at 0): a runner-up's
    job kept off every configuration but its own (solver.analysis.why.force_job), written in the
    model's own terms so that no analysis builds a row itself."""
    if variables:
        milp.add_row(name, mb.LinearExpr.sum(list(variables)) <= 0)

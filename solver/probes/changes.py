"""The changes a probe makes to the built model, each undone after it (solver.probes.engine).

Why apart from the engine: the engine knows only that a change applies and undoes itself and
whether it tightens the model; what a change does to rows, bounds, costs or integrality is here,
and the analyses' own changes (prices, readings of an edited problem, elastic slack, a fabric
choice) are written the same way in the modules beside this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import math

from solver import api


Undo = Callable[[], None]


# ----- changes -------------------------------------------------------------------------------

@dataclass(eq=False)
class Change:
    """One change of the built model, undone after the probe.

    words:    what it does, for the user ("offer X left out").
    tightens: every plan of the changed model is a plan of the model before, at the same cost
              (a bound lowered, a variable fixed, a row switched on; not a cost changed)."""

    words: str
    tightens: bool

    def apply(self, milp: api.Milp) -> Undo:
        raise NotImplementedError


@dataclass(eq=False)
class RowBounds(Change):
    """Rows' right-hand sides set (None: left as they are; ±inf: no limit that side)."""

    rows: Sequence[api.LinearConstraint] = ()
    lower: float | None = None
    upper: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        return _set_bounds(self.rows, self.lower, self.upper)


@dataclass(eq=False)
class VarBounds(Change):
    """Variables' bounds set (None: left as they are): e.g. an offer's nodes fixed at 0."""

    variables: Sequence[api.Variable] = ()
    lower: float | None = None
    upper: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        return _set_bounds(self.variables, self.lower, self.upper)


def _set_bounds(items: Sequence, lower: float | None, upper: float | None) -> Undo:
    """Rows' or variables' bounds set (both have lower_bound/upper_bound; None: left as it is),
    and the undo that puts every one back."""
    saved = [(x, x.lower_bound, x.upper_bound) for x in items]
    for x in items:
        if lower is not None:
            x.lower_bound = lower
        if upper is not None:
            x.upper_bound = upper

    def undo() -> None:
        for x, lo, hi in saved:
            x.lower_bound, x.upper_bound = lo, hi
    return undo


@dataclass(eq=False)
class Limit(Change):
    """A constraint family's bound on one target (solver.milp.registry: `family.set_bound`; None
    lifts it, see Bound), put back as it was after. The plan is verified against the budget the
    model then holds (api.plan_of); a probe past another written limit is read with verify=False."""

    family: api.Family | None = None
    target: str = ""
    value: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        fam, before = self.family, self.family.bound(milp, self.target)
        fam.set_bound(milp, self.target, self.value)

        def undo() -> None:
            fam.set_bound(milp, self.target, before)
        return undo


@dataclass(eq=False)
class AtLeast(Change):
    """Σ variables ≥ `least`: a row added to the model the first time and switched off (no
    lower bound) after, so the next probe of the same kind only switches it back on."""

    name: str = ""
    variables: Sequence[api.Variable] = ()
    least: float = 1.0
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        row = milp.rows.get(self.name)
        if row is None:
            milp.add_row(self.name, api.total(self.variables) >= -math.inf)
            row = milp.rows[self.name]
        row.lower_bound = self.least

        def undo() -> None:
            row.lower_bound = -math.inf
        return undo


@dataclass(eq=False)
class Costs(Change):
    """Cost terms' coefficients replaced: `coefs` maps (cost part, index in milp.cost[part]) to
    the new coefficient; the objective is rebuilt from the cost parts (and again on undo)."""

    coefs: dict[tuple[str, int], float] = field(default_factory=dict)
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        saved = {}
        for (part, k), coef in self.coefs.items():
            var, old = milp.cost[part][k]
            saved[part, k] = (var, old)
            milp.cost[part][k] = (var, coef)
        milp.model.minimize(milp.total_cost())

        def undo() -> None:
            for (part, k), term in saved.items():
                milp.cost[part][k] = term
            milp.model.minimize(milp.total_cost())
        return undo


@dataclass(eq=False)
class Relaxed(Change):
    """Every variable continuous: the probe's answer is the LP relaxation's bound (an Answer
    with no plan; ask with verify=False). Not a tightening: the LP may be cheaper than the base."""

    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        integral = [v for v in milp.model.get_variables() if v.is_integral]
        for v in integral:
            v.is_integral = False

        def undo() -> None:
            for v in integral:
                v.is_integral = True
        return undo

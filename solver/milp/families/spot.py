"""The spot-work family: at most ε EFLOP of the jobs' work done on preemptible (spot) nodes, the
frontier's spot-share limit.

Why a row on work, not on nodes or cost: the frontier asks "how much of the work may run
on capacity that can be reclaimed", and the work rows already weigh every replica by what
it does (solver.milp.work.replica_work), so the same weights give the spot work exactly.
Which offers are spot is the modes table's answer (`MODES[mode].preemptible`). The row is
added on the first finite bound (a model no frontier asks about has none) and kept.
"""

from __future__ import annotations

import math

from ortools.linear_solver.python import model_builder as mb

from solver.i18n import N_
from solver.milp.core import Milp, RowKey
from solver.milp.family import ON_DEMAND, Bound, Family, Labels, NotApplicable, Rows, row_limit
from solver.milp.work import replica_work
from solver.model.modes import MODES

KEY = RowKey("spot")


def spot_terms(milp: Milp) -> list[tuple[mb.Variable, float]]:
    """(replica variable, its work in EFLOP) of every replica on a preemptible offer."""
    inst = milp.inst
    return [(var, replica_work(milp, i, t)) for (i, t), var in milp.replicas.items()
            if MODES[inst.configs[inst.options[i].config].offer.mode].preemptible]


def add_spot_cap(milp: Milp, eflop: float = math.inf) -> mb.LinearConstraint:
    """Σ work on spot nodes ≤ ε   row `Frontier-Spot` (returned)."""
    terms = spot_terms(milp)
    lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [w for _, w in terms])
    milp.add_row("Frontier-Spot", lhs <= eflop, KEY)
    return milp.keyed[KEY]


def spot_bound(milp: Milp, target: str = "") -> float | None:
    """The EFLOP the built model lets a plan do on spot nodes; None: no such limit."""
    return row_limit(milp, KEY, "the spot work", target)


def set_spot_bound(milp: Milp, target: str, eflop: float | None) -> None:
    """At most `eflop` EFLOP of work on spot nodes (None: any), counted as the work rows count it."""
    _check(target)
    row = milp.keyed.get(KEY)
    if row is None:
        if eflop is None:
            return
        row = add_spot_cap(milp)
    row.upper_bound = math.inf if eflop is None else eflop


def spot_work(terms: list[tuple[mb.Variable, float]], sol) -> float:
    """EFLOP the solution does on spot nodes (terms: spot_terms of its model)."""
    return sum(w * sol.count(var) for var, w in terms)


def _check(target: str) -> None:
    if target:
        raise KeyError(f"the spot work has one target, \"\", not {target!r}")


FAMILY = Family(
    name="spot", order=60, unit="EFLOP", targets="spot work",
    rows=Rows(add_spot_cap, ("Frontier-Spot",), ON_DEMAND),
    bounds=Bound(spot_bound, set_spot_bound,
                 NotApplicable("no problem writes a spot share for the verifier to check")),
    labels=Labels(N_("spot"), NotApplicable("no plan runs into a spot share it was not asked for"),
                  NotApplicable("no infeasibility explanation relaxes a spot share"),
                  NotApplicable("the frontier sweeps ε itself")),
    slack=NotApplicable("a frontier's ε, set on its row; no analysis stretches it"),
    binding=NotApplicable("no problem writes a spot share: a plan cannot run into one"),
    relax=NotApplicable("not a written limit, so never the cause of an infeasible problem"),
    lever=NotApplicable("the frontier sweeps ε itself"),
    lost=NotApplicable("a runner-up is forced onto offers, not onto a share of spot work"),
    deal=NotApplicable("the frontier sweeps ε itself"),
    verify=NotApplicable("no problem writes a spot share: the frontier checks its ε on the plan's "
                         "work on spot offers, read by solver.verify.spot_work"),
)

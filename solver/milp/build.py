"""Assemble the MILP: variables and constraint families over an Instance, objective = total cost.

The model is built once; analyses change bounds or coefficients and re-solve. The model
and its handles are `solver.milp.core.Milp`.
"""

from __future__ import annotations

from solver.milp import assignment, capacity, cover, data, site, symmetry
from solver.milp.core import Milp
from solver.milp.family import COSTS, NODES, WORK
from solver.milp.instance import Instance
from solver.milp.registry import FAMILIES


def build_milp(inst: Instance, *, relax: bool = False) -> Milp:
    """Create every variable and constraint family; relax=True gives the LP relaxation."""
    milp = Milp(inst, relaxed=relax)
    milp.model.name = inst.problem.name
    capacity.add_capacity(milp)
    add_limits(milp, NODES)        # stock
    capacity.add_volume_discount(milp)
    assignment.add_assignment(milp)
    site.add_single_site(milp)
    add_limits(milp, WORK)         # each job's work by its deadline
    data.add_data_costs(milp)
    add_limits(milp, COSTS)        # budget, power: after every cost term
    symmetry.add_symmetry_breaking(milp)
    cover.add_cover_cuts(milp)
    milp.model.minimize(milp.total_cost())
    if relax:
        for var in milp.model.get_variables():
            var.is_integral = False
    return milp


def add_limits(milp: Milp, stage: str) -> None:
    """The rows of every family built at `stage` (Rows.built), in FAMILIES order."""
    for fam in FAMILIES:
        if fam.rows.built == stage:
            fam.rows.add(milp)

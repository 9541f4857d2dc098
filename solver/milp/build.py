"""Assemble the MILP: variables and constraint families over an Instance, objective = total cost.

The model is built once; analyses change bounds or coefficients and re-solve. The model
and its handles are `solver.milp.core.Milp`.
"""

from __future__ import annotations

from solver.milp import assignment, budget, capacity, cover, data, power, site, symmetry, work
from solver.milp.core import Milp
from solver.milp.instance import Instance


def build_milp(inst: Instance, *, relax: bool = False) -> Milp:
    """Create every variable and constraint family; relax=True gives the LP relaxation."""
    milp = Milp(inst, relaxed=relax)
    milp.model.name = inst.problem.name
    capacity.add_capacity(milp)
    capacity.add_availability(milp)
    capacity.add_volume_discount(milp)
    assignment.add_assignment(milp)
    site.add_single_site(milp)
    work.add_work(milp)
    data.add_data_costs(milp)
    power.add_power(milp)
    budget.add_budget(milp)
    symmetry.add_symmetry_breaking(milp)
    cover.add_cover_cuts(milp)
    milp.model.minimize(milp.total_cost())
    if relax:
        for var in milp.model.get_variables():
            var.is_integral = False
    return milp

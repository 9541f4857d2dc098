"""A given schedule fixed in a model: `pin_schedule(schedule)` is a `constrain` function
(solver.api.solve_problem) that sets every contract, hourly node and replica variable to the
schedule's value (zero where it has none).

Why: a what-if whose edit changes nothing keeps the baseline plan, and what that plan binds
under the edit (a budget cut to 80 % still above its cost does not bind) must be read the way
every plan's is, from the edited model's own rows (solver.milp.binding). Solving the edited
model with the schedule fixed gives that reading and the verifier's check in one solve, whose
integer decisions are all fixed (presolve settles it).
"""

from __future__ import annotations

from collections.abc import Callable

from solver.milp.core import Milp
from solver.model.plan import Schedule


class NotInModel(ValueError):
    """The schedule uses a contract, rental or assignment the model has no variable for."""


def pin_schedule(schedule: Schedule) -> Callable[[Milp], None]:
    """A constrain function fixing `schedule`'s integer decisions in the model it is given;
    raises NotInModel when the model cannot hold them (preprocessing dropped one)."""
    def pin(milp: Milp) -> None:
        options = {(o.job, o.config): i for i, o in enumerate(milp.inst.options)}
        wanted: dict[int, float] = {}
        for c in schedule.contracts:
            wanted[_index(milp.contracts, (f"{c.offer}:{c.interconnect}", c.start_period))] = c.nodes
        for r in schedule.rentals:
            wanted[_index(milp.nodes, (f"{r.offer}:{r.interconnect}", r.period))] = r.nodes
        for a in schedule.assignments:
            option = options.get((a.job, f"{a.offer}:{a.interconnect}"))
            if option is None:
                raise NotInModel(f"job {a.job} cannot use {a.offer}:{a.interconnect} in this model")
            wanted[_index(milp.replicas, (option, a.period))] = a.replicas
        hourly = {k: v for k, v in milp.nodes.items() if not milp.inst.configs[k[0]].committed}
        for var in [*milp.contracts.values(), *hourly.values(), *milp.replicas.values()]:
            value = wanted.get(var.index, 0.0)
            if not var.lower_bound <= value <= var.upper_bound:
                raise NotInModel(f"{var.name} = {value:g} is outside its bounds in this model")
            var.lower_bound = var.upper_bound = value
    return pin


def _index(variables: dict, key) -> int:
    if key not in variables:
        raise NotInModel(f"the model has no variable for {key}")
    return variables[key].index


def pin_rentals(schedule: Schedule) -> Callable[[Milp], None]:
    """A constrain function fixing `schedule`'s contracts and hourly nodes (every other rental
    variable at zero) and leaving the jobs' replicas free: which schedules the same rentals
    allow (solver.analysis.margin: how much slower a job may run on the plan's capacity)."""
    def pin(milp: Milp) -> None:
        wanted: dict[int, float] = {}
        for c in schedule.contracts:
            wanted[_index(milp.contracts, (f"{c.offer}:{c.interconnect}", c.start_period))] = c.nodes
        for r in schedule.rentals:
            wanted[_index(milp.nodes, (f"{r.offer}:{r.interconnect}", r.period))] = r.nodes
        hourly = {k: v for k, v in milp.nodes.items() if not milp.inst.configs[k[0]].committed}
        for var in [*milp.contracts.values(), *hourly.values()]:
            value = wanted.get(var.index, 0.0)
            if not var.lower_bound <= value <= var.upper_bound:
                raise NotInModel(f"{var.name} = {value:g} is outside its bounds in this model")
            var.lower_bound = var.upper_bound = value
    return pin

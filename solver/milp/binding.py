"""Which limits a solved plan runs into: what every family's binding reader shares.

Why: "what binds" is the first question after "what does it cost" — it says which
negotiation (more kW, more nodes, more money, more time) could pay off. Each family reads
its own rows' limits against the solution's values (its `binding` part, in its module under
solver/milp/families/), so it names exactly what the MILP enforced; solver.milp.registry
asks them all in turn (registry.binding_limits), with one signature: (solution, job results).
A limit binds when less than one more unit of what it limits fits: one more node of the
offer, one more rack at the site; the budget when under 0.5 % is left. Here: the runs of
periods a limit binds in, as days.
"""

from __future__ import annotations

from solver.milp.solution import Solution


def runs(periods: list[int]) -> list[tuple[int, int]]:
    """Consecutive periods as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    for t in sorted(periods):
        if out and t == out[-1][1] + 1:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out


def days_of(sol: Solution, first: int, last: int) -> tuple[int, int]:
    """The first day of period `first` and the last day of period `last` (as Binding shows them)."""
    inst = sol.milp.inst
    return inst.timeline.starts[first], inst.timeline.end(last)

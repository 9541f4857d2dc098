"""Upper bounds that every plan cheaper than a known one obeys: held nodes and volume discounts.

Why: the LP relaxation gives rentals the volume discount through a fractional flag: in
`x ≥ N0·y`, y = x/N0 earns the discount on x < N0 nodes. On debug-then-train that is
most of the root gap (LP 188,285 CNY with discounts, 203,260 without; optimum 211,985),
and branch and bound spends its nodes closing it. Yet a plan that earns a discount holds
N0 nodes of one contract, and those alone can cost more than a plan already found: a
monthly contract of 6 nodes there costs about 370,000 CNY. Once HiGHS has a plan of cost
C, no plan costing more than C can be optimal, so every node variable gets
x ≤ ⌊C / (its cost per node, after any discount)⌋ and every discount whose N0 is above
that bound is switched off (y = w = 0). The optimum is kept: it costs at most C.

The argument needs the objective's shape, checked before anything is bounded: every
cost coefficient is ≥ 0 on variables bounded below by 0, except the discounts' w, each
at most its own node variable (row `Discount-…-le`), so that the cost of any plan is at
least the discounted cost of any one of its node variables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solver.milp.build import Milp
from solver.milp.capacity import discount_rows


@dataclass(frozen=True)
class Discount:
    """One volume discount's variables, by index: held nodes x, discounted nodes w ≤ x, flag y."""

    nodes: int
    earned: int
    flag: int
    least: int   # N0: x ≥ N0·y


def discounts(milp: Milp) -> list[Discount]:
    """The model's volume discounts whose `w ≤ x` row is still in the model."""
    out = []
    for key, w in milp.discounted.items():
        cfg = milp.inst.configs[key[0]]
        nodes = (milp.contracts if cfg.committed else milp.nodes)[key]
        if all(row in milp.rows for row in discount_rows(*key)):  # w ≤ x, w ≤ X̄·y, x ≥ N0·y
            out.append(Discount(nodes.index, w.index, milp.discount_flag[key].index, cfg.discount_nodes))
    return out


@dataclass
class Columns:
    """What the argument reads of a model: objective and bounds by variable index."""

    objective: dict[int, float]   # nonzero cost coefficients
    offset: float
    maximize: bool
    lower: dict[int, float]
    upper: dict[int, float]
    integer: set[int]


COST_MARGIN = 1e-6
"""Relative amount added to the known plan's cost before bounding: a solver's plan holds
integers to a tolerance (1e-6), and a cost a hair low must not bound that plan, or the
optimum, away."""


def applicable(columns: Columns, found: list[Discount]) -> bool:
    """Whether bounds from a plan's cost could switch a discount off: the objective has the
    shape the argument needs and some discount's nodes cost something."""
    net = _net_costs(columns, found)
    return net is not None and any(net.get(d.nodes, 0.0) > 0 for d in found)


def cheaper_plan_bounds(cost: float, columns: Columns, found: list[Discount]) -> dict[int, float]:
    """New upper bounds (by variable index) that every plan costing at most `cost` obeys.

    Empty when the objective is not of the shape the module docstring describes.
    """
    net = _net_costs(columns, found)
    if net is None:
        return {}
    cost += COST_MARGIN * max(abs(cost), 1.0)
    slack = cost - columns.offset - sum(c * columns.lower[k] for k, c in net.items())
    out = {}
    for k, c in net.items():
        if c > 0 and k in columns.integer:
            most = max(columns.lower[k], math.floor(columns.lower[k] + slack / c + 1e-6))
            if most < columns.upper[k]:
                out[k] = float(most)
    for d in found:
        if out.get(d.nodes, columns.upper[d.nodes]) < d.least:
            out[d.earned], out[d.flag] = columns.lower[d.earned], columns.lower[d.flag]
    return out


def _net_costs(columns: Columns, found: list[Discount]) -> dict[int, float] | None:
    """Cost coefficients with each discount's w folded into its nodes' (w ≤ x), or None when the
    objective is not a cost to minimise, non-negative once folded, over variables ≥ 0."""
    if columns.maximize:
        return None
    net = dict(columns.objective)
    for d in found:
        if net.get(d.earned, 0.0) > 0:
            return None
        net[d.nodes] = net.get(d.nodes, 0.0) + net.pop(d.earned, 0.0)
    if any(c < 0 or columns.lower[k] < 0 for k, c in net.items()):
        return None
    return net

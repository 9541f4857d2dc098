"""Rented capacity: nodes held per configuration and period, contracts, availability, discounts."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp


def add_capacity(milp: Milp) -> None:
    """Nodes held n[o,t]; committed modes through contract starts c[o,s].

    Hourly/spot:  cost = Σ_t n[o,t]·H_t·p_o (paid per period used).
    Committed:    n[o,t] = Σ_{s covering t} c[o,s]  (row `Capacity-contract-<o>-<t>`; Instance.covered),
                  cost = Σ_s c[o,s]·P_o (the whole term is paid, even past the horizon).
    Nothing before the lead time: n[o,t], c[o,s] exist only for t, s ≥ lead_o.
    Capacity no job can use only costs money, so it is not modelled at all: hourly nodes
    exist only in periods some job may use o, contracts only where their term covers one,
    and a configuration no job may use gets no variables.
    """
    inst, model = milp.inst, milp.model
    usable = usable_periods(milp)
    for key, cfg in inst.configs.items():
        if not usable[key]:
            continue
        cap = cfg.offer.max_nodes
        for t in inst.periods:
            if t >= cfg.first_period and (cfg.committed or t in usable[key]):
                milp.nodes[key, t] = model.new_int_var(0, cap, f"n[{key},{t}]")
        if cfg.committed:
            _add_contracts(milp, key, usable[key])
        else:
            for t in inst.periods:
                if (key, t) in milp.nodes:
                    _charge(milp, cfg, milp.nodes[key, t], cfg.node_cost_hour * inst.hours[t])


def usable_periods(milp: Milp) -> dict[str, set[int]]:
    """Periods in which some job may run on each configuration."""
    out: dict[str, set[int]] = {key: set() for key in milp.inst.configs}
    for opt in milp.inst.options:
        out[opt.config].update(opt.periods)
    return out


def _add_contracts(milp: Milp, key: str, usable: set[int]) -> None:
    inst, model, cfg = milp.inst, milp.model, milp.inst.configs[key]
    active: dict[int, list[mb.Variable]] = defaultdict(list)
    for s in inst.periods:
        covered = inst.covered(cfg, s)
        if s >= cfg.first_period and any(t in usable for t in covered):
            var = model.new_int_var(0, cfg.offer.max_nodes, f"c[{key},{s}]")
            milp.contracts[key, s] = var
            _charge(milp, cfg, var, cfg.node_cost_term)
            for t in covered:
                active[t].append(var)
    for t in inst.periods:
        if (key, t) in milp.nodes:
            milp.add_row(f"Capacity-contract-{key}-{t}", milp.nodes[key, t] == mb.LinearExpr.sum(active[t]))


def _charge(milp: Milp, cfg, var: mb.Variable, amount: float) -> None:
    """Split a node cost into rent, interconnect and platform fee for the breakdown."""
    for part, coef in charge_parts(cfg, amount).items():
        milp.cost[part].append((var, coef))


def charge_parts(cfg, amount: float) -> dict[str, float]:
    """A node cost `amount` split into the cost parts it is charged under (gpu_rent always;
    interconnect and platform_fee when the configuration has them). solver.milp.reprice
    splits a re-priced offer's costs the same way."""
    interconnect_share = 1 - cfg.rent_share - cfg.fee_share
    parts = {"gpu_rent": amount * cfg.rent_share}
    if interconnect_share > 1e-12:
        parts["interconnect"] = amount * interconnect_share
    if cfg.fee_share > 0:
        parts["platform_fee"] = amount * cfg.fee_share
    return parts


def discount_unit(inst, cfg, t: int) -> float:
    """The price of one node the volume discount takes its share of, at (cfg, t): GPU rent and
    the platform fee on it, per contract (committed) or per period held (hourly, spot)."""
    unit = cfg.node_cost_term if cfg.committed else cfg.node_cost_hour * inst.hours[t]
    return unit * cfg.rent_share / (1 - cfg.fee_share)


def held_nodes(milp: Milp) -> dict[tuple[str, int], list[mb.Variable]]:
    """Variables that sum to the nodes of each configuration held in each period: n[o,t], and
    for a contract whose term ends inside period t, its c[o,s] too.

    Why: a contract is used only in the periods wholly inside its term (no free days), but
    the vendor's stock and the site's power carry its nodes to the term's last day. With
    7-day periods a 30-day contract started in period s ends on day 2 of period s+4, where
    the next contract may already run: both hold nodes then. Everything else in a period
    is held from its first day (contracts start on period boundaries, hourly nodes stay
    all period), so the sum is the period's peak.
    """
    out: dict[tuple[str, int], list[mb.Variable]] = {key_t: [var] for key_t, var in milp.nodes.items()}
    inst = milp.inst
    for (key, s), var in milp.contracts.items():
        cfg = inst.configs[key]
        covered = inst.covered(cfg, s)
        for t in inst.held(cfg, s)[len(covered):]:  # both start at s: the tail past the used periods
            out.setdefault((key, t), []).append(var)
    return out


def add_volume_discount(milp: Milp) -> None:
    """Volume discount d on GPU rent (and the platform fee on it, not the interconnect) when one
    contract (committed) or one period's rental (hourly) reaches N0 nodes.

    Written with v, the nodes at full price: cost −= d·price·x, += d·price·v, with
    y ∈ {0,1}, 0 ≤ v ≤ x, v ≥ x − X̄·y, x ≥ N0·y. Minimising cost drives v to 0 whenever y
    can be 1 and to x otherwise, so the discount is exact.
    Why v rather than the discounted nodes w = x − v (cost −= d·price·w): the two have the
    same LP relaxation, but with v every variable's total cost coefficient is ≥ 0, so once
    HiGHS holds a plan of cost C its objective propagation bounds each x by C over x's
    discounted price, and x ≥ N0·y then switches off every discount that no plan cheaper than C can earn. On
    debug-then-train that lifts the bound from 188,285 to 203,260 CNY within 0.2 s; HiGHS
    median over random seeds 0-7 to the proven optimum 3.31 → 2.38 s (seed-13b-100b 1.11 →
    1.02, hybrid-burst 1.04 → 1.00). With w the discount's negative coefficient leaves
    every x unbounded by C.
    Rows `Discount-<o>-<t>-{le,cap,min}` (discount_rows): v ≤ x, v ≥ x − X̄·y, x ≥ N0·y; X̄ must be at
    least x's upper bound (`widen_discount` where a caller raises it).
    """
    inst, model = milp.inst, milp.model
    for key, cfg in inst.configs.items():
        n0 = cfg.discount_nodes
        if n0 is None or n0 > cfg.offer.max_nodes:
            continue
        base = milp.contracts if cfg.committed else milp.nodes
        rate = cfg.offer.discount_pct / 100
        for t in inst.periods:
            x = base.get((key, t))
            if x is None:
                continue
            unit = discount_unit(inst, cfg, t)
            y = model.new_bool_var(f"y[{key},{t}]")
            v = model.new_int_var(0, cfg.offer.max_nodes, f"v[{key},{t}]")
            milp.discount_flag[key, t], milp.full_price[key, t] = y, v
            le, cap, least = discount_rows(key, t)
            milp.add_row(le, v <= x)
            milp.add_row(cap, v >= x - cfg.offer.max_nodes * y)
            milp.add_row(least, x >= n0 * y)
            milp.cost["volume_discount"] += [(x, -rate * unit), (v, rate * unit)]


def widen_discount(milp: Milp, key: str, t: int, most: int) -> None:
    """The discount of (key, t) stays exact when its node variable x may hold up to `most`
    nodes, more than the catalog's X̄ (solver.analysis.why raises node bounds and puts the
    cap back through a slack): v's bound and the row v ≥ x − X̄·y take `most` for X̄.

    Why: with y = 1 that row lets v reach 0 only while x ≤ X̄; with x above X̄ and the row
    left as it was, x > 2·X̄ would be infeasible and X̄ < x ≤ 2·X̄ would force the discount."""
    v, y, x = milp.full_price[key, t], milp.discount_flag[key, t], discounted_variable(milp, key, t)
    v.upper_bound = most
    row = milp.rows[discount_rows(key, t)[1]]
    for var, coef in ((v, 1.0), (x, -1.0), (y, float(most))):  # v − x + X̄·y ≥ 0, whatever sign it was stored with
        row.set_coefficient(var, coef)
    row.lower_bound, row.upper_bound = 0.0, math.inf


def discounted_variable(milp: Milp, key: str, t: int) -> mb.Variable:
    """The node variable a discount (key, t) is on: a contract start's nodes (committed) or one
    period's rented nodes (hourly, spot)."""
    return (milp.contracts if milp.inst.configs[key].committed else milp.nodes)[key, t]


def discount_rows(key: str, t: int) -> tuple[str, str, str]:
    """Names of one discount's rows v ≤ x, v ≥ x − X̄·y, x ≥ N0·y (discount_table finds them by these)."""
    return f"Discount-{key}-{t}-le", f"Discount-{key}-{t}-cap", f"Discount-{key}-{t}-min"


def discount_table(milp: Milp) -> np.ndarray:
    """(v, x, y, row le, row cap, row min) per volume discount of a built model, by index: what
    the LP relaxation's child process needs to give every discount in full
    (solver.engine.relaxation.full_discount). Here, not there: the child reads the model alone
    and never imports this module."""
    rows = []
    for (key, t), v in milp.full_price.items():
        x = discounted_variable(milp, key, t)
        rows.append([v.index, x.index, milp.discount_flag[key, t].index,
                     *(milp.rows[name].index for name in discount_rows(key, t))])
    return np.array(rows, dtype=np.int64).reshape(-1, 6)

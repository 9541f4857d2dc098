"""One offer's walk-away or break-even price, its target price, and the plans behind them.

The method (solver.analysis.negotiate's docstring has the whole of it): hold everything but the
offer's price p. C_forced(p), the best plan renting it, is concave, piecewise linear and
increasing; C_without does not depend on p. p* = max{p : C_forced(p) ≤ C_without} (walk-away,
offer in the plan) or max{p : C_forced(p) ≤ the plan's cost} (break-even, not in it), found by
Newton steps on C_forced from below, each step one probe (solver.analysis.negotiate_probes).

Each figure is proven or an interval (issue 34): a probe that stopped before its proof gives a
plan (an upper bound of its cost) and a bound; `limit_interval` turns them into the prices p*
certainly lies between, and the target's cost into [bound, plan].
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from solver.analysis import words
from solver.analysis.negotiate_probes import Asker, Point, limit_interval
from solver.analysis.words import NOT_ANALYSED
from solver.i18n import N_
from solver.model.catalog import Catalog
from solver.model.plan import Plan

PRICE_FLOOR = 1e-4
"""Lowest price tried, as a fraction of the current one: below it an offer 'does not enter at any price'."""


@dataclass
class OfferTerms:
    """What one offer's price can do to the plan."""

    offer: str
    vendor: str
    datacenter: str
    gpu: str
    mode: str
    price: float
    price_unit: str
    currency: str                       # the offer's own: every price of these terms is in it
    status: str                         # in_plan | not_in_plan | unusable
    node_days: float = 0.0              # in the plan as it is
    limit_kind: str | None = None       # walk_away | break_even
    limit_price: float | None = None    # p*, or the proven low end of its interval; None: see reason
    limit_low: float | None = None      # p* lies in [limit_low, limit_high] (equal when proven)
    limit_high: float | None = None     # None with a limit_price: no upper end proven
    searched_down_to: float | None = None  # break-even not found at or above this price (PRICE_FLOOR × price)
    converged: bool = True              # False: limit_price is a proven lower bound of p*
    cost_without: float | None = None   # best plan that does not rent the offer (None: none exists)
    cost_without_low: float | None = None  # its optimum is proven at least this (= cost_without: proven)
    replaced_by: list[str] = field(default_factory=list)   # walk-away: offers that grow without it
    displaces: list[str] = field(default_factory=list)     # break-even: offers that shrink at the target
    target_price: float | None = None
    target_node_days: float = 0.0
    target_nodes: int = 0               # peak nodes held at once at the target price
    target_cost: float | None = None    # the best plan found at the target price
    target_cost_low: float | None = None  # the optimum there is proven at least this (= target_cost: proven)
    saving_at_target: float | None = None
    reason: str = ""
    skipped: str | None = None          # not priced, and why (a kind: term | free_only); said once in the output
    solves: int = 0
    analysed: bool = True               # False: the time budget ran out before this offer

    @property
    def limit_change(self) -> float | None:
        """Limit price relative to the current one: +0.12 = may rise 12 %, −0.3 = must fall 30 %."""
        return None if self.limit_price is None else self.limit_price / self.price - 1


NEAR = 0.15
"""An offer whose break-even is within this fraction of its price is 'near' the plan (lead-time lever)."""
OUT_OF_TIME = f"{NOT_ANALYSED}: {words.OUT_OF_TIME}"
STOPPED = f"{NOT_ANALYSED}: {words.STOPPED}"
"""OUT_OF_TIME when Ctrl-C, not the budget, stopped the run (a pool's workers hear both as one stop:
the command's process, which knows which it was, rewords them). solver.analysis.words' wording."""
SKIPS = {
    "term": N_("not priced: the days in which any job runs are less than a quarter of their contract term, so "
            "three quarters of every contract would be paid idle (not in the plan at today's price, they could "
            "enter only far below it)"),
    "free_only": N_("not priced: they would have to cost nothing (≤ 0, or below a ten-thousandth of their price, "
                    "where the search stops) to enter the plan"),
}
"""What the output says once for each kind of offer not priced (OfferTerms.skipped); English in
--json, translated where shown (solver.report.negotiate)."""


def not_analysed(t: OfferTerms) -> None:
    """An offer the run's time did not reach, or whose search it cut: nothing half-found is shown."""
    t.analysed, t.reason = False, OUT_OF_TIME
    t.limit_kind = t.limit_price = t.limit_low = t.limit_high = t.target_price = None
    t.target_cost = t.target_cost_low = t.saving_at_target = None
    t.replaced_by, t.displaces, t.target_node_days, t.target_nodes, t.converged = [], [], 0.0, 0, True


def crossing(asker: Asker, offer: str, target: float, start: Point, solves: int,
             tolerance: float) -> tuple[float | None, bool, list[Point]]:
    """Largest p with C_forced(p) ≤ target, by Newton steps from `start` (a forced plan).

    Returns (p*, converged, the points solved). p* None: even at PRICE_FLOOR × the current price
    the cheapest plan renting the offer costs more than target (it does not enter at any price).
    Unconverged (out of solves): the last p with C_forced(p) ≤ target, a proven lower bound.
    """
    floor = asker.catalog.offers[offer].price * PRICE_FLOOR
    point, below, points = start, None, [start]
    while True:
        diff = target - point.cost
        if diff >= -tolerance:
            below = point
            if diff <= tolerance:
                return point.price, True, points
        elif math.isclose(point.price, floor):
            return None, True, points
        if solves <= 0 or point.q <= 0:
            return (below.price if below else None), False, points
        nxt = max(point.price + diff / point.q, floor)
        solves -= 1
        found = asker.at(offer, nxt, "forced")
        if found is None:  # cannot happen: a forced plan stays feasible at any price
            return (below.price if below else None), False, points
        point = found
        points.append(point)


def price_limit(asker: Asker, t: OfferTerms, base: Plan, base_low: float, margin: float, max_solves: int,
                tolerance: float, drop: float) -> None:
    """Fill walk-away or break-even price, the replacement, and the target price's volume and
    saving. `drop`: the LP's estimate of how far the price must fall to enter (solver.milp.promise);
    at the whole price or more, the floor is asked first, and an offer that does not enter there
    is answered with that one probe."""
    offer = asker.catalog.offers[t.offer]
    solves_left = max_solves - 2  # one solve for the target price, one without the offer or forced at p0
    if t.status == "in_plan":
        t.limit_kind = "walk_away"
        if not _walk_away(asker, t, base, base_low, solves_left, tolerance):
            return
        target = offer.price * (1 - margin)
    else:
        t.limit_kind = "break_even"
        t.cost_without, t.cost_without_low = base.total_cost, min(base_low, base.total_cost)
        if not _break_even(asker, t, base, base_low, solves_left, tolerance, drop):
            return
        target = t.limit_price * (1 - margin)
    if t.limit_kind == "walk_away" and not t.converged and t.limit_price is not None:
        t.reason = "; ".join(filter(None, [t.reason, "out of solves: the walk-away price shown is a proven lower bound"]))
    _at_target(asker, t, base, round(target, 6))


def _walk_away(asker: Asker, t: OfferTerms, base: Plan, base_low: float, solves: int, tolerance: float) -> bool:
    offer = asker.catalog.offers[t.offer]
    without = asker.at(t.offer, offer.price, "without")
    cap = asker.problem.budget
    if without is None and cap is None:
        t.reason = "no plan without it: the problem is infeasible without this offer"
        return True
    goal = math.inf if without is None else without.cost
    goal_low = math.inf if without is None else without.low
    t.cost_without = None if without is None else without.cost
    t.cost_without_low = None if without is None else min(without.low, without.cost)
    if cap is not None and goal > cap + tolerance:
        goal = goal_low = cap  # above the crossing nothing fits the budget, with the offer or without it
        t.reason = "no plan without it fits the budget: above the walk-away price, no plan does"
    else:
        t.replaced_by = _grown(without.plan, base, asker.catalog, asker.problem.horizon_days, exclude=t.offer)
    start = Point(offer.price, base, asker.volume(base, offer), base_low)
    t.limit_price, t.converged, points = crossing(asker, t.offer, goal, start, solves, tolerance)
    _interval(asker, t, points, goal_low, goal, tolerance)
    return True


def _break_even(asker: Asker, t: OfferTerms, base: Plan, base_low: float, solves: int, tolerance: float,
                drop: float) -> bool:
    offer = asker.catalog.offers[t.offer]
    floor = offer.price * PRICE_FLOOR
    if drop >= offer.price * (1 - PRICE_FLOOR):  # the LP says only a price of about 0 lets it in: ask there first
        cheapest = asker.at(t.offer, floor, "forced")
        if cheapest is None:
            t.reason = "renting even one node of it makes the problem infeasible (e.g. a power quota)"
            return False
        if cheapest.low > base.total_cost + tolerance:
            _free_only(t, floor)
            return False
    start = asker.at(t.offer, offer.price, "forced")
    if start is None:
        t.reason = "renting even one node of it makes the problem infeasible (e.g. a power quota)"
        return False
    t.limit_price, t.converged, points = crossing(asker, t.offer, base.total_cost, start, solves, tolerance)
    _interval(asker, t, points, base_low, base.total_cost, tolerance)
    if t.limit_price is None or t.limit_price <= floor * (1 + 1e-9):
        _free_only(t, floor)
        return False
    if not t.converged:
        t.reason = "out of solves: the break-even price shown is a proven lower bound"
    return True


def _free_only(t: OfferTerms, floor: float) -> None:
    """A break-even that would have to be ≤ 0 (or below the search floor): no price row."""
    t.searched_down_to = floor
    t.limit_price = t.limit_low = t.limit_high = None
    t.skipped = "free_only"
    t.reason = (f"does not enter at any price down to {floor:,.4g} ({PRICE_FLOOR:.2%} of its price, where the "
                "search stops): the cheapest plan renting it still costs more")


def _interval(asker: Asker, t: OfferTerms, points: list[Point], goal_low: float, goal_high: float,
              tolerance: float) -> None:
    """limit_low/limit_high: p* itself when every probe was proven and the search converged;
    otherwise the interval the probes prove (limit_price then its low end, never a guess)."""
    proven = all(p.cost - p.low <= tolerance for p in points) and goal_high - goal_low <= tolerance
    if t.limit_price is not None and proven and t.converged:
        t.limit_low = t.limit_high = t.limit_price
        return
    offer = asker.catalog.offers[t.offer]
    low, high = limit_interval(points, goal_low, goal_high, asker.least_volume(offer), offer.price * PRICE_FLOOR)
    if proven and t.limit_price is not None:
        low = max(low or t.limit_price, t.limit_price)
    t.limit_low, t.limit_high = low, high
    t.limit_price = low


def _at_target(asker: Asker, t: OfferTerms, base: Plan, target: float) -> None:
    t.target_price = target
    at = asker.at(t.offer, target, "free")
    if at is None:  # cannot happen: a lower price keeps the base plan feasible
        return
    horizon = asker.problem.horizon_days
    t.target_cost, t.target_cost_low = at.cost, min(at.low, at.cost)
    t.saving_at_target = base.total_cost - at.cost
    t.target_node_days = round(node_days(at.plan, asker.catalog, horizon).get(t.offer, 0.0), 3)
    t.target_nodes = peak_nodes(at.plan, asker.catalog, t.offer)
    if t.limit_kind == "break_even":
        t.displaces = _grown(base, at.plan, asker.catalog, horizon, exclude=t.offer)


def _grown(new: Plan, old: Plan, catalog: Catalog, horizon: int, *, exclude: str) -> list[str]:
    """Offers holding more node-days in `new` than in `old`, most growth first."""
    a, b = node_days(new, catalog, horizon), node_days(old, catalog, horizon)
    grown = {o: d - b.get(o, 0.0) for o, d in a.items() if o != exclude and d > b.get(o, 0.0) + 1e-9}
    return sorted(grown, key=lambda o: -grown[o])


def node_days(plan: Plan, catalog: Catalog, horizon_days: int) -> dict[str, float]:
    """Node-days paid per offer: contracts for their whole term, rentals per period held."""
    pd = plan.schedule.period_days
    out: dict[str, float] = defaultdict(float)
    for c in plan.schedule.contracts:
        out[c.offer] += c.nodes * catalog.offers[c.offer].term_days
    for r in plan.schedule.rentals:
        out[r.offer] += r.nodes * (min(horizon_days, (r.period + 1) * pd) - r.period * pd)
    return dict(out)


def peak_nodes(plan: Plan, catalog: Catalog, offer: str) -> int:
    """Most nodes of the offer held on any one day (contracts over their term, rentals per period)."""
    pd = plan.schedule.period_days
    spans = [(c.start_period * pd, c.start_period * pd + catalog.offers[offer].term_days, c.nodes)
             for c in plan.schedule.contracts if c.offer == offer]
    spans += [(r.period * pd, (r.period + 1) * pd, r.nodes) for r in plan.schedule.rentals if r.offer == offer]
    change: dict[int, int] = defaultdict(int)
    for start, end, n in spans:
        change[start] += n
        change[end] -= n
    peak = held = 0
    for day in sorted(change):
        held += change[day]
        peak = max(peak, held)
    return peak


def offers_used(plan: Plan) -> set[str]:
    return {c.offer for c in plan.schedule.contracts} | {r.offer for r in plan.schedule.rentals}

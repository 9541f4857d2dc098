"""Negotiation: what each offer's price may rise to, must fall to, and what other levers are worth.

Why: a plan tells us what to rent; a negotiation needs the numbers behind it. For an offer
in the plan, the walk-away price (above it we switch, and to what); for an offer not in
the plan, the break-even price (below it, it enters, and what that saves us); and what
+N kW of power, a shorter lead time or a few more nodes are worth, in the problem's currency.

"Price" is the offer's `price` column alone, in its own `price_unit` and its own currency
— what a vendor quotes. Its interconnect surcharge, platform fee and volume discount are
held as they are (the fee and the discount still scale with the rent, as on the invoice).
Costs (plans, savings, levers) are in the problem's currency; prices (current, walk-away,
break-even, target) in the offer's, so a vendor reads its own quote's units.

The method. Hold everything but one offer's price p. Every plan x costs
a(x) + p·q(x), where q(x) ≥ 0 is the plan's *price volume* on the offer (price units
bought × (1 + fee) × (1 − discount where it applies) × the offer currency's exchange rate:
d cost / d price, the cost in the problem's currency, the price in the offer's). So

    C_forced(p) = min over plans that rent the offer (≥ 1 node in some period)
    C_without   = min over plans that do not rent it (independent of p)

C_forced is concave, piecewise linear and increasing (every plan renting it has
q ≥ one node-period > 0); the optimum uses the offer exactly while C_forced(p) ≤ C_without.
The walk-away price (offer in the plan) and the break-even price (offer not in the plan)
are therefore the same number: p* = max{p : C_forced(p) ≤ C_without}, above the
current price for the first, below it for the second.

p* is found by a Newton step on the concave function, p ← p + (C_without − C_forced(p)) / q(p),
q(p) read from the forced plan at p. The plan solved at p stays feasible at any other
price, so C_forced lies under its line; the step lands on the line's crossing, hence at
or below p*, and every later step rises monotonically onto p*. On a piecewise-linear
function this ends exactly after a few solves (one per linear piece crossed); the
solves are capped (`max_solves` per offer, default 8 including the one without the
offer and the one at the target price) and an unconverged result is reported as a
proven lower bound of p*. Solves use a tight relative gap (default 1e-7), since a
break-even price is only as exact as the costs it equates.

Target prices (what we ask a vendor for; `margin`, default 5 %):
    in the plan:      current price × (1 − margin) — we already take it; an ask, never above
                      the walk-away price;
    not in the plan:  break-even × (1 − margin) — far enough below the break-even that the
                      offer clearly wins.
The plan is re-solved at the target price (one solve) for the volume we would take then
(node-days, and peak nodes) and the saving against the plan as it is.

Levers (one re-solve each, saving = base cost − new cost):
    power:        +kw at each site whose power quota binds in the plan;
    lead time:    the offer's lead time shortened by lead_days, for offers in the plan, offers
                  whose break-even is within NEAR of their price, and offers that no job can
                  use only because of their lead time;
    availability: +nodes on each offer whose max_nodes binds in the plan.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ortools.linear_solver.python import model_builder as mb

from solver.analysis.edits import apply_edits, row_path
from solver.api import AVAILABILITY, POWER, Family, Milp, build_instance, solve_problem
from solver.clock import RunClock
from solver.errors import Infeasible, ProblemError
from solver.files import csv_cell, save_atomic, text_cells
from solver.i18n import N_, _
from solver.model.catalog import MODE_UNITS, UNIT_DAYS, Catalog, Offer
from solver.model.plan import Plan
from solver.model.problem import Problem

MARGIN = 0.05
"""Default distance of the target price below the current price (in the plan) or the break-even."""
NEAR = 0.15
"""An offer whose break-even is within this fraction of its price is 'near' the plan (lead-time lever)."""
MAX_SOLVES = 8
"""Solves per analysed offer: without it, the Newton steps, the target price."""
GAP = 1e-7
"""Relative MILP gap of every solve here, unless the caller gives one."""
PRICE_FLOOR = 1e-4
"""Lowest price tried, as a fraction of the current one: below it an offer 'does not enter at any price'."""
PRICE_NOTE = ("price = the offer's price column in its price_unit (what the vendor quotes); interconnect "
              "surcharge, platform fee and volume discount are held as in the catalog")


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
    limit_price: float | None = None    # p*; None: see reason
    searched_down_to: float | None = None  # break-even not found at or above this price (PRICE_FLOOR × price)
    converged: bool = True              # False: limit_price is a proven lower bound of p*
    cost_without: float | None = None   # best plan that does not rent the offer (None: none exists)
    replaced_by: list[str] = field(default_factory=list)   # walk-away: offers that grow without it
    displaces: list[str] = field(default_factory=list)     # break-even: offers that shrink at the target
    target_price: float | None = None
    target_node_days: float = 0.0
    target_nodes: int = 0               # peak nodes held at once at the target price
    target_cost: float | None = None
    saving_at_target: float | None = None
    reason: str = ""
    solves: int = 0
    analysed: bool = True               # False: the time budget ran out before this offer

    @property
    def limit_change(self) -> float | None:
        """Limit price relative to the current one: +0.12 = may rise 12 %, −0.3 = must fall 30 %."""
        return None if self.limit_price is None else self.limit_price / self.price - 1


@dataclass
class Lever:
    """The value of relaxing one limit: base cost − cost with the edit."""

    kind: str                 # power | lead_time | availability
    name: str                 # datacenter or offer
    vendor: str | None
    edit: str
    amount: float
    unit: str                 # kW | days | nodes
    cost: float | None        # None: still infeasible (cannot happen for a relaxation) or not solved
    saving: float | None

    @property
    def per_unit(self) -> float | None:
        return None if self.saving is None or not self.amount else self.saving / self.amount


@dataclass
class Negotiation:
    problem: str
    currency: str
    base_cost: float
    base_status: str
    margin: float
    gap: float
    vendors: list[str] | None
    offers: list[OfferTerms]
    levers: list[Lever]
    solves: int
    seconds: float
    unproven: int = 0           # solves not proven optimal (time limit): prices are then approximate
    price_note: str = PRICE_NOTE
    levers_note: str = ""       # the levers not run (out of time, or could not change any plan), each reason once

    def to_dict(self) -> dict:
        out = asdict(self)
        for terms, data in zip(self.offers, out["offers"]):
            data["limit_change"] = terms.limit_change
        for lever, data in zip(self.levers, out["levers"]):
            data["per_unit"] = lever.per_unit
        return out


# --------------------------------------------------------------------------- plan arithmetic

def period_hours(plan: Plan, horizon_days: int) -> Callable[[int], float]:
    pd = plan.schedule.period_days
    return lambda t: 24.0 * (min(horizon_days, (t + 1) * pd) - t * pd)


def _discounted(offer: Offer, nodes: int) -> bool:
    """The verifier's rule: a contract line or one period's rental of ≥ discount_from_gpus GPUs."""
    return offer.discount_from_gpus is not None and nodes * offer.gpus_per_node >= offer.discount_from_gpus


def price_volume(plan: Plan, offer: Offer, horizon_days: int, rate: float) -> float:
    """d(plan cost)/d(price) with the schedule held: price units bought × fee × discount × rate.

    `rate`: problem-currency units for one unit of the offer's currency. The plan's cost is in
    the problem's currency and the price in the offer's, so without it a Newton step on a USD
    offer in a CNY problem would move the price 7× too far (and stop short, unconverged)."""
    hours = period_hours(plan, horizon_days)
    unit_days = UNIT_DAYS[MODE_UNITS[offer.mode]]
    per_node = offer.gpus_per_node if "_gpu_" in offer.price_unit else 1
    fee = 1 + offer.platform_fee_pct / 100
    total = 0.0
    lines = [(c.nodes, offer.term_days) for c in plan.schedule.contracts if c.offer == offer.offer]
    lines += [(r.nodes, hours(r.period) / 24) for r in plan.schedule.rentals if r.offer == offer.offer]
    for nodes, days in lines:
        disc = 1 - (offer.discount_pct or 0) / 100 if _discounted(offer, nodes) else 1.0
        total += per_node * days / unit_days * nodes * disc * fee
    return total * rate


def node_days(plan: Plan, catalog: Catalog, horizon_days: int) -> dict[str, float]:
    """Node-days paid per offer: contracts for their whole term, rentals per period held."""
    hours = period_hours(plan, horizon_days)
    out: dict[str, float] = defaultdict(float)
    for c in plan.schedule.contracts:
        out[c.offer] += c.nodes * catalog.offers[c.offer].term_days
    for r in plan.schedule.rentals:
        out[r.offer] += r.nodes * hours(r.period) / 24
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


# --------------------------------------------------------------------------- solving

def with_price(catalog: Catalog, offer: str, price: float) -> Catalog:
    offers = dict(catalog.offers)
    offers[offer] = offers[offer].model_copy(update={"price": price})
    return catalog.model_copy(update={"offers": offers})


def _offer_nodes(milp: Milp, offer: str) -> list[mb.Variable]:
    return [var for (key, _), var in milp.nodes.items() if milp.inst.configs[key].offer.offer == offer]


def force_offer(offer: str) -> Callable[[Milp], None]:
    """constrain hook: at least one node of the offer in some period (the smallest use there is)."""
    def constrain(milp: Milp) -> None:
        nodes = _offer_nodes(milp, offer)
        if not nodes:
            raise Infeasible(f"no job can use offer {offer}", reasons=[])
        milp.add_row(f"Negotiate-force-{offer}", mb.LinearExpr.sum(nodes) >= 1)
    return constrain


def exclude_offer(offer: str) -> Callable[[Milp], None]:
    def constrain(milp: Milp) -> None:
        nodes = _offer_nodes(milp, offer)
        if nodes:
            milp.add_row(f"Negotiate-exclude-{offer}", mb.LinearExpr.sum(nodes) <= 0)
    return constrain


@dataclass
class Point:
    price: float
    plan: Plan
    q: float

    @property
    def cost(self) -> float:
        return self.plan.total_cost


class OutOfBudget(Exception):
    """The run's time ran out (or the command was stopped) before a solve settled its question."""


OUT_OF_TIME = "not analysed: the run's time budget (--max-seconds) ran out"


class Session:
    """Counts solves; solves the problem with one offer's price changed, free, forced in or left out.

    Every solve is cut to what is left of the run (solver.clock): a solve that ends without a
    plan for lack of time raises OutOfBudget, never passes for "infeasible" (a walk-away price
    read from an unfinished solve would be a guess)."""

    def __init__(self, problem: Problem, catalog: Catalog, *, stop_at: float | None = None, **options) -> None:
        self.problem, self.catalog = problem, catalog
        self.clock = RunClock(options.pop("time_limit", None), stop_at, least=0.0)
        self.options = options
        self.solves = 0
        self.unproven = 0   # solves stopped by the time limit or gap before optimality was proven

    def solve(self, catalog: Catalog | None = None, problem: Problem | None = None, constrain=None) -> Plan:
        left = self.clock.left()  # solve_problem cuts its solves to it (and counts as one solve: solver.clock)
        if left is not None and left <= 0:
            raise OutOfBudget()
        self.solves += 1
        try:
            plan = solve_problem(problem or self.problem, catalog or self.catalog, constrain=constrain,
                                 time_limit=self.clock.time_limit, max_seconds=left, **self.options)
        except Infeasible as exc:
            if not exc.proven:
                raise OutOfBudget(str(exc)) from None
            raise
        self.unproven += plan.status != "optimal"
        return plan

    def at(self, offer: str, price: float, how: str = "free") -> Point | None:
        """The best plan at this price: free, forced (renting the offer) or without it; None if infeasible.

        Forced and without solves drop the budget: it only cuts plans costing more than it, and
        the crossing is sought at a cost within it (see _price_limit), so p* is the same.
        """
        constrain = {"free": None, "forced": force_offer(offer), "without": exclude_offer(offer)}[how]
        catalog = with_price(self.catalog, offer, price)
        problem = self.problem if how == "free" or self.problem.budget is None else \
            self.problem.model_copy(update={"budget": None})
        try:
            plan = self.solve(catalog, problem, constrain=constrain)
        except Infeasible:
            return None
        return Point(price, plan, self.volume(plan, catalog.offers[offer]))

    def volume(self, plan: Plan, offer: Offer) -> float:
        """The plan's price volume on the offer, with the offer currency's rate of the problem."""
        return price_volume(plan, offer, self.problem.horizon_days, self.problem.rates()[offer.currency])


def crossing(session: Session, offer: str, target: float, start: Point, solves: int,
             tolerance: float) -> tuple[float | None, bool, Point]:
    """Largest p with C_forced(p) ≤ target, by Newton steps from `start` (a forced plan).

    Returns (p*, converged, last point). p* None: even at PRICE_FLOOR × the current price
    the cheapest plan renting the offer costs more than target (it does not enter at any price).
    Unconverged (out of solves): the last p with C_forced(p) ≤ target, a proven lower bound.
    """
    floor = session.catalog.offers[offer].price * PRICE_FLOOR
    point, below = start, None
    while True:
        diff = target - point.cost
        if diff >= -tolerance:
            below = point
            if diff <= tolerance:
                return point.price, True, point
        elif math.isclose(point.price, floor):
            return None, True, point
        if solves <= 0 or point.q <= 0:
            return (below.price if below else None), False, point
        nxt = max(point.price + diff / point.q, floor)
        solves -= 1
        found = session.at(offer, nxt, "forced")
        if found is None:  # cannot happen: a forced plan stays feasible at any price
            return (below.price if below else None), False, point
        point = found


# --------------------------------------------------------------------------- the analysis

def negotiate(problem: Problem, catalog: Catalog, *, vendors: list[str] | None = None, kw: float = 50,
              lead_days: int = 7, nodes: int = 2, margin: float = MARGIN, max_solves: int = MAX_SOLVES,
              backend: str | None = None, time_limit: float | None = None, gap: float | None = None,
              levers: bool = True, max_seconds: float | None = None) -> Negotiation:
    """Walk-away and break-even prices of the offers (of `vendors`, or all), and the levers' values.

    max_seconds: no new offer or lever is started after this long (they are reported as not
    analysed); a problem whose single solve takes 30 s needs minutes for a full negotiation.
    """
    started = time.perf_counter()
    for v in vendors or []:
        check_vendor(catalog, v, "--vendor")
    if not 0 <= margin < 1:
        raise ProblemError("margin must be in [0, 1)", key="--margin", fix="e.g. --margin 0.05")
    if max_solves < 3:
        raise ProblemError("max_solves must be at least 3", key="--max-solves", fix="e.g. --max-solves 8")
    options = {"time_limit": time_limit, "gap": GAP if gap is None else gap}
    if backend is not None:
        options["backend"] = backend
    session = Session(problem, catalog, **options)
    try:
        base = session.solve()  # within the command's budget (solver.clock), not max_seconds: nothing is known without it
    except OutOfBudget as exc:
        raise Infeasible("no plan found (not proven infeasible) before the run's time ran out"
                         + (f": {exc}" if str(exc) else ""),
                         reasons=["raise --max-seconds"], proven=False) from None
    session.clock.stop_at = None if max_seconds is None else started + max_seconds
    horizon = problem.horizon_days
    base_days = node_days(base, catalog, horizon)
    used = offers_used(base)
    usable, why, kinds = _usability(problem, catalog)
    tolerance = max(1.0, 2 * options["gap"] * base.total_cost)

    chosen = [o for o in catalog.offers.values() if not vendors or o.vendor in vendors]
    terms = []
    for offer in sorted(chosen, key=lambda o: (o.offer not in used, o.offer not in usable, o.vendor, o.offer)):
        t = OfferTerms(offer.offer, offer.vendor, offer.datacenter, offer.gpu, offer.mode, offer.price,
                       offer.price_unit, offer.currency, "in_plan" if offer.offer in used else
                       "not_in_plan" if offer.offer in usable else "unusable",
                       node_days=round(base_days.get(offer.offer, 0.0), 3))
        if t.status == "unusable":
            t.reason = why.get(offer.offer, "no job can use it")
        elif out_of_time(session):
            _not_analysed(t)
        else:
            before = session.solves
            try:
                _price_limit(session, t, base, margin, max_solves, tolerance)
            except OutOfBudget:
                _not_analysed(t)
            t.solves = session.solves - before
        terms.append(t)

    lever_list, levers_note = [], ""
    if levers:
        lever_list, levers_note = _levers(session, base, terms, kinds, vendors, kw, lead_days, nodes)
    return Negotiation(problem.name, base.currency, base.total_cost, base.status, margin, options["gap"],
                       vendors, terms, lever_list, session.solves, round(time.perf_counter() - started, 3),
                       session.unproven, levers_note=levers_note)


def out_of_time(session: Session) -> bool:
    """No time is left for another solve (the run's budget, or the command was stopped)."""
    left = session.clock.left()
    return left is not None and left <= 0


def _not_analysed(t: OfferTerms) -> None:
    """An offer the run's time did not reach, or whose search it cut: nothing half-found is shown."""
    t.analysed, t.reason = False, OUT_OF_TIME
    t.limit_kind = t.limit_price = t.target_price = t.target_cost = t.saving_at_target = None
    t.replaced_by, t.displaces, t.target_node_days, t.target_nodes, t.converged = [], [], 0.0, 0, True


def _price_limit(session: Session, t: OfferTerms, base: Plan, margin: float, max_solves: int,
                 tolerance: float) -> None:
    """Fill walk-away or break-even price, the replacement, and the target price's volume and saving."""
    horizon = session.problem.horizon_days
    offer = session.catalog.offers[t.offer]
    solves_left = max_solves - 2  # one solve for the target price, one without the offer or forced at p0
    if t.status == "in_plan":
        t.limit_kind = "walk_away"
        without = session.at(t.offer, offer.price, "without")
        cap = session.problem.budget
        if without is None and cap is None:
            t.reason = "no plan without it: the problem is infeasible without this offer"
        else:
            goal = math.inf if without is None else without.cost
            t.cost_without = None if without is None else without.cost
            if cap is not None and goal > cap + tolerance:
                goal = cap  # above the crossing nothing fits the budget, with the offer or without it
                t.reason = "no plan without it fits the budget: above the walk-away price, no plan does"
            else:
                t.replaced_by = _grown(without.plan, base, session.catalog, horizon, exclude=t.offer)
            start = Point(offer.price, base, session.volume(base, offer))
            t.limit_price, t.converged, _ = crossing(session, t.offer, goal, start, solves_left, tolerance)
        target = offer.price * (1 - margin)
    else:
        t.limit_kind = "break_even"
        t.cost_without = base.total_cost
        start = session.at(t.offer, offer.price, "forced")
        if start is None:
            t.reason = "renting even one node of it makes the problem infeasible (e.g. a power quota)"
            return
        t.limit_price, t.converged, _ = crossing(session, t.offer, base.total_cost, start, solves_left, tolerance)
        if t.limit_price is None:
            t.searched_down_to = offer.price * PRICE_FLOOR
            t.reason = (f"does not enter at any price down to {t.searched_down_to:,.4g} ({PRICE_FLOOR:.2%} of its "
                        "price, where the search stops): the cheapest plan renting it still costs more")
            return
        if not t.converged:
            t.reason = "out of solves: the break-even price shown is a proven lower bound"
        target = t.limit_price * (1 - margin)
    if t.limit_kind == "walk_away" and not t.converged and t.limit_price is not None:
        t.reason = "; ".join(filter(None, [t.reason, "out of solves: the walk-away price shown is a proven lower bound"]))
    t.target_price = round(target, 6)
    at = session.at(t.offer, target, "free")
    if at is None:  # cannot happen: a lower price keeps the base plan feasible
        return
    t.target_cost = at.cost
    t.saving_at_target = base.total_cost - at.cost
    t.target_node_days = round(node_days(at.plan, session.catalog, horizon).get(t.offer, 0.0), 3)
    t.target_nodes = peak_nodes(at.plan, session.catalog, t.offer)
    if t.limit_kind == "break_even":
        t.displaces = _grown(base, at.plan, session.catalog, horizon, exclude=t.offer)


def _grown(new: Plan, old: Plan, catalog: Catalog, horizon: int, *, exclude: str) -> list[str]:
    """Offers holding more node-days in `new` than in `old`, most growth first."""
    a, b = node_days(new, catalog, horizon), node_days(old, catalog, horizon)
    grown = {o: d - b.get(o, 0.0) for o, d in a.items() if o != exclude and d > b.get(o, 0.0) + 1e-9}
    return sorted(grown, key=lambda o: -grown[o])


def _usability(problem: Problem, catalog: Catalog) -> tuple[set[str], dict[str, str], dict[str, set[str]]]:
    """Offers some job can use; for the others why not (one reason per kind, per job), and
    the kinds of those reasons (solver.milp.exclusion.Exclusion.kind)."""
    inst = build_instance(problem, catalog)
    usable = {inst.configs[o.config].offer.offer for o in inst.options}
    reasons: dict[str, dict[str, str]] = defaultdict(dict)
    for job, exclusions in inst.excluded.items():
        for reason in exclusions:
            reasons[inst.configs[reason.config].offer.offer].setdefault(reason.kind, f"{job}: {reason.text}")
    why, kinds = {}, {}
    for name in catalog.offers:
        if name in usable:
            continue
        if name not in {c.offer.offer for c in inst.configs.values()}:
            why[name] = "excluded by the problem's restrict list"
        else:
            why[name] = "; ".join(reasons[name].values()) or "no job can use it"
            kinds[name] = set(reasons[name])
    return usable, why, kinds


def reason_kinds(reason: str) -> set[str]:
    """'pretrain: lead_time: …; pretrain: memory: …' → {'lead_time', 'memory'}."""
    kinds = set()
    for part in reason.split("; "):
        bits = part.split(": ")
        kinds.add(bits[1].split(":")[0] if len(bits) > 1 else bits[0])
    return kinds


def _levers(session: Session, base: Plan, terms: list[OfferTerms], kinds: dict[str, set[str]],
            vendors: list[str] | None, kw: float, lead_days: int, nodes: int) -> tuple[list[Lever], str]:
    """Power at binding sites (+kw), shorter lead times, stock of binding offers (+nodes), in that order;
    and a note on the levers not run (each reason said once). A lever the run's time does not reach
    is not shown half-done: the note says so."""
    cat = session.catalog

    def mine(offer: str) -> bool:
        return not vendors or cat.offers[offer].vendor in vendors

    todo = _family_levers(session, POWER, kw, base, mine)
    skipped: list[str] = []
    if lead_days > 0:
        lead = [t.offer for t in terms if t.status == "in_plan"]
        lead += [t.offer for t in terms if t.status == "not_in_plan" and t.limit_price is not None
                 and t.limit_price >= t.price * (1 - NEAR)]
        lead += [t.offer for t in terms if t.status == "unusable" and kinds.get(t.offer) == {"lead_time"}]
        lead += [o for o in offers_used(base) if o not in lead and mine(o)]
        for o in dict.fromkeys(lead):
            days = cat.offers[o].lead_time_days
            if days > 0:
                shorter = min(lead_days, days)
                if not lead_time_matters(session.problem, days, shorter):
                    skipped.append(o)
                    continue
                todo.append(("lead_time", o, cat.offers[o].vendor,
                             f"{row_path('offers', 'offer', o)}.lead_time_days={days - shorter}", shorter, "days"))
    if nodes > 0:
        todo += _family_levers(session, AVAILABILITY, nodes, base, mine)
    out, notes = [], []
    if skipped:
        notes.append(f"shorter lead times not valued for {len(skipped)} offer(s) ({', '.join(skipped[:3])}"
                     f"{', …' if len(skipped) > 3 else ''}): before and after, the lead time ends before every job "
                     "starts or after every deadline, so the plans they allow are the same")
    for i, spec in enumerate(todo):
        try:
            out.append(_lever(session, base, *spec))
        except OutOfBudget:
            notes.insert(0, f"{OUT_OF_TIME} ({len(todo) - i} of {len(todo)} levers)")
            break
    return out, "; ".join(notes)


def lead_time_matters(problem: Problem, days: int, shorter: int) -> bool:
    """Whether a lead time of `days` shortened by `shorter` can change any plan: only if some job's
    window [start_day, deadline) has days the longer lead time shuts out and the shorter one opens.
    Exact: an offer's nodes exist from its lead time on (solver.milp.instance), nothing else moves."""
    now = days - shorter
    return any(now < job.deadline_days and job.start_day < days for job in problem.jobs)


def _family_levers(session: Session, fam: Family, amount: float, base: Plan, mine) -> list[tuple]:
    """+amount of the family's limit at each target binding in the plan (an offer: only `mine`), as
    the arguments of _lever."""
    out = []
    for name in dict.fromkeys(b.name for b in base.binding if b.kind == fam.name):
        vendor = session.catalog.offers[name].vendor if fam.targets == "offer" else None
        if fam.targets != "offer" or mine(name):
            step = fam.lever(session.problem, session.catalog, name, amount)
            out.append((fam.name, name, vendor, step.edits[0], amount, fam.unit_in(session.problem)))
    return out


def _lever(session: Session, base: Plan, kind: str, name: str, vendor: str | None, edit: str, amount: float,
           unit: str) -> Lever:
    problem, catalog, _ = apply_edits(session.problem, session.catalog, [edit])
    try:
        plan = session.solve(catalog, problem)
    except Infeasible:
        return Lever(kind, name, vendor, edit, amount, unit, None, None)
    return Lever(kind, name, vendor, edit, amount, unit, plan.total_cost, base.total_cost - plan.total_cost)


# --------------------------------------------------------------------------- the vendor's sheet

EXPORT_COLUMNS = ("offer", "gpu", "mode", "datacenter", "price_unit", "currency", "current_price", "target_price",
                  "node_days_at_target", "peak_nodes_at_target", "volume_unit", "note")
EXPORT_HEADERS = {c: h for c, h in zip(EXPORT_COLUMNS, (
    N_("offer"), N_("gpu"), N_("mode"), N_("datacenter"), N_("price_unit"), N_("currency"), N_("current_price"),
    N_("target_price"), N_("node_days_at_target"), N_("peak_nodes_at_target"), N_("volume_unit"), N_("note")))}
"""The sheet's header row: the column names, in the language of the command (`--lang`)."""


def vendor_rows(result: Negotiation, vendor: str) -> list[dict]:
    """One row per offer of `vendor`: its own offer, price, our target and the volume at the target.

    Built from the vendor's own OfferTerms only, and notes are fixed phrases: no other
    vendor's name, offer, price or volume can reach the sheet (replaced_by, displaces,
    savings and reasons, which may name other offers, are left out on purpose).
    """
    rows = []
    for t in result.offers:
        if t.vendor != vendor:
            continue
        if t.target_price is not None:
            note = (_("in our plan; target is our ask") if t.status == "in_plan"
                    else _("not in our plan; at the target price we would take the volume shown"))
        elif t.status == "unusable":
            note = _("cannot carry this problem's jobs as offered")
        elif not t.analysed:
            note = _("not analysed")
        else:
            note = _("not competitive for this problem at any price we tried")
        rows.append({"offer": t.offer, "gpu": t.gpu, "mode": t.mode, "datacenter": t.datacenter,
                     "price_unit": t.price_unit, "currency": t.currency, "current_price": _num(t.price),
                     "target_price": "" if t.target_price is None else f"{t.target_price:.2f}",
                     "node_days_at_target": _num(round(t.target_node_days, 2)),
                     "peak_nodes_at_target": str(t.target_nodes), "volume_unit": _("node-days"), "note": note})
    return rows


def _num(x: float) -> str:
    """Plain digits, never an exponent: 1460000, 9.5, 1440."""
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}".rstrip("0")


def check_vendor(catalog: Catalog, vendor: str, key: str) -> None:
    """A vendor named on the command line must have offers in the catalog; said before any
    solve (a misspelled --export-vendor used to be caught after the whole negotiation)."""
    known = sorted({o.vendor for o in catalog.offers.values()})
    if vendor not in known:
        raise ProblemError(f"no vendor {vendor!r} in the catalog", key=key, fix=f"use one of {', '.join(known)}")


def export_vendor(result: Negotiation, vendor: str, path, *, force: bool = False) -> int:
    """Write the vendor's sheet (CSV, or .xlsx with openpyxl); refuse to overwrite without force."""
    import csv
    from pathlib import Path

    path = Path(path)
    if result.vendors and vendor not in result.vendors:
        raise ProblemError(f"vendor {vendor!r} was not analysed", key="--export-vendor",
                           fix=f"add --vendor {vendor}, or leave --vendor out")
    if path.exists() and not force:
        raise ProblemError("file exists", key="--export-vendor", file=str(path), fix="add --force to overwrite it")
    rows = vendor_rows(result, vendor)
    if not rows:
        raise ProblemError(f"vendor {vendor!r} has no offers", key="--export-vendor", fix="check the vendor name")
    if path.suffix.lower() == ".xlsx":
        try:
            from openpyxl import Workbook
        except ImportError:
            raise ProblemError("writing .xlsx needs openpyxl", key="--export-vendor", file=str(path),
                               fix="pip install openpyxl, or write a .csv file") from None
        book = Workbook()
        sheet = book.active
        sheet.title = _("offers")
        sheet.append([_(EXPORT_HEADERS[c]) for c in EXPORT_COLUMNS])
        for row in rows:
            sheet.append([row[c] for c in EXPORT_COLUMNS])
        text_cells(sheet)   # a vendor's offer named =HYPERLINK(…) stays text
        save_atomic(path, lambda tmp: book.save(tmp))
    else:
        def save(tmp):
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=EXPORT_COLUMNS)
                writer.writerow({c: _(EXPORT_HEADERS[c]) for c in EXPORT_COLUMNS})
                writer.writerows({c: csv_cell(v) for c, v in row.items()} for row in rows)
        save_atomic(path, save)
    return len(rows)

"""negotiate's questions as probes on one built model (solver.probes).

Why: negotiate asks, per offer, "the best plan at price p: free, renting the offer, or without
it" up to eight times, then what each lever is worth. Asked as new problems that was an Instance,
a model and a cold solve each (25–30 Instances on a small catalog, issue 34). Here the model is
built once and each question is a probe: the offer re-priced (solver.milp.reprice), forced in or
left out, the budget dropped, a lead time shortened, a limit raised; solved from the best plan
known that still meets it, then undone.

One model, every question: the model is built with the lead times the lead-time levers might
shorten already shortened (`Setup.reach`), and the days before each written lead time shut
(those node and contract variables fixed at 0, for good, and the symmetry rows over them off):
a lever opens them again, a delta on the one model. Likewise the stock (`Setup.stock`): built
with the levers' extra nodes (so size tiers and cuts allow them) and held at the written
max_nodes by bounds and the `Availability` rows, which a lever raises. The optimum of this model
is the written problem's (the extra room is closed by bounds); which offers some job can use is
read at the written lead times and stock (solver.api.options_as_written). Every plan is verified against the problem and catalog as written (at the
probe's price, without the budget where the probe dropped it, with the lever's edit).

The same `Setup` builds the engine in the command's process and in each worker of `--jobs`
(solver.analysis.negotiate_pool): the force rows are added in one order right after the build
and each offer's work starts from the base plan alone (`fresh`), so an offer's rows are the same
whichever process runs it and whatever ran before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from solver.clock import OutOfTime, RunClock
from solver.model.catalog import MODE_UNITS, UNIT_DAYS, Catalog, Offer
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Answer, Change, Probes, Restock, Undo, early_nodes, no_budget, reprice


OutOfBudget = OutOfTime
"""The one out-of-time exception (solver.clock.OutOfTime) under the name solver.analysis.negotiate_levers
still imports; the name goes when that module imports OutOfTime."""


@dataclass(frozen=True)
class Setup:
    """What builds negotiate's engine, the same in the command's process and in every worker.

    catalog: as the user gave it (every plan is verified against it); reach: offer → the lead
    time the model is built with (the written one shortened by the lever's days); stock: offer →
    the max_nodes the model is built with (the written one plus the lever's nodes); forced: the
    offers whose "rented" row is added right after the build (switched off), in this order."""

    problem: Problem
    catalog: Catalog
    reach: dict[str, int] = field(default_factory=dict)
    stock: dict[str, int] = field(default_factory=dict)
    forced: tuple[str, ...] = ()
    backend: str | None = None
    time_limit: float | None = None
    gap: float | None = None


def with_leads(catalog: Catalog, leads: dict[str, int]) -> Catalog:
    """The catalog with some offers' lead times replaced."""
    if not leads:
        return catalog
    offers = dict(catalog.offers)
    for name, days in leads.items():
        offers[name] = offers[name].model_copy(update={"lead_time_days": days})
    return catalog.model_copy(update={"offers": offers})


def with_stock(catalog: Catalog, stock: dict[str, int]) -> Catalog:
    """The catalog with some offers' max_nodes replaced."""
    if not stock:
        return catalog
    offers = dict(catalog.offers)
    for name, most in stock.items():
        offers[name] = offers[name].model_copy(update={"max_nodes": most})
    return catalog.model_copy(update={"offers": offers})


def with_price(catalog: Catalog, offer: str, price: float) -> Catalog:
    offers = dict(catalog.offers)
    offers[offer] = offers[offer].model_copy(update={"price": price})
    return catalog.model_copy(update={"offers": offers})


def build_engine(setup: Setup, clock: RunClock) -> tuple[Probes, dict[str, Undo]]:
    """The one Instance and model of the command (of this worker): built, force rows added,
    the days before each written lead time shut. Returns the engine and, per shut offer, what
    opens it again (its lead-time lever)."""
    options = {"backend": setup.backend} if setup.backend else {}
    built = with_stock(with_leads(setup.catalog, setup.reach), setup.stock)
    probes = Probes(setup.problem, built, time_limit=setup.time_limit,
                    gap=setup.gap, clock=clock, **options)
    probes.catalog = setup.catalog  # plans are verified against the written lead times and stock
    for offer in setup.forced:
        if _has_nodes(probes, offer):
            probes.force(offer).apply(probes.milp)()  # the row exists from now on, switched off
    for offer in setup.stock:  # the written stock, for good (a lever raises it again)
        Restock(f"offer {offer}: {setup.catalog.offers[offer].max_nodes} nodes", True, offer,
                setup.catalog.offers[offer].max_nodes).apply(probes.milp)
    shut = {offer: Shut.before(probes, offer, setup.catalog.offers[offer].lead_time_days).apply(probes.milp)
            for offer in setup.reach}
    return probes, shut


@dataclass(eq=False)
class Shut(Change):
    """An offer's nodes before its written lead time fixed at 0, in a model built with a shorter
    one; and its symmetry rows there switched off (`Order-<offer>-<t>`, solver.milp.symmetry:
    "held early first" holds over the periods the built model shares, and would otherwise
    carry the zeros onto every later period)."""

    variables: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    tightens: bool = True

    @classmethod
    def before(cls, probes: Probes, offer: str, lead_days: int) -> Shut:
        stop = probes.inst.timeline.first_from(lead_days)
        prefix = f"Order-{offer}-"
        rows = [row for name, row in probes.milp.rows.items()
                if name.startswith(prefix) and name[len(prefix):].isdigit() and int(name[len(prefix):]) < stop]
        return cls(f"offer {offer} not before day {lead_days}", True, early_nodes(probes, offer, stop), rows)

    def apply(self, milp) -> Undo:
        saved = [(v, v.lower_bound, v.upper_bound) for v in self.variables]
        rows = [(r, r.lower_bound, r.upper_bound) for r in self.rows]
        for v in self.variables:
            v.upper_bound = 0.0
        for r in self.rows:
            r.lower_bound, r.upper_bound = -math.inf, math.inf

        def undo() -> None:
            for v, lo, hi in saved:
                v.lower_bound, v.upper_bound = lo, hi
            for r, lo, hi in rows:
                r.lower_bound, r.upper_bound = lo, hi
        return undo


@dataclass(eq=False)
class Reopen(Change):
    """A lead-time lever: the shut days of one offer opened again (the built-in shorter lead
    time), and shut again on undo."""

    asker: object = None
    offer: str = ""
    tightens: bool = False

    def apply(self, milp) -> Undo:
        self.asker.shut[self.offer]()
        lead = self.asker.catalog.offers[self.offer].lead_time_days

        def undo() -> None:
            self.asker.shut[self.offer] = Shut.before(self.asker.probes, self.offer, lead).apply(milp)
        return undo


@dataclass
class Point:
    """The best plan found at one price: its cost (an upper bound of the optimum there), `low`
    (a proven lower bound) and q, its price volume (d cost / d price)."""

    price: float
    plan: Plan
    q: float
    low: float

    @property
    def cost(self) -> float:
        return self.plan.total_cost


class Asker:
    """negotiate's questions of one engine: the best plan at a price, free, forced or without
    the offer; a lever's value. Counts what was not proven."""

    def __init__(self, probes: Probes, setup: Setup, shut: dict[str, Undo] | None = None) -> None:
        self.probes, self.setup = probes, setup
        self.shut = dict(shut or {})   # offer → what opens its built-in shorter lead time (Reopen)
        self.problem, self.catalog = setup.problem, setup.catalog
        self.unbudgeted = self.problem if self.problem.budget is None else \
            self.problem.model_copy(update={"budget": None})
        self.unproven = 0
        self.base_values: dict[int, float] | None = None

    @property
    def solves(self) -> int:
        return self.probes.solves

    def adopt_base(self, answer: Answer) -> None:
        """The base answer every probe starts from (solved here, or handed to a worker)."""
        self.probes.base = answer
        self.base_values = dict(answer.solution.values)
        self.fresh()

    def fresh(self) -> None:
        """Forget the plans of earlier offers: an offer's work starts from the base plan alone, so
        its rows do not depend on which offers ran before it (or in which process)."""
        self.probes.known = [dict(self.base_values)] if self.base_values is not None else []

    def ask(self, *changes: Change, problem: Problem, catalog: Catalog, tiebreak: bool = False) -> Answer:
        """One probe; OutOfTime (solver.clock) when no time is left or the solve found no plan in its time:
        the run's time ran out (or the command was stopped) before a solve settled its question."""
        answer = self.probes.probe(*changes, problem=problem, catalog=catalog, tiebreak=tiebreak)
        if answer.status == "unknown":
            raise OutOfTime(answer.why or "no plan found in the time")
        self.unproven += answer.status == "feasible" and answer.solved
        return answer

    def at(self, offer: str, price: float, how: str = "free") -> Point | None:
        """The best plan at this price: free, forced (renting the offer) or without it; None if
        there is none (proven). Forced and without drop the budget: it only cuts plans costing
        more than it, and the crossing is sought at a cost within it (see price_limit).
        The plans whose make-up is shown (without the offer: what replaces it; free, at a target
        price: the volume taken) are tie-broken as solver.api.solve_problem's are (earliest
        finish, fewest rentals), so they are the plans a re-solve of the edited problem shows;
        the forced ones are read for their cost and volume alone."""
        probes = self.probes
        if how == "forced" and not _has_nodes(probes, offer):
            return None
        changes: list[Change] = [] if how == "without" else [reprice(offer, price)]
        if how == "forced":
            changes.append(probes.force(offer))
        if how == "without":
            changes.append(probes.leave_out(offer))
        if how != "free" and self.problem.budget is not None:
            changes.append(no_budget(probes))
        catalog = self.catalog if how == "without" else with_price(self.catalog, offer, price)
        answer = self.ask(*changes, problem=self.problem if how == "free" else self.unbudgeted, catalog=catalog,
                          tiebreak=how != "forced")
        if answer.plan is None:
            return None
        return Point(price, answer.plan, self.volume(answer.plan, self.catalog.offers[offer]), answer.low)

    def volume(self, plan: Plan, offer: Offer) -> float:
        """The plan's price volume on the offer, with the offer currency's rate of the problem."""
        return price_volume(plan, offer, self.problem.horizon_days, self.problem.rates()[offer.currency])

    def least_volume(self, offer: Offer) -> float:
        """The smallest price volume any plan renting the offer has: one node for the shortest
        period it can be held (hourly) or one contract (committed), at the deepest discount.
        Every forced plan's cost rises at least this fast with the price (interval ends)."""
        unit_days = UNIT_DAYS[MODE_UNITS[offer.mode]]
        per_node = offer.gpus_per_node if "_gpu_" in offer.price_unit else 1
        if offer.committed:
            days = offer.term_days
        else:
            inst = self.probes.inst
            held = [t for (key, t) in self.probes.milp.nodes if inst.configs[key].offer.offer == offer.offer]
            days = min((inst.hours[t] for t in held), default=24.0) / 24
        scale = (1 + offer.platform_fee_pct / 100) * (1 - (offer.discount_pct or 0) / 100)
        return per_node * days / unit_days * scale * self.problem.rates()[offer.currency]


def _has_nodes(probes: Probes, offer: str) -> bool:
    return any(probes.inst.configs[key].offer.offer == offer for key, _ in probes.milp.nodes)


def period_hours(plan: Plan, horizon_days: int):
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


def limit_interval(points: list[Point], goal_low: float, goal_high: float, least_q: float,
                   floor: float) -> tuple[float | None, float | None]:
    """Where p* = max{p : C_forced(p) ≤ C_goal} lies, from what the forced probes proved.

    C_goal (the cost without the offer, or the plan's) lies in [goal_low, goal_high]. Each
    point's plan is a plan at every price, its cost a line: C_forced(p') ≤ cost + q·(p' − p),
    so p* ≥ p + (goal_low − cost)/q. Each point's bound holds at higher prices too, rising at
    least `least_q` per unit of price (every forced plan's volume is at least that):
    C_forced(p') ≥ low + least_q·(p' − p) for p' ≥ p, so p* ≤ p + max(0, goal_high − low)/least_q.
    (low, high); low None: no price at or above `floor` is proven to let it in."""
    lows = [p.price + (goal_low - p.cost) / p.q for p in points if p.q > 0]
    low = max(lows) if lows else None
    highs = [p.price + max(0.0, goal_high - p.low) / least_q for p in points if least_q > 0 and math.isfinite(p.low)]
    high = min(highs) if highs else None
    if low is not None and low < floor:
        low = None
    if low is not None and high is not None:
        high = max(high, low)
    return low, high

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
proven lower bound of p* with the upper end the probes prove. Solves use a tight relative gap
(default 1e-7), since a break-even price is only as exact as the costs it equates.

Every solve is a probe on one built model (solver.analysis.negotiate_probes, solver.probes):
one Instance and one model per command (per worker with --jobs), the offer re-priced, forced
in or left out, the budget dropped, a lever applied, then undone. A probe that stopped before
its proof leaves an interval (solver.analysis.negotiate_offers.limit_interval), never a guess.

Relevance first (issue 34), each reason said once in the output:
- an offer no job can use (memory, lead time, restrict list, …) is not probed;
- an offer not in the plan whose contract term is more than 4× the span in which jobs run (a
  30-day monthly offer for a 7-day job) is not priced (`SKIPS["term"]`), unless it is what
  replaces an offer of the plan above its walk-away price;
- a break-even that would have to be ≤ 0 is not a row (`SKIPS["free_only"]`): when one LP of the
  base model (solver.milp.promise) says so, the floor price is asked first, one probe;
- the rest run in order of promise (offers in the plan, then by the LP's estimate), so the budget
  goes to the rows a negotiator reads; the order changes which rows are determined first, never
  their values (each offer starts from the base plan alone).

Target prices (what we ask a vendor for; `margin`, default 5 %):
    in the plan:      current price × (1 − margin) — we already take it; an ask, never above
                      the walk-away price;
    not in the plan:  break-even × (1 − margin) — far enough below the break-even that the
                      offer clearly wins.
The plan is re-solved at the target price (one probe) for the volume we would take then
(node-days, and peak nodes) and the saving against the plan as it is.

Levers (one probe each, saving = base cost − new cost; solver.analysis.negotiate_levers):
    power:        +kw at each site whose power quota binds in the plan;
    lead time:    the offer's lead time shortened by lead_days, for offers in the plan, offers
                  whose break-even is within NEAR of their price, and offers that no job can
                  use only because of their lead time;
    availability: +nodes on each offer whose max_nodes binds in the plan.
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from solver import api
from solver.analysis.negotiate_levers import Lever, lead_time_matters, levers as value_levers
from solver.analysis.negotiate_offers import (NEAR, OUT_OF_TIME, PRICE_FLOOR, SKIPS, STOPPED, OfferTerms, node_days,
                                              offers_used, peak_nodes)
from solver.analysis.negotiate_pool import Done, Runner, Shared, row_words
from solver.analysis.negotiate_probes import Asker, Setup, build_engine, price_volume, with_price
from solver.analysis.ray_actors import require_ray
from solver.clock import COMMAND, OutOfTime, RunClock, interrupted, not_started
from solver.errors import ProblemError
from solver.model.catalog import Catalog, Offer
from solver.model.problem import Problem
from solver.rows import ROWS

__all__ = ["negotiate", "Negotiation", "OfferTerms", "Lever", "check_vendor",
           "reason_kinds", "with_price", "offers_used", "node_days", "peak_nodes", "price_volume",
           "lead_time_matters", "PRICE_FLOOR", "NEAR", "OUT_OF_TIME", "SKIPS"]

MARGIN = 0.05
"""Default distance of the target price below the current price (in the plan) or the break-even."""
MAX_SOLVES = 8
"""Solves per analysed offer: without it, the Newton steps, the target price."""
GAP = 1e-7
"""Relative MILP gap of every solve here, unless the caller gives one."""
USABLE_SHARE = 0.25
"""A contract offer not in the plan is not priced when the days in which any job runs are less than
this share of its term: at least three quarters of every contract would be paid idle, so it
could enter only far below its quote, against like offers at least 75 % cheaper per day (the
issue's "30-day monthly offers at −98.6 % for a 7-day job"). A 10-day window on a 30-day term is
still priced (tests/analysis/test_negotiate.py: a break-even at −42 %)."""
PRICE_NOTE = ("price = the offer's price column in its price_unit (what the vendor quotes); interconnect "
              "surcharge, platform fee and volume discount are held as in the catalog")


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
    unproven: int = 0           # solves not proven optimal (time limit): their rows show intervals
    price_note: str = PRICE_NOTE
    levers_note: str = ""       # the levers not run (out of time, or could not change any plan), each reason once
    skipped: dict[str, str] = field(default_factory=dict)  # kind → why those offers were not priced (said once)
    jobs: int = 1               # processes the offers ran in (--jobs)
    base_low: float | None = None  # the optimum is proven at least this (= base_cost when optimal)

    def to_dict(self) -> dict:
        out = asdict(self)
        for terms, data in zip(self.offers, out["offers"]):
            data["limit_change"] = terms.limit_change
        for lever, data in zip(self.levers, out["levers"]):
            data["per_unit"] = lever.per_unit
        del out["jobs"]   # how the work was spread is not part of the answer (the same for any --jobs)
        return out


def negotiate(problem: Problem, catalog: Catalog, *, vendors: list[str] | None = None, kw: float = 50,
              lead_days: int = 7, nodes: int = 2, margin: float = MARGIN, max_solves: int = MAX_SOLVES,
              backend: str | None = None, time_limit: float | None = None, gap: float | None = None,
              levers: bool = True, max_seconds: float | None = None, jobs: int | None = 1,
              ray: str | None = None) -> Negotiation:
    """Walk-away and break-even prices of the offers (of `vendors`, or all), and the levers' values.

    max_seconds: no new offer or lever is started after this long (they are reported as not
    analysed); a problem whose single solve takes 30 s needs minutes for a full negotiation.
    jobs: processes the offers are analysed in (1: this one); with `ray`, the Ray actors (None: one
    per CPU the cluster offers).
    ray: a Ray cluster's address ("auto", "host:port") or "local": the offers are analysed by Ray
    actors there instead of a process pool (solver.analysis.executor)."""
    started = time.perf_counter()
    _check(catalog, vendors, margin, max_solves)
    if ray:
        require_ray("--ray")   # before anything is solved
    gap = GAP if gap is None else gap
    chosen = [o for o in catalog.offers.values() if not vendors or o.vendor in vendors]
    setup = Setup(problem, catalog, reach=_reach(problem, chosen, lead_days if levers else 0),
                  stock=_stock(problem, catalog, chosen, nodes if levers else 0),
                  forced=tuple(sorted(o.offer for o in chosen)), backend=backend, time_limit=time_limit, gap=gap)
    clock = RunClock(time_limit, None, least=0.0)
    probes, shut = build_engine(setup, clock)
    asker = Asker(probes, setup, shut)
    usability = _usability(asker)
    ROWS.expect(None)  # each offer announced as priced (solver.analysis.negotiate_pool), or at once when it needs no probe
    for o in sorted(chosen, key=lambda o: (o.vendor, o.offer)):
        if o.offer not in usability[0]:  # known from preprocessing: said before the base solve
            ROWS.announce(row_words(_unusable(o, usability[1])))
    base = _solve_base(asker)   # within the command's budget (solver.clock), not max_seconds: nothing is known without it
    clock.stop_at = None if max_seconds is None else started + max_seconds
    terms, kinds = _terms(asker, chosen, base, problem, usability)
    tolerance = max(1.0, 2 * gap * base.total_cost)
    shared = Shared(base, asker.probes.base.low, asker.probes.base.status, asker.base_values, margin, max_solves,
                    tolerance)
    before = (asker.solves, asker.unproven)
    with _runner(asker, shared, jobs, clock, ray, len(terms)) as runner:
        done = _price_offers(asker, runner, terms, problem)
        workers = runner.workers()
    here = (asker.solves - before[0], asker.unproven - before[1])  # the offers' solves made in this process
    terms = [done[t.offer].terms if t.offer in done else t for t in terms]
    lever_list, levers_note = [], ""
    if levers:
        lever_list, levers_note = value_levers(asker, base, terms, kinds, vendors, kw, lead_days, nodes)
    solves = asker.solves - here[0] + sum(d.solves for d in done.values())
    unproven = asker.unproven - here[1] + sum(d.unproven for d in done.values())
    skipped = {kind: text for kind, text in SKIPS.items() if any(t.skipped == kind for t in terms)}
    if interrupted():
        levers_note = _said_stopped(terms, levers_note)
    return Negotiation(problem.name, base.currency, base.total_cost, base.status, margin, gap, vendors, terms,
                       lever_list, solves, round(time.perf_counter() - started, 3), unproven,
                       levers_note=levers_note, skipped=skipped, jobs=workers,
                       base_low=min(shared.base_low, base.total_cost))


def _said_stopped(terms: list[OfferTerms], levers_note: str) -> str:
    """What Ctrl-C left unanalysed says so, not that the budget ran out; the levers' note with it."""
    for t in terms:
        if t.reason == OUT_OF_TIME:
            t.reason = STOPPED
    return levers_note.replace(OUT_OF_TIME, STOPPED)


def _runner(asker: Asker, shared: Shared, jobs: int | None, clock: RunClock, ray: str | None, offers: int) -> Runner:
    """Where the offers are priced: Ray actors with `ray`, else `jobs` processes (this one for 1)."""
    if ray:
        return Runner(asker, shared, jobs, _deadline(clock), ray, max(1, offers))
    return Runner(asker, shared, max(1, min(jobs or os.cpu_count() or 1, offers)), _deadline(clock))


def _price_offers(asker: Asker, runner: Runner, terms: list[OfferTerms], problem: Problem) -> dict[str, Done]:
    """The offers in the plan first (their walk-away prices, and what replaces them), then the
    others in order of promise; a contract far longer than the jobs' span is priced only when it
    replaces an offer of the plan (`USABLE_SHARE`: otherwise said once, not priced)."""
    inside = [t for t in terms if t.status == "in_plan"]
    done = {d.terms.offer: d for d in runner.run([(t, 0.0) for t in inside])}
    replacing = {o for d in done.values() for o in d.terms.replaced_by}
    first, last = min(j.start_day for j in problem.jobs), max(j.deadline_days for j in problem.jobs)
    outside = []
    for t in terms:
        if t.status != "not_in_plan":
            continue
        offer = asker.catalog.offers[t.offer]
        if offer.committed and last - first < USABLE_SHARE * offer.term_days and t.offer not in replacing:
            t.skipped = "term"
            t.reason = (f"its {offer.term_days}-day term is more than {1 / USABLE_SHARE:g}× the {last - first} days "
                        f"in which jobs run (days {first}–{last})")
            ROWS.announce(row_words(t))
        else:
            outside.append(t)
    done.update({d.terms.offer: d for d in runner.run(_in_order_of_promise(asker, outside))})
    return done


def _check(catalog: Catalog, vendors: list[str] | None, margin: float, max_solves: int) -> None:
    for v in vendors or []:
        check_vendor(catalog, v, "--vendor")
    if not 0 <= margin < 1:
        raise ProblemError("margin must be in [0, 1)", key="--margin", fix="e.g. --margin 0.05")
    if max_solves < 3:
        raise ProblemError("max_solves must be at least 3", key="--max-solves", fix="e.g. --max-solves 8")


def _reach(problem: Problem, chosen: list[Offer], lead_days: int) -> dict[str, int]:
    """offer → the lead time the model is built with: shortened by lead_days where a shorter lead
    time could change a plan (its lever may run), so that lever is a delta on the one model."""
    out = {}
    for o in chosen:
        shorter = min(lead_days, o.lead_time_days)
        if shorter > 0 and lead_time_matters(problem, o.lead_time_days, shorter):
            out[o.offer] = o.lead_time_days - shorter
    return out


def _stock(problem: Problem, catalog: Catalog, chosen: list[Offer], nodes: int) -> dict[str, int]:
    """offer → the max_nodes the model is built with: `nodes` more, so that its stock lever is a
    delta on the one model (size tiers and domains built with room for them). Not for an offer on
    which a job would take another layout with that many more GPUs (preprocessing picks the
    fastest layout that fits the stock): the model would not be the written problem's."""
    out = {}
    for o in chosen if nodes > 0 else []:
        gpu, gpn = catalog.gpus[o.gpu], o.gpus_per_node
        if all(api.job_layout(job, gpu, gpn, gpn * o.max_nodes) == api.job_layout(job, gpu, gpn, gpn * (o.max_nodes + nodes))
               for job in problem.jobs):
            out[o.offer] = o.max_nodes + nodes
    return out


def _solve_base(asker: Asker):
    try:
        base = asker.probes.solve_base()
    except OutOfTime:
        raise not_started("the base solve") from None
    asker.adopt_base(asker.probes.base)
    return base


def _deadline(clock: RunClock) -> float | None:
    """The instant (time.monotonic()) after which no solve of this command starts: its --max-seconds
    or the command's budget, whichever ends first; what the pool's workers obey."""
    ends = [end for end in (clock.stop_at, COMMAND.stop_at) if end is not None]
    return None if not ends else time.monotonic() + (min(ends) - time.perf_counter())


def _terms(asker: Asker, chosen: list[Offer], base, problem: Problem,
           usability: tuple[set[str], dict[str, str], dict[str, set[str]]]) -> tuple[list[OfferTerms], dict[str, set[str]]]:
    """Each chosen offer's row before any probe, in the output's order (in the plan, usable,
    vendor, name): unusable ones with their reasons (`usability`: _usability's answer)."""
    usable, why, kinds = usability
    used, days = offers_used(base), node_days(base, asker.catalog, problem.horizon_days)
    terms = []
    for offer in sorted(chosen, key=lambda o: (o.offer not in used, o.offer not in usable, o.vendor, o.offer)):
        if offer.offer not in usable and offer.offer not in used:
            terms.append(_unusable(offer, why))
        else:
            terms.append(_row(offer, "in_plan" if offer.offer in used else "not_in_plan",
                              round(days.get(offer.offer, 0.0), 3)))
    return terms, kinds


def _row(offer: Offer, status: str, node_days: float = 0.0) -> OfferTerms:
    """An offer's row before any probe: its catalog columns and status."""
    return OfferTerms(offer.offer, offer.vendor, offer.datacenter, offer.gpu, offer.mode, offer.price,
                      offer.price_unit, offer.currency, status, node_days=node_days)


def _unusable(offer: Offer, why: dict[str, str]) -> OfferTerms:
    """The row of an offer no job can use, with its reasons (no plan rents it: no node-days)."""
    t = _row(offer, "unusable")
    t.reason = why.get(offer.offer, "no job can use it")
    return t


def _usability(asker: Asker) -> tuple[set[str], dict[str, str], dict[str, set[str]]]:
    """Offers some job can use; for the others why not (one reason per kind, per job), and
    the kinds of those reasons (solver.milp.exclusion.Exclusion.kind). Read as preprocessing reads
    the written catalog (api.options_as_written: the engine's Instance was built with the levers'
    extra stock and shorter lead times), so the reasons are those a plain solve would give."""
    inst, setup, written = asker.probes.inst, asker.setup, asker.catalog
    options, dropped = api.options_as_written(inst, {o: written.offers[o].max_nodes for o in setup.stock},
                                              {o: written.offers[o].lead_time_days for o in setup.reach})
    usable = {inst.configs[o.config].offer.offer for o in options}
    reasons: dict[str, dict[str, str]] = defaultdict(dict)
    for job in inst.excluded:
        for reason in [*inst.excluded[job], *dropped.get(job, [])]:
            reasons[inst.configs[reason.config].offer.offer].setdefault(reason.kind, f"{job}: {reason.text}")
    why, kinds = {}, {}
    for name in written.offers:
        if name in usable:
            continue
        if name not in {c.offer.offer for c in inst.configs.values()}:
            why[name] = "excluded by the problem's restrict list"
        else:
            why[name] = "; ".join(reasons[name].values()) or "no job can use it"
            kinds[name] = set(reasons[name])
    return usable, why, kinds


def _in_order_of_promise(asker: Asker, terms: list[OfferTerms]) -> list[tuple[OfferTerms, float]]:
    """(terms, the LP's estimated price fall) in the order they are run: the offers in the plan,
    then the others by how little their price must fall to enter (one LP of the base model,
    solver.milp.promise; in the output's order when it has no answer in time)."""
    outside = [t.offer for t in terms if t.status == "not_in_plan"]
    drops = {o: 0.0 for o in outside}
    left = asker.probes.clock.left()
    if outside and (left is None or left > 0):
        reduced = api.reduced_costs(asker.probes.milp, left if asker.setup.time_limit is None
                                    else min(left or math.inf, asker.setup.time_limit))
        if reduced is not None:
            drops = api.price_drops(asker.probes.milp, outside, reduced)
    rank = {t.offer: i for i, t in enumerate(terms)}

    def promise(t: OfferTerms) -> tuple:
        if t.status == "in_plan":
            return (0, 0.0, rank[t.offer])
        return (1, drops.get(t.offer, 0.0) / t.price if t.price > 0 else math.inf, rank[t.offer])
    return [(t, drops.get(t.offer, 0.0)) for t in sorted(terms, key=promise)]


def reason_kinds(reason: str) -> set[str]:
    """'pretrain: lead_time: …; pretrain: memory: …' → {'lead_time', 'memory'}."""
    kinds = set()
    for part in reason.split("; "):
        bits = part.split(": ")
        kinds.add(bits[1].split(":")[0] if len(bits) > 1 else bits[0])
    return kinds


def check_vendor(catalog: Catalog, vendor: str, key: str) -> None:
    """A vendor named on the command line must have offers in the catalog; said before any
    solve (a misspelled --export-vendor used to be caught after the whole negotiation)."""
    known = sorted({o.vendor for o in catalog.offers.values()})
    if vendor not in known:
        raise ProblemError(f"no vendor {vendor!r} in the catalog", key=key, fix=f"use one of {', '.join(known)}")

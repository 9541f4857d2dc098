"""Symmetry breaking: hourly capacity in interchangeable periods is held early first.

Why: one node-day of an hourly offer costs and does the same on any day of a stretch
in which the same job options may use it, so a solver otherwise explores every
permutation of those days. Swapping all of one offer's variables (nodes, replicas,
discount) between two such periods keeps every row satisfied — Use and Availability
are per offer and period, Work sums over periods of equal hours, the data rows are
bounded by the sum of their variables' own bounds — so sorting each offer's holdings
in decreasing order within a stretch loses no optimum. Three things would break that
swap, so those offers are left out:
- a per-period row shared with another offer: a fabric domain's GPU bound
  (`Site-<j>-<d>-<t>`) when the domain has another offer's nodes, and a site's power
  quota (their periods are also tied to committed capacity);
- periods that differ for one of the offer's options though not for the problem:
  a job waiting for its dataset at this site may use the offer only from a later day,
  so the stretch is read off the offer's own options, not the jobs' windows;
- storage billed by the day at the offer's site for a job that may use the offer
  (solver.milp.data: from the job's first GPU day at the site to its finish): holding
  the nodes earlier moves that first day earlier and the bill up. Held early first, a job
  that must finish on another offer's late day paid storage from the stretch's first
  day (tests/milp/test_symmetry.py: 3,280 CNY instead of 2,980, and a shorter lead time
  raised the optimum).
"""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp


def add_symmetry_breaking(milp: Milp) -> None:
    """N[o,t] ≥ N[o,t+1] for hourly/spot offer o when t, t+1 are interchangeable for o.

    N[o,t] = Σ over o's interconnect options of n[o,t]. Row `Order-<offer>-<t>`.
    """
    inst = milp.inst
    held: dict[str, dict[int, list[mb.Variable]]] = defaultdict(lambda: defaultdict(list))
    for (key, t), var in milp.nodes.items():
        offer = inst.configs[key].offer
        if not offer.committed and not offer.counts_power:
            held[offer.offer][t].append(var)
    skip = offers_sharing_a_domain(milp) | offers_storing_data(milp)
    for offer, by_t in held.items():
        if offer in skip:
            continue
        context = _period_context(milp, offer)
        for t in sorted(by_t):
            if t + 1 in by_t and context(t) == context(t + 1):
                milp.add_row(f"Order-{offer}-{t}",
                             mb.LinearExpr.sum(by_t[t]) >= mb.LinearExpr.sum(by_t[t + 1]))


def offers_sharing_a_domain(milp: Milp) -> set[str]:
    """Offers whose nodes some synchronous job may combine with another offer's in one fabric
    domain that has per-period size rows (solver.milp.site adds them only where they could bind)."""
    inst = milp.inst
    members: dict[tuple[str, str], set[str]] = defaultdict(set)
    for opt in inst.options:
        if opt.domain is not None:
            members[opt.job, opt.domain].add(inst.configs[opt.config].offer.offer)
    bounded = {(opt.job, opt.domain) for opt in inst.options if opt.domain is not None
               and any(f"Site-{opt.job}-{opt.domain}-{t}" in milp.rows for t in opt.periods)}
    return {offer for key, offers in members.items() if len(offers) > 1 and key in bounded for offer in offers}


def offers_storing_data(milp: Milp) -> set[str]:
    """Offers some job may use at a site where that job pays storage by the day
    (solver.milp.data made its storage flags, `Milp.stored`)."""
    inst = milp.inst
    storing = {(job, vendor, dc) for job, vendor, dc, _t in milp.stored}
    out = set()
    for opt in inst.options:
        offer = inst.configs[opt.config].offer
        if (opt.job, offer.vendor, offer.datacenter) in storing:
            out.add(offer.offer)
    return out


def _period_context(milp: Milp, offer: str):
    """What distinguishes a period for one offer: its length and which of the offer's job
    options (job × configuration, with the job's transfer wait) may run in it."""
    inst = milp.inst
    options = [(i, set(opt.periods)) for i, opt in enumerate(inst.options)
               if inst.configs[opt.config].offer.offer == offer]

    def context(t: int) -> tuple:
        return inst.hours[t], tuple(i for i, periods in options if t in periods)
    return context

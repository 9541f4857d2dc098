"""What other concessions are worth: +kW where power binds, shorter lead times, more nodes where
stock binds; each one probe on negotiate's model (solver.analysis.negotiate_probes).

Relevance first (issue 34): a lever on a limit the plan does not reach (slack) is not run — only
binding power quotas and stocks are levered; a shorter lead time that opens no day of any job's
window is not run either (`lead_time_matters`), each reason said once in the note.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.analysis.negotiate_offers import NEAR, OUT_OF_TIME, OfferTerms, offers_used
from solver.analysis.negotiate_probes import Asker, OutOfBudget, Reopen, with_leads
from solver import api
from solver.api import AVAILABILITY, POWER, Family
from solver.model.paths import row_path
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Change, Limit, Restock


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
    saving_high: float | None = None   # the saving is proven at most this (= saving when proven)

    @property
    def per_unit(self) -> float | None:
        return None if self.saving is None or not self.amount else self.saving / self.amount


@dataclass(frozen=True)
class Spec:
    """One lever to value: what it is called and the change and the written problem it stands for."""

    kind: str
    name: str
    vendor: str | None
    edit: str
    amount: float
    unit: str


def lead_time_matters(problem: Problem, days: int, shorter: int) -> bool:
    """Whether a lead time of `days` shortened by `shorter` can change any plan: only if some job's
    window [start_day, deadline) has days the longer lead time shuts out and the shorter one opens.
    Exact: an offer's nodes exist from its lead time on (solver.milp.instance), nothing else moves."""
    now = days - shorter
    return any(now < job.deadline_days and job.start_day < days for job in problem.jobs)


def levers(asker: Asker, base: Plan, terms: list[OfferTerms], kinds: dict[str, set[str]],
           vendors: list[str] | None, kw: float, lead_days: int, nodes: int) -> tuple[list[Lever], str]:
    """Power at binding sites (+kw), shorter lead times, stock of binding offers (+nodes), in that order;
    and a note on the levers not run (each reason said once). A lever the run's time does not reach
    is not shown half-done: the note says so."""
    cat = asker.catalog

    def mine(offer: str) -> bool:
        return not vendors or cat.offers[offer].vendor in vendors

    todo = _family_levers(asker, POWER, kw, base, mine)
    skipped: list[str] = []
    if lead_days > 0:
        for o in lead_candidates(terms, kinds, base, mine):
            days = cat.offers[o].lead_time_days
            if days <= 0:
                continue
            shorter = min(lead_days, days)
            if not lead_time_matters(asker.problem, days, shorter) or o not in asker.setup.reach:
                skipped.append(o)
                continue
            todo.append(Spec("lead_time", o, cat.offers[o].vendor,
                             f"{row_path('offers', 'offer', o)}.lead_time_days={days - shorter}", shorter, "days"))
    other_layout: list[str] = []
    if nodes > 0:
        stock, other_layout = _stock_levers(asker, nodes, mine)
        todo += stock
    out, notes = [], []
    if other_layout:
        notes.append(f"more nodes not valued for {', '.join(other_layout)}: with them a job would take another "
                     "layout there, which this run's one model does not hold (whatif "
                     f"'offers.NAME.max_nodes+={nodes}' prices it)")
    if skipped:
        notes.append(f"shorter lead times not valued for {len(skipped)} offer(s) ({', '.join(skipped[:3])}"
                     f"{', …' if len(skipped) > 3 else ''}): before and after, the lead time ends before every job "
                     "starts or after every deadline, so the plans they allow are the same")
    for i, spec in enumerate(todo):
        try:
            out.append(_value(asker, base, spec))
        except OutOfBudget:
            notes.insert(0, f"{OUT_OF_TIME} ({len(todo) - i} of {len(todo)} levers)")
            break
    return out, "; ".join(notes)


def lead_candidates(terms: list[OfferTerms], kinds: dict[str, set[str]], base: Plan, mine) -> list[str]:
    """Offers whose shorter lead time is worth a probe: in the plan, near entering it (break-even
    within NEAR of the price), or unusable only because of their lead time; in that order."""
    lead = [t.offer for t in terms if t.status == "in_plan"]
    lead += [t.offer for t in terms if t.status == "not_in_plan" and t.limit_price is not None
             and t.limit_price >= t.price * (1 - NEAR)]
    lead += [t.offer for t in terms if t.status == "unusable" and kinds.get(t.offer) == {"lead_time"}]
    lead += [o for o in offers_used(base) if o not in lead and mine(o)]
    return list(dict.fromkeys(lead))


def _family_levers(asker: Asker, fam: Family, amount: float, base: Plan, mine) -> list[Spec]:
    """+amount of the family's limit at each target binding in the plan (an offer: only `mine`)."""
    out = []
    for name in dict.fromkeys(b.name for b in base.binding if b.kind == fam.name):
        vendor = asker.catalog.offers[name].vendor if fam.targets == "offer" else None
        if fam.targets != "offer" or mine(name):
            step = fam.lever(asker.problem, asker.catalog, name, amount)
            out.append(Spec(fam.name, name, vendor, step.edits[0], amount, fam.unit_in(asker.problem)))
    return out


def _stock_levers(asker: Asker, amount: int, mine) -> tuple[list[Spec], list[str]]:
    """+amount nodes on each offer whose written stock the plan holds in full in some period
    (the model's own binding reader would compare with the stock it was built with); and the
    binding offers whose model was not built with room for more (negotiate._stock)."""
    probes, cat = asker.probes, asker.catalog
    held: dict[str, int] = {}
    for (key, t), variables in api.held_nodes(probes.milp).items():
        offer = probes.inst.configs[key].offer.offer
        n = sum(round(asker.base_values.get(v.index, 0.0)) for v in variables)
        held[offer] = max(held.get(offer, 0), n)
    out, other = [], []
    for offer, peak in held.items():
        if peak < cat.offers[offer].max_nodes or not mine(offer):
            continue
        if offer not in asker.setup.stock:
            other.append(offer)
            continue
        step = AVAILABILITY.lever(asker.problem, cat, offer, amount)
        out.append(Spec(AVAILABILITY.name, offer, cat.offers[offer].vendor, step.edits[0], amount,
                        AVAILABILITY.unit_in(asker.problem)))
    return out, other


def _value(asker: Asker, base: Plan, spec: Spec) -> Lever:
    """One probe: the lever's change on the model, its plan verified against the written edit."""
    change, catalog = _change(asker, spec)
    answer = asker.ask(change, problem=asker.problem, catalog=catalog)
    if answer.plan is None:
        return Lever(spec.kind, spec.name, spec.vendor, spec.edit, spec.amount, spec.unit, None, None)
    cost = answer.plan.total_cost
    return Lever(spec.kind, spec.name, spec.vendor, spec.edit, spec.amount, spec.unit, cost, base.total_cost - cost,
                 base.total_cost - min(answer.low, cost))


def _change(asker: Asker, spec: Spec) -> tuple[Change, object]:
    """The delta on the model and the catalog as the edit writes it (what the plan is verified against)."""
    cat = asker.catalog
    if spec.kind == "power":
        site = cat.datacenters[spec.name]
        quota = site.power_quota_kw + spec.amount
        sites = {**cat.datacenters, spec.name: site.model_copy(update={"power_quota_kw": quota})}
        return Limit(f"+{spec.amount:g} kW at {spec.name}", False, POWER, spec.name, quota), \
            cat.model_copy(update={"datacenters": sites})
    offer = cat.offers[spec.name]
    if spec.kind == "lead_time":
        days = offer.lead_time_days - int(spec.amount)
        return Reopen(f"offer {spec.name} from day {days}", False, asker, spec.name), with_leads(cat, {spec.name: days})
    most = offer.max_nodes + int(spec.amount)
    offers = {**cat.offers, spec.name: offer.model_copy(update={"max_nodes": most})}
    return Restock(f"+{int(spec.amount)} nodes of {spec.name}", False, spec.name, most), \
        cat.model_copy(update={"offers": offers})

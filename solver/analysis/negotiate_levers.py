"""What other concessions are worth: more of each limit the plan runs into (each constraint
family's Deal: +kW where power binds, more nodes where stock binds), and shorter lead times;
each one probe on negotiate's model (solver.analysis.negotiate_probes).

Relevance first (issue 34): a lever on a limit the plan does not reach (slack) is not run — only
the targets a family's Deal says the plan uses all of are levered; a shorter lead time that opens
no day of any job's window is not run either (`lead_time_matters`), each reason said once in the note.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.analysis.negotiate_offers import NEAR, OUT_OF_TIME, OfferTerms, offers_used
from solver.analysis.negotiate_probes import Asker, OutOfBudget, Reopen, with_leads
from solver.analysis.edits import apply_edits
from solver.api import FAMILIES, Family, NotApplicable, family
from solver.model.paths import row_path
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Change, Undo

LEAD_TIME = "lead_time"
"""The one lever that is no family's: an offer's lead time (negotiate's own, its periods reopened)."""
LEAD_TIME_ORDER = 25
"""Where the lead-time levers come among the families' (Family.order): after power, before stock."""


@dataclass
class Lever:
    """The value of relaxing one limit: base cost − cost with the edit."""

    kind: str                 # a family's name (Family.deal) or LEAD_TIME
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
    """Each family's Deal at the targets the plan uses all of (+kw, +nodes: its `option`), and
    shorter lead times, in Family.order (lead times at LEAD_TIME_ORDER); and a note on the
    levers not run (each reason said once). A lever the run's time does not reach is not shown
    half-done: the note says so."""
    cat = asker.catalog
    amounts = {"kw": kw, "nodes": nodes}

    def mine(offer: str) -> bool:
        return not vendors or cat.offers[offer].vendor in vendors

    groups: list[tuple[int, list[Spec]]] = []
    notes: list[str] = []
    for fam in FAMILIES:
        if not isinstance(fam.deal, NotApplicable) and amounts.get(fam.deal.option, 0) > 0:
            specs, no_room = _family_levers(asker, fam, amounts[fam.deal.option], base, mine)
            groups.append((fam.order, specs))
            if no_room:
                notes.append(fam.deal.no_room.format(targets=", ".join(no_room), amount=amounts[fam.deal.option]))
    lead: list[Spec] = []
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
            lead.append(Spec(LEAD_TIME, o, cat.offers[o].vendor,
                             f"{row_path('offers', 'offer', o)}.lead_time_days={days - shorter}", shorter, "days"))
    groups.append((LEAD_TIME_ORDER, lead))
    todo = [spec for _, specs in sorted(groups, key=lambda g: g[0]) for spec in specs]
    out = []
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


def _family_levers(asker: Asker, fam: Family, amount: float, base: Plan, mine) -> tuple[list[Spec], list[str]]:
    """+amount of the family's limit at each target its Deal finds the plan uses all of (an
    offer: only `mine`); and the targets the model has no room for (Deal.hold refuses)."""
    out, no_room = [], []
    probes = asker.probes
    for name in fam.deal.targets(base, probes.milp, asker.base_values, asker.catalog):
        if fam.targets == "offer" and not mine(name):
            continue
        vendor = asker.catalog.offers[name].vendor if fam.targets == "offer" else None
        written = fam.relax.limit(asker.problem, asker.catalog, name)
        try:
            fam.deal.hold(probes.milp, name, written + amount)()  # the model's room for it, undone at once
        except ValueError:
            no_room.append(name)
            continue
        step = fam.lever(asker.problem, asker.catalog, name, amount)
        out.append(Spec(fam.name, name, vendor, step.edits[0], amount, fam.unit_in(asker.problem)))
    return out, no_room


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
    if spec.kind == LEAD_TIME:
        days = cat.offers[spec.name].lead_time_days - int(spec.amount)
        return Reopen(f"offer {spec.name} from day {days}", False, asker, spec.name), with_leads(cat, {spec.name: days})
    fam = family(spec.kind)
    step = fam.lever(asker.problem, cat, spec.name, spec.amount)
    value = fam.relax.limit(asker.problem, cat, spec.name) + spec.amount
    return _Held(step.words, False, fam, spec.name, value), apply_edits(asker.problem, cat, step.edits)[1]


@dataclass(eq=False)
class _Held(Change):
    """A family's limit at `value` on negotiate's model (its Deal.hold), put back after."""

    family: Family | None = None
    target: str = ""
    value: float = 0.0

    def apply(self, milp) -> Undo:
        return self.family.deal.hold(milp, self.target, self.value)

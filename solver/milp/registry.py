"""The constraint families a user can relax, each listed once with every part of it.

Why: a limit's knowledge — its rows, its slack, whether a plan runs into it, how the
infeasibility explanation relaxes it, what one more unit of it is worth, how the
verifier checks it, its unit — used to be spread over eleven files keyed by strings, so a
family added to build.py but forgotten in one of them failed nothing: it was silently
missing from an explanation. Here each family is one `Family`, every field required;
a part that does not apply is said so in words (`NotApplicable`), never left out.
binding, elastic, explain, why and negotiate loop over `FAMILIES`, and
tests/milp/test_registry.py fails when a family lacks a part or a built model has rows
of a family that is not registered (or listed in `STRUCTURAL`).

Why in solver/milp: binding limits are read while a plan is extracted (solver.milp.extract),
below the analyses, so the table must sit at the MILP's level or lower. Every part only
needs the MILP, the models (solver.model: a lever or a relaxation is worded as what-if
edits with solver.model.paths.row_path) and the verifier (solver.verify, which imports no
MILP code: the registry points at it, never the reverse). So imports stay one-way:
model, estimate, verify → milp (families, then this table) → api → analysis. Analyses
reach the table through solver.api.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass

from solver.i18n import N_
from solver.milp import binding, elastic
from solver.milp.budget import add_budget, budget_bound, set_budget_bound
from solver.milp.capacity import add_availability, set_stock_bound, stock_bound
from solver.milp.core import Milp
from solver.milp.power import add_power, power_bound, set_power_bound
from solver.milp.spot import add_spot_cap, set_spot_bound, spot_bound
from solver.milp.vendors import add_vendor_count, set_vendor_bound, vendor_bound
from solver.milp.work import add_work, asked_work, deadline_bound, set_deadline_bound
from solver.model.catalog import Catalog
from solver.model.paths import row_path
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem
from solver.verify import _Verifier, spot_work, vendors_rented

TOL = 1e-6
WORK_WEIGHT = 1000.0
"""why: missing work is the last resort — its slack weighs ×1000 against the others'."""


@dataclass(frozen=True)
class NotApplicable:
    """A part a family has not, and why (a reason is required: leaving a part out is a decision)."""

    why: str


@dataclass(frozen=True)
class Rows:
    """The family's rows: what build.py (or an analysis) calls to add them, and their names'
    beginnings (`<prefix>` or `<prefix>-…`); every such row is also kept under a RowKey."""

    add: Callable
    prefixes: tuple[str, ...]


@dataclass(frozen=True)
class Relax:
    """How the infeasibility explanation (solver.analysis.explain) relaxes the limit.

    how:   the strategy that finds its smallest lone relaxation — "days" (a search over
           whole days, each probe a full solve), "without" (the cheapest plan with the limit
           dropped), "each" (an elastic solve per target), "together" (one elastic solve
           with slack on every target, on a model built with raised caps).
    limit: the written limit of a target (problem, catalog, target) → amount, for "+x %".
    edits: (amount, target, horizon_days or None) → what-if edits making that change.
    words: (amount, target, horizon_days or None, unit) → the same change in words, naming
           every edit; `unit` is the family's unit in the problem (Family.unit_in).
    over:  the elastic plan's use past each written limit (solver.milp.elastic.*_over).
    """

    how: str
    limit: Callable[[Problem, Catalog, str], float | None]
    edits: Callable[[float, str, int | None], list[str]]
    words: Callable[[float, str, int | None, str], str]
    over: Callable | NotApplicable


@dataclass(frozen=True)
class Step:
    """A lever: the edits relaxing a limit by `amount` (None: one meaningful unit), in words."""

    edits: list[str]
    words: str


@dataclass(frozen=True)
class Lost:
    """What the runners-up (solver.analysis.why) say when this family's slack is what a forced
    plan needs most: the code, the slack's weight and written limit, and the words."""

    code: str
    scale: Callable[[Milp, str], tuple[float, float]]        # (weight per unit of slack, written limit)
    words: Callable[[Milp, str, float, float], str]          # (milp, target, slack used, limit) → text


@dataclass(frozen=True)
class Bound:
    """The limit's right-hand side on a BUILT model, per target: read it, or set it and solve
    again, without rebuilding (the frontiers' ε, a probe's delta, an analysis dropping the budget).

    get: (milp, target) → the value the model holds the target to, in the family's unit;
         None: no such limit in the model.
    set: (milp, target, value) → None; value None lifts the limit where the model can go
         without it (budget, power, spot work, vendor count) and puts the written one back
         where it cannot (an offer's stock, a job's deadline: the model has no variables
         past them). A row the family adds only on demand (spot, vendors, a budget the
         problem does not set) is added by the first value that is not None and kept
         (math.inf adds it unbounded: a model about to be re-bounded has it from the start).
    Each setter's docstring says which values read exactly as a model rebuilt with the
    edited problem would, and which it refuses (ValueError).
    """

    get: Callable[[Milp, str], float | None]
    set: Callable[[Milp, str, float | None], None]


@dataclass(frozen=True)
class Labels:
    """The words a report shows for the family, marked with solver.i18n.N_ (Babel extracts
    them; the report translates them with `_` where it shows them).

    name:    the kind in words (a binding limit's, a relaxation's, a lever's).
    binding: a binding limit's text written from its numbers ({name} {span} {used} {limit}
             {unit}), for a language other than the plan's English `Binding.text`.
    """

    name: str
    binding: str | NotApplicable


MONEY = "money"
"""Family.unit of a limit in money: the problem's currency, whatever it is (Family.unit_in)."""


@dataclass(frozen=True)
class Family:
    """One limit a user can relax, with every part of it.

    `name` is the kind everywhere: `Binding.kind` (when `binding` applies: BINDING_KINDS),
    explain's Relaxation.kind, why's and negotiate's Lever.kind, the first field of its RowKeys.
    """

    name: str                   # Binding.kind, explain's Relaxation.kind, why's and negotiate's Lever.kind
    unit: str                   # kW | nodes | days | vendors | EFLOP | MONEY (the problem's currency)
    targets: str                # what one target is: budget | datacenter | offer | job | vendor count | spot work
    rows: Rows
    bounds: Bound               # its right-hand side on a built model, read and set
    labels: Labels              # its words in reports
    slack: Callable | NotApplicable          # solver.milp.elastic: (milp, targets, caps, factor) → {target: var}
    binding: Callable[..., list[Binding]] | NotApplicable   # solver.milp.binding: (solution, jobs) → Bindings
    relax: Relax | NotApplicable
    lever: Callable[..., Step] | NotApplicable               # (problem, catalog, target, amount) → Step
    lost: Lost | NotApplicable
    verify: Callable                          # the solver.verify check of the same rule

    def unit_in(self, problem: Problem) -> str:
        """The unit amounts of this limit are written in for `problem` (money: its currency)."""
        return problem.currency if self.unit == MONEY else self.unit

    def bound(self, milp: Milp, target: str = "") -> float | None:
        """The target's limit on the built model (Bound.get; "" is the one target of the
        budget, the vendor count and the spot work, and every job for the deadline)."""
        return self.bounds.get(milp, target)

    def set_bound(self, milp: Milp, target: str, value: float | None) -> None:
        """Set the target's limit on the built model, e.g. `BUDGET.set_bound(milp, "", None)`
        drops the budget, `DEADLINE.set_bound(milp, "", 40)` has every job done by day 40
        (Bound.set; what None means per family there)."""
        self.bounds.set(milp, target, value)


def _int(x: float) -> int:
    return int(round(x))


def _plural(n: float, word: str) -> str:
    return f"{word}{'s' if n != 1 else ''}"


# --- budget ---------------------------------------------------------------------------------

def _budget_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    step = max(1, round(problem.budget * 0.01)) if amount is None else amount
    words = f"+{step:,} {problem.currency} budget" + (" (1 %)" if amount is None else "")
    return Step([f"budget+={step}"], words)


BUDGET = Family(
    name="budget", unit=MONEY, targets="budget",
    rows=Rows(add_budget, ("Budget",)),
    bounds=Bound(budget_bound, set_budget_bound),
    labels=Labels(N_("budget"), N_("budget: {used} of {limit} {unit} used")),
    slack=elastic.budget_slacks,
    binding=binding.budget_binding,
    relax=Relax("without", limit=lambda problem, catalog, target: problem.budget,
                edits=lambda a, target, horizon: [f"budget+={_int(a)}"],
                words=lambda a, target, horizon, unit: f"{_int(a):,} {unit} more budget",
                over=elastic.budget_over),
    lever=_budget_lever,
    lost=Lost("price", scale=lambda milp, target: (1 / milp.inst.problem.budget, milp.inst.problem.budget),
              words=lambda milp, target, amount, limit: f"over the budget by {amount:,.0f} "
                                                        f"{milp.inst.problem.currency}"),
    verify=_Verifier._budget,
)


# --- power ----------------------------------------------------------------------------------

def smallest_rack_kw(catalog: Catalog, dc: str) -> float:
    """The least kW one node draws against the site's quota (1 when none does): one meaningful unit."""
    kws = [o.node_kw for o in catalog.offers.values() if o.datacenter == dc and o.counts_power and o.node_kw]
    return min(kws) if kws else 1.0


def _power_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    kw = smallest_rack_kw(catalog, target) if amount is None else amount
    words = f"+{kw:g} kW at {target}" + (" (one rack)" if amount is None else "")
    return Step([f"{row_path('datacenters', 'datacenter', target)}.power_quota_kw+={kw:g}"], words)


def _power_scale(milp: Milp, dc: str) -> tuple[float, float]:
    quota = milp.inst.catalog.datacenters[dc].power_quota_kw
    return 1 / max(quota, smallest_rack_kw(milp.inst.catalog, dc)), quota


POWER = Family(
    name="power", unit="kW", targets="datacenter",
    rows=Rows(add_power, ("Power",)),
    bounds=Bound(power_bound, set_power_bound),
    labels=Labels(N_("power"), N_("power at {name}, days {span}: {used} of {limit} kW")),
    slack=elastic.power_slacks,
    binding=binding.power_binding,
    relax=Relax("each", limit=lambda problem, catalog, dc: catalog.datacenters[dc].power_quota_kw,
                edits=lambda a, dc, horizon: [f"{row_path('datacenters', 'datacenter', dc)}.power_quota_kw+={_int(a)}"],
                words=lambda a, dc, horizon, unit: f"{_int(a):,} kW more at {dc}",
                over=elastic.power_over),
    lever=_power_lever,
    lost=Lost("power", scale=_power_scale,
              words=lambda milp, dc, amount, limit: (f"site quota at {dc}: needs {limit + amount:,.0f} kW, "
                                                     f"{limit:,.0f} kW available")),
    verify=_Verifier._power,
)


# --- availability (offers' stock) ----------------------------------------------------------

def _availability_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    n = 1 if amount is None else amount
    return Step([f"{row_path('offers', 'offer', target)}.max_nodes+={n}"], f"+{n} {_plural(n, 'node')} of {target}"
                if amount is not None else f"+1 node of {target}")


def _stock_scale(milp: Milp, offer: str) -> tuple[float, float]:
    cap = milp.inst.catalog.offers[offer].max_nodes
    return 1 / cap, cap


AVAILABILITY = Family(
    name="availability", unit="nodes", targets="offer",
    rows=Rows(add_availability, ("Availability", "Stock")),
    bounds=Bound(stock_bound, set_stock_bound),
    labels=Labels(N_("availability"), N_("availability of {name}, days {span}: all {limit} nodes")),
    slack=elastic.stock_slacks,
    binding=binding.availability_binding,
    relax=Relax("together", limit=lambda problem, catalog, offer: catalog.offers[offer].max_nodes,
                edits=lambda a, offer, horizon: [f"{row_path('offers', 'offer', offer)}.max_nodes+={_int(a)}"],
                words=lambda a, offer, horizon, unit: f"{_int(a)} more {_plural(a, 'node')} of {offer}",
                over=elastic.stock_over),
    lever=_availability_lever,
    lost=Lost("availability", scale=_stock_scale,
              words=lambda milp, offer, amount, limit: (f"{offer} has {limit:,.0f} nodes; the plan forced onto it "
                                                        f"needs {limit + _ceil(amount):,.0f} at once")),
    verify=_Verifier._availability,
)


def _ceil(x: float) -> int:
    return math.ceil(x - TOL)


# --- deadline (a job's work inside its window) ----------------------------------------------

def _deadline_edits(a: float, target: str, horizon: int | None) -> list[str]:
    return [f"jobs[*].deadline_days+={_int(a)}", *([f"horizon_days={horizon}"] if horizon is not None else [])]


def _deadline_words(a: float, target: str, horizon: int | None, unit: str) -> str:
    text = f"{_int(a)} more {_plural(a, 'day')} on every deadline"
    if horizon is not None:  # a deadline past the horizon is rejected as input
        text += f" (and the horizon to {horizon} days)"
    return text


def _deadline_lever(problem: Problem, catalog: Catalog, name: str, amount: float | None = None) -> Step:
    """One more period (a day, or 5 days on long plans) on a job's deadline, by default.

    Why a period, and the period length pinned when the horizon must grow: a job runs
    only in the periods wholly inside its window, so one more day on a 5-day grid
    adds nothing but can move the horizon, which reshapes the last period; and a
    horizon grown past 120 days would switch the whole plan to 5-day periods. A
    reviewer saw "+1 day on pretrain-30b's deadline" cost +1,750 CNY on hybrid-burst:
    the horizon 217 → 218 alone cost 57,936 (its deadline of 217 then no longer
    ended a whole period)."""
    job = next(j for j in problem.jobs if j.name == name)
    step = problem.effective_period_days if amount is None else int(amount)
    edits = [f"{row_path('jobs', 'name', name)}.deadline_days+={step}"]
    if amount is None:
        days = "1 day" if step == 1 else f"{step} days (one period)"
    else:
        days = f"{step} {_plural(step, 'day')}"
    if job.deadline_days + step > problem.horizon_days:
        edits += [f"horizon_days={job.deadline_days + step}"]
        edits += [f"period_days={problem.effective_period_days}"] if problem.periods == "uniform" else []
        return Step(edits, f"+{days} on {name}'s deadline and the horizon")
    return Step(edits, f"+{days} on {name}'s deadline")


def _work_scale(milp: Milp, job: str) -> tuple[float, float]:
    need = asked_work(milp, job)  # what the rows ask (the words rescale to the job's own)
    return WORK_WEIGHT / max(need, TOL), need


def _unfinished_words(milp: Milp, name: str, amount: float, limit: float) -> str:
    job = next(j for j in milp.inst.problem.jobs if j.name == name)
    own = milp.inst.required[name]  # the rows may ask a tiny job more (solver.milp.work.asked_work)
    undone = amount * own / limit if limit > 0 else amount
    return (f"cannot finish {name} by day {job.deadline_days} at any size: "
            f"{eflop(undone)} of {eflop(own)} EFLOP left undone")


def eflop(x: float) -> str:
    """EFLOP as the tables write them; a job below one EFLOP keeps two significant digits."""
    return f"{x:,.0f}" if x >= 1 else f"{x:.2g}"


DEADLINE = Family(
    name="deadline", unit="days", targets="job",
    rows=Rows(add_work, ("Work",)),
    bounds=Bound(deadline_bound, set_deadline_bound),
    labels=Labels(N_("deadline"), N_("deadline of {name}: runs until day {limit}")),
    slack=elastic.work_slacks,
    binding=binding.deadline_binding,
    relax=Relax("days", limit=lambda problem, catalog, target: max(j.deadline_days for j in problem.jobs),
                edits=_deadline_edits, words=_deadline_words,
                over=NotApplicable("days change the periods and the jobs' windows: no linear slack, "
                                   "a search over whole days instead")),
    lever=_deadline_lever,
    lost=Lost("deadline", scale=_work_scale, words=_unfinished_words),
    verify=_Verifier._assignments,   # each assignment inside its job's window; the work done by then
)


# --- vendor count (a frontier's ε; no problem writes one) -----------------------------------

VENDORS = Family(
    name="vendors", unit="vendors", targets="vendor",
    rows=Rows(add_vendor_count, ("Frontier-Vendor", "Frontier-Vendors")),
    bounds=Bound(vendor_bound, set_vendor_bound),
    labels=Labels(N_("vendors"), NotApplicable("no plan runs into a vendor count it was not asked for")),
    slack=NotApplicable("a frontier's ε, set on the count row; no analysis stretches it"),
    binding=NotApplicable("no problem writes a vendor count: a plan cannot run into one"),
    relax=NotApplicable("not a written limit, so never the cause of an infeasible problem"),
    lever=NotApplicable("the frontier sweeps ε itself"),
    lost=NotApplicable("a runner-up is forced onto one vendor's offers; the count is not asked"),
    verify=vendors_rented,   # the frontier checks its ε on the plan's vendors
)


# --- spot work (a frontier's ε; no problem writes one) ---------------------------------------

SPOT = Family(
    name="spot", unit="EFLOP", targets="spot work",
    rows=Rows(add_spot_cap, ("Frontier-Spot",)),
    bounds=Bound(spot_bound, set_spot_bound),
    labels=Labels(N_("spot"), NotApplicable("no plan runs into a spot share it was not asked for")),
    slack=NotApplicable("a frontier's ε, set on its row; no analysis stretches it"),
    binding=NotApplicable("no problem writes a spot share: a plan cannot run into one"),
    relax=NotApplicable("not a written limit, so never the cause of an infeasible problem"),
    lever=NotApplicable("the frontier sweeps ε itself"),
    lost=NotApplicable("a runner-up is forced onto offers, not onto a share of spot work"),
    verify=spot_work,   # the frontier checks its ε on the plan's work on spot offers
)


FAMILIES: tuple[Family, ...] = (BUDGET, POWER, AVAILABILITY, DEADLINE, VENDORS, SPOT)
"""In the order a plan lists its binding limits."""

BINDING_KINDS: tuple[str, ...] = tuple(f.name for f in FAMILIES if not isinstance(f.binding, NotApplicable))
"""What `Binding.kind` may be: the families a plan can run into (checked in binding_limits;
solver.model sits below this table, so the model cannot name the list itself)."""

STRUCTURAL = ("Capacity", "Use", "Site", "Data", "Storage", "Finish", "Order", "Cover", "Pack", "Discount", "Prefer")
"""Prefixes of the rows that shape the model but are no limit a user could be offered more
of (capacity bookkeeping, assignment, site choice, data, packing, cuts). A new row prefix
must be either a family above or listed here, by decision (tests/milp/test_registry.py)."""


def family(name: str) -> Family:
    """The family of a Binding, Relaxation or Lever kind."""
    for fam in FAMILIES:
        if fam.name == name:
            return fam
    raise KeyError(f"no constraint family {name!r}")


def family_of_row(name: str) -> Family | None:
    """The registered family whose rows carry this name (None: a structural or an analysis's row)."""
    for fam in FAMILIES:
        if any(name == p or name.startswith(p + "-") for p in fam.rows.prefixes):
            return fam
    return None


def binding_limits(sol, jobs: list[JobResult]) -> list[Binding]:
    """Every family's binding limits of the solved plan, in FAMILIES order; each of its own kind."""
    out = []
    for fam in FAMILIES:
        if not isinstance(fam.binding, NotApplicable):
            found = fam.binding(sol, jobs)
            check_kinds(found, fam.name)
            out += found
    return out


def check_kinds(bindings: list[Binding], kind: str) -> None:
    """ValueError unless every binding is of `kind`, one of BINDING_KINDS (Binding.kind's validator:
    a reader writing another family's kind, or a kind no family has, would mislabel a report)."""
    wrong = [b.kind for b in bindings if b.kind != kind or kind not in BINDING_KINDS]
    if wrong:
        raise ValueError(f"binding limits of kind {wrong[0]!r} read by the {kind!r} family "
                         f"(kinds: {', '.join(BINDING_KINDS)})")


# --- completeness: what tests/milp/test_registry.py asserts ----------------------------------

def missing_parts(fam: Family) -> list[str]:
    """The parts the family lacks: None or empty where a part (or a part's part) belongs,
    a NotApplicable without its reason, a prefix-less Rows."""
    out = []

    def walk(obj, path: str) -> None:
        for f in fields(obj):
            value, where = getattr(obj, f.name), f"{path}{f.name}"
            if isinstance(value, NotApplicable):
                if not value.why.strip():
                    out.append(f"{where} (NotApplicable without a reason)")
            elif is_dataclass(value):
                walk(value, where + ".")
            elif value is None or value == "" or value == ():
                out.append(where)
            elif f.type.startswith(("Callable", "Callable[")) and not callable(value):
                out.append(f"{where} (not callable)")

    walk(fam, f"{fam.name or '?'}.")
    return out


def unregistered_rows(milp: Milp) -> list[str]:
    """Rows whose name begins with neither a family's prefix nor a STRUCTURAL one."""
    return [name for name in milp.rows
            if family_of_row(name) is None and name.split("-", 1)[0] not in STRUCTURAL]


def unkeyed_rows(milp: Milp) -> list[str]:
    """Rows named as a family's but not kept under that family's RowKey (so no analysis finds them)."""
    keyed = {id(row): key.family for key, row in milp.keyed.items()}
    out = []
    for name, row in milp.rows.items():
        fam = family_of_row(name)
        if fam is not None and keyed.get(id(row)) != fam.name:
            out.append(name)
    return out

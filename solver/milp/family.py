"""The parts of a constraint family (solver.milp.registry): what every limit a user can relax
must say about itself, one dataclass per part.

Why a module of its own: each family's module (solver/milp/families/<family>.py) builds its
`Family` from these parts, and the registry collects the families; with the part types here,
below both, the families and the registry import in one direction only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from solver.milp.core import Milp, RowKey
from solver.milp.instance import Instance
from solver.model.catalog import Catalog
from solver.model.plan import Binding
from solver.model.problem import Problem

NODES, WORK, COSTS, ON_DEMAND = "nodes", "work", "costs", "on demand"
BUILT = (NODES, WORK, COSTS, ON_DEMAND)
"""When solver.milp.build adds a family's rows (Rows.built): right after the node variables
(NODES), after the replicas and the fabric choices (WORK), after every cost term (COSTS), or
never: the family's bound setter adds them on the first value it is given (ON_DEMAND). Why
stages, not "anywhere": the rows' order in the model moves HiGHS' path, and with it which of
several equally cheap plans comes out; each stage keeps the place its rows always had."""


@dataclass(frozen=True)
class NotApplicable:
    """A part a family has not, and why (a reason is required: leaving a part out is a decision)."""

    why: str


@dataclass(frozen=True)
class Rows:
    """The family's rows: what adds them, when (`built`, one of BUILT: build_milp calls
    `add(milp)` at that stage; ON_DEMAND: the bound setter adds them), and their names'
    beginnings (`<prefix>` or `<prefix>-…`); every such row is also kept under a RowKey."""

    add: Callable
    prefixes: tuple[str, ...]
    built: str

    def __post_init__(self) -> None:
        if self.built not in BUILT:
            raise ValueError(f"Rows.built {self.built!r}: one of {', '.join(BUILT)}")


@dataclass(frozen=True)
class Relax:
    """How the infeasibility explanation (solver.analysis.explain) relaxes the limit.

    how:   the strategy that finds its smallest lone relaxation — "days" (a search over
           whole days, each probe a full solve), "without" (the cheapest plan with the limit
           dropped: a limit on the plan's cost), "each" (an elastic solve per target), "together"
           (one elastic solve with slack on every target, on a model built with raised caps).
    limit: the written limit of a target (problem, catalog, target) → amount, for "+x %";
           None: the problem writes no such limit.
    edits: (amount, target, horizon_days or None) → what-if edits making that change.
    words: (amount, target, horizon_days or None, unit) → the same change in words, naming
           every edit; `unit` is the family's unit in the problem (Family.unit_in).
    over:  the elastic plan's use past each written limit (solver.milp.elastic's signature).
    says:  the explanation's sentences about the family, by what they say (explain.PHRASES
           names the keys each strategy needs; `{…}` fields are filled by the strategy):
           "noun" (a combination's list), "target" (one line for every target), "smallest"
           (what could not be determined), "alone" (it cannot help alone), and the strategy's own.
    where: "each": the targets an Instance limits → whether the model has a variable there
           (a target no job can use is named, but needs no solve to rule out).
    lift:  "without": the problem with the limit dropped.
    raised: "together": (catalog, factor) → (the catalog with every target's limit × factor,
           {target: its written limit}).
    """

    how: str
    limit: Callable[[Problem, Catalog, str], float | None]
    edits: Callable[[float, str, int | None], list[str]]
    words: Callable[[float, str, int | None, str], str]
    over: Callable | NotApplicable
    says: dict[str, str]
    where: Callable[[Instance], dict[str, bool]] | NotApplicable
    lift: Callable[[Problem], Problem] | NotApplicable
    raised: Callable[[Catalog, int], tuple[Catalog, dict[str, int]]] | NotApplicable


@dataclass(frozen=True)
class Step:
    """A lever: the edits relaxing a limit by `amount` (None: one meaningful unit), in words,
    and `amount`, how far it moves the limit in the family's unit: a caller holding the built
    model probes `family.set_bound(milp, target, family.bound(milp, target) + amount)` instead
    of rebuilding from the edits, where the setter takes that value (ValueError where not).
    None: the lever is more than its bound moved (a later deadline may move the horizon and
    the periods), so only the edits say it."""

    edits: list[str]
    words: str
    amount: float | None = None


@dataclass(frozen=True)
class Lost:
    """What the runners-up (solver.analysis.why) say when this family's slack is what a forced
    plan needs most: the code, the slack's weight and written limit, and the words.

    without: the forced plan solved again with this limit lifted (its bound None), and what
             the runner-up then says after its cost: (problem, that plan's cost) → text.
             NotApplicable: the slack's words say it all.
    window:  the limit is the job's own time window, which an offer's lead time shortens:
             why checks whether the lead time is the cause and says so."""

    code: str
    scale: Callable[[Milp, str], tuple[float, float]]        # (weight per unit of slack, written limit)
    words: Callable[[Milp, str, float, float], str]          # (milp, target, slack used, limit) → text
    without: Callable[[Problem, float], str] | NotApplicable
    window: bool


@dataclass(frozen=True)
class Deal:
    """negotiate's lever (solver.analysis.negotiate_levers): `amount` more of the limit at each
    target the plan runs into, valued by one probe of negotiate's model.

    option:  negotiate's option that gives the amount ("kw": --kw, "nodes": --nodes).
    targets: (plan, milp, values, written catalog) → the targets the plan uses all of, in order
             (`values`: the plan's value of each model variable, by index; the model may be
             built with more room than written, so a reading of its own rows may not do).
    hold:    (milp, target, value) → undo: the limit at `value` on the built model, which must
             have room for it (ValueError where not: the model's preprocessing was done with
             less); periods an analysis shut stay shut.
    no_room: the note for targets the model has no room for ({targets}, {amount}).
    """

    option: str
    targets: Callable[..., list[str]]
    hold: Callable[[Milp, str, float], Callable[[], None]]
    no_room: str


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
    written: (milp, problem, catalog) → (problem, catalog) with this family's written rule as
         the model now holds it, so the verifier checks a re-bounded model's plan against what
         it was solved under (solver.milp.registry.as_bounded); NotApplicable where the setter
         cannot loosen a written rule (a plan of the model then meets the problem as written).
    """

    get: Callable[[Milp, str], float | None]
    set: Callable[[Milp, str, float | None], None]
    written: Callable[[Milp, Problem, Catalog], tuple[Problem, Catalog]] | NotApplicable


@dataclass(frozen=True)
class Labels:
    """The words a report shows for the family, marked with solver.i18n.N_ (Babel extracts
    them; the report translates them with `_` where it shows them).

    name:    the kind in words (a binding limit's, a relaxation's, a lever's).
    binding: a binding limit's text written from its numbers ({name} {span} {used} {limit}
             {unit}), for a language other than the plan's English `Binding.text`.
    more:    (amount, target, unit) → "that much more of it" in the active language (a
             relaxation's part in the infeasibility explanation; a function, so that plural
             forms go through `ngettext`, which Babel extracts as one entry).
    deal:    (amount) → negotiate's lever in the active language ("+5 kW", "+2 nodes").
    """

    name: str
    binding: str | NotApplicable
    more: Callable[[float, str, str], str] | NotApplicable
    deal: Callable[[float], str] | NotApplicable


MONEY = "money"
"""Family.unit of a limit in money: the problem's currency, whatever it is (Family.unit_in)."""


@dataclass(frozen=True)
class Family:
    """One limit a user can relax, with every part of it.

    `name` is the kind everywhere: `Binding.kind` (when `binding` applies: BINDING_KINDS),
    explain's Relaxation.kind, why's and negotiate's Lever.kind, the first field of its RowKeys.
    """

    name: str                   # Binding.kind, explain's Relaxation.kind, why's and negotiate's Lever.kind
    order: int                  # its place in FAMILIES (ascending): where its binding limits come in a plan
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
    deal: Deal | NotApplicable                # negotiate's lever on its one model
    verify: Callable | NotApplicable          # (verifier) → None: solver.verify's check of the written rule

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


def whole(x: float) -> int:
    """An amount as the whole number the words and edits write."""
    return int(round(x))


def plural(n: float, word: str) -> str:
    return f"{word}{'s' if n != 1 else ''}"


def row_limit(milp: Milp, key: RowKey, what: str, target: str) -> float | None:
    """The upper bound of a one-target family's optional row (budget, spot work, vendor count) on
    a built model; None when the row is missing or unbounded. `target` must be "" (`what` names
    the limit in the error)."""
    if target:
        raise KeyError(f"{what} has one target, \"\", not {target!r}")
    row = milp.keyed.get(key)
    return None if row is None or math.isinf(row.upper_bound) else row.upper_bound


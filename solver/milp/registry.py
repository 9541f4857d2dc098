"""The constraint families a user can relax, each listed once with every part of it.

Why: a limit's knowledge — its rows, its slack, whether a plan runs into it, how the
infeasibility explanation relaxes and words it, what one more unit of it is worth (why's
lever, negotiate's deal), how the verifier checks it, its unit and words — used to be spread
over eleven files keyed by strings, so a family added to build.py but forgotten in one of
them failed nothing: it was silently missing from an explanation. Here each family is one
`Family` (solver.milp.family), every field required, defined in its own module
(solver/milp/families/<family>.py) and found there (`discover`); a part that does not apply
is said so in words (`NotApplicable`), never left out. build, the verifier, explain, why,
negotiate, the frontiers' limits (solver.limits) and the reports loop over `FAMILIES` and ask
the family; tests/milp/test_registry.py fails when a family lacks a part (`missing_parts`),
has one defined outside its module (`foreign_parts`: another family's rule), lacks what a
consumer asks of a part it has (`inconsistent_parts`), or when a built model has rows of a
family that is not registered (or listed in `STRUCTURAL`).

Why in solver/milp: binding limits are read while a plan is extracted (solver.milp.extract),
below the analyses, so the table must sit at the MILP's level or lower. Every part only
needs the MILP and the models (solver.model: a lever or a relaxation is worded as what-if
edits with solver.model.paths.row_path). The verifier (solver.verify) sits above: it calls
each family's check through this table, and a check reads the plan through the verifier,
never the model. Imports stay one-way: model, estimate → milp (families, then this table)
→ verify → engine → api → analysis. Analyses reach the table through solver.api.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import fields, is_dataclass

from solver.milp import families as _families
from solver.milp.core import Milp
from solver.milp.family import (
    BUILT, COSTS, MONEY, NODES, ON_DEMAND, WORK, Bound, Deal, Family, Labels, Lost, NotApplicable, Relax, Rows, Step,
)
from solver.model.catalog import Catalog
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem

__all__ = [
    "FAMILIES", "BINDING_KINDS", "STRUCTURAL", "BUDGET", "POWER", "AVAILABILITY", "DEADLINE", "VENDORS", "SPOT",
    "family", "family_of_row", "as_bounded", "binding_limits", "check_kinds", "discover", "missing_parts",
    "foreign_parts", "inconsistent_parts",
    "unregistered_rows", "unkeyed_rows",
    # the parts (solver.milp.family), for callers that name them
    "BUILT", "NODES", "WORK", "COSTS", "ON_DEMAND", "MONEY",
    "Bound", "Deal", "Family", "Labels", "Lost", "NotApplicable", "Relax", "Rows", "Step",
]


def discover(paths=None, package: str = _families.__name__) -> tuple[Family, ...]:
    """Every module's FAMILY in the package (solver/milp/families by default), by Family.order.

    Why found, not listed: a family is its module, its test and the verifier's check; a list
    here to keep in step would be a fourth place to forget (the families' consumers, build
    and the reports included, all read FAMILIES)."""
    found = []
    for info in sorted(pkgutil.iter_modules(paths or _families.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        fam = getattr(module, "FAMILY", None)
        if not isinstance(fam, Family):
            raise TypeError(f"{module.__name__} is in the families' package but has no FAMILY")
        found.append(fam)
    return tuple(sorted(found, key=lambda f: f.order))


FAMILIES: tuple[Family, ...] = discover()
"""Every family, in the order a plan lists its binding limits (Family.order)."""

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


BUDGET, POWER, AVAILABILITY, DEADLINE, VENDORS, SPOT = (
    family(n) for n in ("budget", "power", "availability", "deadline", "vendors", "spot"))
"""The families callers name (a family added later is reached by family(name) alone)."""


def as_bounded(milp: Milp, problem: Problem, catalog: Catalog) -> tuple[Problem, Catalog]:
    """The problem and catalog a re-bounded model stands for: each family's written rule as the
    model now holds it (Bound.written; the budget, a site's power quota), for the verifier.

    Why from the model: what a plan is checked against is generated from the change itself,
    never parsed back from edit text."""
    for fam in FAMILIES:
        if not isinstance(fam.bounds.written, NotApplicable):
            problem, catalog = fam.bounds.written(milp, problem, catalog)
    return problem, catalog


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
            elif value is None or value == "" or value == () or value == {}:
                out.append(where)
            elif f.type.startswith(("Callable", "Callable[")) and not callable(value):
                out.append(f"{where} (not callable)")

    walk(fam, f"{fam.name or '?'}.")
    return out


def foreign_parts(fam: Family) -> list[str]:
    """The parts not defined in the family's own module (the module its rows are added by):
    each `part (module)`. A family's slack, reader, lever, words and check pointing at another
    family's (or at a shared module's) function would make two limits one, or a limit no one owns."""
    home = getattr(fam.rows.add, "__module__", None)
    out = []

    def walk(obj, path: str) -> None:
        for f in fields(obj):
            value, where = getattr(obj, f.name), f"{path}{f.name}"
            if is_dataclass(value) and not isinstance(value, NotApplicable):
                walk(value, where + ".")
            elif callable(value) and getattr(value, "__module__", None) != home:
                out.append(f"{where} ({getattr(value, '__module__', '?')})")

    walk(fam, f"{fam.name}.")
    return out


def inconsistent_parts(fam: Family, phrases: dict[str, tuple[str, ...]], parts: dict[str, tuple[str, ...]]) -> list[str]:
    """The parts a family's consumers ask that it lacks although it has the part they follow from:
    the sentences (`phrases`: strategy → Relax.says keys) and Relax parts (`parts`: strategy →
    names) of its explanation strategy (solver.analysis.explain.PHRASES and PARTS, passed in: the
    registry sits below the analyses), a written limit for why's and negotiate's levers, and the
    words a report shows for each part it has."""
    out = []
    relax = None if isinstance(fam.relax, NotApplicable) else fam.relax
    if relax is not None:
        out += [f"{fam.name}.relax.says lacks {k!r} (explain's \"{relax.how}\" words it)"
                for k in phrases.get(relax.how, ()) if k not in relax.says]
        out += [f"{fam.name}.relax.{p} (explain's \"{relax.how}\" asks it)"
                for p in parts.get(relax.how, ()) if isinstance(getattr(relax, p), NotApplicable)]
        if isinstance(fam.labels.more, NotApplicable):
            out.append(f"{fam.name}.labels.more (a relaxation is shown in words)")
    if not isinstance(fam.lever, NotApplicable) and relax is None:
        out.append(f"{fam.name}.relax (why's lever model holds a lever back at its written limit)")
    if not isinstance(fam.deal, NotApplicable):
        if relax is None or isinstance(fam.lever, NotApplicable):
            out.append(f"{fam.name}.relax and lever (negotiate's lever is its written limit + an amount, as edits)")
        if isinstance(fam.labels.deal, NotApplicable):
            out.append(f"{fam.name}.labels.deal (negotiate's lever is shown in words)")
    if not isinstance(fam.binding, NotApplicable) and isinstance(fam.labels.binding, NotApplicable):
        out.append(f"{fam.name}.labels.binding (a binding limit is shown in words)")
    if (relax is not None or not isinstance(fam.binding, NotApplicable)) and isinstance(fam.verify, NotApplicable):
        out.append(f"{fam.name}.verify (a written limit the plan may run into is checked by the verifier)")
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

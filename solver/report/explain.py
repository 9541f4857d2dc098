"""The infeasibility explanation's lines (solver.analysis.explain) as people read them.

Why here: the explanation's `lines` are English sentences, and they are part of `--json`,
which never changes with the language. A Chinese reader gets the same relaxations written
from their numbers (each part's kind, amount, unit and target); an English one the lines
as they are. Notes (time ran out, …) stay as written.
"""

from __future__ import annotations

from solver.i18n import _, is_zh
from solver.report.words import family_labels, limit_name


def explanation_lines(explanation: dict | None) -> list[str]:
    """The explanation's lines in the active language (`explanation` as Explanation.to_dict gives it)."""
    explanation = explanation or {}
    lines = list(explanation.get("lines", []))
    if not is_zh() or "alone" not in explanation:
        return lines
    alone = explanation["alone"]
    helping = [r for r in alone if r.get("parts")]
    out = []
    if helping:
        out.append(_("needs {what}").format(what=_(", or ").join(_flagged(r) for r in helping)))
    elif all(r.get("determined", True) for r in alone):
        out.append(_("no single limit relaxed alone makes it feasible"))
    out += [_cannot(r) for r in alone if not r.get("parts")]
    if explanation.get("combination"):
        out.append(_("cheapest combination (smallest change relative to each limit): {what}").format(
            what=_flagged(explanation["combination"], percent=True)))
    return out + list(explanation.get("notes", []))


def _cannot(rel: dict) -> str:
    kind = limit_name(rel.get("kind", ""))
    if not rel.get("determined", True):
        return _("{kind}: not determined in the time given").format(kind=kind)
    return _("more {kind} alone does not make it feasible").format(kind=kind)


def _flagged(rel: dict, percent: bool = False) -> str:
    text = _(" and ").join(part_words(p, percent=percent) for p in rel.get("parts", []))
    if rel.get("verified"):
        return text
    return text + (_(" (re-solved: still infeasible)") if rel.get("refuted") else _(" (not verified: out of time)"))


def part_words(part: dict, percent: bool = False) -> str:
    """One limit's change (`1 more day on every deadline`, `10 kW more at Shunyi`) from its numbers."""
    amount, kind, target = part["amount"], part["kind"], part["target"]
    more = family_labels(kind).more if family_labels(kind) is not None else None
    if callable(more):  # the family's own words (solver.milp.families)
        text = more(amount, target, part["unit"])
    else:
        text = f"{limit_name(kind)} +{amount:g} {part['unit']} ({target})"
    if part.get("horizon_days") is not None:  # a later deadline past the horizon moves the horizon too
        text += _(" (and the horizon to {days} days)").format(days=part["horizon_days"])
    if percent and part.get("relative") is not None:
        text += f" (+{part['relative']:.1%})"
    return text

"""Terminal rendering of `why`: each job's runners-up with the reason each lost, and what
relaxing each binding limit by one unit is worth (re-solve deltas). At most 100 columns."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.why import Why
from solver.api import FAMILIES, NotApplicable
from solver.i18n import _, money_unit
from solver.report.words import limit_name, reason_name
from solver.report.fit import keep_whole


def render_why(result: Why, console: Console) -> None:
    unit = money_unit(result.currency)
    console.print(heading(result, unit))
    for jw in result.jobs:
        used = ", ".join(jw.used) or _("nothing")
        shown = len(jw.alternatives)
        more = _(", best {shown} of the {n} re-solved with a plan").format(shown=shown, n=jw.feasible) if jw.feasible > shown else ""
        table = Table(title=_("Job {job}: uses {used}; runners-up by forced cost ({unit}){more}").format(
                          job=escape(jw.job), used=escape(used), unit=unit, more=more),
                      header_style="bold", title_justify="left", expand=False)
        table.add_column(_("alternative"), overflow="fold", max_width=28)
        table.add_column(_("forced cost"), justify="right", no_wrap=True)
        table.add_column(_("vs plan"), justify="right", no_wrap=True)
        table.add_column(_("lost on"), no_wrap=True)
        table.add_column(_("why"), overflow="fold")
        for alt in jw.alternatives:
            cost = f"{alt.cost:,.0f}" if alt.cost is not None else _("not determined")
            delta = f"{alt.delta:+,.0f}" if alt.delta is not None else ""
            table.add_row(escape(alt.label), cost, delta, reason_name(alt.code), escape(alt.text))
        if not jw.alternatives:
            table.add_row(_("none"), "", "", "", _("no other GPU type × mode × site × vendor has a plan for this job"))
        console.print(keep_whole(table, console.width))
        _apart(console, _("No plan when the job is forced onto it ({n})").format(n=len(jw.infeasible)), jw.infeasible)
        _apart(console, _("Left out before solving ({n})").format(n=len(jw.excluded)), jw.excluded)
    if result.binding:
        table = Table(title=_("Binding limits: value of one more unit (re-solve delta, {unit})").format(unit=unit),
                      header_style="bold",
                      title_justify="left")
        table.add_column(_("limit"), overflow="fold")
        table.add_column(_("slack"), justify="right", no_wrap=True)
        table.add_column(_("relaxed by"), overflow="fold", max_width=24)
        table.add_column(_("cost then"), justify="right", no_wrap=True)
        table.add_column(_("delta"), justify="right", no_wrap=True)
        for b in result.binding:
            cost, delta = _lever_cells(b, result.cost)
            table.add_row(escape(b.text), f"{b.slack:,.4g} {b.unit}", escape(b.relax), cost, delta)
        console.print(keep_whole(table, console.width))
    else:
        console.print(_("binding limits: none (no {limits} limit is tight)").format(limits=_either(_bound_limits())))
    for note in result.notes:
        console.print(_("note: {text}").format(text=escape(note)))


def heading(result: Why, unit: str) -> str:
    """The first line: "optimum" only when the plan's solve proved it (issue 47); a plan the time
    limit stopped is the best found, with the bound that was proven below it."""
    names = {"why": "[bold]why[/]", "problem": escape(result.problem), "cost": f"{result.cost:,.0f}", "unit": unit}
    if result.status == "optimal":
        return _("{why} {problem}: optimum {cost} {unit}; runners-up are re-solved with the job forced onto "
                 "them").format(**names)
    bound = result.cost if result.lower_bound is None else result.lower_bound
    gap = (result.cost - bound) / result.cost if result.cost else 0.0
    return _("{why} {problem}: best plan found {cost} {unit} (proven bound {bound}, gap {gap}; not proven "
             "optimal); runners-up are re-solved with the job forced onto them").format(
                 bound=f"{bound:,.0f}", gap=f"{gap:.2%}", **names)


def _lever_cells(b, base: float) -> tuple[str, str]:
    """A lever's cost and delta: proven, or the interval from the solve's bound to the plan it
    found when the time ran out first (issue 34: every figure proven or an interval)."""
    if b.cost is not None:
        return f"{b.cost:,.0f}", (f"{b.delta:+,.0f}" if b.delta is not None else "—")
    if b.high is not None and b.low is not None:
        return f"{b.low:,.0f}–{b.high:,.0f}", f"{b.low - base:+,.0f}…{b.high - base:+,.0f}"
    return (_("infeasible") if b.determined else _("not determined")), "—"


def _apart(console: Console, title: str, alternatives: list) -> None:
    """Options with no forced cost, each with the reason: never ranked among the runners-up."""
    if not alternatives:
        return
    table = Table(title=title, header_style="bold", title_justify="left", expand=False)
    table.add_column(_("option"), overflow="fold", max_width=34)
    table.add_column(_("reason"), no_wrap=True)
    table.add_column(_("why"), overflow="fold")
    for alt in alternatives:
        table.add_row(escape(alt.label), reason_name(alt.code), escape(alt.text))
    console.print(keep_whole(table, console.width))


def _bound_limits() -> list[str]:
    """The limits a plan can run into (each family with a binding reader), in words."""
    return [limit_name(f.name) for f in FAMILIES if not isinstance(f.binding, NotApplicable)]


def _either(names: list[str]) -> str:
    """"a, b or c" in the active language."""
    if len(names) < 2:
        return "".join(names)
    return _("{first} or {last}").format(first=_(", ").join(names[:-1]), last=names[-1])

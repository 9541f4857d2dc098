"""Terminal rendering of a what-if: the edits, both costs, what moved, what binds."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.whatif import Outcome, WhatIf
from solver.i18n import N_, _, money_unit
from solver.report.explain import explanation_lines
from solver.report.words import binding_text
from solver.report.fit import keep_whole


def render_whatif(result: WhatIf, console: Console) -> None:
    edits = Table(title=_("Edits"), show_header=True, header_style="bold")
    for col in (N_("field"), N_("was"), N_("now")):
        edits.add_column(_(col))
    for c in result.changes:
        edits.add_row(escape(c.where), escape(_value(c.old)), escape(_value(c.new)))
    console.print(keep_whole(edits, console.width))
    console.print(_("baseline: {line}").format(line=_line(result.baseline, result.currency)))
    console.print(_("scenario: {line}").format(line=_line(result.scenario, result.currency)))
    for side, outcome in ((N_("baseline's software stack:"), result.baseline),
                          (N_("scenario's software stack:"), result.scenario)):
        if outcome.plan is not None and outcome.plan.stack_switch is not None:
            console.print("[bold yellow]" + _(side) + f"[/] {escape(outcome.plan.stack_switch.text)}")
    for text in _stack_warnings(result):
        console.print("[yellow]" + _("warning:") + f"[/] {escape(text)}")
    if not result.changed and result.scenario.plan is not None and result.scenario.plan.status != "optimal":
        console.print("[bold]" + _("the baseline plan still holds") + "[/]" +
                      _(": it meets the edits, so the edited problem costs at most {cost} {unit}; a cheaper plan "
                        "is not ruled out (not proven optimal)").format(
                          cost=f"{result.scenario.plan.total_cost:,.0f}", unit=money_unit(result.currency)))
    elif not result.changed:
        console.print("[bold]" + _("no change") + "[/]" +
                      _(": the baseline plan still holds under the edits and nothing is cheaper"))
    elif result.same_cost:
        console.print("[bold]" + _("same cost, different plan") + "[/]" +
                      _(": the baseline plan breaks the edits; another plan of the same cost meets them"))
    if result.delta is not None and result.changed:
        base = result.baseline.cost or 1.0
        said = _("the edits save {amount} {unit} ({share})") if result.delta < 0 else \
            _("the edits cost {amount} {unit} ({share})")
        console.print("[bold]" + said.format(amount=f"{abs(result.delta):,.0f}", unit=money_unit(result.currency),
                                             share=f"{abs(result.delta) / base:.1%}") + "[/]")
        if not result.proven and result.delta_interval is not None:  # a side not proven optimal
            low, high = result.delta_interval
            console.print(_("between the two optima: {low} to {high} {unit} (not proven: from bound to plan)").format(
                low=f"{low:+,.0f}", high=f"{high:+,.0f}", unit=money_unit(result.currency)))
    moved = result.mix_changes()
    if moved:
        table = Table(title=_("Mix (GPU-days rented)"), header_style="bold")
        for col, justify in ((N_("vendor/GPU/mode @ site"), "left"), (N_("baseline"), "right"),
                             (N_("scenario"), "right")):
            table.add_column(_(col), justify=justify)
        for line, before, after in moved:
            table.add_row(escape(line), f"{before:,.0f}", f"{after:,.0f}")
        console.print(keep_whole(table, console.width))
    new, gone = result.binding_changes()
    words = {b.text: binding_text(b) for o in (result.baseline, result.scenario) if o.plan for b in o.plan.binding}
    for text in new:
        console.print(_("now binds: {text}").format(text=escape(words.get(text, text))))
    for text in gone:
        console.print(_("no longer binds: {text}").format(text=escape(words.get(text, text))))
    if not new and not gone and result.scenario.plan and result.baseline.plan:
        console.print(_("binding limits unchanged: ")
                      + escape(_("; ").join(binding_text(b) for b in result.scenario.plan.binding) or _("none")))
    elif result.scenario.plan and not result.baseline.plan:  # nothing to be "unchanged" against
        console.print(_("binding limits (the baseline has no plan): ")
                      + escape(_("; ").join(binding_text(b) for b in result.scenario.plan.binding) or _("none")))


def _stack_warnings(result: WhatIf) -> list[str]:
    """The scenario's warnings about software stacks (solve prints them for the same edited problem)."""
    plan = result.scenario.plan
    return [w for w in plan.warnings if "software stack" in w] if plan is not None else []


def _line(o: Outcome, currency: str) -> str:
    if o.undetermined:  # never "infeasible" without a proof (issue 47)
        low = "" if o.low is None else _("; the optimum is at least {low} {unit}").format(
            low=f"{o.low:,.0f}", unit=money_unit(currency))
        return ("[yellow]" + _("not determined") + f"[/] — {escape(o.infeasible or '')}" + low
                + "".join(f"\n  - {escape(r)}" for r in o.reasons))
    if o.plan is None:
        lines = explanation_lines(o.explanation)
        relax = ("\n[bold]" + _("smallest relaxations") + "[/] " + _("(each re-solved to check it):")) if lines else ""
        return ("[red]" + _("infeasible") + f"[/] — {escape(o.infeasible or '')}"
                + "".join(f"\n  - {escape(r)}" for r in o.reasons)
                + relax + "".join(f"\n  * {escape(line)}" for line in lines))
    finish = escape(", ".join(_("{job} day {day}").format(job=j.name, day=j.finish_day) for j in o.plan.jobs))
    line = _("{cost} {unit} ({status}); finishes {finish}").format(
        cost=f"{o.plan.total_cost:,.0f}", unit=money_unit(o.plan.currency), status=_(o.plan.status), finish=finish)
    if o.plan.status != "optimal":  # the interval: no plan costs less than the proven bound
        line += _("; the optimum is at least {low} {unit}").format(low=f"{o.plan.lower_bound:,.0f}",
                                                                   unit=money_unit(o.plan.currency))
    return line


def _value(v) -> str:
    """A number the way the costs beside it are written (150,000, not 150000)."""
    if isinstance(v, bool) or v is None:
        return _("not set") if v is None else str(v).lower()
    if isinstance(v, float):
        if abs(v) >= 1e5:  # money and kW: every digit, no exponent (1,269,900, not 1.2699e+06)
            return f"{v:,.2f}".rstrip("0").rstrip(".")
        return f"{v:,.6g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)

"""Terminal rendering of `why`: each job's runners-up with the reason each lost, and what
relaxing each binding limit by one unit is worth (re-solve deltas). At most 100 columns."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.why import Why


def render_why(result: Why, console: Console) -> None:
    console.print(f"[bold]why[/] {escape(result.problem)}: optimum {result.cost:,.0f} {result.currency}; "
                  f"runners-up are re-solved with the job forced onto them")
    for jw in result.jobs:
        used = ", ".join(jw.used) or "nothing"
        shown = len(jw.alternatives)
        more = f", best {shown} of {jw.feasible} with a plan" if jw.feasible > shown else ""
        table = Table(title=f"Job {escape(jw.job)}: uses {escape(used)}; runners-up by forced cost "
                            f"({result.currency}){more}",
                      header_style="bold", title_justify="left", expand=False)
        table.add_column("alternative", overflow="fold", max_width=28)
        table.add_column("forced cost", justify="right", no_wrap=True)
        table.add_column("vs plan", justify="right", no_wrap=True)
        table.add_column("lost on", no_wrap=True)
        table.add_column("why", overflow="fold")
        for alt in jw.alternatives:
            cost = f"{alt.cost:,.0f}" if alt.cost is not None else "not determined"
            delta = f"{alt.delta:+,.0f}" if alt.delta is not None else ""
            table.add_row(escape(alt.label), cost, delta, alt.code, escape(alt.text))
        if not jw.alternatives:
            table.add_row("none", "", "", "", "no other GPU type × mode × site × vendor has a plan for this job")
        console.print(table)
        _apart(console, f"No plan when the job is forced onto it ({len(jw.infeasible)})", jw.infeasible)
        _apart(console, f"Left out before solving ({len(jw.excluded)})", jw.excluded)
    if result.binding:
        table = Table(title=f"Binding limits: value of one more unit (re-solve delta, {result.currency})",
                      header_style="bold",
                      title_justify="left")
        table.add_column("limit", overflow="fold")
        table.add_column("slack", justify="right", no_wrap=True)
        table.add_column("relaxed by", overflow="fold", max_width=24)
        table.add_column("cost then", justify="right", no_wrap=True)
        table.add_column("delta", justify="right", no_wrap=True)
        for b in result.binding:
            cost = f"{b.cost:,.0f}" if b.cost is not None else ("infeasible" if b.determined else "not determined")
            delta = f"{b.delta:+,.0f}" if b.delta is not None else "—"
            table.add_row(escape(b.text), f"{b.slack:,.4g} {b.unit}", escape(b.relax), cost, delta)
        console.print(table)
    else:
        console.print("binding limits: none (no power, stock, budget or deadline limit is tight)")
    for note in result.notes:
        console.print(f"note: {escape(note)}")


def _apart(console: Console, title: str, alternatives: list) -> None:
    """Options with no forced cost, each with the reason: never ranked among the runners-up."""
    if not alternatives:
        return
    table = Table(title=title, header_style="bold", title_justify="left", expand=False)
    table.add_column("option", overflow="fold", max_width=34)
    table.add_column("reason", no_wrap=True)
    table.add_column("why", overflow="fold")
    for alt in alternatives:
        table.add_row(escape(alt.label), alt.code, escape(alt.text))
    console.print(table)

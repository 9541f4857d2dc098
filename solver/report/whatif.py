"""Terminal rendering of a what-if: the edits, both costs, what moved, what binds."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.whatif import Outcome, WhatIf


def render_whatif(result: WhatIf, console: Console) -> None:
    edits = Table(title="Edits", show_header=True, header_style="bold")
    for col in ("field", "was", "now"):
        edits.add_column(col)
    for c in result.changes:
        edits.add_row(escape(c.where), escape(_value(c.old)), escape(_value(c.new)))
    console.print(edits)
    console.print(f"baseline: {_line(result.baseline)}")
    console.print(f"scenario: {_line(result.scenario)}")
    for side, outcome in (("baseline", result.baseline), ("scenario", result.scenario)):
        if outcome.plan is not None and outcome.plan.stack_switch is not None:
            console.print(f"[bold yellow]{side}'s software stack:[/] {escape(outcome.plan.stack_switch.text)}")
    for text in _stack_warnings(result):
        console.print(f"[yellow]warning:[/] {escape(text)}")
    if not result.changed:
        console.print("[bold]no change[/]: the baseline plan still holds under the edits and nothing is cheaper")
    elif result.same_cost:
        console.print("[bold]same cost, different plan[/]: the baseline plan breaks the edits; "
                      "another plan of the same cost meets them")
    if result.delta is not None and result.changed:
        base = result.baseline.cost or 1.0
        word = "save" if result.delta < 0 else "cost"
        console.print(f"[bold]the edits {word} {abs(result.delta):,.0f} {result.currency} ({abs(result.delta) / base:.1%})[/]")
    moved = result.mix_changes()
    if moved:
        table = Table(title="Mix (GPU-days rented)", header_style="bold")
        for col, justify in (("vendor/GPU/mode @ site", "left"), ("baseline", "right"), ("scenario", "right")):
            table.add_column(col, justify=justify)
        for line, before, after in moved:
            table.add_row(escape(line), f"{before:,.0f}", f"{after:,.0f}")
        console.print(table)
    new, gone = result.binding_changes()
    for text in new:
        console.print(f"now binds: {escape(text)}")
    for text in gone:
        console.print(f"no longer binds: {escape(text)}")
    if not new and not gone and result.scenario.plan:
        console.print("binding limits unchanged: "
                      + escape("; ".join(b.text for b in result.scenario.plan.binding) or "none"))


def _stack_warnings(result: WhatIf) -> list[str]:
    """The scenario's warnings about software stacks (solve prints them for the same edited problem)."""
    plan = result.scenario.plan
    return [w for w in plan.warnings if "software stack" in w] if plan is not None else []


def _line(o: Outcome) -> str:
    if o.plan is None:
        lines = (o.explanation or {}).get("lines", [])
        relax = "\n[bold]smallest relaxations[/] (each re-solved to check it):" if lines else ""
        return (f"[red]infeasible[/] — {escape(o.infeasible or '')}" + "".join(f"\n  - {escape(r)}" for r in o.reasons)
                + relax + "".join(f"\n  * {escape(line)}" for line in lines))
    finish = escape(", ".join(f"{j.name} day {j.finish_day}" for j in o.plan.jobs))
    return f"{o.plan.total_cost:,.0f} {o.plan.currency} ({o.plan.status}); finishes {finish}"


def _value(v) -> str:
    """A number the way the costs beside it are written (150,000, not 150000)."""
    if isinstance(v, bool) or v is None:
        return "not set" if v is None else str(v).lower()
    if isinstance(v, float):
        if abs(v) >= 1e5:  # money and kW: every digit, no exponent (1,269,900, not 1.2699e+06)
            return f"{v:,.2f}".rstrip("0").rstrip(".")
        return f"{v:,.6g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)

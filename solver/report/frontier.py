"""`gpuplan frontier`'s table: the non-dominated plans, the ε values dropped, the solves it took."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.report.fit import keep_whole


def render_frontier(result, console: Console, written: dict[str, list[str]] | None = None) -> None:
    x_label, y_label, eps_label = result.labels
    table = Table(title=f"{escape(result.problem)}: {y_label} vs {x_label} — {len(result.points)} non-dominated "
                        f"plan{'s' if len(result.points) != 1 else ''} from {len(result.tried)} ε values")
    cost = f"cost ({result.currency})"
    for col in ("#", eps_label, cost, "finish day", *(["spot share"] if result.axis == "spot_share" else []),
                *(["vendors"] if result.axis == "vendors" else []), "mix (peak nodes × GPUs per node)", ""):
        table.add_column(col, justify="right" if col in ("#", cost, "finish day", "vendors") else "left")
    for i, p in enumerate(result.points, 1):
        eps = _eps(result.axis, p.eps)
        extra = ([f"{p.spot_share:.1%}"] if result.axis == "spot_share" else []) + \
                ([str(p.vendors)] if result.axis == "vendors" else [])
        cost_shown = f"{p.cost:,.0f}" if p.proven else f"{p.low:,.0f} to {p.cost:,.0f}"  # an interval: not proven
        table.add_row(str(i), eps, cost_shown, str(p.finish_day), *extra, escape(p.mix),
                      "[bold red]◀ knee[/]" if p.knee else "")
    console.print(keep_whole(table, console.width))
    for outcome, words in (("dominated", "dominated (a point above is as good in both and better in one), dropped"),
                           ("same plan", "the same plan as a point above"),
                           ("infeasible", "no plan"),
                           ("not settled", "no plan found within the time limit (none ruled out)")):
        values = [_eps(result.axis, e) for e, seen, _ in result.tried if seen == outcome]
        if values:
            console.print(f"{words}: ε = {'; '.join(values)}", highlight=False)
    for note in result.notes:
        console.print(f"note: {escape(note)}", highlight=False)
    if any(not p.proven for p in result.points):
        console.print("a cost written 'a to b' was not proven by the time its solve had: the cheapest plan under "
                      "that ε costs between the proven bound a and the plan's cost b", highlight=False)
    console.print(f"{result.milp_solves} MILP solves, {result.lp_solves} LP bounds, {result.probes} feasibility "
                  f"probes, {result.reused} plans reused, {result.answered_without_solve} answered without a "
                  f"solve; {result.seconds:.1f} s", highlight=False)
    for kind, paths in (written or {}).items():
        console.print(escape(f"wrote {kind}: {', '.join(paths)}"), highlight=False)


def _eps(axis: str, eps: float) -> str:
    """An ε the way its column writes it (a budget in whole units of the currency, a spot share in per cent)."""
    return f"{eps:,.0f}" if axis == "budget" else f"{eps:.1%}" if axis == "spot_share" else f"{eps:g}"

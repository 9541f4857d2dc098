"""`gpuplan negotiate`'s tables: walk-away and break-even prices, what other concessions are worth."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.negotiate import reason_kinds


def _money(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _price(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.2f}" if abs(x) < 1000 else f"{x:,.0f}"


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:+.1%}"


def _price_currency(offers) -> tuple[str, bool]:
    """(the prices' unit for a table title, whether the table needs a currency column): the
    offers' one currency, or a note that each row names its own."""
    codes = sorted({t.currency for t in offers})
    return (f"{codes[0]} per price unit", False) if len(codes) == 1 else ("per price unit, in the currency column", True)


def render_negotiation(result, console: Console, written: dict | None = None) -> None:
    """The tables, then the vendor's sheet when one was written (`written`: vendor, file, rows)."""
    cur = result.currency
    console.print(f"{escape(result.problem)}: optimum {result.base_cost:,.0f} {cur} ({result.base_status}); "
                  f"{result.solves} solves in {result.seconds:.1f} s", highlight=False)
    console.print(f"[dim]{escape(result.price_note)}; target = {result.margin:.0%} below the current price (in the plan) "
                  f"or below the break-even (not in it)[/]", highlight=False)
    if result.unproven:
        console.print(f"[yellow]warning:[/] {result.unproven} solves stopped before optimality was proven "
                      "(time limit): the prices below are approximate", highlight=False)
    inside = [t for t in result.offers if t.status == "in_plan"]
    if inside:
        unit, mixed = _price_currency(inside)
        table = Table(title=f"Walk-away prices: offers in the plan ({unit}; saves in {cur})")
        _columns(table, "offer", *(["currency"] if mixed else []), "price", "walk-away", "may rise", "target",
                 "saves at target")
        for t in inside:
            limit = ("not analysed" if not t.analysed else
                     "none (no plan without it)" if t.limit_price is None and t.cost_without is None
                     else _price(t.limit_price) + ("" if t.converged else " ≥"))
            table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price), limit,
                          _pct(t.limit_change), _price(t.target_price), _money(t.saving_at_target))
        console.print(table)
        for t in inside:
            if t.replaced_by:
                console.print(escape(f"  above {_price(t.limit_price)} {t.currency}, {t.offer} is replaced by {', '.join(t.replaced_by)}"),
                              highlight=False)
    outside = [t for t in result.offers if t.status == "not_in_plan"]
    if outside:
        unit, mixed = _price_currency(outside)
        table = Table(title=f"Break-even prices: offers not in the plan ({unit}; saves in {cur})")
        _columns(table, "offer", *(["currency"] if mixed else []), "price", "break-even", "must fall", "target",
                 "saves at target", "node-days")
        for t in outside:
            if t.limit_price is None:
                limit = ("not analysed" if not t.analysed else "never" if t.searched_down_to is None
                         else f"< {_price(t.searched_down_to)}")
                table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price), limit, "", "—", "—",
                              "—")
                continue
            table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price),
                          _price(t.limit_price) + ("" if t.converged else " ≥"),
                          _pct(t.limit_change), _price(t.target_price), _money(t.saving_at_target),
                          f"{t.target_node_days:,.0f}")
        console.print(table)
        for t in outside:
            if t.limit_price is None or not t.converged:
                console.print(escape(f"  {t.offer}: {t.reason}"), highlight=False)
            if t.displaces:
                console.print(escape(f"  at {_price(t.target_price)} {t.currency}, {t.offer} takes work from {', '.join(t.displaces)}"
                                     " (each rented less, not necessarily dropped)"),
                              highlight=False)
    if result.levers:
        table = Table(title=f"What other concessions are worth ({cur}, re-solved; --json has the edits)")
        _columns(table, "lever", "on", "saves", "per unit")
        for lv in result.levers:
            what = {"power": f"+{lv.amount:g} kW", "lead_time": f"lead time −{lv.amount:g} d",
                    "availability": f"+{lv.amount:g} nodes"}[lv.kind]
            per = "—" if lv.per_unit is None else f"{lv.per_unit:,.0f}/{lv.unit.rstrip('s')}"
            table.add_row(what, escape(lv.name), "infeasible" if lv.saving is None else _money(lv.saving), per)
        console.print(table)
        if result.levers_note:
            console.print(escape(f"note: {result.levers_note}"), highlight=False)
    elif result.levers_note:
        console.print(escape(f"What other concessions are worth: {result.levers_note}"), highlight=False)
    unusable = [t for t in result.offers if t.status == "unusable"]
    if unusable and result.vendors:
        console.print("[bold]Offers no job can use[/] (they cannot enter at any price):")
        for t in unusable:
            console.print(escape(f"  {t.offer}: {t.reason}"), highlight=False)
    elif unusable:
        kinds: dict[str, int] = {}
        for t in unusable:
            kind = "restrict list" if t.reason.startswith("excluded by the problem") else \
                "/".join(sorted(reason_kinds(t.reason)))
            kinds[kind] = kinds.get(kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        console.print(f"{len(unusable)} offers no job can use ({summary}); --vendor lists them with reasons",
                      highlight=False)
    if written:
        console.print(escape(f"wrote {written['rows']} offers of {written['vendor']} to {written['file']}"))

LEFT = {"offer", "on", "lever", "currency"}


def _columns(table: Table, *names: str) -> None:
    for name in names:
        if name == "offer":
            table.add_column(name, no_wrap=True)
        else:
            table.add_column(name, justify="left" if name in LEFT else "right")

"""`gpuplan negotiate`'s tables: walk-away and break-even prices, what other concessions are worth."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.analysis.negotiate import reason_kinds
from solver.analysis.negotiate_levers import LEAD_TIME
from solver.i18n import N_, _, money_unit
from solver.report.fit import keep_whole
from solver.report.words import family_labels


def _money(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _price(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.2f}" if abs(x) < 1000 else f"{x:,.0f}"


def _limit(t) -> str:
    """p*, or the interval the probes proved when a solve stopped before its proof (issue 34:
    never a guess); "≥ low" when no upper end is proven."""
    if t.limit_low is not None and t.limit_high is not None and t.limit_high - t.limit_low > 1e-9 * max(1.0, t.price):
        return f"{_price(t.limit_low)}–{_price(t.limit_high)}"
    return _price(t.limit_price) + ("" if t.converged and t.limit_high is not None or t.limit_price is None else " ≥")


def _saving(saving: float | None, high: float | None) -> str:
    """A saving, or its interval (bound to plan) when the solve behind it stopped before its proof."""
    if saving is not None and high is not None and high - saving >= 0.5:
        return f"{_money(saving)}–{_money(high)}"
    return _money(saving)


def _target_saving(t) -> str:
    high = None if t.target_cost_low is None or t.target_cost is None else \
        t.saving_at_target + (t.target_cost - t.target_cost_low)
    return _saving(t.saving_at_target, high)


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:+.1%}"


def _price_currency(offers) -> tuple[str, bool]:
    """(the prices' unit for a table title, whether the table needs a currency column): the
    offers' one currency, or a note that each row names its own."""
    codes = sorted({t.currency for t in offers})
    if len(codes) == 1:
        return _("{unit} per price unit").format(unit=money_unit(codes[0])), False
    return _("per price unit, in the currency column"), True


def _heading(result, unit: str) -> str:
    """"optimum" only for a base plan its solve proved (issue 47); else the best plan found, with
    the bound proven below it."""
    if result.base_status == "optimal":
        return _("{problem}: optimum {cost} {unit} ({status}); {n} solves in {seconds} s").format(
            problem=escape(result.problem), cost=_money(result.base_cost), unit=unit, status=_(result.base_status),
            n=result.solves, seconds=f"{result.seconds:.1f}")
    bound = _money(result.base_low) if result.base_low is not None else _("not known")
    return _("{problem}: best plan found {cost} {unit} (proven bound {bound}; not proven optimal); {n} solves in "
             "{seconds} s").format(problem=escape(result.problem), cost=_money(result.base_cost), unit=unit,
                                   bound=bound, n=result.solves, seconds=f"{result.seconds:.1f}")


def render_negotiation(result, console: Console, written: dict | None = None) -> None:
    """The tables, then the vendor's sheet when one was written (`written`: vendor, file, rows)."""
    cur = money_unit(result.currency)
    console.print(_heading(result, cur), highlight=False)
    console.print("[dim]" + escape(result.price_note) + _("; target = {margin} below the current price (in the plan) "
                  "or below the break-even (not in it)").format(margin=f"{result.margin:.0%}") + "[/]", highlight=False)
    if result.unproven:
        console.print("[yellow]" + _("warning:") + "[/] " + _("{n} solves stopped before optimality was proven "
                      "(time limit): their rows show the interval proven, from bound to plan").format(n=result.unproven), highlight=False)
    inside = [t for t in result.offers if t.status == "in_plan"]
    if inside:
        unit, mixed = _price_currency(inside)
        table = Table(title=_("Walk-away prices: offers in the plan ({unit}; saves in {currency})").format(
            unit=unit, currency=cur))
        _columns(table, N_("offer"), *([N_("currency")] if mixed else []), N_("price"), N_("walk-away"),
                 N_("may rise"), N_("target"), N_("saves at target"))
        for t in inside:
            limit = (_("not analysed") if not t.analysed else
                     _("none (no plan without it)") if t.limit_price is None and t.cost_without is None
                     else _limit(t))
            table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price), limit,
                          _pct(t.limit_change), _price(t.target_price), _target_saving(t))
        console.print(keep_whole(table, console.width))
        for t in inside:
            if t.replaced_by:
                console.print(escape("  " + _("above {price} {unit}, {offer} is replaced by {others}").format(
                    price=_price(t.limit_price), unit=money_unit(t.currency), offer=t.offer,
                    others=", ".join(t.replaced_by))), highlight=False)
    outside = [t for t in result.offers if t.status == "not_in_plan" and not t.skipped]
    if outside:
        unit, mixed = _price_currency(outside)
        table = Table(title=_("Break-even prices: offers not in the plan ({unit}; saves in {currency})").format(
            unit=unit, currency=cur))
        _columns(table, N_("offer"), *([N_("currency")] if mixed else []), N_("price"), N_("break-even"),
                 N_("must fall"), N_("target"), N_("saves at target"), N_("node-days"))
        for t in outside:
            if t.limit_price is None:
                limit = (_("not analysed") if not t.analysed else _("never") if t.searched_down_to is None
                         else f"< {_price(t.searched_down_to)}")
                table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price), limit, "", "—", "—",
                              "—")
                continue
            table.add_row(escape(t.offer), *([t.currency] if mixed else []), _price(t.price),
                          _limit(t), _pct(t.limit_change), _price(t.target_price), _target_saving(t),
                          f"{t.target_node_days:,.0f}")
        console.print(keep_whole(table, console.width))
        for t in outside:
            if t.limit_price is None and t.analysed or not t.converged:
                console.print(escape(f"  {t.offer}: {t.reason}"), highlight=False)
            if t.displaces:
                console.print(escape("  " + _("at {price} {unit}, {offer} takes work from {others} (each rented "
                                              "less, not necessarily dropped)").format(
                    price=_price(t.target_price), unit=money_unit(t.currency), offer=t.offer,
                    others=", ".join(t.displaces))), highlight=False)
    for kind, text in result.skipped.items():
        names = [t.offer for t in result.offers if t.skipped == kind]
        shown = ", ".join(names[:4]) + (_(" and {n} more").format(n=len(names) - 4) if len(names) > 4 else "")
        console.print(escape(_("{n} offers {text}: {offers}").format(n=len(names), text=_(text), offers=shown)),
                      highlight=False)
    if result.levers:
        table = Table(title=_("What other concessions are worth ({unit}, re-solved; --json has the edits)").format(
            unit=cur))
        _columns(table, N_("lever"), N_("on"), N_("saves"), N_("per unit"))
        for lv in result.levers:
            what = lever_words(lv.kind, lv.amount, lv.unit)
            per = "—" if lv.per_unit is None else f"{lv.per_unit:,.0f}/{lv.unit.rstrip('s')}"
            table.add_row(what, escape(lv.name), _("infeasible") if lv.saving is None else
                          _saving(lv.saving, lv.saving_high), per)
        console.print(keep_whole(table, console.width))
        if result.levers_note:
            console.print(escape(_("note: {text}").format(text=result.levers_note)), highlight=False)
    elif result.levers_note:
        console.print(escape(_("What other concessions are worth: {note}").format(note=result.levers_note)),
                      highlight=False)
    unusable = [t for t in result.offers if t.status == "unusable"]
    if unusable and result.vendors:
        console.print("[bold]" + _("Offers no job can use") + "[/] " + _("(they cannot enter at any price):"))
        for t in unusable:
            console.print(escape(f"  {t.offer}: {t.reason}"), highlight=False)
    elif unusable:
        kinds: dict[str, int] = {}
        for t in unusable:
            kind = "restrict list" if t.reason.startswith("excluded by the problem") else \
                "/".join(sorted(reason_kinds(t.reason)))
            kinds[kind] = kinds.get(kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        console.print(_("{n} offers no job can use ({summary}); --vendor lists them with reasons").format(
            n=len(unusable), summary=summary), highlight=False)
    if written:
        console.print(escape(_("wrote {n} offers of {vendor} to {file}").format(
            n=written["rows"], vendor=written["vendor"], file=written["file"])))

LEFT = {"offer", "on", "lever", "currency"}


def _columns(table: Table, *names: str) -> None:
    for name in names:
        if name == "offer":
            table.add_column(_(name), no_wrap=True)
        else:
            table.add_column(_(name), justify="left" if name in LEFT else "right")


def lever_words(kind: str, amount: float, unit: str) -> str:
    """A concession in words: its family's (Labels.deal: "+5 kW", "+2 nodes"), a shorter lead time,
    or, for a kind no family words, the amount and its unit."""
    if kind == LEAD_TIME:  # negotiate's own lever, no family's
        return _("lead time −{n} d").format(n=f"{amount:g}")
    labels = family_labels(kind)
    if labels is not None and callable(labels.deal):
        return labels.deal(amount)
    return f"+{amount:g} {unit}"

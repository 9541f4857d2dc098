"""A plan as one self-contained HTML file: summary, charts as inline SVG, tables, contract checklist.

Why inline SVG drawn here: the file must open offline, years later, from an e-mail
attachment — no chart library, no CDN, no script at all. A Content-Security-Policy meta
tag forbids every network fetch, so a stray external reference fails loudly in a browser
instead of leaking a request. All text from problem, catalog and plan goes through
html.escape (offer names, sources and job names are user input).

Chart elements carry stable ids and classes for tests and for styling:
    svg#gantt    rect.bar (one per allocation row, class mode-<mode>), line.horizon
    svg#costs    rect.bar (one per nonzero part; rect.bar.negative for a discount)
    svg#frontier circle.point (one per point; .knee, .current), path.step, text.point-label (data-point: its
                 point, 1-based; placed by solver.report.labels inside the plot, nearest its own point)
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from solver.files import check_new_file, write_text
from solver.report.contracts import contract_lines, gpus_text, merged_note, nodes_text
from solver.i18n import N_, _, current, headline, is_zh, money_unit, ngettext, text_width
from solver.model.catalog import Catalog
from solver.model.ledger import BILLING, blocks
from solver.model.modes import MODES, legend_order
from solver.model.plan import Allocation, Plan
from solver.model.problem import Problem
from solver.report.cash import cash_flow_grid
from solver.report.days import day_text, on, span_text
from solver.report.deadline import deadline_gloss, deadline_text, robust_quantile_text
from solver.report.labels import Box, place_labels

PART_NAMES = {"gpu_rent": N_("GPU rent"), "interconnect": N_("interconnect"), "platform_fee": N_("platform fees"),
              "storage": N_("storage"), "egress": N_("egress"), "volume_discount": N_("volume discount")}
MODE_NAMES = {"hourly": N_("hourly"), "monthly": N_("monthly"), "yearly": N_("yearly"), "hosted": N_("hosted"),
              "spot": N_("spot"), "storage": N_("storage"), "egress": N_("egress")}
"""Rental modes (and the cash flow's storage and egress columns) as words; the data keeps the key."""
WIDTH = 1000  # SVG user units; every chart scales to the page width
LABEL_CHAR_PX, LABEL_HEIGHT_PX = 7.5, 14
"""A frontier point label's size in SVG units for placing it: 12-px text runs under 7.5 units a
character in the report's fonts (digits, "knee", "◀ this plan"), one line 14 high."""



def is_money(label: str) -> bool:
    """Whether a frontier axis label is money (solver.analysis.frontier's list), imported when a frontier
    is drawn: the terminal report imports this module's words, and `estimate` must not load the solver."""
    from solver.analysis.frontier import is_money as money_axis
    return money_axis(label)

def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def mode_name(mode: str) -> str:
    """A rental mode in the active language (`hourly`, 按小时计费)."""
    return _(MODE_NAMES[mode]) if mode in MODE_NAMES else mode


def part_name(part: str) -> str:
    """A cost part (`gpu_rent`) in words, in the active language."""
    return _(PART_NAMES[part]) if part in PART_NAMES else part.replace("_", " ")


def unit(currency: str) -> str:
    """The currency as a table header says it: `CNY`, or 元 in Chinese (escaped)."""
    return esc(money_unit(currency))


def money(value: float) -> str:
    return f"{value:,.0f}"


def _short_money(value: float) -> str:
    if is_zh():  # Chinese counts in 万 (1e4) and 亿 (1e8)
        if abs(value) >= 1e8:
            return f"{value / 1e8:,.2f}亿"
        return f"{value / 1e4:,.0f}万" if abs(value) >= 1e4 else f"{value:,.0f}"
    if abs(value) >= 1e6:
        return f"{value / 1e6:,.2f}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:,.0f}k"
    return f"{value:,.0f}"


def _num(value: float) -> str:
    """A coordinate: short, no exponent."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


# ----- frontier input ------------------------------------------------------------------------------------
@dataclass
class FrontierPoint:
    x: float
    y: float
    label: str
    knee: bool = False


def frontier_points(frontier, currency: str) -> tuple[list[FrontierPoint], str, str, str]:
    """(points, x label, y label, title) from a solver.analysis.frontier.Frontier, or from a list
    of (finish_day, cost, label) tuples or dicts with x/y (or finish_day/cost) and label/mix,
    whose costs are in `currency` (the plan's; a Frontier says its own)."""
    if hasattr(frontier, "points") and hasattr(frontier, "labels"):
        x_label, y_label, _eps = frontier.labels
        points = [FrontierPoint(float(p.x), float(p.y), str(p.mix), bool(p.knee)) for p in frontier.points]
        return points, x_label, y_label, f"{y_label} vs {x_label} ({len(points)} non-dominated plans)"
    points = []
    for item in frontier:
        if isinstance(item, dict):
            x = item.get("x", item.get("finish_day"))
            y = item.get("y", item.get("cost"))
            points.append(FrontierPoint(float(x), float(y), str(item.get("label", item.get("mix", ""))),
                                        bool(item.get("knee", False))))
        else:
            x, y, *rest = item
            points.append(FrontierPoint(float(x), float(y), str(rest[0]) if rest else ""))
    points.sort(key=lambda p: (p.x, p.y))
    return points, "finishing day", f"cost ({currency})", f"cost vs finishing day ({len(points)} plans)"


AXIS_WORDS = {"finishing day": N_("finishing day"), "cost": N_("cost"), "budget": N_("budget"),
              "share of work on spot nodes": N_("share of work on spot nodes"),
              "vendors rented from": N_("vendors rented from")}
"""The frontier's axis labels (solver.analysis.frontier.LABELS) in words; `cost (CNY)` keeps its unit."""


def axis_label(label: str) -> str:
    """A frontier axis label in the active language: `cost (CNY)` → 费用（元）."""
    base, _sep, rest = label.partition(" (")
    if base not in AXIS_WORDS:
        return label
    if not rest:
        return _(AXIS_WORDS[base])
    return _("{what} ({unit})").format(what=_(AXIS_WORDS[base]), unit=money_unit(rest.rstrip(")")))


def _frontier_title(points: list[FrontierPoint], x_label: str, y_label: str) -> str:
    return ngettext("{y} vs {x} ({n} non-dominated plan)", "{y} vs {x} ({n} non-dominated plans)",
                    len(points)).format(y=axis_label(y_label), x=axis_label(x_label), n=len(points))


# ----- page ----------------------------------------------------------------------------------------------
def render_html(plan: Plan, problem: Problem, catalog: Catalog, *, frontier=None, why: dict | None = None) -> str:
    """The whole report as one HTML document (UTF-8, no external resources, no script)."""
    used = _offers_used(plan, catalog)
    sections = [
        "<h1>" + esc(_("GPU rental plan: {name}").format(name=plan.problem)) + "</h1>",
        f'<p class="summary" id="summary">{summary_sentence(plan, problem)}</p>',
        ('<p class="summary" id="stack-switch"><strong>' + esc(_("Software stack:")) + f'</strong> {esc(plan.stack_switch.text)}</p>'
         if plan.stack_switch is not None else ""),
        ('<p class="summary" id="robust-plan"><strong>' + esc(_("Robust plan")) + "</strong> " +
         esc(_("(every MFU × {factor}):").format(factor=f"{plan.robust_plan.mfu_factor:g}")) +
         f" {esc(plan.robust_plan.text)}" + esc(_("; ")) + esc(robust_quantile_text(plan.robust_plan.mfu_factor)) +
         "</p>" if plan.robust_plan is not None else ""),
        _status_line(plan),
        _illustrative_banner(used),
        "<h2>" + _("Rentals over time") + "</h2>",
        gantt_svg(plan, problem),
        _allocation_table(plan),
        "<h2>" + _("Cost breakdown") + "</h2>",
        cost_svg(plan),
        "<h2>" + _("Jobs") + "</h2>",
        _jobs_table(plan, problem, catalog),
    ]
    if plan.cash_flow:
        sections += ["<h2>" + _("Cash flow") + "</h2>", _cash_flow_table(plan)]
    if plan.rental_use:
        sections += ["<h2>" + _("Paid but idle") + "</h2>", _idle_table(plan)]
    if plan.job_rentals:
        sections += ["<h2>" + _("Which job runs on which rental") + "</h2>", _job_rental_table(plan)]
    if frontier is not None:
        points, x_label, y_label, _title = frontier_points(frontier, plan.currency)
        if points:
            title = _frontier_title(points, x_label, y_label)
            sections += ["<h2>" + esc(_("Frontier: {title}").format(title=title)) + "</h2>",
                         frontier_svg(points, x_label, y_label, current=(_finish(plan), plan.total_cost)
                                      if "finishing day" in x_label and "cost" in y_label else None),
                         _frontier_table(points, x_label, y_label)]
    if why is not None:
        sections += ["<h2>" + _("Why this plan") + "</h2>", _why_section(why, plan.currency)]
    if plan.warnings:
        sections += ["<h2>" + _("Warnings") + "</h2>",
                     "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in plan.warnings) + "</ul>"]
    sections += ["<h2>" + _("Limits the plan runs into") + "</h2>", _binding_table(plan),
                 "<h2>" + _("Assumptions") + "</h2>", _assumptions(plan, problem, catalog, used),
                 "<h2>" + _("Contract checklist") + "</h2>", checklist(plan, problem, catalog, used)]
    body = "\n".join(s for s in sections if s)
    footer = _("Made by gpuplan from {catalog}. {days}; money in {currency}, platform fees included, "
               "discounts deducted.").format(catalog=_catalog_name(catalog), days=_days_note(plan),
                                             currency=money_unit(plan.currency))
    return (
        f"<!DOCTYPE html>\n<html lang=\"{current()}\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>gpuplan: {esc(plan.problem)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<footer>{esc(footer)}</footer>\n"
        "</body>\n</html>\n")


def write_html(path: str | Path, plan: Plan, problem: Problem, catalog: Catalog, *, frontier=None,
               why: dict | None = None, force: bool = False, option: str = "--output") -> Path:
    """Write the report; ProblemError (naming `option`) when the file exists and not force."""
    path = check_html_path(path, force=force, option=option)
    write_text(path, render_html(plan, problem, catalog, frontier=frontier, why=why))  # atomic
    return path


def check_html_path(path: str | Path, *, force: bool = False, option: str = "--output") -> Path:
    """The path a report would be written to; ProblemError if it exists (and not force) or its folder is missing."""
    return check_new_file(path, option, force=force, example="plan.html")


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","PingFang SC","Hiragino Sans GB",
"Microsoft YaHei","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Micro Hei",sans-serif;
margin:24px auto;max-width:1100px;padding:0 16px;color:#1d2733;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #d5dbe3}
h3{font-size:1em;margin-bottom:.3em}
.summary{font-size:1.1em}.status{color:#556}.banner{background:#fff4d6;border:1px solid #e8c15a;padding:6px 10px}
table{border-collapse:collapse;margin:8px 0;font-size:.88em}
th,td{border:1px solid #d5dbe3;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef2f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
svg{width:100%;height:auto;display:block;margin:8px 0}
svg text{font-family:inherit;font-size:12px;fill:#1d2733}
svg .axis{stroke:#8a96a3;stroke-width:1}svg .grid{stroke:#e4e8ee;stroke-width:1}
svg .muted{fill:#667}svg .group{font-weight:600}
.known{color:#276b2f}.ask{color:#a33;font-weight:600}.warn{color:#a35a00;font-weight:600}
.zh{color:#667}footer{margin-top:2em;color:#667;font-size:.85em}
@media print{body{margin:0}h2{break-after:avoid}svg{break-inside:avoid}}
"""


# ----- words ---------------------------------------------------------------------------------------------
def _days_note(plan: Plan) -> str:
    if plan.start_date is None:
        return _("Days count from the plan's start (day 0)")
    return _("Day 0 is {date}; date ranges name the first and the last day held").format(
        date=plan.start_date.isoformat())


def _finish(plan: Plan) -> int:
    return max((j.finish_day for j in plan.jobs), default=0)


def peak_gpus(allocations: Iterable[Allocation]) -> int:
    """Most GPUs held at once (contracts count until their end, even past the horizon)."""
    rows = list(allocations)
    days = sorted({a.start_day for a in rows})
    return max((sum(a.gpus for a in rows if a.start_day <= d < a.end_day) for d in days), default=0)


def _names(values: Iterable[str]) -> str:
    values = sorted(set(values))
    if len(values) <= 1:
        return "".join(values)
    return _("{first} and {last}").format(first=_(", ").join(values[:-1]), last=values[-1])


def plain_summary(plan: Plan, problem: Problem) -> str:
    """The summary sentence as plain text, without its HTML tags and entities (for the terminal)."""
    return html.unescape(re.sub(r"<[^>]+>", "", summary_sentence(plan, problem)))


def summary_sentence(plan: Plan, problem: Problem) -> str:
    """One sentence (HTML, escaped): what to rent from whom, at what cost, and when the work is done."""
    allocs = plan.allocations
    vendors, sites = {a.vendor for a in allocs}, {a.datacenter for a in allocs}
    gpus = {a.gpu for a in allocs}
    modes = {a.mode for a in allocs}
    last = max(plan.jobs, key=lambda j: j.finish_day, default=None)
    jobs = len(plan.jobs)
    vendor_text = ngettext("{n} vendor", "{n} vendors", len(vendors)).format(n=len(vendors))
    site_text = ngettext("{n} site", "{n} sites", len(sites)).format(n=len(sites))
    text = _("Rent up to {peak} {gpus} GPUs at once ({modes}) from {vendors} ({vendor_names}) at {sites} "
             "({site_names}) for {cost}").format(
        peak=f"{peak_gpus(allocs):,}", gpus=esc(_names(gpus)), modes=esc(_names(mode_name(m) for m in modes)),
        vendors=vendor_text, vendor_names=esc(_names(vendors)), sites=site_text, site_names=esc(_names(sites)),
        cost=f"<strong>{esc(headline(plan.total_cost, plan.currency))}</strong>")
    if last is not None:
        deadline = max(j.deadline_days for j in problem.jobs)
        who = (_("its job {name}") if jobs == 1 else _("the last of its {n} jobs, {name},")).format(
            name=esc(last.name), n=jobs)
        if plan.start_date is not None and last.finish_day:
            text += _("; {who} finishes on {date} (deadline {deadline})").format(
                who=who, date=day_text(plan.start_date, last.finish_day - 1),
                deadline=day_text(plan.start_date, deadline - 1))
        else:
            text += _("; {who} finishes on day {day} (deadline day {deadline})").format(
                who=who, day=last.finish_day, deadline=deadline)
    if problem.budget:
        text += _(", within the budget of {budget}").format(budget=esc(headline(problem.budget, plan.currency)))
    return text + _(".")


def _status_line(plan: Plan) -> str:
    if plan.status == "optimal":
        how = _("optimal")
    else:
        how = _("best plan found in the time allowed: at most {gap} above the cheapest possible "
                "(lower bound {bound})").format(gap=f"{plan.gap:.2%}", bound=money(plan.lower_bound))
    line = _("Status: {how}; solved by {backend} in {seconds} s; verified against the problem independently of "
             "the solver.").format(how=how, backend=plan.backend, seconds=f"{plan.solve_seconds:.2f}")
    return f'<p class="status">{esc(line)}</p>'


def _illustrative_banner(used: dict) -> str:
    illustrative = sorted(name for name, o in used.items() if o is not None and o.illustrative)
    if not illustrative:
        return ""
    text = _("{n} of the {total} offers in this plan carry illustrative prices (see Assumptions): confirm every "
             "price with the vendor before signing.").format(n=len(illustrative), total=len(used))
    return f'<p class="banner">{esc(text)}</p>'


def _catalog_name(catalog: Catalog) -> str:
    return Path(catalog.path).name if catalog.path else _("the catalog")


def _offers_used(plan: Plan, catalog: Catalog) -> dict:
    return {name: catalog.offers.get(name) for name in dict.fromkeys(a.offer for a in plan.allocations)}


# ----- charts --------------------------------------------------------------------------------------------
def nice_ticks(lo: float, hi: float, most: int = 8) -> list[float]:
    """Round tick values from one at or below lo to one at or above hi, about `most` of them."""
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    raw = (hi - lo) / max(most - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, 10) for i in range(first, last + 1)]


def day_ticks(last: float, most: int = 12) -> list[int]:
    """Day ticks in steps people count in (a week, a month, a quarter, ...)."""
    for step in (1, 2, 5, 7, 14, 30, 60, 90, 180, 365, 730):
        if last / step <= most:
            return list(range(0, int(last) + 1, step))
    return [0, int(last)]


def month_ticks(start, last: float, most: int = 12) -> list[tuple[int, str]]:
    """(day, label) at the first of each month from `start` to day `last`, every 1, 2, 3, 6 or 12
    months so that at most `most` show; labels `2027-02`."""
    months = [(first, label) for _, label, first, _ in blocks(start, 0, int(last) + 1) if first > 0 or
              on(start, 0).day == 1]
    for step in (1, 2, 3, 6, 12, 24):
        if len(months) / step <= most:
            return months[::step]
    return months[:1]


def gantt_svg(plan: Plan, problem: Problem) -> str:
    """One bar per allocation row on a day axis, rows grouped by site · vendor · mode, coloured by mode."""
    allocs = plan.allocations
    if not allocs:
        return f'<p id="gantt-empty">' + _("Nothing is rented.") + '</p>'
    groups: dict[tuple[str, str, str], list[Allocation]] = {}
    for a in sorted(allocs, key=lambda a: (a.datacenter, a.vendor, a.mode, a.start_day, a.offer)):
        groups.setdefault((a.datacenter, a.vendor, a.mode), []).append(a)
    left, right, top, row_h, head_h = 260, 20, 30, 20, 22
    last = max(problem.horizon_days, max(a.end_day for a in allocs))
    plot_w = WIDTH - left - right
    rows = sum(len(g) for g in groups.values())
    height = top + rows * row_h + len(groups) * head_h + 52

    def x(day: float) -> float:
        return left + plot_w * day / last

    out = [(f'<svg id="gantt" class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
           'aria-label="' + esc(_("Rentals per period by site, vendor and mode")) + '">')]
    bottom = height - 46
    ticks = month_ticks(plan.start_date, last) if plan.start_date else [(d, str(d)) for d in day_ticks(last)]
    for day, text in ticks:
        out.append(f'<line class="grid" x1="{_num(x(day))}" y1="{top}" x2="{_num(x(day))}" y2="{bottom}"/>'
                   f'<text class="tick muted" x="{_num(x(day))}" y="{bottom + 15}" text-anchor="middle">'
                   f"{esc(text)}</text>")
    axis = (_("month (day 0 is {date}; ticks at each month's first day)").format(date=plan.start_date.isoformat())
            if plan.start_date else _("day from the plan's start"))
    out.append(f'<text x="{left + plot_w / 2}" y="{bottom + 32}" text-anchor="middle" class="muted">'
               f"{esc(axis)}</text>")
    y = top
    for (site, vendor, mode), rows_ in groups.items():
        out.append(f'<rect class="band" x="0" y="{y}" width="{WIDTH}" height="{head_h}" fill="#f3f5f8"/>'
                   f'<text class="group" x="6" y="{y + 15}">{esc(site)} · {esc(vendor)} · {esc(mode_name(mode))}</text>')
        y += head_h
        for a in rows_:
            per_node = a.gpus // max(a.nodes, 1)
            label = f"{a.nodes}×{per_node} {a.gpu} · {a.interconnect}"
            x0, x1 = x(a.start_day), x(max(a.end_day, a.start_day))
            held = (_("days {span}").format(span=f"{a.start_day}–{a.end_day}") if plan.start_date is None
                    else span_text(plan.start_date, a.start_day, a.end_day))
            nodes = ngettext("{n} node", "{n} nodes", a.nodes).format(n=a.nodes)
            tip = (f"{a.offer} ({a.vendor}, {a.datacenter}, {mode_name(a.mode)}): {nodes} = {a.gpus} {a.gpu}, "
                   f"{a.interconnect}, {held}, {money(a.cost)} {money_unit(plan.currency)}")
            out.append(f'<text x="18" y="{y + 14}">{esc(label)}</text>'
                       f'<rect class="bar mode-{esc(mode)}" x="{_num(x0)}" y="{y + 3}" '
                       f'width="{_num(max(x1 - x0, 1.5))}" height="{row_h - 6}" rx="2" '
                       f'fill="{MODES[mode].colour}"><title>{esc(tip)}</title></rect>')
            y += row_h
    out.append(f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>'
               f'<line class="axis" x1="{left}" y1="{bottom}" x2="{WIDTH - right}" y2="{bottom}"/>')
    hx = x(problem.horizon_days)
    out.append(f'<line class="horizon" x1="{_num(hx)}" y1="{top - 6}" x2="{_num(hx)}" y2="{bottom}" '
               f'stroke="#333" stroke-dasharray="5 3"/>'
               f'<text x="{_num(hx)}" y="{top - 10}" text-anchor="{"end" if hx > WIDTH - 120 else "middle"}" '
               'class="muted">' + esc(_("horizon, {when}").format(when=_horizon_text(plan, problem))) + '</text>')
    finishes = sorted({j.finish_day for j in plan.jobs if 0 < j.finish_day < problem.horizon_days})
    for day in finishes:
        names = ", ".join(j.name for j in plan.jobs if j.finish_day == day)
        done = day_text(plan.start_date, day - 1) if plan.start_date else _("day {day}").format(day=day)
        tip = _("{names} done on {when}").format(names=names, when=done)
        out.append(f'<line class="finish" x1="{_num(x(day))}" y1="{top}" x2="{_num(x(day))}" y2="{bottom}" '
                   f'stroke="#1d2733" stroke-dasharray="2 3"><title>{esc(tip)}</title></line>')
    modes = [m for m in legend_order() if any(a.mode == m for a in allocs)]
    lx = left
    for m in modes:
        word = mode_name(m)
        out.append(f'<rect class="legend" x="{lx}" y="8" width="12" height="12" fill="{MODES[m].colour}"/>'
                   f'<text x="{lx + 16}" y="18">{esc(word)}</text>')
        lx += 26 + 7 * text_width(word) + 10
    out.append('<text x="6" y="18" class="muted">' + esc(_("colour = rental mode")) + '</text>')
    out.append("</svg>")
    return "\n".join(out)


def _horizon_text(plan: Plan, problem: Problem) -> str:
    if plan.start_date is None:
        return _("day {day}").format(day=problem.horizon_days)
    return _("last day {date}").format(date=day_text(plan.start_date, problem.horizon_days - 1))


LAYOUT_GLOSS = N_("Layout: TP×PP is the GPUs one copy of the model is split over (TP: each layer across GPUs, "
                   "PP: layers in stages); replicas are copies trained side by side, and DP, the data-parallel "
                   "degree, counts them (× any ZeRO sharding).")
"""One line for readers who do not train models, wherever a layout is shown to them (`_()` it there)."""
MARGIN_GLOSS = N_("MFU margin: the lowest MFU, as a share of the one planned with, at which the job still ends in "
                  "time.")

FABRIC_NAMES = {"ib_ndr": "InfiniBand NDR", "ib_hdr": "InfiniBand HDR", "roce": "RoCE", "ethernet": "Ethernet"}
"""The catalog's interconnect codes in words (never `ib_ndr|roce` in a report)."""


def cost_shares(breakdown: dict[str, float]) -> dict[str, float]:
    """Each positive cost part's share of their sum (the cost before discounts), rounded to
    0.1 % by largest remainder so the shares add up to exactly 100 % and none exceeds it;
    discounts (negative parts) get none: they are shown apart. Why: shares of the total after
    a discount read "GPU rent 104.6 %"."""
    positive = {k: v for k, v in breakdown.items() if v > 0}
    gross = sum(positive.values())
    if gross <= 0:
        return {}
    tenths = {k: v / gross * 1000 for k, v in positive.items()}
    out = {k: int(t) for k, t in tenths.items()}
    for k in sorted(tenths, key=lambda k: tenths[k] - out[k], reverse=True)[:1000 - sum(out.values())]:
        out[k] += 1
    return {k: n / 1000 for k, n in out.items()}


LABEL_PX = 6.6
"""SVG user units one column of a chart label takes at its 12 px font (a CJK character: two columns)."""


def label_px(text: str) -> float:
    """A chart label's width in SVG units, so the drawing leaves it room (a zh-CN cost label was clipped)."""
    return text_width(text) * LABEL_PX


def cost_svg(plan: Plan) -> str:
    """Horizontal bars per cost part from a zero line; a discount goes left of it."""
    parts = [(k, v) for k, v in plan.cost_breakdown.items() if abs(v) >= 0.5]
    if not parts:
        return f'<p id="costs-empty">' + _("No cost.") + '</p>'
    shares = cost_shares(plan.cost_breakdown)
    labels = {key: (money(value), _("discount") if value < 0 else _("{share} of the cost before discounts").format(
        share=f"{shares[key]:.1%}")) for key, value in parts}
    left, top, row_h = 170, 10, 28
    right = min(max(150, max(label_px(f"{a} ({b})") for a, b in labels.values()) + 12), WIDTH // 2)
    lo, hi = min(0.0, *(v for _, v in parts)), max(0.0, *(v for _, v in parts))
    span = (hi - lo) or 1.0
    plot_w = WIDTH - left - right
    height = top + row_h * len(parts) + 30

    def x(value: float) -> float:
        return left + plot_w * (value - lo) / span

    out = [(f'<svg id="costs" class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
           'aria-label="' + esc(_("Cost breakdown")) + '">')]
    y = top
    for key, value in parts:
        name = part_name(key)
        x0, x1 = sorted((x(0), x(value)))
        negative = value < 0
        colour = "#59a14f" if negative else "#4e79a7"
        out.append(f'<text x="{left - 8}" y="{y + 18}" text-anchor="end">{esc(name)}</text>'
                   f'<rect class="bar{" negative" if negative else ""}" data-part="{esc(key)}" x="{_num(x0)}" '
                   f'y="{y + 5}" width="{_num(max(x1 - x0, 1.5))}" height="{row_h - 10}" fill="{colour}">'
                   f"<title>{esc(name)}: {money(value)} {unit(plan.currency)}</title></rect>")
        tx, anchor = (x1 + 6, "start") if not negative else (x0 - 6, "end")
        if negative and x0 - 6 < left:
            tx, anchor = x(0) + 6, "start"
        amount, share = labels[key]
        out.append(f'<text x="{_num(tx)}" y="{y + 18}" text-anchor="{anchor}">{amount} '
                   f'<tspan class="muted">({esc(share)})</tspan></text>')
        y += row_h
    out.append(f'<line class="axis" x1="{_num(x(0))}" y1="{top}" x2="{_num(x(0))}" y2="{y}"/>')
    out.append(f'<text x="{left - 8}" y="{y + 20}" text-anchor="end" font-weight="600">' + _("total") + '</text>'
               f'<text x="{_num(x(0) + 6)}" y="{y + 20}" font-weight="600">{money(plan.total_cost)} '
               f"{unit(plan.currency)}</text>")
    out.append("</svg>")
    return "\n".join(out)


def frontier_svg(points: list[FrontierPoint], x_label: str, y_label: str,
                 current: tuple[float, float] | None = None) -> str:
    """Non-dominated points joined by a step line; the knee ringed, the reported plan filled dark."""
    left, right, top, bottom_pad = 90, 30, 20, 50
    height = 380
    bottom = height - bottom_pad
    xs, ys = [p.x for p in points], [p.y for p in points]
    xt, yt = nice_ticks(min(xs), max(xs)), nice_ticks(min(ys), max(ys), 6)
    x_lo, x_hi = min(xt[0], min(xs)), max(xt[-1], max(xs))
    y_lo, y_hi = min(yt[0], min(ys)), max(yt[-1], max(ys))
    # a point on an axis (a tick at its value) leaves its label no room on that side: pad the ranges
    pad_x, pad_y = 0.04 * ((x_hi - x_lo) or 1), 0.06 * ((y_hi - y_lo) or 1)
    x_lo, x_hi = min(x_lo, min(xs) - pad_x), max(x_hi, max(xs) + pad_x)
    y_lo, y_hi = min(y_lo, min(ys) - pad_y), max(y_hi, max(ys) + pad_y)
    plot_w, plot_h = WIDTH - left - right, bottom - top

    def px(v: float) -> float:
        return left + plot_w * (v - x_lo) / ((x_hi - x_lo) or 1)

    def py(v: float) -> float:
        return bottom - plot_h * (v - y_lo) / ((y_hi - y_lo) or 1)

    def fmt(label: str, v: float) -> str:
        if is_money(label):
            return _short_money(v)
        if "share" in label:
            return f"{v:.0%}"
        return f"{v:g}"

    out = [(f'<svg id="frontier" class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
           'aria-label="' + esc(_("{y} against {x}").format(y=axis_label(y_label), x=axis_label(x_label))) + '">')]
    for v in xt:
        out.append(f'<line class="grid" x1="{_num(px(v))}" y1="{top}" x2="{_num(px(v))}" y2="{bottom}"/>'
                   f'<text x="{_num(px(v))}" y="{bottom + 16}" text-anchor="middle" class="muted">'
                   f"{esc(fmt(x_label, v))}</text>")
    for v in yt:
        out.append(f'<line class="grid" x1="{left}" y1="{_num(py(v))}" x2="{WIDTH - right}" y2="{_num(py(v))}"/>'
                   f'<text x="{left - 6}" y="{_num(py(v) + 4)}" text-anchor="end" class="muted">'
                   f"{esc(fmt(y_label, v))}</text>")
    out.append(f'<line class="axis" x1="{left}" y1="{bottom}" x2="{WIDTH - right}" y2="{bottom}"/>'
               f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>'
               f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle">{esc(axis_label(x_label))}</text>'
               f'<text x="16" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {_num(top + plot_h / 2)})">{esc(axis_label(y_label))}</text>')
    if len(points) > 1:
        d = f"M{_num(px(points[0].x))},{_num(py(points[0].y))}"
        for p in points[1:]:
            d += f" H{_num(px(p.x))} V{_num(py(p.y))}"
        out.append(f'<path class="step" d="{d}" fill="none" stroke="#9aa7b8" stroke-width="1.5"/>')
    texts, flags = [], []
    for i, p in enumerate(points, 1):
        is_current = current is not None and round(p.x) == round(current[0]) and \
            abs(p.y - current[1]) <= 1e-6 * max(1.0, abs(current[1]))
        flags.append(is_current)
        texts.append(str(i) + (" " + _("knee") if p.knee else "") + (" ◀ " + _("this plan") if is_current else ""))
        classes = "point" + (" knee" if p.knee else "") + (" current" if is_current else "")
        fill = "#1d2733" if is_current else "#1f5fa8"
        tip = f"{i}: {fmt(x_label, p.x)}, {fmt(y_label, p.y)} — {p.label}" + \
            (" (" + _("knee") + ")" if p.knee else "") + (" (" + _("this report's plan") + ")" if is_current else "")
        out.append(f'<circle class="{classes}" cx="{_num(px(p.x))}" cy="{_num(py(p.y))}" r="5" fill="{fill}">'
                   f"<title>{esc(tip)}</title></circle>")
        if p.knee:
            out.append(f'<circle class="knee-ring" cx="{_num(px(p.x))}" cy="{_num(py(p.y))}" r="11" fill="none" '
                       f'stroke="#d62728" stroke-width="2"/>')
    centres = [(px(p.x), py(p.y)) for p in points]
    boxes = place_labels(centres, [(LABEL_CHAR_PX * text_width(t), LABEL_HEIGHT_PX) for t in texts],
                         Box(left + 2, top, WIDTH - right, bottom - 2), gap=8, marker=6,
                         gaps=[14 if p.knee else 8 for p in points])
    for i, (text, box) in enumerate(zip(texts, boxes), 1):
        out.append(f'<text class="point-label muted" data-point="{i}" x="{_num(box.x0)}" y="{_num(box.y1 - 3)}" '
                   f'text-anchor="start">{esc(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# ----- tables --------------------------------------------------------------------------------------------
def _table(headers: list[str], rows: list[list[str]], numeric: Iterable[int] = (), cls: str = "") -> str:
    """Cells are HTML already (escape before); `numeric` columns are right-aligned."""
    numeric = set(numeric)
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f'<table{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}><thead><tr>{head}</tr></thead>' \
           f"<tbody>{body}</tbody></table>"


def _allocation_table(plan: Plan) -> str:
    """Rental lines with their number (#, as in the idle and job tables), in number order, days or dates
    held and cost; lines of one offer that overlap in time as one (`1+2`, nodes `2→3→1`) with a note
    under the table saying what they join (solver.report.contracts)."""
    lines = contract_lines(plan.allocations)
    rows = [[esc(line.label()), esc(a.datacenter), esc(a.vendor), esc(mode_name(a.mode)), esc(a.offer), esc(a.gpu),
             esc(a.interconnect), esc(nodes_text(line)), esc(gpus_text(line)),
             esc(span_text(plan.start_date, line.start_day, line.end_day)), money(line.cost)]
            for line in lines for a in [line.first]]
    when = _("dates (first – last day held)") if plan.start_date else _("days")
    notes = [merged_note(line, lambda lo, hi: span_text(plan.start_date, lo, hi) if plan.start_date else
                         _("days {span}").format(span=span_text(None, lo, hi))) for line in lines if line.merged]
    return (_table(["#", _("site"), _("vendor"), _("mode"), _("offer"), "GPU", _("fabric"), _("nodes"), _("GPUs"), when,
                    _("cost ({unit})").format(unit=unit(plan.currency))], rows, numeric=(0, 7, 8, 10),
                   cls="allocations")
            + "".join(f'<p class="merged">{esc(note)}</p>' for note in notes))


def _cash_flow_table(plan: Plan) -> str:
    """What is paid per month (or 30-day block): one column per vendor and mode, totals row and column,
    and the billing assumption of each kind of row."""
    grid = cash_flow_grid(plan)
    head = [_("month") if plan.start_date else _("days")] + \
        [f"{esc(v)}<br>{esc(mode_name(m))}" for v, m in grid.columns] + [_("total ({unit})").format(unit=unit(plan.currency))]
    rows = [[esc(label.removeprefix("days "))] + ["" if v is None else money(v) for v in amounts] + [money(total)]
            for label, amounts, total in grid.rows]
    rows.append(["<strong>" + _("total") + "</strong>"] + [money(v) for v in grid.totals] +
                [f"<strong>{money(sum(grid.totals))}</strong>"])
    used = dict.fromkeys(p.billing for p in plan.cash_flow)
    block = _("calendar month") if plan.start_date else _("30-day block from day 0 (no start_date in the problem)")
    notes = "".join(f"<li><strong>{esc(_(b))}</strong>: {esc(_(BILLING[b]))}</li>" for b in used if b in BILLING)
    paid = _("Paid per {block}, by vendor and mode, in {unit}.").format(block=block, unit=money_unit(plan.currency))
    return (f"<p>{esc(paid)}</p>"
            + _table(head, rows, numeric=range(1, len(head)), cls="cash-flow").replace("<table", '<table id="cash-flow"', 1)
            + f'<ul class="billing">{notes}</ul>')


def _idle_table(plan: Plan) -> str:
    """Per rental line: GPU-days paid, used by jobs, idle, idle cost and the last day used."""
    rows = []
    for u in plan.rental_use:
        a = plan.allocations[u.rental - 1]
        share = u.idle_gpu_days / u.gpu_days_paid if u.gpu_days_paid else 0.0
        last = _("never") if u.last_used_day is None else (
            day_text(plan.start_date, u.last_used_day - 1) if plan.start_date
            else _("day {day}").format(day=u.last_used_day))
        rows.append([str(u.rental), esc(a.offer), esc(mode_name(a.mode)), esc(span_text(plan.start_date, a.start_day, a.end_day)),
                     f"{u.gpu_days_paid:,.0f}", f"{u.gpu_days_used:,.0f}", f"{u.idle_gpu_days:,.0f}", f"{share:.0%}",
                     money(u.idle_cost), esc(last)])
    total_idle = sum(u.idle_cost for u in plan.rental_use)
    rows.append(["", "<strong>" + _("total") + "</strong>", "", "", f"{sum(u.gpu_days_paid for u in plan.rental_use):,.0f}",
                 f"{sum(u.gpu_days_used for u in plan.rental_use):,.0f}",
                 f"{sum(u.idle_gpu_days for u in plan.rental_use):,.0f}", "",
                 f"<strong>{money(total_idle)}</strong>", ""])
    return (_table(["#", _("offer"), _("mode"), _("held"), _("GPU-days paid"), _("GPU-days used by jobs"),
                    _("GPU-days idle"), _("idle"), _("idle cost ({unit})").format(unit=unit(plan.currency)),
                    _("used until") if plan.start_date is None else _("last day used")],
                   rows, numeric=(0, 4, 5, 6, 7, 8), cls="idle")
            + "<p>" + esc(_("Idle cost is the line's cost × idle ÷ paid GPU-days: a committed term is paid to its end "
                            "(past the last job's finish too), and a job's groups may leave GPUs of a node "
                            "unused.")) + "</p>")


def _job_rental_table(plan: Plan) -> str:
    """GPU-days of each job on each rental line (#, as in the rentals table)."""
    per_job: dict[str, float] = {}
    for jr in plan.job_rentals:
        per_job[jr.job] = per_job.get(jr.job, 0.0) + jr.gpu_days
    rows = [[esc(jr.job), str(jr.rental), esc(jr.offer), f"{jr.gpu_days:,.0f}",
             f"{jr.gpu_days / per_job[jr.job]:.0%}" if per_job[jr.job] else "—"] for jr in plan.job_rentals]
    return _table([_("job"), "#", _("offer"), _("GPU-days"), _("share of the job")], rows, numeric=(1, 3, 4),
                  cls="job-rentals")


def _jobs_table(plan: Plan, problem: Problem, catalog: Catalog) -> str:
    deadlines = {j.name: j.deadline_days for j in problem.jobs}
    rows = []
    for j in plan.jobs:
        lay = j.layout or {}
        memory = min((catalog.gpus[g].memory_gb for g in j.gpu_types if g in catalog.gpus), default=None)
        mem = f"{j.memory_per_gpu_gb:.1f}" + (" " + _("of {memory}").format(memory=f"{memory:g}") if memory else "")
        zero = lay.get("zero")
        rows.append([esc(j.name), f"{j.gpus:,}", esc(", ".join(j.gpu_types)) + " @ " + esc(", ".join(j.sites)),
                     str(lay.get("gpus", "—")),
                     esc(layout_words(j)) if lay else "—",
                     "—" if zero is None else (_("off") if zero == 0 else _("stage {n}").format(n=zero)),
                     "—" if "recompute" not in lay else (_("yes") if lay["recompute"] else _("no")),
                     "—" if "multi_node" not in lay else (_("yes") if lay["multi_node"] else _("no")),
                     mem, _finish_text(plan, j.finish_day, deadlines.get(j.name)),
                     f"{j.done_eflop:,.0f} / {j.required_eflop:,.0f}",
                     _margin_cell(j.mfu_margin, j.mfu_margin_low), esc(deadline_text(j))])
    return _table([_("job"), _("peak GPUs"), _("on"), _("GPUs per replica"), _("layout"), "ZeRO", _("recompute"),
                   _("spans nodes"), _("memory per GPU (GB)"),
                   _("last day / deadline") if plan.start_date else _("finish day / deadline"),
                   _("work done / needed (EFLOP)"), _("MFU margin"), _("in time")], rows, numeric=(1, 3, 8, 10, 11),
                  cls="jobs") + \
        "<p>" + esc(_(LAYOUT_GLOSS)) + " " + esc(_("Layout of the configuration that carries most of each job's "
                                                  "GPU-periods; work includes redundancy.")) + \
        " " + esc(_(MARGIN_GLOSS)) + " " + esc(deadline_gloss()) + "</p>"


def _margin_cell(margin: float | None, low: float | None) -> str:
    """The jobs table's MFU margin: the share, or the interval a search cut by the budget proved."""
    if margin is None:
        return "—"
    if low is None:
        return f"{margin:.1%}"
    return esc(_("down to {share}, perhaps to {low} (search cut by the budget)").format(
        share=f"{margin:.1%}", low=f"{low:.1%}"))


def _finish_text(plan: Plan, finish: int, deadline: int | None) -> str:
    """`217 / 217`, or with a start date the last day worked and the last day allowed."""
    if plan.start_date is None or deadline is None:
        return f"{finish} / {deadline if deadline is not None else '?'}"
    return f"{day_text(plan.start_date, max(finish - 1, 0))} / {day_text(plan.start_date, deadline - 1)}"


def _frontier_table(points: list[FrontierPoint], x_label: str, y_label: str) -> str:
    def fmt(label: str, v: float) -> str:
        return money(v) if is_money(label) else (f"{v:.1%}" if "share" in label else f"{v:g}")
    rows = [[str(i), esc(fmt(x_label, p.x)), esc(fmt(y_label, p.y)), esc(p.label), _("knee") if p.knee else ""]
            for i, p in enumerate(points, 1)]
    return _table(["#", esc(axis_label(x_label)), esc(axis_label(y_label)), _("mix (peak nodes × GPUs per node)"), ""],
                  rows, numeric=(0, 1, 2), cls="frontier")


def _why_section(why: dict, currency: str) -> str:
    """Runners-up per job (forced re-solves) and what one more unit of each binding limit is worth."""
    parts = []
    for job in why.get("jobs", []):
        rows = [[esc(a["label"]), money(a["cost"]) if a.get("cost") is not None else _("no plan"),
                 money(a["delta"]) if a.get("delta") is not None else "—", esc(reason_name(a["code"])), esc(a["text"])]
                for a in job.get("alternatives", [])]
        used = esc(_("{job}: uses {what}").format(job=job["job"], what=_(", ").join(job.get("used", []))))
        parts.append(f"<h3>{used}</h3>")
        parts.append(_table([_("alternative"), _("best plan forced onto it ({unit})").format(unit=unit(currency)),
                             _("vs this plan"), _("reason"), _("why")], rows, numeric=(1, 2), cls="why")
                     if rows else "<p>" + _("No other alternative has a plan.") + "</p>")
        for key, title in (("infeasible", N_("No plan when forced onto it")), ("excluded", N_("Left out before solving"))):
            apart = [[esc(a["label"]), esc(reason_name(a["code"])), esc(a["text"])] for a in job.get(key, [])]
            if apart:
                parts.append(f"<p>{_(title)}:</p>" + _table([_("option"), _("reason"), _("why")], apart,
                                                            cls="why-apart"))
    limits = [[esc(b["text"]), esc(b["relax"]), money(b["delta"]) if b.get("delta") is not None else "—"]
              for b in why.get("binding", []) if b.get("relax")]
    if limits:
        title = _("What one more unit of each binding limit is worth (re-solve delta, {unit})").format(
            unit=money_unit(currency))
        parts.append(f"<h3>{esc(title)}</h3>")
        parts.append(_table([_("limit"), _("relaxed by"), _("cost change")], limits, numeric=(2,), cls="why-binding"))
    return "\n".join(parts)


def _binding_table(plan: Plan) -> str:
    if not plan.binding:
        return "<p>" + esc(_("None: no budget, power, stock or deadline limit is reached.")) + "</p>"
    rows = [[esc(limit_name(b.kind)), esc(span_text(plan.start_date, b.start_day, b.end_day)), esc(binding_text(b))]
            for b in plan.binding]
    return _table([_("limit"), _("dates (first – last day)") if plan.start_date else _("days"), _("what")], rows,
                  cls="binding") + \
        "<p>" + esc(_("More of a limit reached could make the plan cheaper, or feasible sooner.")) + "</p>"


def layout_words(job) -> str:
    """A job's layout (JobResult.layout_text, "55 replicas of TP4×PP2 (DP55), recompute"), in Chinese
    written from its layout's numbers; the plan's own text in English."""
    lay = job.layout or {}
    if not is_zh() or not {"tp", "pp", "dp", "replicas"} <= set(lay):
        return job.layout_text
    shards = lay.get("zero_shards", 1)   # the group's own ZeRO sharding; `dp` is the job's whole DP
    group = f"TP{lay['tp']}×PP{lay['pp']}" + (_(" sharded over {n}").format(n=shards) if shards > 1 else "")
    parts = [_("{n} replicas of {group} (DP{dp})").format(n=lay["replicas"], group=group, dp=lay["dp"])]
    if lay.get("zero"):
        parts.append(f"ZeRO-{lay['zero']}")
    if lay.get("recompute"):
        parts.append(_("recompute"))
    return _(", ").join(parts)


def binding_text(b) -> str:
    """What a binding limit is (Binding.text), in Chinese written from its numbers; the plan's own text in English."""
    if not is_zh():
        return b.text
    fam = _families().get(b.kind)
    if fam is None or not isinstance(fam.labels.binding, str):
        return b.text
    money = fam.unit == _money()
    return _(fam.labels.binding).format(name=b.name, span=f"{b.start_day}–{b.end_day}",
                                        unit=money_unit(b.unit) if money else b.unit,
                                        used=f"{b.used:,.0f}" if money else f"{b.used:,.1f}",
                                        limit=f"{b.limit:,.1f}" if b.unit == "kW" else f"{b.limit:,.0f}")


def _families() -> dict:
    """The constraint families by name (solver.milp.registry through the api): their words.

    Imported here, when a limit is shown, not with the module: a plan's limits are shown after
    a solve has loaded the solver anyway, and `--help` or `estimate` need none of it."""
    from solver.api import FAMILIES

    return {fam.name: fam for fam in FAMILIES}


def _money() -> str:
    from solver.api import MONEY

    return MONEY


REASONS = {"price": N_("price"), "memory": N_("memory"), "power": N_("power"), "lead_time": N_("lead time"),
           "availability": N_("availability"), "residency": N_("residency"), "deadline": N_("deadline"),
           "fabric": N_("fabric"), "restrict": N_("restricted"), "stack": N_("software stack"), "spot": N_("spot"),
           "precision": N_("precision"), "window": N_("window"), "capacity": N_("capacity"),
           "dominated": N_("dominated")}
"""Why an option lost or was left out (solver.analysis.why.CODES, solver.milp.exclusion.CODES) in words,
in Chinese; an English report keeps the code, as `--json` does."""


def reason_name(code: str) -> str:
    return _(REASONS[code]) if is_zh() and code in REASONS else code


def family_labels(kind: str):
    """The words of the constraint family named `kind` (Family.labels); None: no such family."""
    fam = _families().get(kind)
    return None if fam is None else fam.labels


def limit_name(kind: str) -> str:
    """A limit's kind (Plan.binding's, a relaxation's: a constraint family's name) in words."""
    fam = _families().get(kind)
    return _(fam.labels.name) if fam is not None else kind


PRICE_UNITS = {"per gpu hour": N_("per GPU-hour"), "per node hour": N_("per node-hour"),
               "per gpu month": N_("per GPU-month"), "per node month": N_("per node-month"),
               "per node year": N_("per node-year")}
"""An offer's price_unit (its `cny_` prefix dropped) in words."""
TIME_UNITS = {"hour": N_("hour"), "month": N_("month"), "year": N_("year")}


def _assumptions(plan: Plan, problem: Problem, catalog: Catalog, used: dict) -> str:
    jobs = {j.name: j for j in problem.jobs}
    mfu_rows = []
    for r in plan.jobs:
        job = jobs.get(r.name)
        for g in r.gpu_types:
            gpu = catalog.gpus.get(g)
            if job is not None and job.mfu is not None:  # the user's number: the GPU row's source is not its source
                mfu_rows.append([esc(r.name), esc(g), f"{job.mfu:.0%}", esc(_("the job's override")), "—",
                                 esc(_("the problem file (mfu: of this job)"))])
            elif gpu is not None:
                confidence = {"high": _("high"), "medium": _("medium"), "low": _("low")}.get(gpu.confidence,
                                                                                          gpu.confidence)
                mfu_rows.append([esc(r.name), esc(g), f"{gpu.default_mfu:.0%}",
                                 esc(_("catalog default ({confidence} confidence)").format(confidence=confidence)),
                                 esc(gpu.as_of or "—"), esc(gpu.source)])
    periods = ngettext("{n} day", "{n} days", plan.schedule.period_days).format(n=plan.schedule.period_days)
    general = _table([_("what"), _("value")], [
        [_("start (day 0)"), esc(plan.start_date.isoformat()) if plan.start_date
         else esc(_("no date given: days count from 0"))],
        [esc(_("redundancy (extra work for failures and restarts)")), f"{problem.redundancy:.0%}"],
        [_("horizon"), esc(_("{days} days, in periods of {period}").format(days=problem.horizon_days, period=periods))],
        [_("budget"), f"{money(problem.budget)} {unit(plan.currency)}" if problem.budget else _("none")],
        [_("catalog"), esc(catalog.path or "—")],
    ], cls="general")
    offer_rows = []
    for name, o in used.items():
        if o is None:
            offer_rows.append([esc(name)] + ["?"] * 9)
            continue
        per = o.price_unit.removeprefix("cny_").replace("_", " ")
        per = _(PRICE_UNITS[per]) if per in PRICE_UNITS else per
        offer_rows.append([esc(name), esc(o.vendor), esc(o.datacenter), f"{o.price:,.2f} {unit(o.currency)} {esc(per)}",
                           f"{o.gpu_price_per_hour():.2f} {unit(o.currency)}",
                           f"{o.platform_fee_pct:g}%" if o.platform_fee_pct else "—",
                           f'<span class="warn">' + _("yes") + '</span>' if o.illustrative else _("no"),
                           esc(o.as_of or "—"), esc(o.source)])
    return ("<h3>" + _("General") + "</h3>" + general
            + "<h3>" + esc(_("Model FLOPs utilisation (MFU) per GPU used")) + "</h3>"
            + _table([_("job"), "GPU", "MFU", _("from"), _("as of"), _("source")], mfu_rows, numeric=(2,), cls="mfu")
            + "<h3>" + _("Prices of the offers in the plan") + "</h3>"
            + _table([_("offer"), _("vendor"), _("site"), _("price"), _("per GPU-h"), _("platform fee"),
                      _("illustrative"), _("as of"), _("source")], offer_rows, numeric=(3, 4), cls="prices"))


# ----- contract checklist (seed 002: 合同签署前必须确认的条款) -----------------------------------------
QUESTIONS = (
    ("storage", N_("Are storage and bandwidth included in the price?"), "含存储和带宽吗？"),
    ("stopped", N_("Is there a fee for stopped-but-kept machines (often {share} of the list price)? "
                   "Put the stop policy in a contract annex."), "停机保留费？停机策略写进合同附件"),
    ("faults", N_("Fault compensation: for an outage (power, network, hardware), is the machine-time fee refunded "
                  "in full, or only the rent of the outage itself?"), "故障赔偿条款"),
    ("performance", N_("Performance: at least {share} of the GPU's rated compute, for the GPU model named in the "
                       "contract?"), "性能达标：不低于官方标准算力的95%"),
    ("export", N_("Is export of model weights, logs and data free when training ends?"),
     "数据迁移：模型权重、日志、数据集是否免费导出？"),
)
"""The questions (English, translated by the catalog) and the rental guides' own Chinese clause,
shown beside the English question in an English report. Percentages are `{share}` (QUESTION_SHARES):
gettext tools read "50% of" as a printf placeholder."""
QUESTION_SHARES = {"stopped": "20–50%", "performance": "95%"}


def checklist(plan: Plan, problem: Problem, catalog: Catalog, used: dict) -> str:
    """Per vendor in the plan, the rental guides' contract questions, pre-answered where the catalog knows.
    In Chinese the whole checklist is Chinese; in English each question carries the guide's clause."""
    storage_tb = {j.name: j.storage_tb for j in problem.jobs}
    egress_tb = sum(j.egress_tb for j in problem.jobs)
    by_vendor: dict[str, list] = {}
    for o in used.values():
        if o is not None:
            by_vendor.setdefault(o.vendor, []).append(o)
    intro = esc(_("Before signing, ask every vendor in the plan: these are the clauses most rental disputes are "
                  "about (what the price includes, stopped-but-kept fees, fault compensation, performance, export)."))
    legend = _("{green}: what the catalog says — confirm it in writing; {ask}: the catalog does not know.").format(
        green='<span class="known">' + esc(_("Green")) + '</span>', ask='<span class="ask">' + esc(_("ask")) + '</span>')
    out = [f"<p>{intro} {legend}</p>"]
    for vendor, offers in sorted(by_vendor.items()):
        answers = _answers(offers, plan, storage_tb, egress_tb)
        rows = [[str(i), esc(_(q).format(share=QUESTION_SHARES.get(key, ""))) +
                 ("" if is_zh() else f' <span class="zh" lang="zh-CN">{esc(zh)}</span>'),
                 answers[key]] for i, (key, q, zh) in enumerate(QUESTIONS, 1)]
        names = ", ".join(sorted(f"{o.offer}" for o in offers))
        offers_line = esc(_("offers: {names}").format(names=names))
        out.append(f'<h3 class="vendor">{esc(vendor)}</h3><p class="muted">{offers_line}</p>'
                   + _table(["#", _("question"), _("what we know")], rows, cls="checklist"))
    return "\n".join(out)


def _answers(offers: list, plan: Plan, storage_tb: dict, egress_tb: float) -> dict[str, str]:
    def known(text: str) -> str:
        return f'<span class="known">{esc(text)}</span>'

    ask = '<span class="ask">' + esc(_("ask")) + '</span>'
    sites: dict[str, tuple[float, float, str]] = {}
    for o in offers:
        sites.setdefault(o.datacenter, (o.storage_per_tb_month, o.egress_per_tb, o.currency))
    storage_parts, egress_parts = [], []
    for site, (st, eg, cur) in sorted(sites.items()):
        price = _("included (0)") if st == 0 else _("{price} {unit}/TB-month").format(price=f"{st:,.0f}",
                                                                                     unit=money_unit(cur))
        storage_parts.append(_("{site}: storage {price}").format(site=site, price=price))
        egress_parts.append(f"{site}: " + (_("free (0)") if eg == 0 else f"{eg:,.0f} {money_unit(cur)}/TB"))
    fabric = [_("{offer}: {fabrics} at {prices} {unit}/node-{per} extra").format(
        offer=o.offer, fabrics=" / ".join(FABRIC_NAMES.get(ic, ic) for ic in o.interconnect),
        prices=" / ".join(f"{p:,.0f}" for p in o.interconnect_price),
        unit=money_unit(o.currency), per=_(TIME_UNITS[MODES[o.mode].unit])) for o in offers if any(o.interconnect_price)]
    semi = _("; ")
    storage = known(_("catalog: {what}").format(what=semi.join(storage_parts)) +
                    (_(". Interconnect {what}").format(what=semi.join(fabric)) if fabric
                     else _(". Interconnect included"))) + \
        " — " + _("{ask} about the bandwidth of the line to your data").format(ask=ask)
    guaranteed = sorted({o.perf_guarantee_pct for o in offers if o.perf_guarantee_pct is not None})
    unknown = [o.offer for o in offers if o.perf_guarantee_pct is None]
    if guaranteed:
        text = _("catalog: guaranteed {pcts}").format(pcts=", ".join(f"{g:g}%" for g in guaranteed))
        perf = known(text) + (' <span class="warn">' + esc(_("below 95%")) + '</span>' if min(guaranteed) < 95 else "")
        if unknown:
            perf += semi + _("{ask} for {offers}").format(ask=ask, offers=esc(", ".join(unknown)))
    else:
        perf = _("{ask} (no guarantee in the catalog)").format(ask=ask)
    spot = [o.offer for o in offers if o.preemptible]
    committed = [o for o in offers if o.committed]
    stopped = ask
    if committed:
        stopped += " — " + esc(_("committed contracts in the plan ({modes}) are paid for their whole term anyway").format(
            modes=", ".join(mode_name(m) for m in sorted({o.mode for o in committed}))))
    faults = ask
    if spot:
        faults += " — " + esc(_("spot capacity ({offers}) can be reclaimed without compensation; the plan counts its "
                                "preemptions as lost work").format(offers=", ".join(spot)))
    export = known(_("catalog: egress {what}").format(what=semi.join(egress_parts))) + \
        esc(_("; the problem exports {tb} TB in total").format(tb=f"{egress_tb:g}")) + " — " + \
        _("{ask} whether weights and data may leave free").format(ask=ask)
    return {"storage": storage, "stopped": stopped, "faults": faults, "performance": perf, "export": export}

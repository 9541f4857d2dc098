"""The report page's charts, drawn as inline SVG: the rentals over time (Gantt), the cost breakdown
and the frontier.

Why inline SVG drawn here: the file must open offline, years later, from an e-mail attachment — no
chart library, no CDN, no script at all. Text from problem, catalog and plan goes through `esc`.

Chart elements carry stable ids and classes for tests and for styling:
    svg#gantt    rect.bar (one per allocation row, class mode-<mode>), line.horizon
    svg#costs    rect.bar (one per nonzero part; rect.bar.negative for a discount)
    svg#frontier circle.point (one per point; .knee, .current), path.step, text.point-label (data-point: its
                 point, 1-based; placed by solver.report.labels inside the plot, nearest its own point)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solver.i18n import _, is_zh, money_unit, ngettext, text_width
from solver.model.ledger import blocks
from solver.model.modes import MODES, legend_order
from solver.model.plan import Allocation, Plan
from solver.model.problem import Problem
from solver.report.days import day_text, on, span_text
from solver.report.labels import Box, place_labels
from solver.report.markup import esc, unit
from solver.report.words import axis_label, mode_name, money, part_name

WIDTH = 1000  # SVG user units; every chart scales to the page width
LABEL_CHAR_PX, LABEL_HEIGHT_PX = 7.5, 14
"""A frontier point label's size in SVG units for placing it: 12-px text runs under 7.5 units a
character in the report's fonts (digits, "knee", "◀ this plan"), one line 14 high."""


def is_money(label: str) -> bool:
    """Whether a frontier axis label is money (solver.analysis.frontier's list), imported when a frontier
    is drawn: the terminal's summary sentence loads the page and with it these charts, and `estimate` must
    not load the solver."""
    from solver.analysis.frontier import is_money as money_axis
    return money_axis(label)


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


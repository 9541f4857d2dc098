"""A plan as one self-contained HTML file: summary, charts as inline SVG (solver.report.charts), tables
(solver.report.html_tables), contract checklist (solver.report.checklist).

Why no script and no external resource: the file must open offline, years later, from an e-mail
attachment. A Content-Security-Policy meta tag forbids every network fetch, so a stray external
reference fails loudly in a browser instead of leaking a request. All text from problem, catalog
and plan goes through html.escape (offer names, sources and job names are user input).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from pathlib import Path

from solver.files import check_new_file, write_text
from solver.i18n import _, current, headline, money_unit, ngettext
from solver.model.catalog import Catalog
from solver.model.plan import Allocation, Plan
from solver.model.problem import Problem
from solver.report.charts import FrontierPoint, cost_svg, frontier_points, frontier_svg, gantt_svg
from solver.report.checklist import checklist
from solver.report.days import day_text
from solver.report.deadline import robust_quantile_text
from solver.report.html_tables import (allocation_table, assumptions, binding_table, cash_flow_table, frontier_table,
                                       idle_table, job_rental_table, jobs_table, why_section)
from solver.report.markup import esc
from solver.report.words import axis_label, mode_name, money


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
        allocation_table(plan),
        "<h2>" + _("Cost breakdown") + "</h2>",
        cost_svg(plan),
        "<h2>" + _("Jobs") + "</h2>",
        jobs_table(plan, problem, catalog),
    ]
    if plan.cash_flow:
        sections += ["<h2>" + _("Cash flow") + "</h2>", cash_flow_table(plan)]
    if plan.rental_use:
        sections += ["<h2>" + _("Paid but idle") + "</h2>", idle_table(plan)]
    if plan.job_rentals:
        sections += ["<h2>" + _("Which job runs on which rental") + "</h2>", job_rental_table(plan)]
    if frontier is not None:
        points, x_label, y_label, _title = frontier_points(frontier, plan.currency)
        if points:
            title = _frontier_title(points, x_label, y_label)
            sections += ["<h2>" + esc(_("Frontier: {title}").format(title=title)) + "</h2>",
                         frontier_svg(points, x_label, y_label, current=(_finish(plan), plan.total_cost)
                                      if "finishing day" in x_label and "cost" in y_label else None),
                         frontier_table(points, x_label, y_label)]
    if why is not None:
        sections += ["<h2>" + _("Why this plan") + "</h2>", why_section(why, plan.currency)]
    if plan.warnings:
        sections += ["<h2>" + _("Warnings") + "</h2>",
                     "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in plan.warnings) + "</ul>"]
    sections += ["<h2>" + _("Limits the plan runs into") + "</h2>", binding_table(plan),
                 "<h2>" + _("Assumptions") + "</h2>", assumptions(plan, problem, catalog, used),
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


# ----- summary -------------------------------------------------------------------------------------------
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

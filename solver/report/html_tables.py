"""The report page's tables: rental lines, cash flow, idle GPUs, job × rental, jobs, the frontier's
points, why, the limits reached and the assumptions (HTML; every cell escaped with `esc`)."""

from __future__ import annotations

from solver.i18n import N_, _, money_unit, ngettext
from solver.model.catalog import Catalog
from solver.model.ledger import BILLING
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.report.cash import cash_flow_grid
from solver.report.charts import FrontierPoint, is_money
from solver.report.contracts import contract_lines, gpus_text, merged_note, nodes_text
from solver.report.days import day_text, span_text
from solver.report.deadline import deadline_gloss, deadline_text
from solver.report.markup import esc, table, unit
from solver.report.words import (LAYOUT_GLOSS, MARGIN_GLOSS, PRICE_UNITS, axis_label, binding_text, layout_words,
                                 limit_name, mode_name, money, reason_name)


def allocation_table(plan: Plan) -> str:
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
    return (table(["#", _("site"), _("vendor"), _("mode"), _("offer"), "GPU", _("fabric"), _("nodes"), _("GPUs"), when,
                    _("cost ({unit})").format(unit=unit(plan.currency))], rows, numeric=(0, 7, 8, 10),
                   cls="allocations")
            + "".join(f'<p class="merged">{esc(note)}</p>' for note in notes))


def cash_flow_table(plan: Plan) -> str:
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
            + table(head, rows, numeric=range(1, len(head)), cls="cash-flow").replace("<table", '<table id="cash-flow"', 1)
            + f'<ul class="billing">{notes}</ul>')


def idle_table(plan: Plan) -> str:
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
    return (table(["#", _("offer"), _("mode"), _("held"), _("GPU-days paid"), _("GPU-days used by jobs"),
                    _("GPU-days idle"), _("idle"), _("idle cost ({unit})").format(unit=unit(plan.currency)),
                    _("used until") if plan.start_date is None else _("last day used")],
                   rows, numeric=(0, 4, 5, 6, 7, 8), cls="idle")
            + "<p>" + esc(_("Idle cost is the line's cost × idle ÷ paid GPU-days: a committed term is paid to its end "
                            "(past the last job's finish too), and a job's groups may leave GPUs of a node "
                            "unused.")) + "</p>")


def job_rental_table(plan: Plan) -> str:
    """GPU-days of each job on each rental line (#, as in the rentals table)."""
    per_job: dict[str, float] = {}
    for jr in plan.job_rentals:
        per_job[jr.job] = per_job.get(jr.job, 0.0) + jr.gpu_days
    rows = [[esc(jr.job), str(jr.rental), esc(jr.offer), f"{jr.gpu_days:,.0f}",
             f"{jr.gpu_days / per_job[jr.job]:.0%}" if per_job[jr.job] else "—"] for jr in plan.job_rentals]
    return table([_("job"), "#", _("offer"), _("GPU-days"), _("share of the job")], rows, numeric=(1, 3, 4),
                  cls="job-rentals")


def jobs_table(plan: Plan, problem: Problem, catalog: Catalog) -> str:
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
    return table([_("job"), _("peak GPUs"), _("on"), _("GPUs per replica"), _("layout"), "ZeRO", _("recompute"),
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


def frontier_table(points: list[FrontierPoint], x_label: str, y_label: str) -> str:
    def fmt(label: str, v: float) -> str:
        return money(v) if is_money(label) else (f"{v:.1%}" if "share" in label else f"{v:g}")
    rows = [[str(i), esc(fmt(x_label, p.x)), esc(fmt(y_label, p.y)), esc(p.label), _("knee") if p.knee else ""]
            for i, p in enumerate(points, 1)]
    return table(["#", esc(axis_label(x_label)), esc(axis_label(y_label)), _("mix (peak nodes × GPUs per node)"), ""],
                  rows, numeric=(0, 1, 2), cls="frontier")


def why_section(why: dict, currency: str) -> str:
    """Runners-up per job (forced re-solves) and what one more unit of each binding limit is worth."""
    parts = []
    for job in why.get("jobs", []):
        rows = [[esc(a["label"]), money(a["cost"]) if a.get("cost") is not None else _("no plan"),
                 money(a["delta"]) if a.get("delta") is not None else "—", esc(reason_name(a["code"])), esc(a["text"])]
                for a in job.get("alternatives", [])]
        used = esc(_("{job}: uses {what}").format(job=job["job"], what=_(", ").join(job.get("used", []))))
        parts.append(f"<h3>{used}</h3>")
        parts.append(table([_("alternative"), _("best plan forced onto it ({unit})").format(unit=unit(currency)),
                             _("vs this plan"), _("reason"), _("why")], rows, numeric=(1, 2), cls="why")
                     if rows else "<p>" + _("No other alternative has a plan.") + "</p>")
        for key, title in (("infeasible", N_("No plan when forced onto it")), ("excluded", N_("Left out before solving"))):
            apart = [[esc(a["label"]), esc(reason_name(a["code"])), esc(a["text"])] for a in job.get(key, [])]
            if apart:
                parts.append(f"<p>{_(title)}:</p>" + table([_("option"), _("reason"), _("why")], apart,
                                                            cls="why-apart"))
    limits = [[esc(b["text"]), esc(b["relax"]), money(b["delta"]) if b.get("delta") is not None else "—"]
              for b in why.get("binding", []) if b.get("relax")]
    if limits:
        title = _("What one more unit of each binding limit is worth (re-solve delta, {unit})").format(
            unit=money_unit(currency))
        parts.append(f"<h3>{esc(title)}</h3>")
        parts.append(table([_("limit"), _("relaxed by"), _("cost change")], limits, numeric=(2,), cls="why-binding"))
    return "\n".join(parts)


def binding_table(plan: Plan) -> str:
    if not plan.binding:
        return "<p>" + esc(_("None: no budget, power, stock or deadline limit is reached.")) + "</p>"
    rows = [[esc(limit_name(b.kind)), esc(span_text(plan.start_date, b.start_day, b.end_day)), esc(binding_text(b))]
            for b in plan.binding]
    return table([_("limit"), _("dates (first – last day)") if plan.start_date else _("days"), _("what")], rows,
                  cls="binding") + \
        "<p>" + esc(_("More of a limit reached could make the plan cheaper, or feasible sooner.")) + "</p>"


def assumptions(plan: Plan, problem: Problem, catalog: Catalog, used: dict) -> str:
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
    general = table([_("what"), _("value")], [
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
            + table([_("job"), "GPU", "MFU", _("from"), _("as of"), _("source")], mfu_rows, numeric=(2,), cls="mfu")
            + "<h3>" + _("Prices of the offers in the plan") + "</h3>"
            + table([_("offer"), _("vendor"), _("site"), _("price"), _("per GPU-h"), _("platform fee"),
                      _("illustrative"), _("as of"), _("source")], offer_rows, numeric=(3, 4), cls="prices"))

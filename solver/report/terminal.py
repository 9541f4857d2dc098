"""Rich tables for the terminal: every figure says its unit. And the JSON a command prints instead.

print_json is the one writer of a command's --json answer: one object (or list) on stdout,
indented, non-ASCII kept as written, anything else (dates, paths) as its text.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.model.ledger import BILLING
from solver.model.plan import Plan, ThinJob, ThinMargin
from solver.model.problem import Problem
from solver.report.contracts import contract_lines, gpus_text, merged_note, nodes_text
from solver.report.fit import Col, Grid, fit_or_none, fitted, keep_whole
from solver.report.days import day_text, span_note, span_text
from solver.report.deadline import deadline_gloss, deadline_text, robust_quantile_text
from solver.report.cash import cash_flow_grid
from solver.report.words import LAYOUT_GLOSS, MARGIN_GLOSS, layout_words, mode_name
from solver.i18n import N_, _, amount, headline, is_zh, language, money_unit
from solver.report.json_out import print_json  # noqa: F401 (re-exported: callers that print plans and JSON)


def _money(value: float) -> str:
    return f"{value:,.0f}"


STATUS = {"optimal": N_("optimal"), "feasible": N_("feasible")}
TERMINAL_PARTS = {"gpu_rent": N_("gpu rent"), "interconnect": N_("interconnect"), "platform_fee": N_("platform fee"),
                  "storage": N_("storage"), "egress": N_("egress"), "volume_discount": N_("volume discount")}
"""The cost parts as the terminal names them."""
"""A plan's status in words."""


THIN_MARGIN = 0.10
"""A job whose MFU may fall by less than this share before its plan misses the deadline has a thin
margin (README: published MFU bands span ~10 points; a margin of 0.95 is thin): `solve --thin-margin`."""


def thin_margins(plan: Plan, threshold: float = THIN_MARGIN) -> list:
    """The jobs whose MFU margin leaves less headroom than `threshold` (1 − mfu_margin < threshold),
    thinnest first; a job whose margin was not computed is not judged, nor one planned below the
    estimate by its `confidence:` (its plan already carries the slower run asked for, and its
    probability of being in time stands beside its margin)."""
    thin = [j for j in plan.jobs if j.mfu_margin is not None and 1.0 - j.mfu_margin < threshold - 1e-9
            and (j.planned_factor is None or j.planned_factor >= 1.0)]
    return sorted(thin, key=lambda j: -j.mfu_margin)


def thin_margin_text(plan: Plan, threshold: float = THIN_MARGIN) -> str | None:
    """The headline's warning when a job's margin is thin, naming --robust (issue 47: every job at
    0–6 % passed silently); None when no job's is."""
    thin = thin_margins(plan, threshold)
    if not thin:
        return None
    jobs = _("; ").join(_("{job} {headroom}").format(job=j.name, headroom=_headroom(j)) for j in thin)
    then = (_("the robust plan below prices a slower run") if plan.robust_plan is not None else
            _("--robust prices a plan that still meets the deadlines at a lower MFU"))
    return _("thin MFU margin (below {threshold}): the MFU may fall only this much below plan before a deadline "
             "is missed: {jobs}; {then}").format(threshold=f"{threshold:.0%}", jobs=jobs, then=then)


def _headroom(job) -> str:
    """How far the job's MFU may fall: `1.2%`; `1.2–8.0%` when the margin's search was cut by the
    budget (`mfu_margin_low`: the margin lies above it, so the headroom is at least the proven
    1.2 % and less than 8.0 %). Judged thin on the proven end."""
    low = job.mfu_margin_low
    if low is None:
        return f"{1.0 - job.mfu_margin:.1%}"
    return f"{1.0 - job.mfu_margin:.1%}–{1.0 - low:.1%}"


def render_plan(plan: Plan, console: Console, *, thin_margin: float = THIN_MARGIN, deterministic: bool = False) -> None:
    """Allocation by site/vendor/mode/GPU, jobs with layout and finish day, cost breakdown, bound;
    under the headline, a thin MFU margin's warning (`thin_margin`: the headroom below which it warns)."""
    total = amount(plan.total_cost, plan.currency)
    if is_zh():  # the headline in 万元, the exact amount beside it
        total = f"{headline(plan.total_cost, plan.currency)}（{total}）"
    line = _("{problem}: {status}, total {total} (lower bound {bound}, gap {gap}, {seconds} s, {backend})").format(
        problem=f"[bold]{escape(plan.problem)}[/]", status=_(STATUS.get(plan.status, plan.status)), total=total,
        bound=_money(plan.lower_bound), gap=f"{plan.gap:.2%}", seconds=f"{plan.solve_seconds:.2f}",
        backend=plan.backend)
    console.print(line)
    if plan.status != "optimal" and deterministic:  # a node-limited answer: the same on every run
        console.print("[dim]" + _("not proven optimal: the solve stopped at its node limit (--deterministic), so "
                                  "every run gives this plan unless the command's budget ended first; more nodes "
                                  "may find a cheaper one, none below the lower bound") + "[/]", highlight=False)
    elif plan.status != "optimal":  # a time-limited answer: the same command may answer otherwise next time
        console.print("[dim]" + _("not proven optimal: the solve stopped at its time limit, so another run (or more "
                                  "time) may find a different plan, none below the lower bound; every output of this "
                                  "run shows this one") + "[/]", highlight=False)
    thin = thin_margin_text(plan, thin_margin)
    if thin is not None:
        console.print("[bold yellow]" + _("warning:") + f"[/] {escape(thin)}", highlight=False)
    if plan.stack_switch is not None:  # a switch the problem never asked for: in the headline, not the warnings
        console.print(f"[bold yellow]software stack:[/] {escape(plan.stack_switch.text)}", highlight=False)
    console.print(_allocation_table(plan, console.width))
    console.print(_jobs_table(plan, console.width))
    console.print(keep_whole(_cost_table(plan), console.width))
    if plan.robust_plan is not None:  # beside the optimum: what a plan surviving a slower run costs
        console.print("[bold]" + _("robust plan") + "[/] " + _("(every MFU × {factor}):").format(
            factor=f"{plan.robust_plan.mfu_factor:g}") + f" {escape(plan.robust_plan.text)}"
            + _("; ") + robust_quantile_text(plan.robust_plan.mfu_factor), highlight=False)
    if plan.rental_use:
        if any(u.idle_gpu_days >= IDLE_SHOWN for u in plan.rental_use):
            console.print(_use_table(plan, console.width))
        else:
            console.print(_("Paid but idle: none; every rental line is used by jobs for all the GPU-days paid."),
                          highlight=False)
    if plan.job_rentals:
        console.print(_job_rental_table(plan, console.width))
        if len(plan.job_rentals) > SHOWN_ROWS:
            console.print(_("… {n} more job × rental rows in --json (job_rentals) and --xlsx").format(
                n=len(plan.job_rentals) - SHOWN_ROWS), highlight=False)
    if plan.cash_flow:
        for table in _cash_table(plan, console.width):
            console.print(table)
        console.print(billing_note(plan), highlight=False, markup=False)
    for text in plan.warnings:
        console.print("[yellow]" + _("warning:") + f"[/] {escape(text)}", highlight=False)
    for pref in plan.preferences:  # the others (kept, declined, ...) are warnings above, with their price
        if pref.outcome == "met":
            console.print(_("preference: {text}").format(text=escape(pref.text)), highlight=False)


def _allocation_table(plan: Plan, width: int = 100) -> Table:
    """One line per contract or run of hourly periods; with a start date its first and last day held.
    Lines of one offer that overlap in time show as one (`1+2`, nodes `2→3→1`; solver.report.contracts),
    with a note under the table saying what they join.
    Within `width`: GPU and fabric, site and vendor, nodes and GPUs, from and to fold one above the
    other (in that order) when the columns do not fit side by side; no date or amount is ever cut."""
    dated = plan.start_date is not None
    when = (_("from"), _("to")) if dated else (_("days"),)
    right = {"#", _("nodes"), "GPUs", _("cost")}
    cols = [Col(h, "right" if h in right else "left", ident=h in (_("site"), _("vendor"), "GPU", _("fabric")))
            for h in ("#", _("site"), _("vendor"), _("mode"), "GPU", _("fabric"), _("nodes"), "GPUs", *when,
                      _("cost"))]
    grid = Grid(_("Rentals ({days}; cost in {unit} incl. fee, after discount)").format(
        days=span_note(plan.start_date), unit=money_unit(plan.currency)), cols,
        folds=[("GPU", _("fabric")), (_("site"), _("vendor")), (_("nodes"), "GPUs"), *([when] if dated else [])],
        options={"caption_justify": "left"})
    lines = contract_lines(plan.allocations)
    for line in lines:
        a = line.first
        if dated:
            days = (day_text(plan.start_date, line.start_day), day_text(plan.start_date, line.end_day - 1))
        else:
            days = (span_text(None, line.start_day, line.end_day),)
        grid.rows.append([line.label(), *map(escape, (a.datacenter, a.vendor, mode_name(a.mode), a.gpu,
                                                       a.interconnect)),
                          nodes_text(line), gpus_text(line), *days, _money(line.cost)])
    notes = [merged_note(line, lambda lo, hi: span_text(plan.start_date, lo, hi) if dated else
                         _("days {span}").format(span=span_text(None, lo, hi))) for line in lines if line.merged]
    grid.caption = escape("\n".join(notes)) if notes else None
    return fitted(grid, width)


IDLE_SHOWN = 0.5
"""GPU-days idle from which a plan's rentals count as idle at all (below it on every line: one "none" line)."""
SHOWN_ROWS = 30
"""Job × rental rows shown in the terminal; the rest are in --json and --xlsx."""


def _use_table(plan: Plan, width: int = 100) -> Table:
    """Every rental line (its # in the rentals table), in number order: GPU-days paid, used by jobs, idle,
    and the idle cost, and a totals row. Every line, fully used ones too: a 3-rental plan showing only
    line 3 read as if lines 1 and 2 were missing (issue 47, item 7)."""
    last = N_("last day used") if plan.start_date else N_("used until day")
    table = Grid(_("Paid but idle (GPU-days per rental #; idle cost in {unit} = cost × idle ÷ paid)").format(
        unit=money_unit(plan.currency)), [Col(_(col), "left" if col == "mode" else "right") for col in (
            "#", N_("mode"), N_("paid"), N_("used"), N_("idle"), N_("idle %"), N_("idle cost"), last)])
    for u in sorted(plan.rental_use, key=lambda u: u.rental):
        share = u.idle_gpu_days / u.gpu_days_paid if u.gpu_days_paid else 0.0
        table.rows.append([str(u.rental), mode_name(u.mode), f"{u.gpu_days_paid:,.0f}", f"{u.gpu_days_used:,.0f}",
                      f"{u.idle_gpu_days:,.0f}", f"{share:.0%}", _money(u.idle_cost),
                      _("never") if u.last_used_day is None else
                      day_text(plan.start_date, u.last_used_day - 1) if plan.start_date else str(u.last_used_day)])
    idle = sum(u.idle_cost for u in plan.rental_use)
    table.rows.append(["", "[bold]" + _("total") + "[/]", f"{sum(u.gpu_days_paid for u in plan.rental_use):,.0f}",
                  f"{sum(u.gpu_days_used for u in plan.rental_use):,.0f}",
                  f"{sum(u.idle_gpu_days for u in plan.rental_use):,.0f}", "", f"[bold]{_money(idle)}[/]", ""])
    return fitted(table, width)


def _job_rental_table(plan: Plan, width: int = 100) -> Table:
    """Which job runs on which rental line: GPU-days, and the share of the job's GPU-days."""
    table = Grid(_("Which job runs on which rental (GPU-days)"), [
        Col(_(col), "right" if col in ("#", "GPU-days", "of the job") else "left", ident=col in ("job", "offer"))
        for col in (N_("job"), "#", N_("offer"), N_("GPU-days"), N_("of the job"))])
    per_job: dict[str, float] = {}
    for jr in plan.job_rentals:
        per_job[jr.job] = per_job.get(jr.job, 0.0) + jr.gpu_days
    order = {j.name: i for i, j in enumerate(plan.jobs)}
    for jr in sorted(plan.job_rentals, key=lambda jr: (order.get(jr.job, 0), jr.rental))[:SHOWN_ROWS]:
        share = jr.gpu_days / per_job[jr.job] if per_job[jr.job] else 0.0
        table.rows.append([escape(jr.job), str(jr.rental), escape(jr.offer), f"{jr.gpu_days:,.0f}", f"{share:.0%}"])
    return fitted(table, width)


def _cash_table(plan: Plan, width: int = 100) -> list[Table]:
    """What is paid per month (or 30-day block), one column per vendor and mode, with totals; as
    several tables of fewer vendor columns each (the total in the last) when one does not fit `width`."""
    grid = cash_flow_grid(plan)
    unit = _("calendar month") if plan.start_date else _("30 days from day 0")
    title = _("Cash flow ({currency} per {unit})").format(currency=money_unit(plan.currency), unit=unit)
    first = [escape(label.removeprefix("days ")) for label, _a, _t in grid.rows] + ["[bold]" + _("total") + "[/]"]
    columns = [(Col(f"{escape(vendor)} {mode_name(mode)}", "right", ident=True),
                ["" if v is None else _money(v) for v in [*(r[1][k] for r in grid.rows), grid.totals[k]]])
               for k, (vendor, mode) in enumerate(grid.columns)]
    columns.append((Col(_("total"), "right"), [_money(t) for _l, _a, t in grid.rows]
                    + [f"[bold]{_money(sum(grid.totals))}[/]"]))
    tables, start = [], 0
    while start < len(columns):  # the most columns that fit, then the next table from there
        for end in range(len(columns), start, -1):
            part = columns[start:end]
            table = Grid(title if start == 0 else "", [Col(_("month") if plan.start_date else _("days"))]
                         + [c for c, _v in part], [[f, *(v[i] for _c, v in part)] for i, f in enumerate(first)])
            shown = fit_or_none(table, width)
            if shown is not None or end == start + 1:
                tables.append(shown or fitted(table, width))
                start = end
                break
    return tables


def billing_note(plan: Plan) -> str:
    """The billing assumptions behind the cash flow's rows, one clause each (solver.model.ledger.BILLING)."""
    used = dict.fromkeys(p.billing for p in plan.cash_flow)
    return _("billing: ") + _("; ").join(f"{_(b)} = {_(BILLING[b])}" for b in used if b in BILLING)


def _jobs_table(plan: Plan, width: int = 100) -> Table:
    """Each job: GPUs, where, layout, memory, finish, work and MFU margin. Within `width`, the layout
    folds under where it runs and GB/GPU under GPUs when the columns do not fit side by side."""
    finish = N_("last day") if plan.start_date else N_("finish day")
    cols = [Col(_(col), ident=col == "job") for col in (N_("job"), "GPUs", N_("on"), N_("layout"), "GB/GPU", finish,
                                                        N_("work done / needed"), N_("MFU margin"))]
    table = Grid(_("Jobs (work in EFLOP = 1e18 FLOPs, redundancy included)"), cols,
                 folds=[(_("on"), _("layout")), ("GPUs", "GB/GPU")])
    for j in plan.jobs:
        table.rows.append([escape(j.name), str(j.gpus), escape(", ".join(j.gpu_types) + " @ " + ", ".join(j.sites)),
                           escape(layout_words(j)), f"{j.memory_per_gpu_gb:.1f}",
                           day_text(plan.start_date, j.finish_day - 1) if plan.start_date and j.finish_day else
                           str(j.finish_day),
                           f"{j.done_eflop:,.0f} / {j.required_eflop:,.0f}", _margin_and_deadline(j)])
    table.caption = _(LAYOUT_GLOSS)
    if any(j.mfu_margin is not None for j in plan.jobs):
        table.caption += " " + _(MARGIN_GLOSS)
    if any(j.deadline_probability is not None for j in plan.jobs):
        table.caption += " " + deadline_gloss()
    return fitted(table, width)


def _margin_and_deadline(job) -> str:
    """The margin, and under it how likely the job is in time (solver.report.deadline): `down to 94.8%` /
    `in time 92%, planned at 66% of the estimate`."""
    margin = margin_text(job.mfu_margin, job.mfu_margin_low)
    if job.deadline_probability is None:
        return margin
    return margin + "\n" + escape(_("in time {what}").format(what=deadline_text(job)))


def margin_text(margin: float | None, low: float | None = None) -> str:
    """`down to 83.4 %` of the planned MFU; `—` for a job with no work; a search cut by the budget
    (`low` set) as the interval it proved: `down to 83.4 %, perhaps to 41.7 % (cut by the budget)`."""
    if margin is None:
        return "—"
    if low is not None:
        return _("down to {share}, perhaps to {low} (search cut by the budget)").format(
            share=f"{margin:.1%}", low=f"{low:.1%}")
    return _("down to {share}").format(share=f"{margin:.1%}")


def _cost_table(plan: Plan) -> Table:
    table = Table(title=_("Cost breakdown ({unit})").format(unit=money_unit(plan.currency)))
    table.add_column(_("part"))
    table.add_column(_("cost"), justify="right")
    for part, value in plan.cost_breakdown.items():
        if abs(value) >= 0.005:
            table.add_row(_(TERMINAL_PARTS.get(part, part.replace("_", " "))), _money(value))
    table.add_row("[bold]" + _("total") + "[/]", f"[bold]{_money(plan.total_cost)}[/]")
    return table


def render_baselines(plan: Plan, baselines: list, console: Console) -> None:
    """The optimum against the spreadsheet ways of doing it, with the saving of each."""
    table = Table(title=_("Against simpler plans ({unit})").format(unit=money_unit(plan.currency)))
    saves = N_("optimum saves") if plan.status == "optimal" else N_("plan saves")  # "optimum" only when proven
    for col in (N_("plan"), N_("cost"), saves, N_("how")):
        table.add_column(_(col), justify="right" if col in ("cost", saves) else "left")
    for b in baselines:
        saving = b.saving(plan.total_cost)
        upper = "≤ " if b.status == "feasible" else ""  # the baseline's own optimum may be cheaper
        cost = {"infeasible": _("infeasible"), "undetermined": _("not determined")}.get(b.status, _money(b.cost or 0))
        table.add_row(escape(b.name), cost, "—" if saving is None else f"{upper}{saving:.1%}", escape(b.detail))
    console.print(keep_whole(table, console.width))
    if any(b.status == "feasible" for b in baselines):
        console.print(_("≤: that baseline was not solved to optimality in the time given, so the optimum saves "
                        "at most this much against it") if plan.status == "optimal" else
                      _("≤: that baseline was not solved to optimality in the time given, so the plan saves "
                        "at most this much against it"), highlight=False)


def render_written(paths: list[Path], console: Console) -> None:
    """One "wrote PATH" line per file written beside the terminal output."""
    for path in paths:
        console.print(_("wrote {path}").format(path=path), highlight=False, markup=False)


def render_report_written(plan: Plan, problem: Problem, path: Path) -> None:
    """`gpuplan report`: the report's summary sentence as plain text, and the file written."""
    console = Console(soft_wrap=True)
    from solver.report.html import plain_summary  # with the frontier's labels: not loaded for `estimate`
    console.print(plain_summary(plan, problem), highlight=False, markup=False)
    render_written([path], console)


def solve_json(plan: Plan, *, why: dict | None = None, baselines: list | None = None,
               thin_margin: float = THIN_MARGIN) -> dict:
    """`gpuplan solve --json`: the plan, with --why's and --baselines' answers when asked for, and
    `thin_margin` when a job's MFU margin is thin (the headline's warning; absent otherwise)."""
    data = plan.model_dump(mode="json")
    thin = thin_margins(plan, thin_margin)
    data.pop("thin_margin", None)
    if thin:
        with language("en"):  # --json stays English
            text = thin_margin_text(plan, thin_margin)
        data["thin_margin"] = ThinMargin(threshold=thin_margin, text=text, jobs=[
            ThinJob(job=j.name, mfu_margin=j.mfu_margin, headroom=round(1.0 - j.mfu_margin, 4)) for j in thin
        ]).model_dump(mode="json")
    if data.get("robust_plan") is None:  # only when asked for (--robust, the problem's robust)
        data.pop("robust_plan", None)
    if why is not None:
        data["why"] = why
    if baselines is not None:
        data["baselines"] = [b.to_dict(plan.total_cost) for b in baselines]
    return data


def infeasible_json(exc, currency: str) -> dict:
    """`gpuplan solve --json` when there is no plan: what was ruled out, and the relaxations found
    (a budget's in `currency`, the problem's)."""
    return {"status": "infeasible", "proven": exc.proven, "currency": currency, "message": str(exc),
            "reasons": exc.reasons, "explanation": exc.explanation}

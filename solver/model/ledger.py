"""What a plan's rentals carry and what it pays when: summaries read from its schedule.

Three readings of a plan's allocations and schedule, for people who act on it:
- `job_rentals`: GPU-days of each job on each rental line (which job runs on which rental);
- `rental_use`: per rental line, GPU-days paid, used by jobs and idle, and the idle part's cost;
- `cash_flow`: what is paid to each vendor for each mode in each calendar month (the problem's
  `start_date` given) or 30-day block from day 0.

Billing assumptions (BILLING): hourly and spot nodes are paid as used, in the month used;
a committed term (monthly, yearly, hosted) is paid per month of term — each month pays the
term's days in it, cost × days ÷ term days — unless the offer's `billing` column says
`upfront` (the whole term on its first day); storage is paid as kept, per day; a job's
egress when it finishes (on its last day), a dataset's move to another site when the job
may start (its start_day), listed under the data site.

Pure functions over the model's nouns, so any layer may read them: solver.milp.extract
fills the Plan with them, solver.report draws them. solver.verify checks them in its own code.

Why a job's GPU-days are shared between lines in proportion to their GPUs: two contracts on
the same offer and fabric held in the same period (one starting while the other runs) are
one pool to the planner; which one a replica sits on is not decided, so neither is shown
idle while the other is full.
"""

from __future__ import annotations

import calendar
import math
from collections import defaultdict
from datetime import date, timedelta

from solver.i18n import N_
from solver.model.catalog import Catalog
from solver.model.modes import MODES
from solver.model.plan import Allocation, Assignment, JobRental, Payment, RentalUse
from solver.model.problem import Problem

BLOCK_DAYS = 30
"""Length of a cash-flow block when the problem has no start_date (a month is 30 days, as prices say)."""

BILLING = {
    N_("as used"): N_("hourly and spot nodes: paid for the days held, in the month they are held"),
    N_("per month of term"): N_("committed terms (monthly, yearly, hosted) by default: each month pays the term's "
                                "days in it (cost × days ÷ term days)"),
    N_("up front"): N_("committed terms whose offer says billing = upfront: the whole term on its first day"),
    N_("on finish"): N_("a job's egress: when the job finishes (its last day)"),
    N_("on start"): N_("moving a job's dataset to another site: on the job's start day, listed under the data site"),
}
"""The billing assumption behind each cash-flow row's `billing`, in words (the reports print them)."""


def _cents(amount: float) -> float:
    return round(round(amount, 6), 2)


def period_days(period: int, width: int, horizon_days: int) -> tuple[int, int]:
    """First day and the day after the last of a period (the last period may be short)."""
    return period * width, min((period + 1) * width, horizon_days)


# ----- which job runs on which rental ---------------------------------------------------------------

def _lines_by_offer(allocations: list[Allocation]) -> dict[tuple[str, str], list[tuple[int, Allocation]]]:
    """Rental lines (with their 1-based numbers) by offer and fabric."""
    out: dict[tuple[str, str], list[tuple[int, Allocation]]] = defaultdict(list)
    for n, r in enumerate(allocations, start=1):
        out[r.offer, r.interconnect].append((n, r))
    return out


def job_rentals(allocations: list[Allocation], assignments: list[Assignment], width: int,
                horizon_days: int) -> list[JobRental]:
    """GPU-days of each job on each rental line: an assignment's GPUs × its period's days, shared
    between the lines of its offer and fabric held in that period in proportion to GPUs × days held."""
    out: dict[tuple[str, int], float] = defaultdict(float)
    lines = _lines_by_offer(allocations)
    for a in assignments:
        first, end = period_days(a.period, width, horizon_days)
        holders = [(n, r.gpus * (min(end, r.end_day) - max(first, r.start_day)))
                   for n, r in lines.get((a.offer, a.interconnect), ())
                   if r.start_day < end and r.end_day > first]
        weight = sum(w for _, w in holders)
        if weight <= 0:
            continue  # no line holds it: the verifier rejects such a plan
        gpu_days = a.replicas * a.group_gpus * (end - first)
        for n, w in holders:
            if w > 0:
                out[a.job, n] += gpu_days * w / weight
    return [JobRental(job=job, rental=n, offer=allocations[n - 1].offer, gpu_days=round(days, 2))
            for (job, n), days in sorted(out.items(), key=lambda item: (item[0][1], item[0][0]))]


def rental_use(allocations: list[Allocation], assignments: list[Assignment], width: int,
               horizon_days: int) -> list[RentalUse]:
    """Per rental line: GPU-days paid (GPUs × days held, to the term's end), used by jobs, idle,
    and the idle part's cost (the line's cost × idle ÷ paid)."""
    used: dict[int, float] = defaultdict(float)
    for jr in job_rentals(allocations, assignments, width, horizon_days):
        used[jr.rental] += jr.gpu_days
    last: dict[int, int] = {}
    lines = _lines_by_offer(allocations)
    for a in assignments:
        first, end = period_days(a.period, width, horizon_days)
        for n, r in lines.get((a.offer, a.interconnect), ()):
            if r.start_day < end and r.end_day > first:
                last[n] = max(last.get(n, 0), min(end, r.end_day))
    out = []
    for n, r in enumerate(allocations, start=1):
        paid = r.gpus * (r.end_day - r.start_day)
        idle = max(paid - used[n], 0.0)
        out.append(RentalUse(rental=n, offer=r.offer, mode=r.mode, start_day=r.start_day, end_day=r.end_day,
                             gpu_days_paid=float(paid), gpu_days_used=round(used[n], 2),
                             idle_gpu_days=round(idle, 2), idle_cost=_cents(r.cost * idle / paid if paid else 0.0),
                             last_used_day=last.get(n)))
    return out


# ----- when money is paid ---------------------------------------------------------------------------

def blocks(start_date: date | None, first_day: int, end_day: int) -> list[tuple[int, str, int, int]]:
    """(block, label, first day, day after the last) of the calendar months (start_date given) or
    30-day blocks from day 0 that days first_day..end_day-1 touch; a month is cut to the plan's days."""
    out = []
    if start_date is None:
        for b in range(first_day // BLOCK_DAYS, -(-end_day // BLOCK_DAYS)):
            lo, hi = b * BLOCK_DAYS, (b + 1) * BLOCK_DAYS
            out.append((b, f"days {lo}–{hi - 1}", lo, hi))
        return out
    b, year, month = 0, start_date.year, start_date.month
    while True:
        lo = max((date(year, month, 1) - start_date).days, 0)
        hi = (date(year, month, calendar.monthrange(year, month)[1]) - start_date).days + 1
        if lo >= end_day:
            return out
        if hi > first_day:
            out.append((b, f"{year:04d}-{month:02d}", lo, hi))
        b, month = b + 1, month % 12 + 1
        year += month == 1


def day_date(start_date: date | None, day: int) -> date | None:
    """The calendar date of a plan day (None without a start_date)."""
    return None if start_date is None else start_date + timedelta(days=day)


def cash_flow(allocations: list[Allocation], assignments: list[Assignment], problem: Problem, catalog: Catalog,
              width: int) -> list[Payment]:
    """What is paid per block (calendar month or 30-day block), vendor, mode and billing: rentals as
    BILLING says, storage per day kept, egress once (see the module doc). The amounts add up to the
    plan's total cost (to the cent per row)."""
    horizon = problem.horizon_days
    spread: list[tuple[str, str, str, int, int, float]] = []   # vendor, mode, billing, first day, end day, amount
    for r in allocations:
        offer = catalog.offers.get(r.offer)
        if not MODES[r.mode].committed:
            spread.append((r.vendor, r.mode, "as used", r.start_day, r.end_day, r.cost))
        elif offer is not None and offer.billing == "upfront":
            spread.append((r.vendor, r.mode, "up front", r.start_day, r.start_day + 1, r.cost))
        else:
            spread.append((r.vendor, r.mode, "per month of term", r.start_day, r.end_day, r.cost))
    spread += _data_payments(assignments, problem, catalog, width, horizon)
    totals: dict[tuple[int, str, str, str], float] = defaultdict(float)
    info: dict[int, tuple[str, int, int]] = {}
    for vendor, mode, billing, lo, hi, amount in spread:
        if hi <= lo or abs(amount) < 1e-9:
            continue
        for b, label, first, end in blocks(problem.start_date, lo, hi):
            days = min(hi, end) - max(lo, first)
            if days > 0:
                totals[b, vendor, mode, billing] += amount * days / (hi - lo)
                info[b] = (label, first, end)
    kept = [(key, amount) for key, amount in sorted(totals.items()) if abs(amount) >= 0.005]
    cents = _to_cents([amount for _, amount in kept], _cents(sum(totals.values())))
    return [Payment(block=b, label=info[b][0], start_day=info[b][1], end_day=info[b][2], vendor=vendor, mode=mode,
                    billing=billing, amount=amount)
            for ((b, vendor, mode, billing), _), amount in zip(kept, cents)]


def _to_cents(amounts: list[float], total: float) -> list[float]:
    """Each amount to the cent, the cents the rounding gains or loses given to the rows whose
    rounding moved them most (largest remainder), so that the rows add up to `total` to the cent.
    Why: rounded one by one, a 40-row cash flow summed to a cent or two off the plan's total,
    and the workbook's sheets disagreed (issue 36)."""
    if not amounts:
        return []
    exact = [round(a * 100, 6) for a in amounts]
    out = [math.floor(x) if x >= 0 else math.ceil(x) for x in exact]
    gap = round(total * 100) - sum(out)
    step = 1 if gap > 0 else -1
    order = sorted(range(len(exact)), key=lambda i: -(exact[i] - out[i]) * step)
    for i in order[:abs(gap)] if abs(gap) <= len(exact) else []:
        out[i] += step
    if abs(gap) > len(exact):  # cannot happen for amounts that sum to total; keep plain rounding
        return [_cents(a) for a in amounts]
    return [n / 100 for n in out]


def _data_payments(assignments: list[Assignment], problem: Problem, catalog: Catalog, width: int,
                   horizon: int) -> list[tuple[str, str, str, int, int, float]]:
    """Storage (per day from the job's first GPU day at the site, less its dataset's transfer
    there, to its finish) and egress (once) at each vendor and site a job uses, priced as
    solver.milp.data prices them."""
    jobs = {j.name: j for j in problem.jobs}
    finish: dict[str, int] = defaultdict(int)
    first: dict[tuple[str, str, str], int] = {}
    for a in assignments:
        offer = catalog.offers.get(a.offer)
        if offer is None or a.job not in jobs:
            continue
        lo, hi = period_days(a.period, width, horizon)
        finish[a.job] = max(finish[a.job], hi)
        key = a.job, offer.vendor, offer.datacenter
        first[key] = min(first.get(key, lo), lo)
    out = []
    for (job_name, vendor, dc), lo in sorted(first.items()):
        job = jobs[job_name]
        offer = next(o for o in catalog.offers.values() if o.vendor == vendor and o.datacenter == dc)
        wait = 0 if job.data is None else job.data.transfer_days(dc, catalog)
        start, end = lo - wait, finish[job_name]
        storage = job.storage_tb * offer.storage_per_tb_month * (end - start) / 30
        out.append((vendor, "storage", "as used", start, end, storage))
        out.append((vendor, "egress", "on finish", end - 1, end, job.egress_tb * offer.egress_per_tb))
        if job.data is not None and dc != job.data.site:
            price = job.data.egress_per_tb
            if price is None:
                price = max((o.egress_per_tb for o in catalog.offers.values()
                             if o.datacenter == job.data.site), default=0.0)
            out.append((f"data site {job.data.site}", "egress", "on start", start, start + 1,
                        job.data.dataset_tb * price))
    return out

"""A plan as tables for spreadsheets: `solve --xlsx FILE` (one sheet each) and `--csv DIR` (one file each).

plan_tables(plan, problem, catalog, detail) gives, in this order:

allocations     one row per rental line per month (`detail="month"`, the default: a calendar month
                when the problem has a start_date, else a 30-day block from day 0), per day
                (`"day"`) or per planning period (`"period"`): days `start_day`..`end_day` (and the
                dates `from`..`to`, the last day held, with a start_date), datacenter, vendor, offer,
                mode, GPU, fabric, nodes, GPUs, `gpu_days` and `cost_cny` (the line's cost × the
                piece's days ÷ the line's days). A committed term that runs past the horizon keeps
                its rows with `in_horizon` false (per period: one row with `period` blank): it is
                paid for, so the GPU-days of the sheet add up to those of the plan's rentals.
                `rental` is the row number of the line in the `rentals` sheet.
rentals         the plan's rental lines (contract, or a run of hourly periods at one size): days,
                GPU-days, the offer's unit price, what it is per, the offer's currency and its
                exchange rate (plan-currency units for one), the units billed per node, the fabric
                price, the volume discount applied and the platform fee, and the cost (in the plan's
                currency, platform fee included, discount deducted). In the workbook the cost is a
                formula of the cells beside it. Prices stay in the offer's currency, as quoted.
jobs            per job: window, finish day, peak GPUs, GPU types and sites, layout, memory
                per GPU, base MFU, work needed and done (EFLOP = 1e18 FLOPs, redundancy included).
cost_breakdown  the cost parts (in the plan's currency) and the total.
cash_by_month   the cash flow as a grid: a row per month (or 30-day block), a column per vendor and
                mode, the month's total (in the workbook, SUM formulas across and down).
cash_flow       what is paid per month (or 30-day block), vendor, mode and billing rule.
idle            per rental line: GPU-days paid, used by jobs and idle, cost and idle cost.
job_rentals     GPU-days of each job on each rental line.
binding         limits the plan runs into (budget, power, availability, deadline).
assumptions     the plan's status and bound, the problem's start date, horizon, period, redundancy
                and budget, the base MFU of every GPU the plan uses (and job overrides), the price,
                as_of date, source and `illustrative` flag of every offer it uses, and the billing rules.

frontier_tables / sweep_tables do the same for `frontier` and `sweep` results.
write_xlsx(tables, path) lays the sheets out for people (headers in words, money with thousands
separators and the currency, dates, totals rows, formulas); write_csv_dir(tables, folder) writes
the same tables with their column names, for programs. Neither replaces an existing file unless
force=True; check_xlsx_target / check_csv_target run the same checks before a long solve.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from solver.choices import DETAILS
from solver.errors import ProblemError
from solver.files import (check_new_file, check_new_folder, csv_frame, make_folder, replace_together,
                          require_openpyxl, save_atomic, text_cell, text_cells)
from solver.i18n import N_, _, current, money_unit, text_width
from solver.model.catalog import Catalog
from solver.model.ledger import BILLING, blocks
from solver.model.modes import UNIT_DAYS
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.report.cash import cash_flow_grid
from solver.report.days import on
from solver.report.words import LAYOUT_GLOSS, binding_text, layout_words, limit_name, mode_name, part_name

PLAN_SHEETS = ("allocations", "rentals", "jobs", "cost_breakdown", "cash_by_month", "cash_flow", "idle", "job_rentals",
               "binding", "assumptions")
ALLOCATION_COLUMNS = ["start_day", "end_day", "days", "datacenter", "vendor", "offer", "mode", "gpu",
                      "interconnect", "nodes", "gpus", "gpu_days", "cost_cny", "in_horizon", "rental"]
BINDING_COLUMNS = ["kind", "name", "start_day", "end_day", "used", "limit", "unit", "text"]
ASSUMPTION_COLUMNS = ["section", "name", "value", "unit", "illustrative", "as_of", "source"]
MAX_WIDTH = 60


# ---------------------------------------------------------------- plan → tables

def plan_tables(plan: Plan, problem: Problem, catalog: Catalog, detail: str = "month") -> dict[str, pd.DataFrame]:
    """The plan's sheets (see the module doc), in PLAN_SHEETS order; `detail` is the allocations' grain."""
    return {"allocations": allocation_rows(plan, problem.horizon_days, detail),
            "rentals": _rentals(plan, problem, catalog),
            "jobs": _jobs(plan, problem, catalog),
            "cost_breakdown": _costs(plan),
            "cash_by_month": _cash_by_month(plan),
            "cash_flow": _cash_flow(plan),
            "idle": _idle(plan),
            "job_rentals": pd.DataFrame([jr.model_dump() for jr in plan.job_rentals],
                                        columns=["job", "rental", "offer", "gpu_days"]),
            "binding": _binding(plan),
            "assumptions": _assumptions(plan, problem, catalog)}


def allocations_per_period(plan: Plan, horizon_days: int) -> pd.DataFrame:
    """Each rental line cut at period boundaries; the part of a term past the horizon is one row."""
    return allocation_rows(plan, horizon_days, "period")


def allocation_rows(plan: Plan, horizon_days: int, detail: str = "month") -> pd.DataFrame:
    """Each rental line cut per month (or 30-day block), per day or per period, and at the horizon.

    `period`: the part of a term past the horizon is one row with a blank period. `month` and
    `day`: every piece keeps its month or day, `in_horizon` false past the horizon. `cost_cny` is
    the line's cost × the piece's days ÷ the line's days (what the piece's share of it is, not when it is paid)."""
    if detail not in DETAILS:
        raise ProblemError(f"unknown detail {detail!r}", key="--sheet-detail", fix=f"use one of {', '.join(DETAILS)}")
    width = plan.schedule.period_days
    rows = []
    for number, a in enumerate(plan.allocations, start=1):
        base = {"datacenter": a.datacenter, "vendor": a.vendor, "offer": a.offer, "mode": a.mode, "gpu": a.gpu,
                "interconnect": a.interconnect, "nodes": a.nodes, "gpus": a.gpus, "rental": number}
        pieces = _pieces(plan, a.start_day, a.end_day, horizon_days, width, detail)
        for (key, start, end), cost in zip(pieces, _shares(a.cost, [end - start for _k, start, end in pieces])):
            rows.append({detail: key, "start_day": start, "end_day": end, "days": end - start,
                         "gpu_days": a.gpus * (end - start), "cost_cny": cost,
                         "in_horizon": end <= horizon_days, **base, **_dates(plan, start, end)})
    columns = [detail, *(["from", "to"] if plan.start_date else []), *ALLOCATION_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    if detail != "month":
        frame[detail] = frame[detail].astype("Int64")
    return frame.sort_values(["in_horizon", "start_day", "rental"], ascending=[False, True, True],
                             kind="stable").reset_index(drop=True)


def _shares(cost: float, days: list[int]) -> list[float]:
    """`cost` split in proportion to `days`, to the cent, the cents adding up to the line's cost
    rounded (the last piece takes the remainder): the allocations sheet once totalled 392,999.99
    against 393,000 in the rentals sheet (issue 47, item 7)."""
    whole = sum(days) or 1
    out = [round(cost * d / whole, 2) for d in days[:-1]]
    return out + [round(round(cost, 2) - sum(out), 2)] if days else []


def _pieces(plan: Plan, first: int, last: int, horizon: int, width: int, detail: str):
    """(period | month label | day, start, end) pieces of days first..last-1."""
    if detail == "day":
        return [(d, d, d + 1) for d in range(first, last)]
    if detail == "period":
        inside = min(last, horizon)
        out = [(p, max(first, p * width), min(inside, (p + 1) * width)) for p in range(first // width, -(-inside // width))]
        out = [piece for piece in out if piece[2] > piece[1]]
        return out + ([(None, max(first, horizon), last)] if last > horizon else [])
    out = []
    for _block, label, lo, hi in blocks(plan.start_date, first, last):
        cuts = sorted({max(lo, first), min(hi, last)} | ({horizon} if max(lo, first) < horizon < min(hi, last) else set()))
        out += [(label, a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
    return out


def _dates(plan: Plan, start: int, end: int) -> dict:
    """`from` and `to` (the last day) of days start..end-1, as dates, when the plan has a start date."""
    if plan.start_date is None:
        return {}
    return {"from": on(plan.start_date, start), "to": on(plan.start_date, max(end - 1, start))}


def _rentals(plan: Plan, problem: Problem, catalog: Catalog) -> pd.DataFrame:
    """Rental lines with the offer's unit prices and the units billed, so that cost =
    (price × priced_per_node × nodes × units × (1 − discount %) + interconnect_price × nodes × units)
    × (1 + platform fee %) × rate: the workbook writes that formula in each row (solver.verify's rule).
    Prices are the offer's as quoted (its `currency`); `rate` turns them into the plan's."""
    rows = []
    for n, a in enumerate(plan.allocations, start=1):
        o = catalog.offers.get(a.offer)
        row = {"rental": n, **a.model_dump(), "days": a.end_day - a.start_day,
               "gpu_days": a.gpus * (a.end_day - a.start_day), **_dates(plan, a.start_day, a.end_day)}
        if o is not None:
            unit = o.price_unit.rsplit("_", 1)[1]
            discounted = o.discount_from_gpus is not None and a.gpus >= o.discount_from_gpus
            row.update(price=o.price, price_unit=o.price_unit, currency=o.currency, rate=problem.rates()[o.currency],
                       priced_per_node=o.gpus_per_node if "_gpu_" in o.price_unit else 1,
                       units=round((a.end_day - a.start_day) / UNIT_DAYS[unit], 6),
                       interconnect_price=o.interconnect_price[o.interconnect.index(a.interconnect)],
                       discount_pct=(o.discount_pct or 0.0) if discounted else 0.0,
                       platform_fee_pct=o.platform_fee_pct)
        rows.append(row)
    columns = ["rental", "offer", "vendor", "datacenter", "gpu", "mode", "interconnect", "nodes", "gpus",
               "start_day", "end_day", *(["from", "to"] if plan.start_date else []), "days", "gpu_days", "price",
               "price_unit", "currency", "rate", "priced_per_node", "units", "interconnect_price", "discount_pct", "platform_fee_pct",
               "cost"]
    return pd.DataFrame(rows, columns=columns).rename(columns={"cost": "cost_cny"})


def _cash_by_month(plan: Plan) -> pd.DataFrame:
    """The cash flow as a grid: one row per month (or 30-day block), one column per vendor and mode
    (`<vendor> <mode>`), and `total_cny` (a SUM formula across the row in the workbook)."""
    grid = cash_flow_grid(plan)
    names = [f"{vendor} {mode}" for vendor, mode in grid.columns]
    rows = []
    for (label, amounts, total), (_block, first, end) in zip(grid.rows, grid.blocks):
        rows.append({"month": label, **_dates(plan, first, end), **dict(zip(names, amounts)), "total_cny": total})
    columns = ["month", *(["from", "to"] if plan.start_date else []), *names, "total_cny"]
    return pd.DataFrame(rows, columns=columns)


def _binding(plan: Plan) -> pd.DataFrame:
    """Limits the plan runs into, with their first and last dates when the plan has a start date."""
    rows = [{**b.model_dump(), **_dates(plan, b.start_day, b.end_day)} for b in plan.binding]
    columns = BINDING_COLUMNS[:4] + (["from", "to"] if plan.start_date else []) + BINDING_COLUMNS[4:]
    return pd.DataFrame(rows, columns=columns)


def _cash_flow(plan: Plan) -> pd.DataFrame:
    """What is paid per month (or 30-day block), vendor, mode and billing rule (solver.model.ledger)."""
    rows = [{"month": p.label, **_dates(plan, p.start_day, p.end_day), "start_day": p.start_day,
             "end_day": p.end_day, "vendor": p.vendor, "mode": p.mode, "billing": p.billing, "amount_cny": p.amount}
            for p in plan.cash_flow]
    columns = ["month", *(["from", "to"] if plan.start_date else []), "start_day", "end_day", "vendor", "mode",
               "billing", "amount_cny"]
    return pd.DataFrame(rows, columns=columns)


def _idle(plan: Plan) -> pd.DataFrame:
    """GPU-days paid, used and idle per rental line, with the idle part's cost (cost × idle ÷ paid)."""
    rows = []
    for u in plan.rental_use:
        a = plan.allocations[u.rental - 1]
        rows.append({"rental": u.rental, "offer": u.offer, "mode": u.mode, "start_day": u.start_day,
                     "end_day": u.end_day, "gpu_days_paid": u.gpu_days_paid, "gpu_days_used": u.gpu_days_used,
                     "idle_gpu_days": u.idle_gpu_days, "cost_cny": a.cost, "idle_cost_cny": u.idle_cost,
                     "used_until_day": u.last_used_day})
    return pd.DataFrame(rows, columns=["rental", "offer", "mode", "start_day", "end_day", "gpu_days_paid",
                                       "gpu_days_used", "idle_gpu_days", "cost_cny", "idle_cost_cny",
                                       "used_until_day"])


def _jobs(plan: Plan, problem: Problem, catalog: Catalog) -> pd.DataFrame:
    spec = {j.name: j for j in problem.jobs}
    rows = []
    for r in plan.jobs:
        job = spec.get(r.name)
        mfu = ", ".join(f"{g} {_mfu(job, catalog, g):g}" for g in r.gpu_types)
        rows.append({"job": r.name, "kind": job.kind if job else None,
                     "start_day": job.start_day if job else None,
                     "deadline_days": job.deadline_days if job else None, "finish_day": r.finish_day,
                     "gpus": r.gpus, "gpu_types": ", ".join(r.gpu_types), "sites": ", ".join(r.sites),
                     "layout": r.layout_text, **{k: r.layout.get(k) for k in ("tp", "pp", "dp", "zero")},
                     "memory_per_gpu_gb": r.memory_per_gpu_gb, "base_mfu": mfu,
                     "required_eflop": r.required_eflop, "done_eflop": r.done_eflop, "mfu_margin": r.mfu_margin,
                     **({"last_day": on(plan.start_date, r.finish_day - 1) if r.finish_day else None,
                         "deadline_date": on(plan.start_date, job.deadline_days - 1) if job else None}
                        if plan.start_date else {})})
    columns = ["job", "kind", "start_day", "deadline_days", "finish_day",
               *(["last_day", "deadline_date"] if plan.start_date else []), "gpus", "gpu_types", "sites", "layout",
               "tp", "pp", "dp", "zero", "memory_per_gpu_gb", "base_mfu", "required_eflop", "done_eflop", "mfu_margin"]
    return pd.DataFrame(rows, columns=columns)


def _mfu(job, catalog: Catalog, gpu: str) -> float | None:
    if job is not None and job.mfu is not None:
        return job.mfu
    row = catalog.gpus.get(gpu)
    return row.default_mfu if row else None


def _costs(plan: Plan) -> pd.DataFrame:
    rows = [{"part": part, "cost_cny": value} for part, value in plan.cost_breakdown.items()]
    rows.append({"part": "total", "cost_cny": plan.total_cost})
    return pd.DataFrame(rows, columns=["part", "cost_cny"])


def _assumptions(plan: Plan, problem: Problem, catalog: Catalog) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []

    def add(section: str, name: str, value: Any, unit: str = "", **more: Any) -> None:
        rows.append({"section": section, "name": name, "value": value, "unit": unit, **more})

    add("plan", "problem", plan.problem)
    add("plan", "status", plan.status)
    add("plan", "total_cost", plan.total_cost, plan.currency)
    add("plan", "lower_bound", plan.lower_bound, plan.currency, source="best bound the solver proved")
    add("plan", "gap", plan.gap, "fraction", source="(total_cost - lower_bound) / total_cost")
    add("plan", "backend", plan.backend)
    add("plan", "solve_seconds", plan.solve_seconds, "s")
    add("plan", "layout", "TP×PP, replicas, DP", source=LAYOUT_GLOSS)
    if plan.stack_switch is not None:
        add("plan", "stack_switch", plan.stack_switch.saving, plan.currency, source=plan.stack_switch.text)
    if plan.robust_plan is not None:
        add("plan", "robust_plan_cost", plan.robust_plan.total_cost, plan.currency, source=plan.robust_plan.text)
        add("plan", "robust_mfu_factor", plan.robust_plan.mfu_factor, "fraction of the assumed MFU",
            source="the robust plan meets every deadline with every MFU × this")
    add("problem", "start_date", problem.start_date, "date",
        source="day 0 of the plan" if problem.start_date else "none: days count from the plan's start")
    add("problem", "horizon_days", problem.horizon_days, "days")
    add("problem", "period_days", plan.schedule.period_days, "days",
        source="plan granularity" + ("" if problem.period_days else " (default: 1 up to 120 days, else 5)"))
    add("problem", "redundancy", problem.redundancy, "fraction of extra work",
        source="extra work for failures and restarts: each job must do FLOPs × (1 + redundancy)")
    add("problem", "budget", problem.budget, problem.currency, source="" if problem.budget else "no budget cap")
    add("problem", "catalog", catalog.path or problem.catalog)
    used_gpus = sorted({a.gpu for a in plan.allocations})
    for gpu in used_gpus:
        row = catalog.gpus.get(gpu)
        if row is not None:
            add("mfu", gpu, row.default_mfu, "fraction of dense peak", as_of=row.as_of,
                source=CONFIDENCE.format(confidence=row.confidence))
    for job in problem.jobs:
        if job.mfu is not None:
            add("mfu", f"job {job.name}", job.mfu, "fraction of dense peak", source="job's mfu override (all GPUs)")
    for offer_id in dict.fromkeys(a.offer for a in plan.allocations):
        offer = catalog.offers.get(offer_id)
        if offer is not None:
            add("offer", offer_id, offer.price, f"{offer.currency} {offer.price_unit}", illustrative=offer.illustrative,
                as_of=offer.as_of, source=offer.source)
    for rule in dict.fromkeys(p.billing for p in plan.cash_flow):
        add("billing", rule, BILLING.get(rule, ""), source="how the cash_flow sheet times each payment")
    return pd.DataFrame(rows, columns=ASSUMPTION_COLUMNS)


# ---------------------------------------------------------------- frontier and sweep

def frontier_tables(result: Any) -> dict[str, pd.DataFrame]:
    """`frontier` points (one row per non-dominated plan) and every ε tried; from Frontier.to_dict()."""
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    points = pd.DataFrame(data.get("points", []))
    if not points.empty:  # x and y repeat two of the named columns (finish_day, cost, spot_share, vendors)
        points = points.drop(columns=[c for c in ("x", "y") if c in points.columns])
        points.insert(0, "point", range(1, len(points) + 1))
    tried = pd.DataFrame(data.get("tried", []), columns=["eps", "outcome", "cost"])
    summary = pd.DataFrame([{"name": k, "value": v if not isinstance(v, list) else "; ".join(map(str, v))}
                            for k, v in data.items() if k not in ("points", "tried")], columns=["name", "value"])
    return {"frontier": points, "tried": tried, "summary": summary}


def sweep_tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The sweep's one table (solver.analysis.sweep.to_frame) as the sheet `sweep`."""
    return {"sweep": frame}


# ---------------------------------------------------------------- writing

def check_xlsx_target(path: str | Path, *, force: bool = False, option: str = "--xlsx") -> Path:
    """Checked before solving, so a long solve never ends in a refusal to write (solver.files'
    check, after the name's own: an .xlsx file, and openpyxl to write it)."""
    path = Path(path)
    if path.suffix.lower() != ".xlsx":
        raise ProblemError("not an .xlsx file name", file=str(path), key=option, fix="name the file *.xlsx")
    check_new_file(path, option, force=force, example="plan.xlsx")
    require_openpyxl(option)
    return path


def check_csv_target(folder: str | Path, names: Iterable[str] = PLAN_SHEETS, *, force: bool = False) -> Path:
    """The folder may be new (its parent must exist); none of the <name>.csv files may exist unless force
    (solver.files.check_new_folder)."""
    return check_new_folder(folder, "--csv", force=force, names=[f"{n}.csv" for n in names])


def write_xlsx(tables: Mapping[str, pd.DataFrame], path: str | Path, *, currency: str, force: bool = False,
               plan: Plan | None = None) -> Path:
    """One sheet per table (names cut to Excel's 31 characters), laid out for people (see `_dress`):
    human headers, money with thousands separators and `currency` (the plan's, the problem's; "" when
    the rows are in several currencies, each naming its own),
    dates as dates, a totals row
    where a column adds up, and formulas for each rental's cost and idle cost."""
    path = check_xlsx_target(path, force=force)
    require_openpyxl()

    def save(tmp: Path) -> None:
        with pd.ExcelWriter(tmp, engine="openpyxl") as writer:
            for name, frame in tables.items():
                frame = localised(name, frame, plan)
                sheet = sheet_title(name)
                frame.to_excel(writer, sheet_name=sheet, index=False)
                text_cells(writer.sheets[sheet])   # names from catalogs stay text; our formulas come next
                _dress(writer.sheets[sheet], name, frame, currency)
    return save_atomic(path, save)


HEADERS = {
    "period": N_("Period"), "month": N_("Month"), "day": N_("Day"), "from": N_("From"), "to": N_("To (last day)"),
    "start_day": N_("Start day"), "end_day": N_("End day (not incl.)"), "days": N_("Days"), "datacenter": N_("Site"),
    "vendor": N_("Vendor"), "offer": N_("Offer"), "mode": N_("Mode"), "gpu": N_("GPU"), "interconnect": N_("Fabric"), "nodes": N_("Nodes"),
    "gpus": N_("GPUs"), "gpu_days": N_("GPU-days"), "cost_cny": N_("Cost"), "in_horizon": N_("Within horizon"), "rental": N_("Rental #"),
    "price": N_("Unit price"), "price_unit": N_("Price unit"), "currency": N_("Currency"), "rate": N_("Exchange rate"), "priced_per_node": N_("Priced units per node"),
    "units": N_("Units billed per node"), "interconnect_price": N_("Fabric price per node per unit"),
    "discount_pct": N_("Volume discount %"), "platform_fee_pct": N_("Platform fee %"), "job": N_("Job"), "kind": N_("Kind"),
    "deadline_days": N_("Deadline day"), "finish_day": N_("Finish day"), "last_day": N_("Last day worked"),
    "deadline_date": N_("Deadline (last day)"), "gpu_types": N_("GPU types"), "sites": N_("Sites"), "layout": N_("Layout"),
    "tp": N_("TP"), "pp": N_("PP"), "dp": N_("DP"), "zero": N_("ZeRO stage"), "memory_per_gpu_gb": N_("Memory per GPU (GB)"),
    "base_mfu": N_("Base MFU"), "required_eflop": N_("Work needed (EFLOP)"), "done_eflop": N_("Work done (EFLOP)"),
    "mfu_margin": N_("MFU margin (share of the planned MFU)"),
    "part": N_("Part"), "total_cny": N_("Total"), "billing": N_("Billing"), "amount_cny": N_("Amount"), "gpu_days_paid": N_("GPU-days paid"),
    "gpu_days_used": N_("GPU-days used"), "idle_gpu_days": N_("GPU-days idle"), "idle_cost_cny": N_("Idle cost"),
    "used_until_day": N_("Used until day"), "kind_": N_("Kind"), "name": N_("Name"), "used": N_("Used"), "limit": N_("Limit"),
    "unit": N_("Unit"), "text": N_("What"), "section": N_("Section"), "value": N_("Value"), "illustrative": N_("Illustrative"),
    "as_of": N_("As of"), "source": N_("Source"), "point": N_("Point"), "eps": N_("ε"), "cost": N_("Cost"), "spot_share": N_("Spot share"),
    "vendors": N_("Vendors"), "mix": N_("Mix"), "knee": N_("Knee"), "status": N_("Status"), "gap": N_("Gap"), "outcome": N_("Outcome"),
    "scenario": N_("Scenario"), "edits": N_("Edits"), "total_cost": N_("Total cost"), "seconds": N_("Seconds"), "error": N_("Error"),
}
"""Spreadsheet headers (translated where shown: `header`); the CSV files keep the column names in English
(for programs) and take these headers in another language."""
SHEET_TITLES = {"allocations": N_("allocations"), "rentals": N_("rentals"), "jobs": N_("jobs"),
                "cost_breakdown": N_("cost_breakdown"), "cash_by_month": N_("cash_by_month"),
                "cash_flow": N_("cash_flow"), "idle": N_("idle"), "job_rentals": N_("job_rentals"),
                "binding": N_("binding"), "assumptions": N_("assumptions"), "frontier": N_("frontier"),
                "tried": N_("tried"), "summary": N_("summary"), "sweep": N_("sweep")}
"""Sheet names of the workbook in the active language (the CSV files keep the table names)."""


def header(column: str) -> str:
    """A column's header in the active language (`cost_cny` → Cost, 费用). A column named by data
    (`<vendor> <mode>` of the cash grid) stays as written: a vendor's name is not capitalised."""
    if column in HEADERS:
        return _(HEADERS[column])
    return column.replace("_", " ").capitalize() if re.fullmatch(r"[a-z_]+", column) else column


KINDS = {"pretrain": N_("pretraining"), "full_finetune": N_("full fine-tuning"), "lora": "LoRA", "qlora": "QLoRA",
         "sweep": N_("hyperparameter sweep"), "preprocess": N_("preprocessing"), "inference": N_("inference")}
"""A job's kind in words (the workbook in another language; the CSV keeps the key)."""
WORDS = {
    "plan": N_("plan"), "problem": N_("problem"), "mfu": "MFU", "offer": N_("offer"), "billing": N_("billing"),
    "status": N_("status"), "total_cost": N_("total cost"), "lower_bound": N_("lower bound"), "gap": N_("gap"),
    "backend": N_("solver"), "solve_seconds": N_("solve time"), "layout": N_("layout"),
    "stack_switch": N_("software stack switch"), "robust_plan_cost": N_("robust plan's cost"),
    "robust_mfu_factor": N_("robust plan's MFU factor"), "start_date": N_("start date"), "horizon_days": N_("horizon"),
    "period_days": N_("period"), "redundancy": N_("redundancy"), "budget": N_("budget"), "catalog": N_("catalog"),
    "fraction": N_("fraction"), "s": N_("s"), "date": N_("date"), "days": N_("days"), "nodes": N_("nodes"),
    "fraction of extra work": N_("fraction of extra work"), "fraction of dense peak": N_("fraction of dense peak"),
    "fraction of the assumed MFU": N_("fraction of the assumed MFU"),
    "best bound the solver proved": N_("best bound the solver proved"),
    "(total_cost - lower_bound) / total_cost": N_("(total cost − lower bound) ÷ total cost"),
    "day 0 of the plan": N_("day 0 of the plan"), "none: days count from the plan's start":
    N_("none: days count from the plan's start"), "plan granularity": N_("plan granularity"),
    "plan granularity (default: 1 up to 120 days, else 5)": N_("plan granularity (default: 1 up to 120 days, else 5)"),
    "extra work for failures and restarts: each job must do FLOPs × (1 + redundancy)":
    N_("extra work for failures and restarts: each job must do FLOPs × (1 + redundancy)"),
    "no budget cap": N_("no budget cap"), "job's mfu override (all GPUs)": N_("job's mfu override (all GPUs)"),
    "how the cash_flow sheet times each payment": N_("how the cash_flow sheet times each payment"),
    "the robust plan meets every deadline with every MFU × this":
    N_("the robust plan meets every deadline with every MFU × this"),
    "TP×PP, replicas, DP": N_("TP×PP, replicas, DP"), "optimal": N_("optimal"), "feasible": N_("feasible"),
    LAYOUT_GLOSS: LAYOUT_GLOSS, **{rule: rule for rule in BILLING}, **{text: text for text in BILLING.values()},
}
"""The fixed words of the sheets (the assumptions' sections, names, units and notes, statuses, billing rules),
translated in a workbook in another language; the CSV keeps them as written, for programs."""
CONFIDENCE = ("gpus.csv default_mfu; the planner derates it for fabric, scale, spot and performance guarantees; "
              "confidence {confidence}")


def localised(name: str, frame: pd.DataFrame, plan: Plan | None = None) -> pd.DataFrame:
    """The sheet's values in the active language (issue 47, item 7: a zh-CN workbook kept `gpu_rent`,
    `total`, `days 0–29` and `monthly`): modes, cost parts, 30-day blocks, billing rules, job kinds
    and layouts, limits, and the assumptions' words. Ids and names from the catalog stay as written."""
    if current() == "en":
        return frame
    frame = frame.copy()

    def column(col: str, how) -> None:
        if col in frame.columns:
            frame[col] = [v if not isinstance(v, str) else how(v) for v in frame[col]]

    column("mode", mode_name)
    column("month", _block)
    column("kind", lambda v: _(KINDS[v]) if name == "jobs" and v in KINDS else limit_name(v))
    column("billing", _)
    if name == "cost_breakdown":
        column("part", lambda v: _("total") if v == "total" else part_name(v))
    if name == "jobs" and plan is not None:
        frame["layout"] = [layout_words(j) for j in plan.jobs]
    if name == "binding" and plan is not None:
        frame["text"] = [binding_text(b) for b in plan.binding]
        column("unit", lambda v: _(WORDS[v]) if v in WORDS else v)
    if name == "assumptions":
        for col in ("section", "value", "unit", "source", "name"):
            column(col, _assumption_word)
    if name == "cash_by_month":
        frame = frame.rename(columns={c: f"{c.rsplit(' ', 1)[0]} {mode_name(c.rsplit(' ', 1)[1])}"
                                      for c in frame.columns if " " in c})
    return frame


def _block(label: str) -> str:
    """A 30-day block's label (`days 0–29`) in the active language; a calendar month (`2027-05`) as is."""
    found = re.fullmatch(r"days (\d+–\d+)", label)
    return _("days {span}").format(span=found.group(1)) if found else label


def _assumption_word(text: str) -> str:
    """One value of the assumptions sheet in the active language, when it is one of the sheet's own words."""
    if text in WORDS:
        return _(WORDS[text])
    found = re.fullmatch(r"gpus\.csv default_mfu; .* confidence (\w+)", text)
    if found:
        return _(CONFIDENCE).format(confidence=_(found.group(1)))
    if text.startswith("job ") and " " not in text[4:]:
        return _("job {name}").format(name=text[4:])
    return text


def sheet_title(name: str) -> str:
    return _sheet_name(_(SHEET_TITLES[name]) if name in SHEET_TITLES else name)

MONEY = {"cost_cny", "amount_cny", "idle_cost_cny", "total_cny", "price", "interconnect_price", "cost", "total_cost"}
COUNTS = {"gpu_days", "gpu_days_paid", "gpu_days_used", "idle_gpu_days", "nodes", "gpus"}
PERCENT = {"spot_share", "gap"}
TOTALS = {"allocations": ("gpu_days", "cost_cny"), "cash_by_month": ("*money",), "rentals": ("gpu_days", "cost_cny"), "cash_flow": ("amount_cny",),
          "idle": ("gpu_days_paid", "gpu_days_used", "idle_gpu_days", "cost_cny", "idle_cost_cny"),
          "job_rentals": ("gpu_days",)}
"""Sheets that get a totals row under their data, and the columns it adds up (SUM formulas)."""


def _dress(ws, name: str, frame: pd.DataFrame, currency: str) -> None:
    """Headers, number formats, formulas and the totals row of one written sheet."""
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    money = f'#,##0.00 "{money_unit(currency)}"' if currency else "#,##0.00"   # "": rows in several currencies
    letter = {col: get_column_letter(i) for i, col in enumerate(frame.columns, start=1)}
    last = len(frame) + 1                                   # the last data row (row 1 is the header)
    for i, col in enumerate(frame.columns, start=1):
        cell = ws.cell(row=1, column=i)
        text_cell(cell, header(str(col)))   # a column named by data (`<vendor> <mode>`) stays text
        cell.font = Font(bold=True)
        fmt = (money if col in MONEY else "#,##0" if col in COUNTS else "0.0%" if col in PERCENT
               else "yyyy-mm-dd" if col in ("from", "to", "last_day", "deadline_date") else None)
        if fmt:
            for row in range(2, last + 1):
                ws.cell(row=row, column=i).number_format = fmt
    if name == "rentals" and {"price", "priced_per_node", "nodes", "units", "interconnect_price", "discount_pct",
                              "platform_fee_pct", "currency", "rate", "cost_cny"} <= set(frame.columns):
        c = letter
        for row in range(2, last + 1):
            line = frame.iloc[row - 2]
            if pd.notna(line["price"]):
                ws[f"{c['cost_cny']}{row}"] = (
                    f"=({c['price']}{row}*{c['priced_per_node']}{row}*{c['nodes']}{row}*{c['units']}{row}"
                    f"*(1-{c['discount_pct']}{row}/100)+{c['interconnect_price']}{row}*{c['nodes']}{row}"
                    f"*{c['units']}{row})*(1+{c['platform_fee_pct']}{row}/100)*{c['rate']}{row}")
                for col in ("price", "interconnect_price"):  # as quoted: in the offer's own currency
                    ws[f"{c[col]}{row}"].number_format = f'#,##0.00 "{money_unit(line["currency"])}"'
                ws[f"{c['rate']}{row}"].number_format = "0.######"
    if name == "idle" and {"cost_cny", "idle_gpu_days", "gpu_days_paid", "idle_cost_cny"} <= set(frame.columns):
        c = letter
        for row in range(2, last + 1):
            ws[f"{c['idle_cost_cny']}{row}"] = (f"=IF({c['gpu_days_paid']}{row}>0,{c['cost_cny']}{row}"
                                                f"*{c['idle_gpu_days']}{row}/{c['gpu_days_paid']}{row},0)")
    if name == "cost_breakdown" and len(frame) > 1 and frame.iloc[-1]["part"] in ("total", _("total")):
        ws[f"{letter['cost_cny']}{last}"] = f"=SUM({letter['cost_cny']}2:{letter['cost_cny']}{last - 1})"
        for cell in ws[last]:
            cell.font = Font(bold=True)
    if name == "cash_by_month":  # every column between the dates and the total is money paid to one vendor/mode
        paid = [col for col in frame.columns if col not in ("month", "from", "to", "total_cny")]
        for col in paid:
            for row in range(2, last + 1):
                ws[f"{letter[col]}{row}"].number_format = money
        if paid and "total_cny" in letter:
            for row in range(2, last + 1):
                ws[f"{letter['total_cny']}{row}"] = f"=SUM({letter[paid[0]]}{row}:{letter[paid[-1]]}{row})"
    wanted = TOTALS.get(name, ())
    if "*money" in wanted:
        wanted = [col for col in frame.columns if col not in ("month", "from", "to")]
    summed = [col for col in wanted if col in letter]
    if summed and len(frame):
        total = last + 1
        ws.cell(row=total, column=1, value=_("total")).font = Font(bold=True)
        for col in summed:
            cell = ws[f"{letter[col]}{total}"]
            cell.value = f"=SUM({letter[col]}2:{letter[col]}{last})"
            cell.font = Font(bold=True)
            cell.number_format = money if col in MONEY or name == "cash_by_month" else "#,##0"
    ws.freeze_panes = "A2"
    for i, col in enumerate(frame.columns, start=1):
        shown = [header(str(col))] + [_text(v) for v in frame.iloc[:, i - 1]]
        extra = len(currency) + 1 if col in MONEY or name == "cash_by_month" else 0
        ws.column_dimensions[get_column_letter(i)].width = min(MAX_WIDTH, max(map(text_width, shown)) + 2 + extra)


def write_csv_dir(tables: Mapping[str, pd.DataFrame], folder: str | Path, *, force: bool = False) -> list[Path]:
    """<name>.csv per table in the folder (made if new); UTF-8, comma-separated, header row, blank = none.
    The header row is the column names in English, the headers of the workbook in another language."""
    folder = make_folder(check_csv_target(folder, tables.keys(), force=force), "--csv")

    def shown(frame: pd.DataFrame) -> pd.DataFrame:
        return frame if current() == "en" else frame.rename(columns={c: header(str(c)) for c in frame.columns})

    files = [(folder / f"{name}.csv", lambda tmp, frame=frame: csv_frame(shown(frame)).to_csv(
                 tmp, index=False, lineterminator="\n"))
             for name, frame in tables.items()]
    replace_together(files, folder)   # every table new, or every one as it was
    return [target for target, __ in files]


def _sheet_name(name: str) -> str:
    cleaned = "".join("_" if c in "[]:*?/\\" else c for c in name)
    return cleaned[:31] or "sheet"


def _text(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)

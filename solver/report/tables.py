"""A plan as tables for spreadsheets: `solve --xlsx FILE` (one sheet each) and `--csv DIR` (one file each).

plan_tables(plan, problem, catalog) gives, in this order:

allocations     one row per rental line per period: what is held in period `period`
                (days `start_day`..`end_day` of the plan, `days` long), at which datacenter,
                vendor, offer, mode, GPU and fabric, how many nodes and GPUs, and `gpu_days`.
                A line that is held only part of a period (a 30-day contract in 7-day
                periods) gets the days it is held. A committed term that runs past the
                horizon gets one more row with `period` blank and `in_horizon` false: it is
                paid for, so the GPU-days of the sheet add up to those of the plan's rentals.
                `rental` is the row number of the line in the `rentals` sheet.
rentals         the plan's rental lines (contract, or a run of hourly periods at one size),
                start/end day and cost (CNY, platform fee included, discount deducted).
jobs            per job: window, finish day, peak GPUs, GPU types and sites, layout, memory
                per GPU, base MFU, work needed and done (EFLOP = 1e18 FLOPs, redundancy included).
cost_breakdown  the cost parts (CNY) and the total.
binding         limits the plan runs into (budget, power, availability, deadline).
assumptions     the plan's status and bound, the problem's horizon, period, redundancy and
                budget, the base MFU of every GPU the plan uses (and job overrides), and the
                price, as_of date, source and `illustrative` flag of every offer it uses.

frontier_tables / sweep_tables do the same for `frontier` and `sweep` results.
write_xlsx(tables, path) and write_csv_dir(tables, folder) never replace an existing file
unless force=True; check_xlsx_target / check_csv_target run the same checks before a long solve.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from solver.errors import ProblemError
from solver.files import as_if_opened, require_openpyxl
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem

PLAN_SHEETS = ("allocations", "rentals", "jobs", "cost_breakdown", "binding", "assumptions")
ALLOCATION_COLUMNS = ["period", "start_day", "end_day", "days", "datacenter", "vendor", "offer", "mode", "gpu",
                      "interconnect", "nodes", "gpus", "gpu_days", "in_horizon", "rental"]
BINDING_COLUMNS = ["kind", "name", "start_day", "end_day", "used", "limit", "unit", "text"]
ASSUMPTION_COLUMNS = ["section", "name", "value", "unit", "illustrative", "as_of", "source"]
MAX_WIDTH = 60


# ---------------------------------------------------------------- plan → tables

def plan_tables(plan: Plan, problem: Problem, catalog: Catalog) -> dict[str, pd.DataFrame]:
    """The plan's sheets (see the module doc), in PLAN_SHEETS order."""
    return {"allocations": allocations_per_period(plan, problem.horizon_days),
            "rentals": _rentals(plan),
            "jobs": _jobs(plan, problem, catalog),
            "cost_breakdown": _costs(plan),
            "binding": pd.DataFrame([b.model_dump() for b in plan.binding], columns=BINDING_COLUMNS),
            "assumptions": _assumptions(plan, problem, catalog)}


def allocations_per_period(plan: Plan, horizon_days: int) -> pd.DataFrame:
    """Each rental line cut at period boundaries; the part of a term past the horizon is one row."""
    width = plan.schedule.period_days
    rows = []
    for number, a in enumerate(plan.allocations, start=1):
        base = {"datacenter": a.datacenter, "vendor": a.vendor, "offer": a.offer, "mode": a.mode, "gpu": a.gpu,
                "interconnect": a.interconnect, "nodes": a.nodes, "gpus": a.gpus, "rental": number}
        inside_end = min(a.end_day, horizon_days)
        for period in range(a.start_day // width, -(-inside_end // width)):
            start = max(a.start_day, period * width)
            end = min(inside_end, (period + 1) * width)
            if end > start:
                rows.append({"period": period, "start_day": start, "end_day": end, "days": end - start,
                             "gpu_days": a.gpus * (end - start), "in_horizon": True, **base})
        if a.end_day > horizon_days:
            start = max(a.start_day, horizon_days)
            rows.append({"period": None, "start_day": start, "end_day": a.end_day, "days": a.end_day - start,
                         "gpu_days": a.gpus * (a.end_day - start), "in_horizon": False, **base})
    frame = pd.DataFrame(rows, columns=ALLOCATION_COLUMNS)
    frame["period"] = frame["period"].astype("Int64")
    return frame.sort_values(["in_horizon", "period", "start_day", "rental"], ascending=[False, True, True, True],
                             kind="stable").reset_index(drop=True)


def _rentals(plan: Plan) -> pd.DataFrame:
    rows = [{"rental": n, **a.model_dump(), "days": a.end_day - a.start_day,
             "gpu_days": a.gpus * (a.end_day - a.start_day)} for n, a in enumerate(plan.allocations, start=1)]
    columns = ["rental", "offer", "vendor", "datacenter", "gpu", "mode", "interconnect", "nodes", "gpus",
               "start_day", "end_day", "days", "gpu_days", "cost"]
    return pd.DataFrame(rows, columns=columns).rename(columns={"cost": "cost_cny"})


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
                     "required_eflop": r.required_eflop, "done_eflop": r.done_eflop})
    columns = ["job", "kind", "start_day", "deadline_days", "finish_day", "gpus", "gpu_types", "sites", "layout",
               "tp", "pp", "dp", "zero", "memory_per_gpu_gb", "base_mfu", "required_eflop", "done_eflop"]
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
                source=f"gpus.csv default_mfu; the planner derates it for fabric, scale, spot and "
                       f"performance guarantees; confidence {row.confidence}")
    for job in problem.jobs:
        if job.mfu is not None:
            add("mfu", f"job {job.name}", job.mfu, "fraction of dense peak", source="job's mfu override (all GPUs)")
    for offer_id in dict.fromkeys(a.offer for a in plan.allocations):
        offer = catalog.offers.get(offer_id)
        if offer is not None:
            add("offer", offer_id, offer.price, offer.price_unit, illustrative=offer.illustrative,
                as_of=offer.as_of, source=offer.source)
    return pd.DataFrame(rows, columns=ASSUMPTION_COLUMNS)


# ---------------------------------------------------------------- frontier and sweep

def frontier_tables(result: Any) -> dict[str, pd.DataFrame]:
    """`frontier` points (one row per non-dominated plan) and every ε tried; from Frontier.to_dict()."""
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    points = pd.DataFrame(data.get("points", []))
    if not points.empty:
        points = points.rename(columns={"x": data.get("x", "x"), "y": data.get("y", "y")})
        points.insert(0, "point", range(1, len(points) + 1))
    tried = pd.DataFrame(data.get("tried", []), columns=["eps", "outcome", "cost"])
    summary = pd.DataFrame([{"name": k, "value": v if not isinstance(v, list) else "; ".join(map(str, v))}
                            for k, v in data.items() if k not in ("points", "tried")], columns=["name", "value"])
    return {"frontier": points, "tried": tried, "summary": summary}


def sweep_tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The sweep's one table (solver.analysis.sweep.to_frame) as the sheet `sweep`."""
    return {"sweep": frame}


# ---------------------------------------------------------------- writing

def check_xlsx_target(path: str | Path, *, force: bool = False) -> Path:
    """Checked before solving, so a long solve never ends in a refusal to write."""
    path = Path(path)
    if path.suffix.lower() != ".xlsx":
        raise ProblemError("not an .xlsx file name", file=str(path), key="--xlsx", fix="name the file *.xlsx")
    if path.exists() and not force:
        raise ProblemError("file exists; not overwritten", file=str(path), key="--xlsx",
                           fix="pass --force to replace it, or choose another name")
    if not path.parent.is_dir():
        raise ProblemError("folder not found", file=str(path), key="--xlsx", fix="create the folder first")
    require_openpyxl()
    return path


def check_csv_target(folder: str | Path, names: Iterable[str] = PLAN_SHEETS, *, force: bool = False) -> Path:
    """The folder may be new (its parent must exist); none of the <name>.csv files may exist unless force."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ProblemError("not a folder", file=str(folder), key="--csv", fix="give a folder (new or existing)")
    if not folder.exists() and not folder.parent.is_dir():
        raise ProblemError("parent folder not found", file=str(folder), key="--csv", fix="create the parent first")
    existing = [f"{n}.csv" for n in names if (folder / f"{n}.csv").exists()]
    if existing and not force:
        raise ProblemError(f"{', '.join(existing)} already there; nothing written", file=str(folder), key="--csv",
                           fix="pass --force to replace them, or choose another folder")
    return folder


def write_xlsx(tables: Mapping[str, pd.DataFrame], path: str | Path, *, force: bool = False) -> Path:
    """One sheet per table (names cut to Excel's 31 characters), bold header, fitted widths, frozen header."""
    path = check_xlsx_target(path, force=force)
    require_openpyxl()
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    fd, tmp = tempfile.mkstemp(suffix=".xlsx", dir=path.parent, prefix=f".{path.stem}.")
    os.close(fd)
    try:
        with pd.ExcelWriter(tmp, engine="openpyxl") as writer:
            for name, frame in tables.items():
                sheet = _sheet_name(name)
                frame.to_excel(writer, sheet_name=sheet, index=False)
                ws = writer.sheets[sheet]
                for cell in ws[1]:
                    cell.font = Font(bold=True)
                ws.freeze_panes = "A2"
                for i, col in enumerate(frame.columns, start=1):
                    cells = [str(col)] + [_text(v) for v in frame.iloc[:, i - 1]]
                    ws.column_dimensions[get_column_letter(i)].width = min(MAX_WIDTH, max(map(len, cells)) + 2)
        as_if_opened(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_csv_dir(tables: Mapping[str, pd.DataFrame], folder: str | Path, *, force: bool = False) -> list[Path]:
    """<name>.csv per table in the folder (made if new); UTF-8, comma-separated, header row, blank = none."""
    folder = check_csv_target(folder, tables.keys(), force=force)
    folder.mkdir(exist_ok=True)
    written = []
    for name, frame in tables.items():
        target = folder / f"{name}.csv"
        frame.to_csv(target, index=False, lineterminator="\n")
        written.append(target)
    return written


def _sheet_name(name: str) -> str:
    cleaned = "".join("_" if c in "[]:*?/\\" else c for c in name)
    return cleaned[:31] or "sheet"


def _text(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)

"""Sweeps: many what-if scenarios of one problem, solved in parallel, as one pandas table.

Why: a team rarely asks one what-if; it asks "for every price cut of 0–20 % and
deadlines of 30, 45, 60 days, what does it cost and what binds?". A grid file lists the
scenarios in the what-if edit language (solver.analysis.edits); every scenario is the
base problem with its edits applied, solved by the same `solve_problem` as `gpuplan
solve`, so a row equals a single solve of that scenario.

Grid file (YAML), either part or both (explicit scenarios come after the grid's):
    grid:                                   # cartesian product, last key varies fastest
      "offers[vendor=21vianet].price*=": [0.9, 1.0, 1.1]
      "jobs[*].deadline_days=": [180, 217]  # a key without an operator means "="
    scenarios:
      - {name: big-shunyi, set: ["datacenters.Shunyi.power_quota_kw=400"]}

Every edit is checked against the base problem before anything is solved, so a typo in a
path fails in a second, not after hours. A scenario whose edited problem is invalid or
infeasible, or whose solve fails in any way, is a row with its status and error: one bad
scenario never ends the sweep.

Table, one row per scenario in the file's order whatever the executor:
    scenario, edits ("; "-joined), one column per grid key (its value), status
    (optimal | feasible | infeasible | timeout: no plan within the time limit | error),
    total_cost, currency (the scenario's problem's: total_cost is in it), finish_<job> (finish day), gpu_days[<gpu>/<mode>/<datacenter>] (GPU-days
    rented = GPUs × days of each allocation, whole contract terms included; 0 when a
    solved plan rents none, empty when there is no plan), binding (limits the plan runs
    into, "; "-joined), error, seconds (wall time of edit + solve).

Executors: "process" (a pool of `jobs` spawned processes; jobs=1 solves in this process)
and "ray" (a local Ray instance with `jobs` CPUs, or the cluster at `address`, whose nodes
need gpuplan installed). Workers get the base problem and catalog once (pydantic models
pickle) and the edits per task.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import ValidationError

from solver.analysis.edits import apply_edits, parse_edit
from solver.choices import EXECUTORS
from solver.errors import Infeasible, ProblemError
from solver.load import read_yaml
from solver.model.catalog import Catalog
from solver.model.problem import Problem

OPERATORS = ("*=", "+=", "=")


@dataclass(frozen=True)
class Scenario:
    """One row of the sweep: a name, its edit texts, and the grid values that made it."""

    name: str
    edits: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)   # grid key → parsed value


# --- grid files -----------------------------------------------------------------------------

def load_grid(path: str | Path) -> list[Scenario]:
    """Scenarios of a grid YAML file; ProblemError naming the file and key when it is malformed."""
    path = Path(path)
    data = read_yaml(path, "grid file",
                     fix='quote keys with brackets, e.g. "offers[vendor=sinnet].price*=": [0.9, 1.0]')
    return scenarios_from_grid(data, str(path))


def scenarios_from_grid(data: Any, file: str | None = None) -> list[Scenario]:
    """`grid:` (cartesian product) then `scenarios:` (explicit list) → Scenarios, every edit parsed."""
    example = 'grid: {"offers[vendor=sinnet].price*=": [0.8, 1.0]} and/or scenarios: [{name: a, set: [EDIT, ...]}]'
    if not isinstance(data, dict) or not ({"grid", "scenarios"} & data.keys()):
        raise ProblemError("a grid file is a mapping with `grid:` and/or `scenarios:`", file=file, fix=example)
    unknown = sorted(set(data) - {"grid", "scenarios", "description"})
    if unknown:
        raise ProblemError("unknown key", file=file, key=unknown[0], fix="use grid, scenarios (and description)")
    out = _grid_scenarios(data.get("grid"), file) + _explicit_scenarios(data.get("scenarios"), file)
    if not out:
        raise ProblemError("the grid file lists no scenario", file=file, fix=example)
    seen: set[str] = set()
    for sc in out:
        if sc.name in seen:
            raise ProblemError(f"scenario name {sc.name!r} appears twice", file=file, key="scenarios",
                               fix="give every scenario its own name")
        seen.add(sc.name)
    return out


def _grid_scenarios(grid: Any, file: str | None) -> list[Scenario]:
    if grid is None:
        return []
    if not isinstance(grid, dict) or not grid:
        raise ProblemError("grid must map edit paths to lists of values", file=file, key="grid",
                           fix='e.g. grid: {"jobs[*].deadline_days=": [30, 45]}')
    axes = []
    for key, values in grid.items():
        where = f"grid.{key}"
        if not isinstance(values, list) or not values:
            raise ProblemError("a grid key takes a non-empty list of values", file=file, key=where,
                               fix="write [v1, v2, ...]; a list value is itself a list: [[A100-80G], [H800-80G]]")
        left = str(key).strip()
        left = left if left.endswith(OPERATORS) else left + "="
        axes.append([(key, _checked(left + _value_text(v), file, where)) for v in values])
    width = len(str(math.prod(len(a) for a in axes)))
    return [Scenario(f"grid-{i + 1:0{width}d}", tuple(e.text for _, e in combo), {k: e.value for k, e in combo})
            for i, combo in enumerate(itertools.product(*axes))]


def _explicit_scenarios(items: Any, file: str | None) -> list[Scenario]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ProblemError("scenarios must be a list", file=file, key="scenarios",
                           fix="e.g. scenarios: [{name: cheap, set: [\"offers[*].price*=0.9\"]}]")
    out = []
    for i, item in enumerate(items):
        where = f"scenarios[{i}]"
        if not isinstance(item, dict) or "set" not in item or set(item) - {"name", "set"}:
            raise ProblemError("a scenario is {name: NAME, set: [EDIT, ...]}", file=file, key=where,
                               fix='e.g. {name: cheap, set: ["offers[*].price*=0.9"]}')
        edits = [item["set"]] if isinstance(item["set"], str) else item["set"]
        if not isinstance(edits, list) or not all(isinstance(e, str) for e in edits):
            raise ProblemError("set is a list of edit strings", file=file, key=f"{where}.set",
                               fix='quote each edit: ["jobs[*].deadline_days=45"]')
        name = str(item.get("name") or f"scenario-{i + 1}")
        out.append(Scenario(name, tuple(_checked(e, file, f"{where}.set").text for e in edits)))
    return out


def _checked(text: str, file: str | None, where: str):
    try:
        return parse_edit(text)
    except ProblemError as exc:
        raise ProblemError(exc.detail, file=file, key=f"{where}: {exc.key}", fix=exc.fix) from None


def _value_text(value: Any) -> str:
    """A grid value written back in the edit language (which reads values as YAML)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)) or value is None or isinstance(value, bool):
        return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()
    return repr(value)


def check_edits(problem: Problem, catalog: Catalog, scenarios: Sequence[Scenario], file: str | None = None) -> None:
    """Fail now on an edit whose path matches nothing (a typo), before anything is solved.

    Each distinct edit is tried alone on the base problem; one that fails there is tried
    again after its scenario's earlier edits. Values the validated models reject (a deadline
    past the horizon) are not typos: such scenarios become rows with their error.
    """
    first: dict[str, tuple[int, int]] = {}
    for s, sc in enumerate(scenarios):
        for k, text in enumerate(sc.edits):
            first.setdefault(text, (s, k))
    for text, (s, k) in first.items():
        for edits in ([text], list(scenarios[s].edits[:k + 1])):
            try:
                apply_edits(problem, catalog, edits)
                break
            except ProblemError as exc:
                if isinstance(exc.__context__, ValidationError):
                    break                                        # an invalid value: a row, not a typo
                error = exc
        else:
            raise ProblemError(error.detail, file=file, key=f"scenario {scenarios[s].name}: {text}", fix=error.fix)


# --- one scenario -----------------------------------------------------------------------------

def run_scenario(problem: Problem, catalog: Catalog, scenario: Scenario, options: dict) -> dict:
    """Edit, solve and summarise one scenario; every failure is caught and becomes the row's error."""
    from solver.api import solve_problem  # heavy import, only where solving happens

    start = time.perf_counter()
    row: dict[str, Any] = {"status": "error", "total_cost": None, "currency": problem.currency, "finish": {},
                           "gpu_days": {}, "binding": "", "error": ""}
    try:
        prob, cat, _ = apply_edits(problem, catalog, list(scenario.edits))
        row["currency"] = prob.currency
        plan = solve_problem(prob, cat, **options)
    except ProblemError as exc:
        row["error"] = exc.render()
    except Infeasible as exc:
        row["status"] = "infeasible" if exc.proven else "timeout"
        row["error"] = "; ".join([str(exc), *exc.reasons])
    except Exception as exc:                               # noqa: BLE001 — a row, never the end of the sweep
        row["error"] = f"{type(exc).__name__}: {exc}"
    else:
        gpu_days: dict[str, int] = {}
        for a in plan.allocations:
            key = f"gpu_days[{a.gpu}/{a.mode}/{a.datacenter}]"
            gpu_days[key] = gpu_days.get(key, 0) + a.gpus * (a.end_day - a.start_day)
        row.update(status=plan.status, total_cost=plan.total_cost, finish={j.name: j.finish_day for j in plan.jobs},
                   gpu_days=gpu_days, binding="; ".join(b.text for b in plan.binding))
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


_BASE: tuple[Problem, Catalog, dict] | None = None       # set once in each pool worker


def _init_worker(problem: Problem, catalog: Catalog, options: dict) -> None:
    global _BASE
    _BASE = (problem, catalog, options)


def _pool_task(scenario: Scenario) -> dict:
    problem, catalog, options = _BASE
    return run_scenario(problem, catalog, scenario, options)


def _ray_task(base: tuple[Problem, Catalog, dict], scenario: Scenario) -> dict:
    return run_scenario(*base[:2], scenario, base[2])


# --- executors --------------------------------------------------------------------------------

def run_sweep(problem: Problem, catalog: Catalog, scenarios: Sequence[Scenario], *, executor: str = "process",
              jobs: int | None = None, address: str | None = None, backend: str | None = None,
              time_limit: float | None = None, gap: float | None = None,
              on_row: Callable[[int, dict], None] | None = None) -> pd.DataFrame:
    """Solve every scenario and return the table; `on_row(index, row)` is called as each one ends."""
    if executor not in EXECUTORS:
        raise ProblemError(f"unknown executor {executor!r}", key="--executor", fix=f"use one of {', '.join(EXECUTORS)}")
    options = {"time_limit": time_limit, "gap": gap, **({"backend": backend} if backend else {})}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(scenarios)))
    run = _run_ray if executor == "ray" else _run_processes
    rows = run(problem, catalog, list(scenarios), options, jobs, address, on_row or (lambda i, r: None))
    return to_frame(problem, scenarios, rows)


def _run_processes(problem, catalog, scenarios, options, jobs, address, on_row) -> list[dict]:
    """A spawned pool: forked children would inherit a solver's threads (HiGHS keeps a pool) and may hang."""
    rows: list[dict | None] = [None] * len(scenarios)
    if jobs == 1:
        for i, sc in enumerate(scenarios):
            rows[i] = run_scenario(problem, catalog, sc, options)
            on_row(i, rows[i])
        return rows
    pool = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_init_worker,
                               initargs=(problem, catalog, options))
    try:
        futures = {pool.submit(_pool_task, sc): i for i, sc in enumerate(scenarios)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                rows[i] = fut.result()
            except Exception as exc:                       # noqa: BLE001 — a dead worker: the row says so
                rows[i] = _failed_row(exc)
            on_row(i, rows[i])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return rows


def _run_ray(problem, catalog, scenarios, options, jobs, address, on_row) -> list[dict]:
    """Ray tasks, one per scenario; the base problem is put in the object store once."""
    try:
        import ray
    except ImportError:
        raise ProblemError("the ray executor needs Ray", key="--executor ray",
                           fix="pip install .[ray] (or pip install 'ray>=2.9'), or use --executor process") from None
    started = not ray.is_initialized()
    if started:
        quiet = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=jobs, **quiet)
    try:
        base = ray.put((problem, catalog, options))
        task = ray.remote(num_cpus=1)(_ray_task)
        pending = {task.remote(base, sc): i for i, sc in enumerate(scenarios)}
        rows: list[dict | None] = [None] * len(scenarios)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in done:
                i = pending.pop(ref)
                try:
                    rows[i] = ray.get(ref)
                except Exception as exc:                   # noqa: BLE001 — a crashed task or worker
                    rows[i] = _failed_row(exc)
                on_row(i, rows[i])
        return rows
    finally:
        if started:
            ray.shutdown()


def _failed_row(exc: BaseException) -> dict:
    return {"status": "error", "total_cost": None, "finish": {}, "gpu_days": {}, "binding": "",
            "error": f"worker failed: {type(exc).__name__}: {exc}".strip(), "seconds": None}


# --- the table --------------------------------------------------------------------------------

def to_frame(problem: Problem, scenarios: Sequence[Scenario], rows: Sequence[dict]) -> pd.DataFrame:
    """One row per scenario, in scenario order; columns as in the module docstring."""
    params = list(dict.fromkeys(k for sc in scenarios for k in sc.params))
    jobs = list(dict.fromkeys([j.name for j in problem.jobs] + [j for r in rows for j in r["finish"]]))
    gpu_cols = sorted({k for r in rows for k in r["gpu_days"]})
    records = []
    for sc, r in zip(scenarios, rows):
        solved = r["status"] in ("optimal", "feasible")
        rec = {"scenario": sc.name, "edits": "; ".join(sc.edits)}
        rec.update({k: _cell(sc.params.get(k)) for k in params})
        rec.update(status=r["status"], total_cost=r["total_cost"], currency=r.get("currency", problem.currency))
        rec.update({f"finish_{j}": r["finish"].get(j) for j in jobs})
        rec.update({k: r["gpu_days"].get(k, 0 if solved else None) for k in gpu_cols})
        rec.update(binding=r["binding"], error=r["error"], seconds=r["seconds"])
        records.append(rec)
    columns = ["scenario", "edits", *params, "status", "total_cost", "currency", *(f"finish_{j}" for j in jobs),
               *gpu_cols,
               "binding", "error", "seconds"]
    df = pd.DataFrame.from_records(records, columns=columns)
    df["total_cost"] = df["total_cost"].astype("float64")
    df["seconds"] = df["seconds"].astype("float64")
    for col in [f"finish_{j}" for j in jobs] + gpu_cols:
        df[col] = df[col].astype("Int64")
    for col in params:
        # the grid's own values: pandas has already made a column of ints and blanks float
        values = [sc.params[col] for sc in scenarios if col in sc.params and not _missing(sc.params[col])]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            df[col] = df[col].astype("Int64")
        elif not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            df[col] = df[col].map(lambda v: None if _missing(v) else str(v)).astype("string")
    return df


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell(value: Any) -> Any:
    """Grid values as table cells: lists and mappings as their YAML text (Parquet needs one type)."""
    return _value_text(value) if isinstance(value, (list, dict)) else value

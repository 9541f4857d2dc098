"""Sweeps: many what-if scenarios of one problem, solved in parallel, as one pandas table.

Why: a team rarely asks one what-if; it asks "for every price cut of 0–20 % and
deadlines of 30, 45, 60 days, what does it cost and what binds?". A grid file lists the
scenarios in the what-if edit language (solver.analysis.edits); every scenario is the
base problem with its edits applied, and a row equals `gpuplan solve` of that scenario.
How (issue 34): each worker builds the base problem once and runs a scenario as a probe of
that model when its edits are bounds or prices (see Worker); only the others are built.

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
    (optimal | feasible | infeasible | timeout: no plan within the time limit | error |
    stopped: not determined, the sweep was stopped by Ctrl-C first),
    total_cost, lower_bound (the least the optimum can be: total_cost when optimal, below it
    when the time ran out first, the figure then the interval [lower_bound, total_cost]),
    currency (the scenario's problem's: total_cost is in it), finish_<job> (finish day), gpu_days[<gpu>/<mode>/<datacenter>] (GPU-days
    rented = GPUs × days of each allocation, whole contract terms included; 0 when a
    solved plan rents none, empty when there is no plan), binding (limits the plan runs
    into, "; "-joined), error, how (probe: solved on the worker's base model; rebuilt: built as
    a problem of its own; empty when the edits failed before any solve), seconds (wall time of edit + solve; the base build is not in it).

Executors: "process" (a pool of `jobs` spawned processes; jobs=1 solves in this process)
and "ray" (`jobs` actors on a local Ray instance with `jobs` CPUs, or on the cluster at
`address`, whose nodes need gpuplan installed). Each worker gets the base problem and
catalog once (pydantic models pickle), builds it once, and gets the scenarios one at a time.
Each row is announced (solver.rows.ROWS) in this process as it arrives. Both run on
solver.analysis.executor (negotiate's too): a worker that died is its scenario's row, status
"error", "worker failed: …"; the others are still solved.

Stopped (Ctrl-C; solver.clock.stopped): no scenario starts, the workers are told to stop and those
still busy after a short grace are killed, Ray's processes with them (solver.analysis.workers, which
also keeps a terminal's Ctrl-C from reaching the workers); the rows determined so far are kept, and
every other row is status "stopped" (a row ended after the stop keeps its answer only when it has one:
a plan or a proof, not a solve the stop cut short). The table is printed, exit 130.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import ValidationError

from solver.analysis.edits import apply_edits, parse_edit
from solver.analysis.executor import Executor, Lost
from solver.analysis.ray_actors import LOCAL
from solver.choices import EXECUTORS
from solver.clock import stopped
from solver.errors import Infeasible, ProblemError
from solver.ingest.readers import read_yaml
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.rows import ROWS

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
    """Edit, build and solve one scenario as a problem of its own (`how` "rebuilt"); every failure
    is caught and becomes the row's error. A sweep runs scenarios on a Worker, which does this
    only for those its base model cannot hold."""
    return Worker(problem, catalog, options, probe=False).run(scenario)


def _empty_row(problem: Problem) -> dict[str, Any]:
    return {"status": "error", "total_cost": None, "lower_bound": None, "currency": problem.currency, "finish": {},
            "gpu_days": {}, "binding": "", "error": "", "how": ""}


def _plan_cells(plan: Plan) -> dict[str, Any]:
    """A solved scenario's cells: cost and the bound proven under it, finish days, GPU-days, limits."""
    gpu_days: dict[str, int] = {}
    for a in plan.allocations:
        key = f"gpu_days[{a.gpu}/{a.mode}/{a.datacenter}]"
        gpu_days[key] = gpu_days.get(key, 0) + a.gpus * (a.end_day - a.start_day)
    low = plan.total_cost if plan.status == "optimal" else min(plan.lower_bound, plan.total_cost)
    return {"status": plan.status, "total_cost": plan.total_cost, "lower_bound": low,
            "finish": {j.name: j.finish_day for j in plan.jobs}, "gpu_days": gpu_days,
            "binding": "; ".join(b.text for b in plan.binding)}


def _no_plan_cells(exc: Infeasible) -> dict:
    """A scenario with no plan: infeasible (proven) or timeout, and the solver's words with their reasons."""
    return {"status": "infeasible" if exc.proven else "timeout", "error": "; ".join([str(exc), *exc.reasons])}


class Worker:
    """One worker's base problem, built once, and the scenarios it runs on it.

    Why (issue 34): a scenario solved as a whole `solve_problem` cost an Instance, a model and a
    cold solve each. Here the base problem is built once (solver.probes.Probes, on the first
    scenario) and solved; a scenario whose edits are limits' bounds or offers' prices of that
    model (solver.probes.edit_changes) is a probe of it (`how` "probe"); one that changes
    nothing is the base's own plan. The others (a deadline, a raised stock, MFU, windows: edits
    that change preprocessing, or may) are built as their own problem (`how` "rebuilt"), as are a problem with soft preferences (solve_problem weighs
    them with re-solves of its own), a scenario whose plan leaves the catalog's usual software
    stack (its price is one more solve there) and one proven infeasible after a lowered stock
    (its reasons come from its own preprocessing), so every row reads as `gpuplan solve` of the
    scenario would.

    A probe is given no MIP start (no plan of the base or of an earlier scenario): a cost has
    many optimal plans, and a start steers the solver to another one than a build of the
    scenario finds (another schedule, other limits binding). Without one, the probe solves the
    very model a build of the scenario would make, so its row is that solve's row, whatever
    worker ran it and after what: serial, pool and Ray tables are equal."""

    def __init__(self, problem: Problem, catalog: Catalog, options: dict, *, probe: bool = True) -> None:
        self.problem, self.catalog, self.options = problem, catalog, options
        self.engine = None                              # solver.probes.Probes, once built
        self.base_plan: Plan | None = None              # the base problem's own plan, once solved
        self._tried = not probe or bool(problem.preferences)

    def run(self, scenario: Scenario) -> dict:
        """The scenario's row; every failure is caught and becomes the row's error."""
        start = time.perf_counter()
        row = _empty_row(self.problem)
        try:
            prob, cat, _ = apply_edits(self.problem, self.catalog, list(scenario.edits))
            row["currency"] = prob.currency
            row.update(self._probed(prob, cat) or self._rebuilt(prob, cat))
        except ProblemError as exc:
            row["error"] = exc.render()
        except Exception as exc:                               # noqa: BLE001 — a row, never the end of the sweep
            row["error"] = f"{type(exc).__name__}: {exc}"
        row["seconds"] = round(time.perf_counter() - start, 3)
        return row

    def _rebuilt(self, problem: Problem, catalog: Catalog) -> dict:
        from solver.api import solve_problem  # heavy import, only where solving happens
        try:
            return {**_plan_cells(solve_problem(problem, catalog, **self.options)), "how": "rebuilt"}
        except Infeasible as exc:
            return {**_no_plan_cells(exc), "how": "rebuilt"}

    def _probed(self, problem: Problem, catalog: Catalog) -> dict | None:
        """The scenario as a probe of the base model; None when it must be built (see the class)."""
        from solver.api import off_stack
        from solver.clock import OutOfTime
        from solver.errors import PlanRejected
        from solver.probes import ReadAs, edit_changes

        engine = self._engine()
        changes = None if engine is None else edit_changes(engine, problem, catalog)
        if changes is None:
            return None
        if not changes and self.base_plan is not None:  # edits that change nothing: the base's own solve
            return None if off_stack(self.base_plan, problem, catalog) else {**_plan_cells(self.base_plan), "how": "probe"}
        engine.known = []  # no start: see the class
        try:
            answer = engine.probe(*changes, ReadAs("the scenario's limits", problem=problem, catalog=catalog),
                                  problem=problem, catalog=catalog, tiebreak=True)
        except (OutOfTime, PlanRejected):
            return None
        if answer.plan is not None:
            return None if off_stack(answer.plan, problem, catalog) else {**_plan_cells(answer.plan), "how": "probe"}
        if answer.status == "unknown":
            return self._out_of_time(answer)
        return self._infeasible(answer, catalog)

    def _infeasible(self, answer, catalog: Catalog) -> dict | None:
        """A probe proven infeasible, in solver.api.solve_built's words (solver.api.no_plan): the
        solver's, then the reasons preprocessing gives, which are the base model's when the edits left
        every offer's stock as built; None otherwise (a lowered stock may strand a job in a build of
        the scenario, which then says so: built)."""
        if any(offer.max_nodes != self.catalog.offers[name].max_nodes for name, offer in catalog.offers.items()):
            return None
        return self._no_plan(answer, proven=True)

    def _out_of_time(self, answer) -> dict:
        """A probe that found no plan in its time, in solver.api.solve_built's words for one."""
        return self._no_plan(answer, proven=False)

    def _no_plan(self, answer, *, proven: bool) -> dict:
        from solver.api import no_plan
        exc = no_plan(self.engine.inst, self.engine.milp, answer.why, proven=proven,
                      more_time=self.engine.clock.more_time if self.options.get("time_limit") else None)
        return {**_no_plan_cells(exc), "how": "probe"}

    def _engine(self):
        """The base problem built and solved, the first time a scenario asks; None when it cannot
        be built (a job no offer carries: every scenario is then built as its own problem)."""
        if self._tried:
            return self.engine
        from solver.clock import OutOfTime
        from solver.probes import Probes
        self._tried = True
        try:
            engine = Probes(self.problem, self.catalog, **self.options)
        except Infeasible:
            return None
        try:
            self.base_plan = engine.solve_base(tiebreak=True)
        except (Infeasible, OutOfTime):
            pass                                           # no base plan: scenarios are probed without one
        self.engine = engine
        return engine


def _worker(problem: Problem, catalog: Catalog, options: dict, deadline: float | None = None) -> Worker:
    """A worker's state (solver.analysis.executor): the base problem, built at its first scenario."""
    return Worker(problem, catalog, options)


def _scenario(worker: Worker, scenario: Scenario) -> dict:
    return worker.run(scenario)


# --- executors --------------------------------------------------------------------------------

def run_sweep(problem: Problem, catalog: Catalog, scenarios: Sequence[Scenario], *, executor: str = "process",
              jobs: int | None = None, address: str | None = None, backend: str | None = None,
              time_limit: float | None = None, gap: float | None = None,
              on_row: Callable[[int, dict], None] | None = None) -> pd.DataFrame:
    """Solve every scenario and return the table; `on_row(index, row)` is called as each one ends,
    and each row is announced (solver.rows.ROWS) as it arrives here."""
    if executor not in EXECUTORS:
        raise ProblemError(f"unknown executor {executor!r}", key="--executor", fix=f"use one of {', '.join(EXECUTORS)}")
    options = {"time_limit": time_limit, "gap": gap, **({"backend": backend} if backend else {})}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(scenarios)))
    ROWS.expect(len(scenarios))

    def heard(i: int, row: dict) -> None:
        ROWS.announce(row_words(scenarios[i], row))
        if on_row is not None:
            on_row(i, row)
    rows = _run(problem, catalog, list(scenarios), options, jobs, address, heard, ray=executor == "ray")
    return to_frame(problem, scenarios, rows)


def row_words(scenario: Scenario, row: dict) -> str:
    """A row as the progress line reads it: `grid-03: optimal 24,101,000 CNY (probe)`, an
    interval `from 23,954 to 25,100` when the time ran out before the optimum was proven."""
    cost, low = row.get("total_cost"), row.get("lower_bound")
    if cost is None:
        figure = ""
    elif low is not None and low < cost - 0.005:
        figure = f" from {low:,.0f} to {cost:,.0f} {row.get('currency') or ''}"
    else:
        figure = f" {cost:,.0f} {row.get('currency') or ''}"
    how = f" ({row['how']})" if row.get("how") else ""
    return f"{scenario.name}: {row['status']}{figure.rstrip()}{how}"


def _run(problem, catalog, scenarios, options, jobs, address, on_row, *, ray: bool) -> list[dict]:
    """The scenarios on solver.analysis.executor's workers: `jobs` spawned processes (forked children
    would inherit a solver's threads, HiGHS keeps a pool, and may hang; jobs=1 solves in this process),
    or `jobs` Ray actors (the base problem put in the object store once; Ray shut down with its
    processes on the way out). Each worker holds one Worker (its base model built once); scenarios
    are sent one at a time, so a row arrives as soon as it is solved and a slow scenario holds up no
    others. A worker that died is its row's error; a scenario the stop left is a stopped row."""
    rows: list[dict | None] = [None] * len(scenarios)

    def heard(i: int, result) -> None:
        row = _row(result)
        rows[i] = _after_stop(row) if stopped() else row
        on_row(i, rows[i])
    with Executor(_worker, (problem, catalog, options), _scenario, local=lambda: Worker(problem, catalog, options),
                  jobs=jobs, ray=(address or LOCAL) if ray else None, ray_key="--executor ray",
                  most=len(scenarios)) as executor:
        results = executor.run([(sc,) for sc in scenarios], heard, here=not ray and jobs == 1)
    return [row or _after_stop(_row(result)) for row, result in zip(rows, results)]


def _row(result) -> dict:
    """A task's row: its own, a dead worker's error row, or stopped."""
    if isinstance(result, Lost):
        return _failed_row(result) if result.died else _stopped_row()
    return result


STOPPED = "not solved: the sweep was stopped (Ctrl-C)"


def _stopped_row() -> dict:
    """A scenario the stop left undetermined."""
    return {"status": "stopped", "total_cost": None, "lower_bound": None, "finish": {}, "gpu_days": {},
            "binding": "", "error": STOPPED, "how": "", "seconds": None}


def _after_stop(row: dict) -> dict:
    """A row that ended after the command's stop: kept when it has an answer (a plan, or a proof that
    there is none), else stopped (a solve the stop cut short is no timeout: no limit was too short)."""
    return row if row.get("status") in ("optimal", "feasible", "infeasible") else _stopped_row()


def _failed_row(lost: Lost) -> dict:
    """A scenario whose worker died: its error is the executor's words for it."""
    return {"status": "error", "total_cost": None, "lower_bound": None, "finish": {}, "gpu_days": {}, "binding": "",
            "error": lost.words(), "how": "", "seconds": None}


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
        rec.update(status=r["status"], total_cost=r["total_cost"], lower_bound=r.get("lower_bound"),
                   currency=r.get("currency", problem.currency))
        rec.update({f"finish_{j}": r["finish"].get(j) for j in jobs})
        rec.update({k: r["gpu_days"].get(k, 0 if solved else None) for k in gpu_cols})
        rec.update(binding=r["binding"], error=r["error"], how=r.get("how", ""), seconds=r["seconds"])
        records.append(rec)
    columns = ["scenario", "edits", *params, "status", "total_cost", "lower_bound", "currency",
               *(f"finish_{j}" for j in jobs), *gpu_cols, "binding", "error", "how", "seconds"]
    df = pd.DataFrame.from_records(records, columns=columns)
    df["total_cost"] = df["total_cost"].astype("float64")
    df["lower_bound"] = df["lower_bound"].astype("float64")
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

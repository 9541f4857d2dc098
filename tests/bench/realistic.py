"""The realistic suite measured: where each user-like problem's solve time goes, and why.

Runs tests/bench/user_like.py's 30 seeds (and issue 33's problem file,
tests/bench/problems/issue33-2job-45d.yaml) and prints one row per problem:
variables, rows, the LP relaxation's seconds (`lp_s`), the plain LP's gap to the
optimum (`lp_gap`), HiGHS' root gaps against the optimum (`root_lp_gap`: its root LP after
presolve; `root_gap`: its bound when the root node ends, cuts included), when HiGHS' log
first showed a plan (`plan_at`) and the optimal one (`opt_at`), the first stage's seconds
(`proof_s`: the optimum proven, or the time limit) and the whole solve with the tie-break,
as `gpuplan solve` does it (`total_s`). Then the suite's median and P90 of `total_s` and the median of
`total_s ÷ lp_s` and of `root_gap`: issue 33's targets.

`--attribution` prints instead, per problem, the LP value with one family of integer
variables integral at a time (the rest relaxed), as the share of the LP's gap to the
optimum that family closes alone: where the root gap lives.

    python tests/bench/bench_milp.py --realistic [--seeds 1-30] [--time-limit 60] [--out F.csv]
    python tests/bench/bench_milp.py --realistic --attribution --seeds 1-10

Never asserts on time; pytest ignores tests/bench. The machine is shared: compare rows of
one run, and read `load1`.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.engine import backends, switches  # noqa: E402
from solver.engine.export import to_mathopt  # noqa: E402
from solver.engine.progress import PROGRESS, _number  # noqa: E402  (HiGHS' log numbers, read as the CLI reads them)
from solver.engine.solve import solve_milp  # noqa: E402
from solver.engine.tiebreak import break_ties  # noqa: E402
from solver.load import load_problem  # noqa: E402
from solver.milp.build import build_milp  # noqa: E402
from solver.milp.instance import build_instance  # noqa: E402
from solver.milp.solution import OPTIMALITY_GAP, NoSolution  # noqa: E402
from tests.bench import user_like  # noqa: E402

EXTRA = tuple(ROOT / "tests" / "bench" / "problems" / f"issue33-2job-45d{tail}.yaml" for tail in ("", "-storage"))
COLUMNS = ["instance", "catalog", "jobs", "periods", "vars", "rows", "lp_s", "lp_value", "status", "cost",
           "lp_gap", "root_lp_gap", "root_gap", "plan_at", "opt_at", "proof_s", "total_s", "total_x_lp", "load1"]
FAMILIES = {  # variable name prefix → family, for --attribution
    "n[": "nodes", "c[": "contracts", "m[": "replicas", "z[": "choice flags", "y[": "discount flags",
    "v[": "discount nodes", "u[": "data sites", "r[": "running flags", "b[": "started flags",
    "a[": "packing", "open[": "packing", "q[": "packing"}


@dataclass
class Heard:
    """Plans and root bounds HiGHS' log showed during one solve, with the seconds since `start`.

    Read from the log lines themselves (solver.engine.backends' callback, wrapped while the
    suite runs), because the nodes-explored column tells the root node's lines from the rest:
    `root_lp` is the first positive dual bound (the root LP after presolve), `root` the last
    bound while no node was explored yet (after the root's cuts)."""

    start: float
    plans: list[tuple[float, float]] = field(default_factory=list)
    root_lp: float | None = None
    root: float | None = None
    heard: list[tuple[float, float | None, float | None]] = field(default_factory=list)

    def hear(self, plan: float | None, bound: float | None) -> None:
        """PROGRESS's listener: (seconds, best plan of the whole model, its proven bound) as the engine
        reports them (a restricted first plan's cost without its bound, the LP child's bound)."""
        self.heard.append((time.perf_counter() - self.start, plan, bound))

    def phases(self, final: float) -> dict:
        """`--phases`: seconds to the first plan, to a plan within 1 % of `final` (the solve's own
        answer), to a proven 1 % gap (the best plan and bound heard so far)."""
        out: dict = {"first_plan_s": None, "within1_s": None, "gap1_s": None}
        best, bound = math.inf, -math.inf
        for at, plan, low in self.heard:
            best, bound = min(best, plan if plan is not None else math.inf), max(bound, low if low is not None else -math.inf)
            if math.isfinite(best) and out["first_plan_s"] is None:
                out["first_plan_s"] = at
            if best <= final * 1.01 and out["within1_s"] is None:
                out["within1_s"] = at
            if math.isfinite(best) and best - bound <= 0.01 * best and out["gap1_s"] is None:
                out["gap1_s"] = at
        return out

    def lines(self, lines: list[str]) -> None:
        for line in lines:
            match = _LINE.match(line)
            if not match:
                continue
            nodes, bound, plan = int(match.group(1)), _number(match.group(2)), _number(match.group(3))
            if plan is not None:
                self.plans.append((time.perf_counter() - self.start, plan))
            if nodes == 0 and bound is not None and bound > 0:
                self.root_lp = bound if self.root_lp is None else self.root_lp
                self.root = bound

    def found(self, cost: float) -> float | None:
        return next((s for s, plan in self.plans if plan <= cost * (1 + OPTIMALITY_GAP)), None)


_LINE = re.compile(r"^\s*[A-Za-z]?\s+(\d+)\s+\d+\s+\d+\s+[\d.]+%\s+(\S+)\s+(\S+)\s+")




def problems(seeds: list[int], extra: bool = True, suite: int = user_like.SUITE, files: tuple[Path, ...] = ()):
    """(name, catalog name, Problem, Catalog) of the suite: the seeds, then EXTRA's files, then `files`."""
    for seed in seeds:
        problem, catalog = user_like.generate(seed, suite)
        yield problem.name, Path(problem.catalog).name, problem, catalog
    for path in (EXTRA if extra else ()) + tuple(files):
        problem, catalog = load_problem(path)
        yield path.stem, Path(problem.catalog).name, problem, catalog


def lp_relaxation(inst) -> tuple[float | None, float]:
    """The plain LP relaxation's value and seconds (HiGHS through MathOpt, defaults)."""
    relaxed = build_milp(inst, relax=True)
    start = time.perf_counter()
    try:
        sol = solve_milp(relaxed, time_limit=300)
    except NoSolution:
        return None, time.perf_counter() - start
    return sol.bound if math.isfinite(sol.bound) else sol.objective, time.perf_counter() - start


def measure(name: str, catalog_name: str, problem, catalog, time_limit: float) -> dict:
    inst = build_instance(problem, catalog)
    milp = build_milp(inst)
    row = dict(instance=name, catalog=catalog_name, jobs=len(problem.jobs), periods=len(inst.hours),
               vars=milp.model.num_variables, rows=milp.model.num_constraints)
    row["lp_value"], row["lp_s"] = lp_relaxation(inst)
    heard = Heard(time.perf_counter())
    PROGRESS.listener = heard.hear  # HiGHS' log is passed on only while someone listens
    original = backends.report_progress

    def both(lines, listener):  # the whole model's lines for the root gaps; the listener as the engine calls it
        if not getattr(listener, "plan_only", False):
            heard.lines(lines)
        original(lines, listener)
    backends.report_progress = both
    try:
        first = solve_milp(milp, time_limit=time_limit)
    except NoSolution as exc:
        row.update(status="infeasible" if exc.proven else "no plan", proof_s=time.perf_counter() - heard.start)
        return _done(row)
    finally:
        PROGRESS.listener, backends.report_progress = None, original
    row.update(status=first.status, cost=first.objective, proof_s=first.seconds,
               plan_at=heard.plans[0][0] if heard.plans else None, opt_at=heard.found(first.objective))
    row.update(heard.phases(first.objective))
    if first.status == "optimal" and row["gap1_s"] is None:
        row["gap1_s"] = first.seconds  # proven at the end, with no log line between
    final = break_ties(milp, first, "highs", max(1.0, time_limit - first.seconds))
    row["total_s"] = time.perf_counter() - heard.start
    cost = final.objective
    if row["lp_value"] is not None:
        row["lp_gap"] = (cost - row["lp_value"]) / cost
        row["total_x_lp"] = row["total_s"] / row["lp_s"] if row["lp_s"] > 0 else None
    if heard.root is not None:
        row["root_lp_gap"], row["root_gap"] = (cost - heard.root_lp) / cost, (cost - heard.root) / cost
    return _done(row)


def _done(row: dict) -> dict:
    row["load1"] = round(os.getloadavg()[0], 2)
    print(f"  {row}", file=sys.stderr, flush=True)
    return row


def attribution(name: str, problem, catalog, time_limit: float) -> dict:
    """LP values with one variable family integral at a time (each solve within `time_limit`,
    its bound kept when it stops early); the optimum, within 10 × that, for reference."""
    inst = build_instance(problem, catalog)
    milp = build_milp(inst)
    row: dict = dict(instance=name, vars=milp.model.num_variables)
    try:
        opt = solve_milp(build_milp(inst), time_limit=10 * time_limit)
        row["optimum"], row["status"] = opt.objective, opt.status
    except NoSolution:
        row["status"] = "no plan"
        return _done(row)
    variables = milp.model.get_variables()
    family = {v.index: FAMILIES.get(v.name.split("[", 1)[0] + "[") for v in variables if v.is_integral}
    row["lp"] = _relaxed_value(milp, family, set(), time_limit)
    if row["lp"] is None:  # the LP itself did not finish within the limit: no share to measure
        return _done(row)
    present = sorted({f for f in family.values() if f})
    for fam in present + ["all but replicas"]:
        keep = set(present) - {"replicas"} if fam == "all but replicas" else {fam}
        value = _relaxed_value(milp, family, keep, time_limit)
        if value is None or value < row["lp"] - 1e-6 * abs(row["lp"]):  # stopped before its root bound
            row[fam] = None
        else:
            row[fam] = (value - row["lp"]) / max(1e-9, row["optimum"] - row["lp"])
    return _done(row)


def _relaxed_value(milp, family: dict[int, str | None], keep: set[str], time_limit: float) -> float | None:
    """The model's dual bound with only `keep`'s families integral (restored afterwards): the
    optimum when HiGHS proves it within `time_limit`, else the bound it reached (a lower value
    than the family's true one: the table marks it)."""
    variables = milp.model.get_variables()
    for v in variables:
        if v.index in family:
            v.is_integral = family[v.index] in keep
    try:
        result = backends.mathopt_once(to_mathopt(milp.model), time_limit, None, False, None)
    finally:
        for v in variables:
            if v.index in family:
                v.is_integral = True
    bound = result.termination.objective_bounds.dual_bound
    return bound if math.isfinite(bound) else None


def summary(rows: list[dict]) -> str:
    done = [r for r in rows if r.get("total_s") is not None and r["instance"].startswith("user-like")]
    done = done or [r for r in rows if r.get("total_s") is not None]  # --files alone
    if not done:
        return "no solved problem"
    totals = sorted(r["total_s"] for r in done)
    p90 = totals[min(len(totals) - 1, math.ceil(0.9 * len(totals)) - 1)]
    ratio = [r["total_x_lp"] for r in done if r.get("total_x_lp")]
    roots = [r["root_gap"] for r in done if r.get("root_gap") is not None]
    optimal = sum(r["status"] == "optimal" for r in rows if r["instance"].startswith("user-like"))
    return (f"suite: {optimal}/{sum(r['instance'].startswith('user-like') for r in rows)} optimal; total s median "
            f"{statistics.median(totals):.2f}, P90 {p90:.2f}, max {totals[-1]:.2f}; total ÷ LP median "
            f"{statistics.median(ratio) if ratio else math.nan:.0f}; root gap median "
            f"{statistics.median(roots) if roots else math.nan:.2%}; plain LP gap median "
            f"{statistics.median([r['lp_gap'] for r in done if r.get('lp_gap') is not None]):.2%}"
            + _phase_summary(done))


def _phase_summary(done: list[dict]) -> str:
    """Medians (and the worst first plan) of the phases, where measured: issue 43's targets."""
    parts = []
    for col in ("first_plan_s", "within1_s", "gap1_s", "proof_s"):
        values = sorted(r[col] for r in done if r.get(col) is not None)
        if values:
            parts.append(f"{col} median {statistics.median(values):.2f} max {values[-1]:.2f} ({len(values)}/{len(done)})")
    optimal = sorted(r["proof_s"] for r in done if r.get("status") == "optimal")
    if optimal:
        p90 = optimal[min(len(optimal) - 1, math.ceil(0.9 * len(optimal)) - 1)]
        parts.append(f"proof of the proven: median {statistics.median(optimal):.2f}, P90 {p90:.2f}")
    return ("\n" + "; ".join(parts)) if parts else ""


PERCENT = {"lp_gap", "root_lp_gap", "root_gap"}
MONEY = {"lp_value", "cost", "optimum", "lp"}
SECONDS = {"lp_s", "plan_at", "opt_at", "proof_s", "total_s", "load1", "first_plan_s", "within1_s", "gap1_s"}
PHASES = ["instance", "jobs", "vars", "lp_s", "lp_gap", "status", "cost", "first_plan_s", "within1_s", "gap1_s",
          "proof_s", "total_s", "total_x_lp", "load1"]
"""`--phases`' columns: the LP, then seconds to the first plan, to a plan within 1 % of the final one,
to a proven 1 % gap, to the proof (the first stage's end) and the whole solve with the tie-break."""


def markdown(rows: list[dict], columns: list[str]) -> str:
    """The rows as a Markdown table (HISTORY.md's form); an attribution's family shares in %."""
    def cell(col: str, v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        if col in MONEY:
            return f"{v:,.0f}"
        if col in SECONDS:
            return f"{v:.2f}"
        if col == "total_x_lp":
            return f"{v:.0f}"
        if col in PERCENT or isinstance(v, float):  # the gaps, and --attribution's shares
            return f"{v:.1%}"
        return f"{v:,}" if isinstance(v, int) else str(v)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _flag(text: str):
    """`solver.milp.cover.LIFT_DISCOUNTS` → (a setter of `LIFT_DISCOUNTS` in its module, (False, True));
    `…warmstart.WARM_START_VARIABLES=20000,0` → the two values given (off, on);
    `GPUPLAN_EXPERIMENTAL=fixopt` → the experimental switch (solver.engine.switches) unset, then set."""
    import ast
    import importlib
    path, _, values = text.partition("=")
    if path == switches.ENV:
        return _set_switch, (None, values)
    module, _, flag = path.rpartition(".")
    states = tuple(ast.literal_eval(v) for v in values.split(",")) if values else (False, True)
    if len(states) != 2:
        raise SystemExit(f"--toggle {text}: give two values, off and on (e.g. =20000,0)")
    return (lambda state: setattr(importlib.import_module(module), flag, state)), states


def _set_switch(methods: str | None) -> None:
    """GPUPLAN_EXPERIMENTAL set to `methods`, or unset (None): the default solve."""
    if methods is None:
        os.environ.pop(switches.ENV, None)
    else:
        os.environ[switches.ENV] = methods


def toggle_summary(rows: list[dict]) -> str:
    """Per problem measured both ways: total seconds on ÷ off, and whether the costs agree."""
    by = {r["instance"]: r for r in rows}
    ratios, differ = [], []
    for name, off in by.items():
        if not name.endswith("@off") or (on := by.get(name[:-4] + "@on")) is None:
            continue
        if off.get("total_s") and on.get("total_s"):
            ratios.append(on["total_s"] / off["total_s"])
        both = off.get("status") == on.get("status") == "optimal"
        if both and not math.isclose(off["cost"], on["cost"], rel_tol=1e-4):
            differ.append(name[:-4])
    if not ratios:
        return "toggle: nothing measured both ways"
    return (f"toggle: total on ÷ off, median {statistics.median(ratios):.2f}, geometric mean "
            f"{math.exp(statistics.fmean(math.log(r) for r in ratios)):.2f} over {len(ratios)} problems; "
            f"optimal costs differ on: {', '.join(differ) or 'none'}")


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(",")) if text != "none" else ():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, default=list(user_like.SEEDS),
                    help="e.g. 1-30 or 3,7,9; none: the extra files only")
    ap.add_argument("--no-extra", action="store_true", help="without issue 33's problem file")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    ap.add_argument("--attribution", action="store_true", help="one integer family at a time (item 2)")
    ap.add_argument("--out", type=Path, default=None, help="also write the rows to this CSV")
    ap.add_argument("--suite", type=int, choices=(1, 2), default=user_like.SUITE,
                    help="user_like's suite version (2: storage on most jobs, issue 43; 1: before)")
    ap.add_argument("--files", type=Path, nargs="*", default=(),
                    help="problem files measured after the seeds (e.g. problems/*.yaml problems/bench/*.yaml "
                         "with --seeds none --no-extra: the bundled ones, A/B with --toggle)")
    ap.add_argument("--phases", action="store_true",
                    help="columns: seconds to the first plan, within 1 %% of the final, proven 1 %% gap, proof")
    ap.add_argument("--toggle", default=None, metavar="MODULE.FLAG",
                    help="measure each problem with this boolean module flag off, then on (e.g. "
                         "solver.milp.cover.LIFT_DISCOUNTS), or with two values (MODULE.NAME=OFF,ON), or an "
                         "experimental method (GPUPLAN_EXPERIMENTAL=fixopt, solver.engine.switches): "
                         "one run, rows `name@off`, `name@on`")
    args = ap.parse_args(argv)
    print(f"# realistic suite  {time.strftime('%Y-%m-%dT%H:%M:%S')}  load "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}  time limit {args.time_limit:g} s", flush=True)
    rows = []
    try:
        for name, catalog_name, problem, catalog in problems(args.seeds, not args.no_extra, args.suite, tuple(args.files)):
            print(f"  {name} …", file=sys.stderr, flush=True)
            if args.attribution:
                rows.append(attribution(name, problem, catalog, args.time_limit))
            elif args.toggle:
                set_state, states = _flag(args.toggle)
                for on, state in enumerate(states):
                    set_state(state)
                    rows.append(measure(name, catalog_name, problem, catalog, args.time_limit))
                    rows[-1]["instance"] = f"{name}@{'on' if on else 'off'}"
            else:
                rows.append(measure(name, catalog_name, problem, catalog, args.time_limit))
    except KeyboardInterrupt:
        print("interrupted: partial results below", file=sys.stderr)
    columns = (PHASES if args.phases else COLUMNS) if not args.attribution else (
        ["instance", "vars", "status", "lp", "optimum"] + sorted({k for r in rows for k in r} - {
            "instance", "vars", "status", "lp", "optimum", "load1"}) + ["load1"])
    print(markdown(rows, columns))
    if args.toggle:
        print(toggle_summary(rows))
    elif not args.attribution:
        print(summary(rows))
    if args.out:
        with args.out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    print(f"# done  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Performance benchmark of the MILP: build, LP relaxation and solve, per backend.

Not part of the default test run (pytest ignores tests/bench) and never asserts on
time: it measures and prints. See tests/bench/README.md for what every column means.

    python tests/bench/bench_milp.py                      # bundled problems + every synthetic size
    python tests/bench/bench_milp.py --bundled            # only problems/*.yaml
    python tests/bench/bench_milp.py --sizes small,medium --backends scip,highs
    python tests/bench/bench_milp.py --sizes 100x30x8     # CONFIGSxPERIODSxJOBS
    python tests/bench/bench_milp.py --bundled --sizes all --time-limit 60 --out results.csv
    python tests/bench/bench_milp.py --bench --backends highs     # problems/bench/*.yaml
    python tests/bench/bench_milp.py --sizes small --fleet        # jobs of 20-60 % of the stock
    python tests/bench/bench_milp.py --bundled --bench --prune-compare   # what exact pruning removes
    python tests/bench/bench_milp.py --bundled --rcfix-compare            # what reduced-cost fixing buys
    python tests/bench/bench_milp.py --sizes medium --periods 1,5,events   # one instance, three period grids
    python tests/bench/bench_milp.py --realistic [--seeds 1-30] [--attribution]  # tests/bench/realistic.py

Three suites:
- bundled: every problems/*.yaml, solved to each backend's default gap (proven optimum
  unless the time limit stops it first);
- bench: every problems/bench/*.yaml, user-sized problems (2-6 jobs, 30-365 days) solved
  the same way;
- synthetic: seeded, deterministic catalogs and problems of growing size built in
  memory from the price, lead-time and node templates of catalogs/beijing-sample,
  solved to a relative gap of 1 % (--gap) within the time limit. With --fleet each job
  needs 20-60 % of the capacity it can reach, so stock, power and capacity bind.

--prune-compare replaces the backend rows: each bundled/bench/synthetic instance is built
with and without exact pruning (solver.milp.prune) and solved by HiGHS both ways, one
after the other, and one row gives the options before and after, both solve times, their
ratio and whether the optima agree.

--rcfix-compare does the same for reduced-cost fixing (solver.engine.experimental.rcfix), with the calls
solver.engine.run makes for it: the LP relaxation's duals and a first plan are timed, the
integer variables fixed and narrowed are counted, and HiGHS solves the model three ways, one
after the other: as it is (`plain_s`), from the first plan (`start_s`) and from the first
plan with the fixed bounds (`fixed_s`). `ratio` is (LP + first plan + fixed) ÷ plain, what
`solve_milp(reduced_cost_fixing=True)` costs against the default; `fix_ratio` is fixed ÷
start, what the fixing alone buys once an LP and a plan are in hand. The `*_nodes` columns are
HiGHS' branch-and-bound nodes of each solve: unlike seconds, the same on a busy machine. The
best case, an analysis that already holds the optimum: `opt_fixed` variables fixed with it as
the incumbent, and HiGHS from it without (`opt_start_s`) and with (`opt_fixed_s`) the fixing.

The machine this runs on is often shared and small: absolute seconds are noisy, so the
tables also give ratios (solve ÷ LP relaxation, build share) and the 1-minute load
average at the time of each row.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import os
import platform
import random
import subprocess
import sys
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from ortools.linear_solver.python import model_builder as mb

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from solver.engine import big, switches  # noqa: E402
from solver.engine.backends import mathopt_once, result_values  # noqa: E402
from solver.engine.backends import BACKENDS  # noqa: E402
from solver.engine.experimental import rcfix  # noqa: E402
from solver.engine.export import to_mathopt  # noqa: E402
from solver.engine.solve import solve_milp  # noqa: E402
from solver.load import load_catalog, load_problem  # noqa: E402
from solver.milp.build import build_milp  # noqa: E402
from solver.milp.core import Milp  # noqa: E402
from solver.milp.instance import Instance, build_instance, fabric_domain  # noqa: E402
from solver.milp.solution import NoSolution  # noqa: E402
from solver.model.catalog import Catalog, Datacenter, Offer  # noqa: E402
from solver.model.problem import Job, ModelSpec, Problem  # noqa: E402

TEMPLATE_CATALOG = ROOT / "catalogs" / "beijing-sample"
PROBLEMS = ROOT / "problems"
BENCH = PROBLEMS / "bench"
LP_BACKEND = "highs"   # the relaxation has only continuous variables: an LP for HiGHS' simplex


@dataclass(frozen=True)
class Size:
    """A synthetic instance: configurations (offer × interconnect option), daily periods, jobs."""

    name: str
    configs: int
    periods: int
    jobs: int


SIZES = {s.name: s for s in (Size("small", 20, 14, 2), Size("medium", 60, 30, 5),
                             Size("large", 150, 45, 10), Size("target", 300, 60, 20))}

COLUMNS = ["suite", "instance", "backend", "configs", "periods", "jobs", "vars", "cons",
           "inst_s", "milp_s", "build_s", "lp_s", "lp_value", "status", "objective", "bound",
           "gap", "solve_s", "t_gap_s", "solve_x_lp", "build_share", "lp_ip_gap", "load1", "note"]


# ----------------------------------------------------------------------------------------------
# Synthetic instances
# ----------------------------------------------------------------------------------------------

EXTRA_SITES = (  # name, region, link group: added to the template's four for larger sizes
    ("Huailai", "Hebei", "hb-huailai"), ("Langfang", "Hebei", "bj-east"),
    ("Tianjin", "Tianjin", "tj-binhai"), ("Zhangbei", "Hebei", "hb-huailai"))
MODEL_PARAMS = (1e9, 3e9, 7e9, 13e9, 34e9, 70e9)
KINDS = ("pretrain", "pretrain", "full_finetune", "lora")
FILL = 0.5
"""Each job asks for FILL ÷ (jobs overlapping its window) of what its best fabric domain
could do alone in its window: generous, so instances are feasible by construction
even if every overlapping job lands on the same domain (power quotas aside)."""
FLEET_SHARE = (0.2, 0.6)
"""Fleet mode: each job asks for this share (drawn uniformly) of what it could do alone on
everything it can reach (its best domain when synchronous), not divided among all the jobs
overlapping it: several such jobs at once fill the stock, and power quotas and capacity
bind. Feasibility is no longer guaranteed."""
FLEET_OVERLAP = 3
"""Fleet mode: windows staggered across the horizon so about this many jobs overlap (with
20 jobs of 20-60 % each all overlapping, every instance would be infeasible)."""
FLEET_LOAD = 0.9
"""Fleet mode: where the shares of the jobs overlapping a job add up to more than this, its
share is scaled down so they add up to this (the stock is full, not oversold)."""


def generate(size: Size, seed: int = 1, fleet: bool = False) -> tuple[Problem, Catalog]:
    """A deterministic catalog and problem of the given size (same seed → same instance);
    `fleet`: jobs sized to FLEET_SHARE of the stock they can reach."""
    rng = random.Random(seed * 1_000_003 + size.configs * 10_007 + size.periods * 101 + size.jobs)
    template = load_catalog(TEMPLATE_CATALOG)
    datacenters = _datacenters(template, size, rng)
    hosted_sites = rng.sample(list(datacenters), k=min(len(datacenters), rng.choice((3, 4))))
    offers = _offers(template, size, rng, list(datacenters), hosted_sites)
    datacenters = _power_quotas(datacenters, offers, hosted_sites, rng)
    catalog = Catalog(gpus=template.gpus, datacenters=datacenters, offers=offers,
                      path=f"synthetic:{size.name}:{seed}")
    jobs = [_job(i, size, rng) for i in range(size.jobs)]
    if fleet:  # after _job's draws, so the default instances stay what they were
        jobs = [_staggered(job, i, size) for i, job in enumerate(jobs)]
    problem = Problem(name=f"synthetic-{size.name}{'-fleet' if fleet else ''}", catalog=catalog.path,
                      horizon_days=size.periods, period_days=1, redundancy=0.30, jobs=jobs)
    shares = _fleet_shares(jobs, [rng.uniform(*FLEET_SHARE) for _ in jobs]) if fleet else None
    return _calibrate(problem, catalog, shares), catalog


def _staggered(job: Job, i: int, size: Size) -> Job:
    """Fleet mode: job i's window, one of size.jobs windows spread evenly over the horizon,
    long enough that about FLEET_OVERLAP of them overlap (at least 5 days)."""
    length = min(size.periods, max(5, round(size.periods * FLEET_OVERLAP / size.jobs)))
    start = round(i * (size.periods - length) / max(1, size.jobs - 1))
    return job.model_copy(update={"start_day": start, "deadline_days": start + length})


def _fleet_shares(jobs: list[Job], drawn: list[float]) -> list[float]:
    """Each drawn share, scaled down where the jobs overlapping it ask for more than
    FLEET_LOAD of the stock together (every job overlapping it, itself included)."""
    out = []
    for job, share in zip(jobs, drawn):
        together = sum(s for other, s in zip(jobs, drawn)
                       if other.start_day < job.deadline_days and job.start_day < other.deadline_days)
        out.append(share * min(1.0, FLEET_LOAD / together))
    return out


def _datacenters(template: Catalog, size: Size, rng: random.Random) -> dict[str, Datacenter]:
    rows = dict(template.datacenters)
    extra = 0 if size.configs <= 30 else 2 if size.configs <= 100 else len(EXTRA_SITES)
    base = next(iter(template.datacenters.values()))
    for name, region, link_group in EXTRA_SITES[:extra]:
        rows[name] = base.model_copy(update=dict(
            datacenter=name, region=region, link_group=link_group,
            power_quota_kw=float(rng.choice((300, 500, 800))), source="synthetic"))
    return rows


def _offers(template: Catalog, size: Size, rng: random.Random, sites: list[str],
            hosted_sites: list[str]) -> dict[str, Offer]:
    """Offers drawn from the template rows (same GPUs, modes, node shapes, fabrics), with
    prices ±15 %, lead times jittered, max_nodes 2–16, until exactly size.configs
    configurations exist (the last offer keeps only as many interconnect options as fit)."""
    rows = sorted(template.offers.values(), key=lambda o: o.offer)
    offers: dict[str, Offer] = {}
    data_prices: dict[tuple[str, str], tuple[float, float]] = {}  # one storage/egress price per vendor and site
    left = size.configs
    while left > 0:
        row = rng.choice(rows)
        k = min(left, len(row.interconnect))
        factor = rng.uniform(0.85, 1.15)
        hosted = row.mode == "hosted"
        site = rng.choice(hosted_sites if hosted else sites)
        storage, egress = data_prices.setdefault((row.vendor, site),
                                                 (row.storage_per_tb_month, row.egress_per_tb))
        data = row.model_dump(by_alias=True)
        data.update(
            offer=f"{row.offer}-s{len(offers):03d}", datacenter=site,
            storage_per_tb_month=storage, egress_per_tb=egress,
            price=round(row.price * factor, 2),
            max_nodes=rng.randint(2, 16),
            lead_time_days=rng.randint(30, 45) if hosted else max(0, row.lead_time_days + rng.randint(-2, 3)),
            interconnect=row.interconnect[:k],
            interconnect_price=tuple(round(p * factor, 2) for p in row.interconnect_price[:k]),
            counts_power=hosted, source="synthetic")
        offer = Offer.model_validate(data)
        offers[offer.offer] = offer
        left -= k
    return offers


def _power_quotas(datacenters: dict[str, Datacenter], offers: dict[str, Offer], hosted_sites: list[str],
                  rng: random.Random) -> dict[str, Datacenter]:
    """Hosted sites get 40–120 % of the draw of all their hosted racks: the quota binds sometimes."""
    draw: dict[str, float] = defaultdict(float)
    for o in offers.values():
        if o.counts_power:
            draw[o.datacenter] += o.node_kw * o.max_nodes
    out = dict(datacenters)
    for name in hosted_sites:
        if draw[name] > 0:
            out[name] = datacenters[name].model_copy(
                update={"power_quota_kw": round(draw[name] * rng.uniform(0.4, 1.2), 1)})
    return out


def _job(i: int, size: Size, rng: random.Random) -> Job:
    horizon = size.periods
    start = rng.randint(0, int(0.4 * horizon))
    shortest = max(5, horizon // 2)
    deadline = rng.randint(min(horizon, start + shortest), horizon)
    params = rng.choice(MODEL_PARAMS)
    kind = rng.choice(KINDS)
    storage = rng.random() < 0.4
    return Job(name=f"job{i:02d}-{params / 1e9:g}b-{kind}", kind=kind, model=ModelSpec(params=params),
               tokens=1e9, start_day=start, deadline_days=deadline,
               interruptible=rng.random() < 0.3, single_site=rng.random() < 0.85,
               storage_tb=float(rng.randint(2, 30)) if storage else 0.0,
               egress_tb=round(rng.uniform(0.1, 1.0), 2) if storage else 0.0)


def _calibrate(problem: Problem, catalog: Catalog, shares: list[float] | None = None) -> Problem:
    """Set each job's tokens so that it needs FILL ÷ overlap of its best domain's capacity
    (with `shares`, fleet mode: shares[i] of all job i can reach, FLEET_SHARE).

    A job that no configuration can hold (its model does not fit, or nothing is available
    in its window) is shrunk to the next smaller model until something can.
    """
    jobs = list(problem.jobs)
    for _ in range(len(MODEL_PARAMS)):
        inst = build_instance(problem.model_copy(update={"jobs": jobs}), catalog)
        capacity = _capacity(inst, spread=shares is not None)
        stuck = [i for i, j in enumerate(jobs) if capacity.get(j.name, 0.0) <= 0]
        if not stuck:
            break
        for i in stuck:
            smaller = [p for p in MODEL_PARAMS if p < jobs[i].model.params]
            jobs[i] = jobs[i].model_copy(update={"model": ModelSpec(params=smaller[-1] if smaller else 1e9)})
    out = []
    for i, job in enumerate(jobs):
        overlap = sum(1 for other in jobs if other.start_day < job.deadline_days and job.start_day < other.deadline_days)
        want = shares[i] * capacity.get(job.name, 0.0) if shares else FILL * capacity.get(job.name, 0.0) / overlap
        tokens = job.tokens * want / inst.required[job.name] if want > 0 else job.tokens
        out.append(job.model_copy(update={"tokens": float(f"{tokens:.3g}")}))
    return Problem.model_validate({**problem.model_dump(), "jobs": [j.model_dump() for j in out]})


def _capacity(inst: Instance, spread: bool = False) -> dict[str, float]:
    """EFLOP each job could do in its window alone on its best fabric domain, power quotas
    applied per offer (jobs that may span domains are sized the same way: more slack);
    `spread`: on every domain a job that may span them reaches (fleet mode)."""
    per_domain: dict[tuple[str, str], float] = defaultdict(float)
    for opt in inst.options:
        cfg = inst.configs[opt.config]
        offer = cfg.offer
        nodes = offer.max_nodes
        if offer.counts_power:
            nodes = min(nodes, int(inst.catalog.datacenters[offer.datacenter].power_quota_kw // offer.node_kw))
        fit = nodes * offer.gpus_per_node // opt.group_gpus
        if not opt.tiers or fit < 1:
            continue
        slowest = min(tier.factor for tier in opt.tiers)  # pessimistic: every replica in the slowest tier
        for t in opt.periods:
            per_domain[opt.job, fabric_domain(cfg)] += opt.work_per_replica(inst.hours[t], slowest) * fit
    single = {j.name: j.single_site for j in inst.problem.jobs}
    out: dict[str, float] = defaultdict(float)
    for (job, _), work in per_domain.items():
        out[job] = out[job] + work if spread and not single[job] else max(out[job], work)
    return out


# ----------------------------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------------------------

def load1() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return math.nan


def build_timed(problem: Problem, catalog: Catalog) -> tuple[Instance, Milp, float, float]:
    t0 = time.perf_counter()
    inst = build_instance(problem, catalog)
    t1 = time.perf_counter()
    milp = build_milp(inst)
    t2 = time.perf_counter()
    return inst, milp, t1 - t0, t2 - t1


LP_FALLBACK = "simplex_strategy=4"
"""HiGHS' primal simplex: on the large synthetic relaxations the default (dual simplex)
stalls for minutes where primal simplex finishes in seconds to tens of seconds."""


def solve_lp(inst: Instance, repeat: int, time_limit: float) -> tuple[float | None, float, str]:
    """LP relaxation value and the fastest of up to `repeat` HiGHS solves (the machine is noisy).

    The relaxation is `build_milp(inst, relax=True)` (continuous variables only), run on
    HiGHS directly through OR-Tools' model builder: `solve_milp` would report the plan's
    cost after rounding the bookkeeping variables (its polish step), which for
    fractional values is not the LP optimum. HiGHS runs with its defaults; if they give
    no answer within the time limit, once more with primal simplex (said in the note).
    """
    relaxed = build_milp(inst, relax=True)
    best, value, note = math.inf, None, ""
    for attempt in range(max(1, repeat)):
        status, seconds, objective = _lp_once(relaxed, time_limit, "")
        if status == "time limit" and attempt == 0:
            note = f"LP: HiGHS defaults (dual simplex) gave no answer in {seconds:.1f} s"
            status, seconds, objective = _lp_once(relaxed, max(time_limit, 300.0), LP_FALLBACK)
            note += f"; primal simplex ({LP_FALLBACK}): {status} in {seconds:.1f} s"
            if status == "optimal":
                return objective, seconds, note
        if status != "optimal":
            return None, seconds, note or f"LP relaxation: {status} after {seconds:.1f} s"
        best, value = min(best, seconds), objective
        if seconds > 5:  # repeats are for the noise on short solves; a long one speaks for itself
            break
    return value, best, note


def _lp_once(relaxed: Milp, time_limit: float, options: str) -> tuple[str, float, float | None]:
    solver = mb.Solver(BACKENDS[LP_BACKEND])
    solver.set_time_limit_in_seconds(time_limit)
    solver.set_solver_specific_parameters("\n".join(filter(None, ["output_flag=false", options])))
    solver.enable_output(False)
    start = time.perf_counter()
    try:
        status = solver.solve(relaxed.model)
    except Exception as exc:  # noqa: BLE001 - a benchmark row, never a crash
        return f"error {type(exc).__name__}: {exc}", time.perf_counter() - start, None
    seconds = time.perf_counter() - start
    if status == mb.SolveStatus.OPTIMAL:
        return "optimal", seconds, solver.objective_value
    if status == mb.SolveStatus.INFEASIBLE:
        return "infeasible", seconds, None
    return ("time limit" if seconds >= 0.95 * time_limit else status.name.lower()), seconds, None


COLD = "highs-cold"
"""Pseudo-backend: HiGHS on the whole model without the first plan of solver.engine.warmstart,
to measure in one run what that plan is worth."""


LAGRANGE = "highs-lagrange"
"""Pseudo-backend: HiGHS with the Lagrangian bound (solver.engine.experimental.lagrange) beside a big model in
place of the LP relaxation (GPUPLAN_EXPERIMENTAL=lagrange for its solves), to compare the two in one run."""


def solve_row(milp: Milp, backend: str, time_limit: float, gap: float | None) -> dict:
    """Solve the way solver.api does: the full MILP."""
    start = time.perf_counter()
    switch = os.environ.get(switches.ENV)
    if backend == LAGRANGE:
        os.environ[switches.ENV] = ",".join(filter(None, [switch, "lagrange"]))
    try:
        sol = solve_milp(milp, backend="highs" if backend in (COLD, LAGRANGE) else backend, time_limit=time_limit,
                         gap=gap, warm_start=backend != COLD, tiebreak=True)
    except NoSolution as exc:
        status = "infeasible" if exc.proven else "no solution"
        return dict(status=status, solve_s=time.perf_counter() - start, note=str(exc))
    except Exception as exc:  # noqa: BLE001
        return dict(status="error", solve_s=time.perf_counter() - start,
                    note=f"{type(exc).__name__}: {exc}".splitlines()[0][:120])
    finally:
        if switch is None:
            os.environ.pop(switches.ENV, None)
        else:
            os.environ[switches.ENV] = switch
    return dict(status=sol.status, objective=sol.objective, bound=sol.bound, gap=sol.gap, solve_s=sol.seconds)


def measure(suite: str, name: str, problem: Problem, catalog: Catalog, backends: list[str], args,
            gap: float | None, size: Size | None, skip: dict[str, str], emit) -> None:
    """All rows of one instance: one per backend (or one 'infeasible' row)."""
    base = dict(suite=suite, instance=name, jobs=len(problem.jobs))
    try:
        inst, milp, inst_s, milp_s = build_timed(problem, catalog)
    except Exception as exc:  # noqa: BLE001
        emit(dict(base, backend="-", status="build error", note=f"{type(exc).__name__}: {exc}"[:160], load1=load1()))
        traceback.print_exc()
        return
    build_s = inst_s + milp_s
    base.update(configs=len(inst.configs), periods=len(inst.hours), vars=milp.model.num_variables,
                cons=milp.model.num_constraints, inst_s=inst_s, milp_s=milp_s, build_s=build_s)
    print(f"  {name}: {base['vars']} variables, {base['cons']} constraints, built in {build_s:.2f} s",
          file=sys.stderr, flush=True)
    if args.no_lp:
        lp_value, lp_s, lp_note = None, math.nan, ""
    else:
        lp_value, lp_s, lp_note = solve_lp(inst, args.lp_repeat, args.time_limit)
    base.update(lp_s=lp_s if lp_value is not None else None, lp_value=lp_value)
    if not args.no_lp:
        print(f"  LP relaxation: {'-' if lp_value is None else f'{lp_value:,.0f}'} in {lp_s:.2f} s {lp_note}",
              file=sys.stderr, flush=True)
    if lp_note:
        emit(dict(base, backend="-", status="LP " + ("infeasible" if "infeasible" in lp_note else
                                                       "solved" if lp_value is not None else "failed"),
                  note=lp_note, load1=load1()))
    if lp_value is None and "infeasible" in lp_note:
        return  # the instance is infeasible: nothing for the backends to find
    rows = []
    for backend in backends:
        if backend in skip:
            rows.append(dict(base, backend=backend, status="skipped", note=skip[backend], load1=load1()))
            continue
        print(f"    {backend} …", file=sys.stderr, end=" ", flush=True)
        row = dict(base, backend=backend, **solve_row(milp, backend, args.time_limit, gap), load1=load1())
        print(f"{row['status']} in {row['solve_s']:.1f} s", file=sys.stderr, flush=True)
        row["solve_x_lp"] = row["solve_s"] / lp_s if lp_value is not None and lp_s > 0 else math.nan
        row["build_share"] = build_s / (build_s + row["solve_s"])
        if gap is not None and row.get("gap") is not None and row["gap"] <= gap + 1e-9:
            row["t_gap_s"] = row["solve_s"]
        rows.append(row)
        if size is not None and not args.no_skip and (
                row["status"] in ("no solution", "error") or (row.get("gap") or 0) > args.skip_gap):
            skip[backend] = f"{row['status']}, gap {row.get('gap', math.nan):.0%} at {size.name}" \
                if row.get("gap") is not None else f"{row['status']} at {size.name} in {args.time_limit:g} s"
    best = min((r["objective"] for r in rows if r.get("objective") is not None), default=None)
    for row in rows:
        if best is not None and lp_value is not None and abs(best) > 1e-9:
            row["lp_ip_gap"] = (best - lp_value) / abs(best)
        emit(row)


PRUNE_COLUMNS = ["instance", "options", "pruned_options", "removed", "solve_s_unpruned", "solve_s_pruned",
                 "ratio", "same_optimum", "load1"]


def compare_pruning(name: str, problem: Problem, catalog: Catalog, time_limit: float) -> dict:
    """One row: options and HiGHS solve time without and with exact pruning, in one run."""
    row: dict = dict(instance=name.replace(".yaml", ""))
    objectives = []
    for prune in (False, True):
        inst = build_instance(problem, catalog, prune=prune)
        row["pruned_options" if prune else "options"] = len(inst.options)
        result = solve_row(build_milp(inst), "highs", time_limit, None)
        row["solve_s_pruned" if prune else "solve_s_unpruned"] = result["solve_s"]
        objectives.append(result.get("objective") if result["status"] == "optimal" else None)
    row["removed"] = row["options"] - row["pruned_options"]
    row["ratio"] = row["solve_s_pruned"] / row["solve_s_unpruned"] if row["solve_s_unpruned"] > 0 else math.nan
    row["same_optimum"] = None not in objectives and math.isclose(*objectives, rel_tol=1e-6)
    row["load1"] = load1()
    print(f"  {row}", file=sys.stderr, flush=True)
    return row


def prune_table(rows: list[dict]) -> str:
    frame = pd.DataFrame(rows, columns=PRUNE_COLUMNS)
    for col in ("solve_s_unpruned", "solve_s_pruned"):
        frame[col] = frame[col].map("{:.2f}".format)
    frame["ratio"] = frame["ratio"].map("{:.2f}".format)
    return frame.to_string(index=False)


RCFIX_COLUMNS = ["instance", "vars", "integers", "fixed", "narrowed", "lp_gap", "lp_s", "plan_s", "plain_s",
                 "start_s", "fixed_s", "ratio", "fix_ratio", "plain_nodes", "start_nodes", "fixed_nodes",
                 "opt_fixed", "opt_start_s", "opt_fixed_s", "same_optimum", "load1"]


def compare_rcfix(name: str, problem: Problem, catalog: Catalog, time_limit: float, gap: float | None) -> dict:
    """One row: what reduced-cost fixing fixes and HiGHS' time without and with it, in one run
    (the module docstring's columns). Each solve gets `time_limit` and `gap` (None: prove the
    optimum); a solve that does not reach it makes `same_optimum` False."""
    milp = build_milp(build_instance(problem, catalog))
    model = to_mathopt(milp.model)
    row: dict = dict(instance=name.replace(".yaml", ""), vars=model.get_num_variables(),
                     integers=int(rcfix.Arrays.of(model).integer.sum()))
    plain = _solved(model, time_limit, gap, None, row, "plain_s")
    start = time.perf_counter()
    duals = rcfix.lp_duals(model, time_limit)
    row["lp_s"] = time.perf_counter() - start
    start = time.perf_counter()
    plan = big.first_plan(model, milp, time_limit, None, False)  # None: no first plan (cells left "-")
    row["plan_s"] = time.perf_counter() - start
    if duals is None or plain is None:
        row.update(same_optimum=False, load1=load1())
        print(f"  {row}: no LP duals or no optimum", file=sys.stderr, flush=True)
        return row
    results = [plain]
    if plan is not None:
        results.append(_solved(model, time_limit, gap, plan.values, row, "start_s"))
        fixing = rcfix.fix_by_reduced_cost(model, duals, plan.values)
        results.append(_solved(model, time_limit, gap, plan.values, row, "fixed_s"))
        row.update(fixed=fixing and fixing.fixed, narrowed=fixing and fixing.narrowed,
                   lp_gap=fixing and (fixing.incumbent - fixing.bound) / abs(fixing.incumbent),
                   ratio=(row["lp_s"] + row["plan_s"] + row["fixed_s"]) / row["plain_s"],
                   fix_ratio=row["fixed_s"] / row["start_s"])
    best, best_model = result_values(plain), to_mathopt(milp.model)  # the best case: the optimum in hand
    results.append(_solved(best_model, time_limit, gap, best, row, "opt_start_s"))
    row["opt_fixed"] = getattr(rcfix.fix_by_reduced_cost(best_model, duals, best), "fixed", None)
    results.append(_solved(best_model, time_limit, gap, best, row, "opt_fixed_s"))
    row["same_optimum"] = None not in results and all(
        math.isclose(r.objective_value(), plain.objective_value(), rel_tol=max(gap or 0, 1e-6)) for r in results)
    row["load1"] = load1()
    print(f"  {row}", file=sys.stderr, flush=True)
    return row


def _solved(model, time_limit: float, gap: float | None, hint: dict[int, float] | None, row: dict, column: str):
    """One HiGHS solve of `model` (from `hint`), its seconds and branch-and-bound nodes recorded
    under `column` and `…_nodes`; the MathOpt result if it reached the gap (OPTIMAL), else None."""
    from ortools.math_opt.python import mathopt

    start = time.perf_counter()
    result = mathopt_once(model, time_limit, gap, False, None, hint)
    row[column] = time.perf_counter() - start
    row[column.removesuffix("_s") + "_nodes"] = result.solve_stats.node_count
    return result if result.termination.reason == mathopt.TerminationReason.OPTIMAL else None


def rcfix_table(rows: list[dict]) -> str:
    frame = pd.DataFrame(rows, columns=RCFIX_COLUMNS)
    fmt = {"lp_gap": "{:.2%}", "lp_s": "{:.2f}", "plan_s": "{:.2f}", "plain_s": "{:.2f}", "start_s": "{:.2f}",
           "fixed_s": "{:.2f}", "ratio": "{:.2f}", "fix_ratio": "{:.2f}", "opt_start_s": "{:.2f}",
           "opt_fixed_s": "{:.2f}"}
    for col, pattern in fmt.items():
        frame[col] = frame[col].map(lambda v, p=pattern: "-" if v is None or (isinstance(v, float) and math.isnan(v))
                                    else p.format(v))
    return frame.to_string(index=False)


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------

class Sink:
    """Collects rows; appends each to the CSV as it comes, so an interrupted run keeps its rows."""

    def __init__(self, out: Path | None) -> None:
        self.rows: list[dict] = []
        self.out = out
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", newline="", encoding="utf-8") as fh:
                csv.DictWriter(fh, COLUMNS).writeheader()

    def __call__(self, row: dict) -> None:
        row = {c: row.get(c) for c in COLUMNS}
        self.rows.append(row)
        if self.out:
            with self.out.open("a", newline="", encoding="utf-8") as fh:
                csv.DictWriter(fh, COLUMNS).writerow(row)


def table(rows: list[dict], suite: str) -> str:
    frame = pd.DataFrame([r for r in rows if r["suite"] == suite], columns=COLUMNS)
    if frame.empty:
        return ""
    if suite in ("bundled", "bench"):
        cols = ["instance", "backend", "vars", "cons", "build_s", "lp_s", "lp_value", "status",
                "objective", "gap", "solve_s", "solve_x_lp", "build_share", "lp_ip_gap", "load1"]
    else:
        cols = ["instance", "configs", "periods", "jobs", "vars", "cons", "inst_s", "milp_s", "build_s",
                "lp_s", "lp_value", "backend", "status", "objective", "gap", "t_gap_s", "solve_s",
                "solve_x_lp", "build_share", "lp_ip_gap", "load1"]
    view = frame[cols].copy()
    fmt = {
        "vars": "{:.0f}", "cons": "{:.0f}", "configs": "{:.0f}", "periods": "{:.0f}", "jobs": "{:.0f}",
        "inst_s": "{:.2f}", "milp_s": "{:.2f}", "build_s": "{:.2f}", "lp_s": "{:.3f}", "solve_s": "{:.1f}",
        "t_gap_s": "{:.1f}", "lp_value": "{:,.0f}", "objective": "{:,.0f}", "gap": "{:.2%}",
        "solve_x_lp": "{:,.0f}", "build_share": "{:.1%}", "lp_ip_gap": "{:.2%}", "load1": "{:.1f}",
    }
    for col, pattern in fmt.items():
        if col in view:
            view[col] = view[col].map(lambda v, p=pattern: "-" if v is None or (isinstance(v, float) and math.isnan(v))
                                      else p.format(v))
    view["instance"] = view["instance"].str.replace(".yaml", "", regex=False)
    text = view.to_string(index=False)
    notes = [f"  {r['instance']} / {r['backend']}: {r['note']}" for r in rows
             if r["suite"] == suite and r.get("note")]
    return text + ("\nnotes:\n" + "\n".join(notes) if notes else "")


def environment() -> str:
    import ortools
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        rev = "?"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{dt.datetime.now().isoformat(timespec='seconds')}  git {rev}  python {platform.python_version()}  "
            f"ortools {ortools.__version__}  cpus {os.cpu_count()}  load {load}")


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------

def parse_sizes(text: str) -> list[Size]:
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if part == "all":
            out.extend(SIZES.values())
        elif part in SIZES:
            out.append(SIZES[part])
        else:
            try:
                c, p, j = (int(x) for x in part.lower().split("x"))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"size {part!r}: use one of {', '.join(SIZES)}, 'all', or CONFIGSxPERIODSxJOBS") from None
            out.append(Size(part, c, p, j))
    return out


def parse_periods(text: str) -> list[str]:
    """`own` (the problem's own periods), a whole number of days, or `events` (solver.milp.periods)."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in names if p not in ("own", "events") and not (p.isdigit() and int(p) > 0)]
    if bad:
        raise argparse.ArgumentTypeError(f"periods {bad[0]!r}: use own, events or a number of days")
    return names


def with_periods(name: str, problem: Problem, periods: str) -> tuple[str, Problem]:
    """The instance on another period grid, its name tagged (`medium@events`, `medium@d5`)."""
    if periods == "own":
        return name, problem
    if periods == "events":
        return f"{name}@events", problem.model_copy(update={"periods": "events", "period_days": None})
    days = min(int(periods), problem.horizon_days)
    return f"{name}@d{days}", problem.model_copy(update={"periods": "uniform", "period_days": days})


def parse_backends(text: str) -> list[str]:
    names = [b.strip() for b in text.split(",") if b.strip()]
    bad = [b for b in names if b not in BACKENDS and b not in (COLD, LAGRANGE)]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown backend {bad[0]!r}; choose from {', '.join(BACKENDS)}, {COLD}, {LAGRANGE}")
    return names


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--realistic" in argv:  # the realistic suite has its own columns and options (tests/bench/realistic.py)
        sys.path.insert(0, str(Path(__file__).parent))
        from realistic import main as realistic_main
        return realistic_main([a for a in argv if a != "--realistic"])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundled", action="store_true", help="benchmark every problems/*.yaml")
    ap.add_argument("--bench", action="store_true", help="benchmark every problems/bench/*.yaml")
    ap.add_argument("--fleet", action="store_true", help="synthetic jobs of 20-60%% of the stock they can reach")
    ap.add_argument("--prune-compare", action="store_true",
                    help="instead of backend rows: options and HiGHS solve time without and with exact pruning")
    ap.add_argument("--rcfix-compare", action="store_true",
                    help="instead of backend rows: what reduced-cost fixing fixes, HiGHS' time without and with it")
    ap.add_argument("--only", type=lambda text: [n.strip() for n in text.split(",") if n.strip()], default=None,
                    help="with --prune-compare or --rcfix-compare: only these problems (file names without .yaml)")
    ap.add_argument("--sizes", type=parse_sizes, default=None,
                    help=f"synthetic sizes, comma-separated: {', '.join(SIZES)}, all, or CONFIGSxPERIODSxJOBS "
                         "(default: all when --bundled is not given)")
    ap.add_argument("--backends", type=parse_backends, default=list(BACKENDS), help="default: scip,highs,cp_sat")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    ap.add_argument("--gap", type=float, default=0.01, help="relative gap for synthetic solves (default 0.01)")
    ap.add_argument("--bundled-gap", type=float, default=None,
                    help="relative gap for bundled solves (default: each solver's own, i.e. prove optimality)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the synthetic generator (default 1)")
    ap.add_argument("--no-lp", action="store_true", help="skip the LP relaxation (lp_* and ratio columns stay empty)")
    ap.add_argument("--lp-repeat", type=int, default=3, help="LP solves per instance, fastest kept (default 3)")
    ap.add_argument("--skip-gap", type=float, default=0.5,
                    help="skip a backend on larger sizes after it ends above this gap or without a plan")
    ap.add_argument("--no-skip", action="store_true", help="never skip a backend on larger sizes")
    ap.add_argument("--periods", type=parse_periods, default=["own"],
                    help="period grids each instance is measured on, comma-separated: own (default), "
                         "events, or days (1,5): one row set per grid")
    ap.add_argument("--out", type=Path, default=None, help="also write every row to this CSV")
    args = ap.parse_args(argv)
    sizes = args.sizes if args.sizes is not None else ([] if args.bundled or args.bench else list(SIZES.values()))
    if args.prune_compare:
        return _compare_main(args, sizes, "--prune-compare", lambda name, problem, catalog, _gap: compare_pruning(
            name, problem, catalog, args.time_limit), prune_table)
    if args.rcfix_compare:
        return _compare_main(args, sizes, "--rcfix-compare", lambda name, problem, catalog, gap: compare_rcfix(
            name, problem, catalog, args.time_limit, gap), rcfix_table)

    sink = Sink(args.out)
    print(f"# bench_milp  {environment()}", flush=True)
    print(f"# backends {','.join(args.backends)}  time limit {args.time_limit:g} s  "
          f"synthetic gap {args.gap:g}  seed {args.seed}", flush=True)
    try:
        for suite, folder in (("bundled", PROBLEMS), ("bench", BENCH)):
            if not getattr(args, suite):
                continue
            print(f"[{suite}]", file=sys.stderr, flush=True)
            for path in sorted(folder.glob("*.yaml")):
                problem, catalog = load_problem(path)
                for periods in args.periods:
                    measure(suite, *with_periods(path.name, problem, periods), catalog, args.backends, args,
                            args.bundled_gap, None, {}, sink)
        skips: dict[str, dict[str, str]] = {periods: {} for periods in args.periods}
        for size in sorted(sizes, key=lambda s: s.configs * s.periods * s.jobs):
            print(f"[synthetic {size.name}: {size.configs} configs × {size.periods} periods × {size.jobs} jobs]",
                  file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            problem, catalog = generate(size, args.seed, fleet=args.fleet)
            print(f"  generated in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            for periods in args.periods:
                measure("synthetic", *with_periods(size.name, problem, periods), catalog, args.backends, args,
                        args.gap, size, skips[periods], sink)
    except KeyboardInterrupt:
        print("\ninterrupted: partial results below", file=sys.stderr)
    for suite, title in (("bundled", "Bundled problems"), ("bench", "Benchmark suite (problems/bench)"),
                         ("synthetic", "Synthetic instances")):
        text = table(sink.rows, suite)
        if text:
            print(f"\n## {title}\n{text}")
    print(f"\n# done  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.out:
        print(f"# rows written to {args.out}")
    return 0


def _compare_main(args, sizes: list[Size], flag: str, compare, render) -> int:
    """--prune-compare / --rcfix-compare: one row per instance, `compare(name, problem, catalog, gap)`
    (the bundled gap for problem files, --gap for synthetic sizes), printed by `render`."""
    print(f"# bench_milp {flag}  {environment()}  time limit {args.time_limit:g} s", flush=True)
    rows = []
    try:
        for path in _compare_paths(args):
            rows.append(compare(path.name, *load_problem(path), args.bundled_gap))
        for size in sizes:
            problem, catalog = generate(size, args.seed, fleet=args.fleet)
            rows.append(compare(problem.name, problem, catalog, args.gap))
    except KeyboardInterrupt:
        print("\ninterrupted: partial results below", file=sys.stderr)
    print(render(rows))
    print(f"# done  load {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def _compare_paths(args) -> list[Path]:
    """The bundled and bench problems a --*-compare run measures, narrowed by --only."""
    paths = [*(sorted(PROBLEMS.glob("*.yaml")) if args.bundled else []),
             *(sorted(BENCH.glob("*.yaml")) if args.bench else [])]
    return [p for p in paths if not args.only or p.stem in args.only]


if __name__ == "__main__":
    sys.exit(main())

"""The realistic suite: problems like the ones users bring, generated from a seed.

Why: problems/bench/ (about 2,500 variables, mostly `restrict`ed) hides what a new user
meets: issue 33's 2-job, 45-day problem written from README alone (no `restrict`, daily
periods, the sample catalog) built 11k variables and took 46-52 s. This generator draws
such problems and nobody tunes it to the solver: 1-6 jobs of what teams train (1B-70B
dense and MoE; pre-train, full fine-tune, LoRA, QLoRA, sweep, a short debug run), token
counts from Chinchilla-ish to small SFT sets, windows of 7-180 days with staggered
starts (daily periods up to a 120-day horizon, the default), sometimes a residency
rule, a budget, a preference or a start date, on either bundled catalog, and no
`restrict`.

Feasible by construction, loosely: each job's drawn tokens are capped so that it needs at
most CAP_SHARE ÷ (jobs overlapping it) of what its best fabric domain could do alone in
its window (tests/bench/bench_milp.py's `_capacity`); most draws are far below the cap, so
the cap only trims the impossible ones. A budget, when drawn, is BUDGET_SLACK times the
work priced at each job's cheapest rate per EFLOP, so it is a row, rarely the binding one.

Suite 2 (issue 43, the default) gives storage to most jobs of every kind, as users do (seed 002:
training sets, checkpoints and logs run to tens of TB; a fine-tune holds its dataset and
checkpoints too) and egress to some: `_data` draws them from a generator of their own, so a
seed's jobs, windows and budget are suite 1's. Suite 1 (`suite=1`) gave storage only to half of
the pre-training jobs and never to a fine-tune, so its median hid the storage rows' cost; it is
kept to compare the two once (`--suite 1`).

`SEEDS` (30 of them) is the realistic suite; `python tests/bench/bench_milp.py --realistic`
runs it (tests/bench/realistic.py), and tests/test_user_like.py checks that every seed's
problem is the same twice and loads and validates (no solving).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from solver.load import check_problem_against_catalog, load_catalog
from solver.milp.instance import Instance, build_instance
from solver.model.catalog import Catalog
from solver.model.problem import Problem

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = {"beijing-sample": ROOT / "catalogs" / "beijing-sample",
            "public-clouds-sample": ROOT / "catalogs" / "public-clouds-sample"}
SEEDS = tuple(range(1, 31))
"""The realistic suite: these 30 seeds, fixed (a seed's problem changes only when this file does)."""
USD_RATE = 7.1
"""CNY per USD for the public-clouds catalog's USD offers (problems/global-burst.yaml's rate)."""
CAP_SHARE = 0.6
"""A job needs at most this share ÷ (jobs overlapping it) of its best domain's capacity."""
SUITE = 2
"""The default suite version (see the module docstring); 1 is the suite before issue 43."""
STORAGE_SHARE = 0.85
"""Suite 2: the share of jobs (of every kind) that keep a dataset and checkpoints at their site."""
STORAGE_TB = {"pretrain": (2, 5, 10, 20, 40), "full_finetune": (1, 2, 5, 10), "lora": (0.2, 0.5, 1, 2),
              "qlora": (0.2, 0.5, 1), "sweep": (0.5, 1, 2, 5)}
"""Suite 2: TB a job of each kind keeps (dataset, checkpoints, logs), one drawn per job."""
EGRESS_SHARE = 0.3
"""Suite 2: the share of storing jobs that also export weights and logs (egress_tb)."""
BUDGET_SLACK = 2.5
"""A drawn budget: this many times the work priced at each job's cheapest rate."""


@dataclass(frozen=True)
class Template:
    """One kind of job teams run: kind, model sizes (params, active params for MoE) and
    tokens as a multiple of the active parameters (pre-training) or as a count (tuning)."""

    label: str
    kind: str
    models: tuple[tuple[float, float | None], ...]
    tokens: tuple[float, float]        # (low, high) drawn log-uniformly
    per_param: bool = False            # tokens × active params (Chinchilla ≈ 20)
    days: tuple[int, int] = (14, 90)   # window length
    trials: tuple[int, int] = (1, 1)


DENSE = ((1e9, None), (3e9, None), (7e9, None), (13e9, None), (34e9, None), (70e9, None))
MOE = ((47e9, 13e9), (16e9, 2.8e9))
TEMPLATES = (
    Template("pretrain", "pretrain", DENSE[:5] + MOE, (2.0, 25.0), per_param=True, days=(30, 180)),
    Template("pretrain", "pretrain", DENSE[1:4], (2.0, 25.0), per_param=True, days=(20, 120)),
    Template("ft", "full_finetune", DENSE[1:6] + MOE[:1], (1e9, 60e9), days=(7, 60)),
    Template("lora", "lora", DENSE[2:], (0.2e9, 10e9), days=(7, 45)),
    Template("qlora", "qlora", DENSE[3:], (0.1e9, 5e9), days=(7, 30)),
    Template("sweep", "sweep", DENSE[:2], (2e9, 30e9), days=(7, 30), trials=(8, 32)),
    Template("debug", "pretrain", DENSE[1:4], (0.5e9, 8e9), days=(7, 14)),
)
JOB_COUNTS = (1, 2, 2, 3, 3, 4, 5, 6)


def generate(seed: int, suite: int = SUITE) -> tuple[Problem, Catalog]:
    """The seed's problem and its catalog, validated as a problem file is (same seed → same problem)."""
    text = problem_yaml(seed, suite)
    return _load(text, f"user-like-{seed:02d}")


def problem_yaml(seed: int, suite: int = SUITE) -> str:
    """The seed's problem as YAML text, the way a user would write it (catalog path relative
    to tests/bench/problems/, where `write` puts it); `suite` 1 or 2 (the module docstring)."""
    rng = random.Random(seed * 7919 + 33)
    catalog_name = "public-clouds-sample" if rng.random() < 0.3 else "beijing-sample"
    jobs = _jobs(rng, rng.choice(JOB_COUNTS), catalog_name)
    horizon = max(j["deadline_days"] for j in jobs)
    data: dict = {"name": f"user-like-{seed:02d}", "catalog": f"../../../catalogs/{catalog_name}",
                  "currency": "CNY"}
    if catalog_name == "public-clouds-sample":
        data["exchange_rates"] = {"as_of": "2026-12-04", "source": "illustrative round rate",
                                  "rates": {"USD": USD_RATE}}
    if rng.random() < 0.3:
        data["start_date"] = (dt.date(2027, 1, 1) + dt.timedelta(days=rng.randint(0, 200))).isoformat()
    data["horizon_days"] = horizon
    if rng.random() < 0.5:
        data["redundancy"] = rng.choice((0.1, 0.2, 0.3))
    want_budget = rng.random() < 0.35
    if rng.random() < 0.2:
        data["prefer"] = [{"vendor": rng.choice(("21vianet", "sinnet", "baidu-ai-cloud")),
                           "up_to_pct": rng.choice((2, 5, 10))}]
    if suite >= 2:
        _data(random.Random(seed * 104729 + 43), jobs)
    data["jobs"] = jobs
    data = _capped(data, seed)
    if want_budget:
        data["budget"] = _budget(data, seed)
    return yaml.safe_dump(data, sort_keys=False)


def _jobs(rng: random.Random, count: int, catalog_name: str) -> list[dict]:
    jobs, start = [], 0
    residency = rng.choice(("cn-bj", "cn")) if catalog_name == "beijing-sample" and rng.random() < 0.35 else None
    for i in range(count):
        tpl = rng.choice(TEMPLATES)
        params, active = rng.choice(tpl.models)
        low, high = tpl.tokens
        tokens = low * (high / low) ** rng.random()
        if tpl.per_param:
            tokens *= active or params
        length = rng.randint(*tpl.days)
        if i and rng.random() < 0.6:  # staggered: later jobs often start after earlier ones
            start = min(start + rng.randint(0, 30), 150)
        deadline = min(start + length, 180)
        model: dict = {"params": params}
        if active:
            model["active_params"] = active
        job: dict = {"name": f"{tpl.label}-{params / 1e9:g}b-{i}", "kind": tpl.kind, "model": model,
                     "tokens": float(f"{tokens:.3g}")}
        if tpl.trials != (1, 1):
            job["trials"] = rng.randint(*tpl.trials)
        if start:
            job["start_day"] = start
        job["deadline_days"] = deadline
        if tpl.kind in ("sweep",) or (tpl.label == "debug" and rng.random() < 0.5):
            job["interruptible"] = True
        if tpl.kind == "sweep":
            job["single_site"] = False
        if residency and rng.random() < 0.8:
            job["residency"] = residency
        if tpl.kind == "pretrain" and rng.random() < 0.5:
            job["storage_tb"] = float(rng.choice((2, 5, 10, 20, 40)))
            if rng.random() < 0.5:
                job["egress_tb"] = round(rng.uniform(0.1, 2.0), 1)
        jobs.append(job)
    return jobs


def _data(rng: random.Random, jobs: list[dict]) -> None:
    """Suite 2's storage and egress, replacing suite 1's (drawn apart, so the jobs stay suite 1's):
    STORAGE_SHARE of the jobs of every kind keep STORAGE_TB of their kind, EGRESS_SHARE of those
    also export."""
    for job in jobs:
        job.pop("storage_tb", None)
        job.pop("egress_tb", None)
        if rng.random() < STORAGE_SHARE:
            job["storage_tb"] = float(rng.choice(STORAGE_TB[job["kind"]]))
            if rng.random() < EGRESS_SHARE:
                job["egress_tb"] = round(rng.uniform(0.1, 2.0), 1)
    for job in jobs:  # keys in the order a user writes them: the data after the deadline and flags
        for key in ("storage_tb", "egress_tb"):
            if key in job:
                job[key] = job.pop(key)


def _capped(data: dict, seed: int) -> dict:
    """Each job's tokens trimmed to CAP_SHARE ÷ overlap of its best domain's capacity (see the
    module docstring); a job nothing can hold gets the next smaller model, then 1B."""
    from tests.bench.bench_milp import _capacity  # the synthetic generator's measure of a domain

    jobs = data["jobs"]
    for _ in range(len(DENSE)):
        problem, catalog = _load(yaml.safe_dump(data, sort_keys=False), f"user-like-{seed:02d}")
        inst = build_instance(problem, catalog)
        capacity = _capacity(inst)
        stuck = [j for j in jobs if capacity.get(j["name"], 0.0) <= 0]
        if not stuck:
            break
        for job in stuck:
            smaller = [p for p, _ in DENSE if p < job["model"]["params"]]
            job["model"] = {"params": smaller[-1] if smaller else 1e9}
    for job in jobs:
        overlap = sum(1 for o in jobs if o.get("start_day", 0) < job["deadline_days"]
                      and job.get("start_day", 0) < o["deadline_days"])
        most = CAP_SHARE * capacity.get(job["name"], 0.0) / overlap
        if inst.required[job["name"]] > most > 0:
            job["tokens"] = float(f"{job['tokens'] * most / inst.required[job['name']]:.3g}")
    return data


def _budget(data: dict, seed: int) -> float:
    """BUDGET_SLACK × Σ_j required work × the cheapest price per EFLOP of any of j's options."""
    problem, catalog = _load(yaml.safe_dump(data, sort_keys=False), f"user-like-{seed:02d}")
    inst = build_instance(problem, catalog)
    total = 0.0
    for job in problem.jobs:
        rates = [_price_per_eflop(inst, opt) for opt in inst.options if opt.job == job.name]
        total += inst.required[job.name] * min(rates, default=0.0)
    return float(f"{max(total, 1.0) * BUDGET_SLACK:.3g}")


def _price_per_eflop(inst: Instance, opt) -> float:
    cfg = inst.configs[opt.config]
    gpn = cfg.offer.gpus_per_node
    if cfg.committed:
        per_gpu_hour = cfg.node_cost_term / gpn / (24 * max(1, cfg.offer.min_term_days))
    else:
        per_gpu_hour = cfg.node_cost_hour / gpn
    eflop_per_gpu_hour = opt.work_per_replica(1.0, min(t.factor for t in opt.tiers)) / opt.group_gpus
    return per_gpu_hour / eflop_per_gpu_hour if eflop_per_gpu_hour > 0 else float("inf")


@lru_cache(maxsize=None)
def _catalog(name: str) -> Catalog:
    return load_catalog(CATALOGS[name])


def _load(text: str, name: str) -> tuple[Problem, Catalog]:
    """Validate the YAML as `gpuplan` validates a problem file (solver.load: the Problem model,
    then the names it uses against its catalog), without writing it."""
    problem = Problem.model_validate(yaml.safe_load(text))
    catalog = _catalog(Path(problem.catalog).name)
    check_problem_against_catalog(problem, catalog, name)
    return problem, catalog


def write(seed: int, folder: Path) -> Path:
    """The seed's problem as a file (for `gpuplan solve` by hand), written via a temp file and renamed."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"user-like-{seed:02d}.yaml"
    tmp = target.with_suffix(".yaml.tmp")
    tmp.write_text(f"# tests/bench/user_like.py seed {seed}: generated, do not edit\n" + problem_yaml(seed),
                   encoding="utf-8")
    tmp.replace(target)
    return target

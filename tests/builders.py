"""The one set of builders for tiny in-memory catalogs and problems used by the tests.

Everything here is plain data (pydantic models from solver.model) plus a few readers of a
solved plan; nothing builds the MILP. Every number is chosen so that an optimum can be
worked out by hand:

- GPU "G80" (80 GB) and "G24" (24 GB): 100 TFLOPS dense BF16, default MFU 0.5.
- `hourly` and `monthly` are 8-GPU IB HDR nodes with a 100 % performance clause, so one
  GPU does 100e12 × 0.5 × 1.0 = 5e13 FLOP/s of useful work: GPU_DAY = 4.32e18 FLOPs per
  GPU-day, with no fabric or scale derating (IB ≤ 256 GPUs). Hourly prices are per
  GPU-hour: 4 CNY → 8 × 24 × 4 = 768 CNY per 8-GPU node-day.
- `offer` is the general builder: one GPU a node, one node, no performance clause (the
  documented 90 % default applies), any mode and price unit. `gpu_day_flops()` gives the
  useful FLOPs of one such GPU in one day.
- The SMALL model (1e8 parameters) fits one GPU of either size, so the model-parallel
  group is 1 GPU and capacity is counted in plain GPU-days; ONE_B fits one 24 GB GPU.
- `gpu_days(n)` asks for a hair less than n GPU-days, so n GPU-days of capacity suffice
  and n − 1 do not: the integer optimum sits strictly inside the feasible side and
  floating-point noise cannot flip it.
- `problem` sets redundancy to 0 (the product default is 0.30) so costs stay round.

    cat = catalog(hourly("h", 4.0), monthly("m", 15_000))
    prob = problem(job("j", days=40, deadline_days=10), horizon_days=10)
"""

from __future__ import annotations

from pathlib import Path

from solver.model.catalog import Catalog, Datacenter, Gpu, Offer
from solver.model.modes import MODES
from solver.model.problem import Job, ModelSpec, Problem, Restrict

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (problems/, catalogs/, tests/data/)."""
DATA = ROOT / "tests" / "data"
HANG_SECONDS = 1800
"""How long a test waits for a child process (the CLI, a browser) before calling it hung. A guard,
never a measure of speed: the suite must pass on a loaded machine (a negotiation test that once
asserted "under 120 s" took 138 s on a busy 2-core machine). No test asserts how long anything took."""

GPU = "G80"
TFLOPS = 100.0
MFU = 0.5
UNGUARANTEED_PERF = 0.90
"""The documented throughput factor of an offer without a performance clause."""

GPU_DAY = TFLOPS * 1e12 * MFU * 86_400
"""FLOPs one G80/G24 GPU does in a day at full rate (100 % performance clause) = 4.32e18."""

SLACK = 1 - 1e-12
"""Just under: floating point may compute n GPU-days of work a hair below n·GPU_DAY. Not 1e-9:
a requirement 1e-9 to 4e-8 (relative) under an exact multiple of a replica's work is where
HiGHS 1.12's presolve calls a worse plan optimal (tests/milp/test_packing.py, the xfail)."""

SMALL = ModelSpec(params=1e8, layers=4, hidden=512, heads=4, seq_len=512)
"""1e8 parameters: 1.6 GB of model states, fits one GPU of any size here."""

ONE_B = ModelSpec(params=1e9, layers=16, hidden=2048, heads=16, seq_len=2048)
"""1e9 parameters, explicit shape: 20 GB per GPU, a group of one GPU on 24 GB and up."""

MID = ModelSpec(params=2e9, layers=16, hidden=2048, heads=16, seq_len=512)
"""2e9 parameters: 32 GB of Adam states; fits one 80 GB GPU, not one 24 GB GPU."""

BIG = ModelSpec(params=8e9, layers=32, hidden=4096, heads=32, seq_len=512)
"""8e9 parameters: 128 GB of Adam states; needs a group of several 80 GB GPUs."""


# ---------------------------------------------------------------------------------------
# Catalog rows
# ---------------------------------------------------------------------------------------

def gpu(name: str = GPU, memory_gb: float = 80, **kw) -> Gpu:
    """A GPU row; keyword arguments override any column (bf16_tflops, default_mfu, fp8_tflops, …)."""
    fields = dict(gpu=name, memory_gb=memory_gb, bf16_tflops=TFLOPS, mem_bw_tbs=2.0, tdp_w=400.0,
                  form="sxm", default_mfu=MFU, source="test")
    fields.update(kw)
    fields.setdefault("class", "datacenter")
    return Gpu(**fields)


def datacenter(name: str = "D1", *, power_quota_kw: float = 1000, pue: float = 1.2,
               link_group: str | None = None, residency: tuple[str, ...] = ()) -> Datacenter:
    """A datacenter; its link group is its own name unless given (sites sharing one are one fabric)."""
    return Datacenter(datacenter=name, region="test", power_quota_kw=power_quota_kw, pue=pue,
                      residency=tuple(residency), link_group=link_group or name, source="test")


def offer(name: str, *, vendor: str = "v1", datacenter: str = "D1", gpu: str = GPU,
          mode: str = "hourly", price: float = 10.0, per: str = "gpu", gpus_per_node: int = 1,
          max_nodes: int = 1, interconnect: tuple[str, ...] | str = ("ib_hdr",),
          interconnect_price: tuple[float, ...] | float | None = None,
          storage: float = 0.0, egress: float = 0.0, **kw) -> Offer:
    """Any offer: `per` is 'gpu' or 'node' and the price's time unit follows the mode;
    other keyword arguments are offers.csv columns (lead_time_days, min_term_days, …)."""
    if isinstance(interconnect, str):
        interconnect = (interconnect,)
    if interconnect_price is None:
        interconnect_price = (0.0,) * len(interconnect)
    elif isinstance(interconnect_price, (int, float)):
        interconnect_price = (float(interconnect_price),)
    return Offer(offer=name, vendor=vendor, datacenter=datacenter, gpu=gpu, mode=mode, price=price,
                 price_unit=f"cny_per_{per}_{MODES[mode].unit}", gpus_per_node=gpus_per_node,
                 max_nodes=max_nodes, interconnect=tuple(interconnect),
                 interconnect_price=tuple(interconnect_price), storage_per_tb_month=storage,
                 egress_per_tb=egress, source="test", **kw)


def hourly(name: str, price: float, **kw) -> Offer:
    """An 8-GPU IB node rented by the hour, price in CNY per GPU-hour, 100 % performance clause."""
    return _node(name, "hourly", price, "cny_per_gpu_hour", kw)


def monthly(name: str, price: float, **kw) -> Offer:
    """An 8-GPU IB node on a 30-day contract, price in CNY per node-month, 100 % performance clause."""
    return _node(name, "monthly", price, "cny_per_node_month", kw)


def _node(name: str, mode: str, price: float, unit: str, kw: dict) -> Offer:
    fields = dict(offer=name, vendor="v1", datacenter="D1", gpu=GPU, mode=mode, price=price,
                  price_unit=unit, gpus_per_node=8, max_nodes=10, interconnect=("ib_hdr",),
                  perf_guarantee_pct=100, source="test")
    fields.update(kw)
    return Offer(**fields)


def catalog(*offers: Offer, gpus=None, datacenters=None) -> Catalog:
    """A catalog of these offers. GPUs default to G80 and G24; a GPU or datacenter an offer
    names and that is not given is created with the defaults above."""
    gpu_rows = {g.gpu: g for g in (gpus if gpus is not None else (gpu("G80", 80), gpu("G24", 24)))}
    dc_rows = {d.datacenter: d for d in (datacenters or ())}
    for o in offers:
        gpu_rows.setdefault(o.gpu, gpu(o.gpu))
        dc_rows.setdefault(o.datacenter, datacenter(o.datacenter))
    return Catalog(gpus=gpu_rows, datacenters=dc_rows, offers={o.offer: o for o in offers})


# ---------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------

def gpu_days(n: float) -> float:
    """FLOPs of a job that needs just under `n` GPU-days at full rate."""
    return n * GPU_DAY * SLACK


def gpu_day_flops(*, tflops: float = TFLOPS, mfu: float = MFU, perf: float = UNGUARANTEED_PERF) -> float:
    """Useful FLOPs of one GPU in one day (group of one, single node, no spot loss); by
    default on an `offer` without a performance clause."""
    return tflops * 1e12 * mfu * perf * 86_400.0


def job(name: str = "j", *, deadline_days: int, days: float | None = None, flops: float | None = None,
        model: ModelSpec = SMALL, **kw) -> Job:
    """A pretrain job due by `deadline_days`, its work given either as just under `days`
    GPU-days at full rate or directly in `flops`."""
    if (days is None) == (flops is None):
        raise TypeError("job(): give exactly one of days= or flops=")
    return Job(name=name, model=model, flops=gpu_days(days) if days is not None else flops,
               deadline_days=deadline_days, **kw)


def problem(*jobs: Job, horizon_days: int, redundancy: float = 0.0, name: str = "t", **kw) -> Problem:
    return Problem(name=name, catalog=".", horizon_days=horizon_days, redundancy=redundancy,
                   jobs=list(jobs), **kw)


def restrict(**kw) -> Restrict:
    return Restrict(**kw)


# ---------------------------------------------------------------------------------------
# Solving and reading a plan
# ---------------------------------------------------------------------------------------

def solve(prob: Problem, cat: Catalog):
    """The verified optimal plan (solve_problem runs the independent verifier itself)."""
    from solver.api import solve_problem

    plan = solve_problem(prob, cat)   # no time limit: whether it is optimal must not depend on the CPU
    assert plan.status == "optimal"
    return plan


def vendors_of(plan, cat: Catalog, job_name: str = "j") -> set[str]:
    return {cat.offers[a.offer].vendor for a in plan.schedule.assignments if a.job == job_name}


def offers_of(plan, job_name: str = "j") -> set[str]:
    return {a.offer for a in plan.schedule.assignments if a.job == job_name}


def peak_gpus(plan, job_name: str = "j") -> int:
    per_period: dict[int, int] = {}
    for a in plan.schedule.assignments:
        if a.job == job_name:
            per_period[a.period] = per_period.get(a.period, 0) + a.replicas * a.group_gpus
    return max(per_period.values(), default=0)


def catalog_folder(folder, *tables) -> "Path":
    """A new catalog folder holding copies of the given CSV tables (paths), for import tests."""
    import shutil
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir()
    for table in tables:
        shutil.copy(table, folder)
    return folder


def write_catalog(cat: Catalog, folder) -> None:
    """Dump an in-memory catalog as the three CSV tables the loader reads."""
    import pandas as pd

    def cell(value):
        if isinstance(value, tuple):
            return "|".join(str(v) for v in value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else value

    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("gpus.csv", cat.gpus), ("datacenters.csv", cat.datacenters), ("offers.csv", cat.offers)):
        records = [{k: cell(v) for k, v in row.model_dump(by_alias=True).items()} for row in rows.values()]
        pd.DataFrame.from_records(records).to_csv(folder / name, index=False)


def write_problem(folder, prob: Problem, cat: Catalog, **extra) -> Path:
    """The catalog's CSV tables in folder/cat and the problem as folder/p.yaml pointing at them
    (its defaults left out, `extra` top-level keys added): files for the CLI."""
    import yaml

    write_catalog(cat, folder / "cat")
    data = prob.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    data.update(catalog="cat", horizon_days=prob.horizon_days, redundancy=prob.redundancy, **extra)
    path = folder / "p.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run_cli(*args: str):
    """`gpuplan ARGS` in a child process from the repository's root, 200 columns wide."""
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=HANG_SECONDS, env={**os.environ, "COLUMNS": "200"})


def count_builds(monkeypatch) -> dict[str, int]:
    """Count the Instances and models built from now on in this process, through solver.api's
    build_instance and build_milp (the one door: issue 34's "one Instance and one model per
    command"); the dict fills as they are built."""
    import solver.api as api

    built = {"instance": 0, "model": 0}

    def counting(kind: str, real):
        def counted(*a, **kw):
            built[kind] += 1
            return real(*a, **kw)
        return counted
    monkeypatch.setattr(api, "build_instance", counting("instance", api.build_instance))
    monkeypatch.setattr(api, "build_milp", counting("model", api.build_milp))
    return built


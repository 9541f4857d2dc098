"""Tiny in-memory catalogs and problems for the constraint-family tests.

Every number is chosen so that the optimum can be worked out by hand:

- GPU "G80" (80 GB) and "G24" (24 GB): 100 TFLOPS dense BF16, default MFU 0.5.
- Offers default to a 100 % performance clause and IB HDR, so one GPU does
  100e12 × 0.5 × 1.0 = 5e13 FLOP/s of useful work, i.e. GPU_DAY = 5e13 × 86 400
  = 4.32e18 FLOPs per GPU-day, with no fabric or scale derating (IB ≤ 256 GPUs).
- The "small" model (1e8 parameters) fits one GPU of either size, so the
  model-parallel group is 1 GPU and capacity is counted in plain GPU-days.
- `gpu_days(n)` asks for a hair less than n GPU-days, so n GPU-days of capacity
  suffice and n − 1 do not: the integer optimum sits strictly inside the feasible
  side and floating-point noise cannot flip it.
- Redundancy defaults to 0 here (the product default is 0.30) so costs stay round.
- Hourly prices are per GPU-hour: 4 CNY → 8 × 24 × 4 = 768 CNY per 8-GPU node-day;
  6 CNY → 1 152 CNY per node-day.
"""

from __future__ import annotations

from solver.model.catalog import Catalog, Datacenter, Gpu, Offer
from solver.model.problem import Job, ModelSpec, Problem

GPU_DAY = 100e12 * 0.5 * 86_400  # FLOPs one G80/G24 GPU does in a day at full rate = 4.32e18
SLACK = 1 - 1e-12
"""Just under: floating point may compute n GPU-days of work a hair below n·GPU_DAY. Not 1e-9:
a requirement 1e-9 to 4e-8 (relative) under an exact multiple of a replica's work is where
HiGHS 1.12's presolve calls a worse plan optimal (tests/test_milp_packing.py, the xfail)."""

SMALL = ModelSpec(params=1e8, layers=4, hidden=512, heads=4, seq_len=512)
"""1e8 parameters: 1.6 GB of model states, fits one GPU of any size here."""

MID = ModelSpec(params=2e9, layers=16, hidden=2048, heads=16, seq_len=512)
"""2e9 parameters: 32 GB of Adam states; fits one 80 GB GPU, not one 24 GB GPU."""

BIG = ModelSpec(params=8e9, layers=32, hidden=4096, heads=32, seq_len=512)
"""8e9 parameters: 128 GB of Adam states; needs a group of several 80 GB GPUs."""


def gpu_days(n: float) -> float:
    """FLOPs of a job that needs just under `n` GPU-days at full rate."""
    return n * GPU_DAY * SLACK


def gpu(name: str = "G80", memory_gb: float = 80, **kw) -> Gpu:
    fields = dict(gpu=name, memory_gb=memory_gb, bf16_tflops=100.0, mem_bw_tbs=2.0, tdp_w=400.0,
                  form="sxm", default_mfu=0.5, source="test")
    fields.update(kw)
    fields.setdefault("class", "datacenter")
    return Gpu(**fields)


def dc(name: str = "D1", *, quota_kw: float = 1000, link_group: str | None = None,
       residency: tuple[str, ...] = ()) -> Datacenter:
    return Datacenter(datacenter=name, region="test", power_quota_kw=quota_kw, pue=1.2,
                      residency=residency, link_group=link_group or name, source="test")


def hourly(name: str, price: float, **kw) -> Offer:
    """An 8-GPU IB node rented by the hour, price in CNY per GPU-hour."""
    fields = dict(offer=name, vendor="v1", datacenter="D1", gpu="G80", mode="hourly", price=price,
                  price_unit="cny_per_gpu_hour", gpus_per_node=8, max_nodes=10,
                  interconnect=("ib_hdr",), perf_guarantee_pct=100, source="test")
    fields.update(kw)
    return Offer(**fields)


def monthly(name: str, price: float, **kw) -> Offer:
    """An 8-GPU IB node on a 30-day contract, price in CNY per node-month."""
    fields = dict(offer=name, vendor="v1", datacenter="D1", gpu="G80", mode="monthly", price=price,
                  price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10,
                  interconnect=("ib_hdr",), perf_guarantee_pct=100, source="test")
    fields.update(kw)
    return Offer(**fields)


def catalog(*offers: Offer, gpus: tuple[Gpu, ...] | None = None,
            datacenters: tuple[Datacenter, ...] | None = None) -> Catalog:
    gpus = gpus or (gpu("G80", 80), gpu("G24", 24))
    if datacenters is None:
        names = sorted({o.datacenter for o in offers})
        datacenters = tuple(dc(n) for n in names)
    return Catalog(gpus={g.gpu: g for g in gpus}, datacenters={d.datacenter: d for d in datacenters},
                   offers={o.offer: o for o in offers})


def job(name: str = "j", *, days: float, deadline: int, model: ModelSpec = SMALL, **kw) -> Job:
    """A job needing just under `days` GPU-days of full-rate work by `deadline`."""
    return Job(name=name, model=model, flops=gpu_days(days), deadline_days=deadline, **kw)


def problem(*jobs: Job, horizon: int, redundancy: float = 0.0, **kw) -> Problem:
    return Problem(name="t", catalog=".", horizon_days=horizon, redundancy=redundancy,
                   jobs=list(jobs), **kw)


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


def solve(prob: Problem, cat: Catalog):
    """The verified optimal plan (solve_problem runs the independent verifier itself)."""
    from solver.api import solve_problem

    plan = solve_problem(prob, cat, time_limit=30)
    assert plan.status == "optimal"
    return plan


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

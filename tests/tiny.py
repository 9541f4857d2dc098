"""Builders of tiny in-memory catalogs and problems for MILP tests.

Everything here is plain data (pydantic models from solver.model); nothing calls the
MILP. The defaults give a job whose model-parallel group is one GPU on an 80 GB card
(a 1B model), so every rented GPU can run one replica and work is simply
GPU-hours × peak × MFU × perf. `gpu_day_flops` gives that rate per GPU-day so tests
can size work in GPU-days.

    cat = catalog([offer("a", mode="hourly", price=20, gpus_per_node=2, max_nodes=3)])
    prob = problem([job("j", flops=2.5 * gpu_day_flops(), deadline_days=3)], horizon_days=3)
"""

from __future__ import annotations

from typing import Iterable

from solver.model.catalog import Catalog, Datacenter, Gpu, Offer
from solver.model.problem import Job, ModelSpec, Problem, Restrict

GPU = "G80"
DEFAULT_TFLOPS = 100.0
DEFAULT_MFU = 0.5
UNGUARANTEED_PERF = 0.90   # documented default throughput factor without a perf clause
UNIT = {"hourly": "hour", "spot": "hour", "monthly": "month", "hosted": "month", "yearly": "year"}


def gpu(name: str = GPU, *, memory_gb: float = 80.0, bf16_tflops: float = DEFAULT_TFLOPS,
        default_mfu: float = DEFAULT_MFU, fp8_tflops: float | None = None) -> Gpu:
    return Gpu(gpu=name, memory_gb=memory_gb, bf16_tflops=bf16_tflops, fp8_tflops=fp8_tflops,
               mem_bw_tbs=2.0, tdp_w=400, form="sxm", default_mfu=default_mfu, source="test",
               **{"class": "datacenter"})


def datacenter(name: str = "dc0", *, link_group: str = "lg0", residency: Iterable[str] = (),
               power_quota_kw: float = 1e6) -> Datacenter:
    return Datacenter(datacenter=name, region="test", power_quota_kw=power_quota_kw, pue=1.3,
                      residency=tuple(residency), link_group=link_group, source="test")


def offer(name: str, *, vendor: str = "v0", datacenter: str = "dc0", gpu: str = GPU,
          mode: str = "hourly", price: float = 10.0, per: str = "gpu", gpus_per_node: int = 1,
          max_nodes: int = 1, min_term_days: int = 0, lead_time_days: int = 0,
          interconnect: tuple[str, ...] | str = ("ib_hdr",),
          interconnect_price: tuple[float, ...] | float | None = None,
          platform_fee_pct: float = 0.0, perf_guarantee_pct: float | None = None,
          discount_from_gpus: int | None = None, discount_pct: float | None = None,
          storage: float = 0.0, egress: float = 0.0, preemptions_per_day: float = 0.0,
          counts_power: bool = False, node_kw: float | None = None) -> Offer:
    """One offer; `per` is 'gpu' or 'node' and the price unit follows the mode."""
    if isinstance(interconnect, str):
        interconnect = (interconnect,)
    if interconnect_price is None:
        interconnect_price = (0.0,) * len(interconnect)
    elif isinstance(interconnect_price, (int, float)):
        interconnect_price = (float(interconnect_price),)
    return Offer(offer=name, vendor=vendor, datacenter=datacenter, gpu=gpu, mode=mode, price=price,
                 price_unit=f"cny_per_{per}_{UNIT[mode]}", gpus_per_node=gpus_per_node,
                 max_nodes=max_nodes, min_term_days=min_term_days, lead_time_days=lead_time_days,
                 interconnect=tuple(interconnect), interconnect_price=tuple(interconnect_price),
                 counts_power=counts_power, node_kw=node_kw, platform_fee_pct=platform_fee_pct,
                 preemptions_per_day=preemptions_per_day, perf_guarantee_pct=perf_guarantee_pct,
                 discount_from_gpus=discount_from_gpus, discount_pct=discount_pct,
                 storage_per_tb_month=storage, egress_per_tb=egress, source="test")


def catalog(offers: Iterable[Offer], *, gpus: Iterable[Gpu] | None = None,
            datacenters: Iterable[Datacenter] | None = None) -> Catalog:
    """A catalog of these offers; GPUs and datacenters they name are created with defaults
    (link group lg0) unless given explicitly."""
    offers = list(offers)
    gpu_rows = {g.gpu: g for g in (gpus or [])}
    dc_rows = {d.datacenter: d for d in (datacenters or [])}
    for o in offers:
        gpu_rows.setdefault(o.gpu, gpu(o.gpu))
        dc_rows.setdefault(o.datacenter, datacenter(o.datacenter))
    return Catalog(gpus=gpu_rows, datacenters=dc_rows, offers={o.offer: o for o in offers})


def small_model() -> ModelSpec:
    """1B parameters, explicit shape: 20 GB per GPU, a group of one GPU on 24 GB and up."""
    return ModelSpec(params=1e9, layers=16, hidden=2048, heads=16, seq_len=2048)


def job(name: str = "j0", *, flops: float, deadline_days: int, start_day: int = 0, **kw) -> Job:
    """A pretrain job of the small model with its work given directly in FLOPs."""
    return Job(name=name, kind="pretrain", model=small_model(), flops=flops,
               deadline_days=deadline_days, start_day=start_day, **kw)


def problem(jobs: Iterable[Job], *, horizon_days: int, name: str = "tiny", **kw) -> Problem:
    return Problem(name=name, catalog=".", horizon_days=horizon_days, jobs=list(jobs), **kw)


def restrict(**kw) -> Restrict:
    return Restrict(**kw)


def gpu_day_flops(*, tflops: float = DEFAULT_TFLOPS, mfu: float = DEFAULT_MFU,
                  perf: float = UNGUARANTEED_PERF) -> float:
    """Useful FLOPs of one GPU in one day (group of one, single node, no spot loss)."""
    return tflops * 1e12 * mfu * perf * 86400.0

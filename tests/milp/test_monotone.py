"""Laws of the optimum on small random instances (no oracle needed, only comparisons).

Relaxing a problem never raises its optimal cost: a later deadline, a higher budget, an
extra offer, a cheaper offer, more stock, a shorter lead time, fewer restrictions.
Scaling every price by k scales the optimum by k. Splitting an offer's stock into two
identical offers changes nothing (when no volume discount and no job's group depends on
the stock). Infeasible base cases are discarded.

Storage is charged from a job's start to its finish, not to its deadline
(solver/milp/data.py), so the deadline law holds with storage too, with no allowance.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from solver.api import solve_problem
from solver.estimate.memory import minimal_layout
from solver.estimate.shape import infer_shape
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.problem import ModelSpec, Restrict

from tests.builders import datacenter, gpu, job, offer, problem, ONE_B

LAW = settings(max_examples=20, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
GPUS = {"G80": gpu("G80", memory_gb=80, bf16_tflops=100, default_mfu=0.5),
        "G40": gpu("G40", memory_gb=40, bf16_tflops=60, default_mfu=0.45)}
MODELS = {"1b": ONE_B, "3b": ModelSpec(params=3e9, seq_len=2048), "5b": ModelSpec(params=5e9, seq_len=2048)}
FABRICS = [("ib_hdr",), ("roce",), ("ethernet",), ("ib_hdr", "ethernet")]
DCS = [datacenter("dc0", link_group="lg0"), datacenter("dc1", link_group="lg0"), datacenter("dc2", link_group="lg1")]


def cost(prob, cat) -> float | None:
    try:
        return solve_problem(prob, cat).total_cost
    except Infeasible:
        return None


def tol(c: float) -> float:
    return 0.01 + 1e-6 * abs(c)


# --------------------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------------------

@st.composite
def offers_st(draw, name: str, site_prices: dict, allow_spot: bool):
    vendor = draw(st.sampled_from(["v0", "v1"]))
    dc = draw(st.sampled_from(DCS)).datacenter
    g = draw(st.sampled_from(sorted(GPUS)))
    mode = draw(st.sampled_from(["hourly", "monthly", "spot"] if allow_spot else ["hourly", "monthly"]))
    gpn = draw(st.sampled_from([1, 2, 4]))
    per = draw(st.sampled_from(["gpu", "node"]))
    gpu_hour = draw(st.integers(50, 400)) / 10 * (0.6 if g == "G40" else 1.0)
    if mode == "monthly":
        unit_price = gpu_hour * 24 * draw(st.integers(40, 200)) / 10
    elif mode == "spot":
        unit_price = gpu_hour * 0.4
    else:
        unit_price = gpu_hour
    fabric = draw(st.sampled_from(FABRICS))
    link = tuple(float(draw(st.sampled_from([0.0, 2.0 if mode != "monthly" else 600.0]))) for _ in fabric)
    disc = draw(st.sampled_from([None, (4, 10.0), (8, 20.0)]))
    storage, egress = site_prices[vendor, dc]
    return offer(name, vendor=vendor, datacenter=dc, gpu=g, mode=mode, per=per,
                 price=round(unit_price * (gpn if per == "node" else 1), 4), gpus_per_node=gpn,
                 max_nodes=draw(st.integers(1, 4)), lead_time_days=draw(st.integers(0, 2)),
                 min_term_days=draw(st.sampled_from([0, 0, 40])) if mode == "monthly" else 0,
                 interconnect=fabric, interconnect_price=link,
                 platform_fee_pct=draw(st.sampled_from([0.0, 0.0, 5.0])),
                 perf_guarantee_pct=draw(st.sampled_from([None, 95.0])),
                 discount_from_gpus=disc[0] if disc else None, discount_pct=disc[1] if disc else None,
                 preemptions_per_day=draw(st.sampled_from([0.5, 2.0])) if mode == "spot" else 0.0,
                 storage=storage, egress=egress)


@st.composite
def instances(draw, *, storage: bool = True):
    """(problem, catalog, site_prices, allow_spot): 2–4 offers, 1–2 jobs, horizon ≤ 10 days."""
    horizon = draw(st.integers(3, 10))
    site_prices = {(v, d.datacenter): ((draw(st.sampled_from([0.0, 500.0])), draw(st.sampled_from([0.0, 90.0])))
                                       if storage else (0.0, 0.0))
                   for v in ("v0", "v1") for d in DCS}
    n_jobs = draw(st.integers(1, 2))
    interruptible = [draw(st.booleans()) for _ in range(n_jobs)]
    allow_spot = any(interruptible)
    offers = [draw(offers_st(f"o{i}", site_prices, allow_spot)) for i in range(draw(st.integers(2, 4)))]
    cat = Catalog(gpus=GPUS, datacenters={d.datacenter: d for d in DCS}, offers={o.offer: o for o in offers})
    jobs = []
    for i in range(n_jobs):
        start = draw(st.integers(0, 2))
        deadline = draw(st.integers(start + 1, horizon))
        days = deadline - start
        gpu_day = 100e12 * 0.5 * 0.9 * 86400
        gpus = draw(st.integers(1, 8)) + draw(st.floats(0.1, 0.9))
        jobs.append(job(f"j{i}", flops=gpus * days * gpu_day * 0.5, deadline_days=deadline, start_day=start,
                        interruptible=interruptible[i], single_site=draw(st.booleans()),
                        storage_tb=draw(st.sampled_from([0.0, 1.0])) if storage else 0.0,
                        egress_tb=draw(st.sampled_from([0.0, 2.0])) if storage else 0.0).model_copy(
            update={"model": MODELS[draw(st.sampled_from(sorted(MODELS)))]}))
    prob = problem(*jobs, horizon_days=horizon, redundancy=draw(st.sampled_from([0.0, 0.3])))
    return prob, cat, site_prices, allow_spot


def feasible_base(draw_inst):
    prob, cat, *rest = draw_inst
    base = cost(prob, cat)
    event("feasible" if base is not None else "infeasible base (discarded)")
    assume(base is not None)
    return prob, cat, base, *rest


def with_offer(cat: Catalog, o) -> Catalog:
    return cat.model_copy(update={"offers": {**cat.offers, o.offer: o}})


def with_job(prob, i: int, **update):
    jobs = list(prob.jobs)
    jobs[i] = jobs[i].model_copy(update=update)
    return prob.model_copy(update={"jobs": jobs})


# --------------------------------------------------------------------------------------
# Laws
# --------------------------------------------------------------------------------------

@LAW
@given(instances(), st.data())
def test_later_deadline_never_raises_cost_with_storage(inst, data):
    prob, cat, base, *_ = feasible_base(inst)
    i = data.draw(st.integers(0, len(prob.jobs) - 1))
    j = prob.jobs[i]
    assume(j.deadline_days < prob.horizon_days)
    later = data.draw(st.integers(j.deadline_days + 1, prob.horizon_days))
    new = cost(with_job(prob, i, deadline_days=later), cat)
    assert new is not None and new <= base + tol(base)


@LAW
@given(instances(storage=False), st.data())
def test_later_deadline_never_raises_cost_without_storage(inst, data):
    prob, cat, base, *_ = feasible_base(inst)
    i = data.draw(st.integers(0, len(prob.jobs) - 1))
    j = prob.jobs[i]
    assume(j.deadline_days < prob.horizon_days)
    later = data.draw(st.integers(j.deadline_days + 1, prob.horizon_days))
    new = cost(with_job(prob, i, deadline_days=later), cat)
    assert new is not None and new <= base + tol(base)


@LAW
@given(instances())
def test_budget_binds_exactly_at_the_optimum(inst):
    prob, cat, base, *_ = feasible_base(inst)
    binding = prob.model_copy(update={"budget": base + 0.01})
    assert cost(binding, cat) == pytest.approx(base, rel=1e-6, abs=0.01)
    higher = prob.model_copy(update={"budget": base * 1.5 + 1})
    assert cost(higher, cat) == pytest.approx(base, rel=1e-6, abs=0.01)
    assume(base > 10)
    below = prob.model_copy(update={"budget": base * (1 - 1e-3)})
    assert cost(below, cat) is None


@LAW
@given(instances(), st.data())
def test_extra_offer_never_raises_cost(inst, data):
    prob, cat, base, site_prices, allow_spot = feasible_base(inst)
    extra = data.draw(offers_st("extra", site_prices, allow_spot))
    new = cost(prob, with_offer(cat, extra))
    assert new is not None and new <= base + tol(base)


@LAW
@given(instances(), st.data())
def test_cheaper_offer_never_raises_cost(inst, data):
    prob, cat, base, *_ = feasible_base(inst)
    name = data.draw(st.sampled_from(sorted(cat.offers)))
    factor = data.draw(st.sampled_from([0.3, 0.7, 0.95]))
    o = cat.offers[name]
    new = cost(prob, with_offer(cat, o.model_copy(update={"price": o.price * factor})))
    assert new is not None and new <= base + tol(base)


@LAW
@given(instances(), st.data())
def test_more_stock_or_shorter_lead_time_never_raises_cost(inst, data):
    prob, cat, base, *_ = feasible_base(inst)
    name = data.draw(st.sampled_from(sorted(cat.offers)))
    o = cat.offers[name]
    if data.draw(st.booleans()):
        changed = o.model_copy(update={"max_nodes": o.max_nodes + data.draw(st.integers(1, 3))})
    else:
        assume(o.lead_time_days > 0)
        changed = o.model_copy(update={"lead_time_days": o.lead_time_days - 1})
    new = cost(prob, with_offer(cat, changed))
    assert new is not None and new <= base + tol(base)


def _restrict_st(cat: Catalog):
    def subset(values):
        values = sorted(set(values))
        return st.one_of(st.just([]), st.lists(st.sampled_from(values), min_size=1, unique=True))
    offers = list(cat.offers.values())
    return st.builds(Restrict, gpus=subset(o.gpu for o in offers), modes=subset(o.mode for o in offers),
                     vendors=subset(o.vendor for o in offers), datacenters=subset(o.datacenter for o in offers),
                     interconnects=subset(ic for o in offers for ic in o.interconnect))


@LAW
@given(instances(), st.data())
def test_removing_restrictions_never_raises_cost(inst, data):
    prob, cat, _unrestricted, *_ = feasible_base(inst)
    top = data.draw(st.one_of(st.none(), _restrict_st(cat)))
    per_job = [data.draw(st.one_of(st.none(), _restrict_st(cat))) for _ in prob.jobs]
    restricted = prob.model_copy(update={"restrict": top, "jobs": [
        j.model_copy(update={"restrict": r}) for j, r in zip(prob.jobs, per_job)]})
    base = cost(restricted, cat)
    event("restricted feasible" if base is not None else "restricted infeasible (discarded)")
    assume(base is not None)
    # drop one restriction at a time, then all of them
    steps = [restricted.model_copy(update={"restrict": None})]
    for i in range(len(prob.jobs)):
        steps.append(with_job(restricted, i, restrict=None))
    steps.append(prob)
    for relaxed in steps:
        new = cost(relaxed, cat)
        assert new is not None and new <= base + tol(base)


@LAW
@given(instances(), st.sampled_from([0.5, 2.0, 3.0]))
def test_scaling_every_price_scales_the_optimum(inst, k):
    prob, cat, base, *_ = feasible_base(inst)
    scaled = {name: o.model_copy(update={
        "price": o.price * k, "interconnect_price": tuple(p * k for p in o.interconnect_price),
        "storage_cny_per_tb_month": o.storage_cny_per_tb_month * k, "egress_cny_per_tb": o.egress_cny_per_tb * k})
        for name, o in cat.offers.items()}
    new = cost(prob, cat.model_copy(update={"offers": scaled}))
    assert new == pytest.approx(k * base, rel=1e-6, abs=0.02)


def _group(j, o, max_nodes: int) -> int | None:
    layout = minimal_layout(infer_shape(j.model), j.kind, GPUS[o.gpu].memory_gb, gpus_per_node=o.gpus_per_node,
                            max_gpus=o.gpus_per_node * max_nodes)
    return None if layout is None else layout.gpus


@LAW
@given(instances(), st.data())
def test_splitting_an_offer_in_two_keeps_the_optimum(inst, data):
    prob, cat, *_ = inst
    splittable = sorted(k for k, o in cat.offers.items() if o.max_nodes >= 2 and o.discount_from_gpus is None)
    assume(splittable)
    name = data.draw(st.sampled_from(splittable))
    o = cat.offers[name]
    first = data.draw(st.integers(1, o.max_nodes - 1))
    for j in prob.jobs:     # the smallest group must not depend on how much stock one offer has
        assume(_group(j, o, o.max_nodes) == _group(j, o, first) == _group(j, o, o.max_nodes - first))
    prob, cat, base, *_ = feasible_base(inst)
    offers = {k: v for k, v in cat.offers.items() if k != name}
    offers[name + "-a"] = o.model_copy(update={"offer": name + "-a", "max_nodes": first})
    offers[name + "-b"] = o.model_copy(update={"offer": name + "-b", "max_nodes": o.max_nodes - first})
    new = cost(prob, cat.model_copy(update={"offers": offers}))
    assert new == pytest.approx(base, rel=1e-6, abs=0.02)

"""The verifier re-derives every field a plan shows (solver.verify.shown; item 6 of issue 35).

Reproduced: changing an allocation's cost, vendor, datacenter or GPU, a job's finish day, work
or GPUs, or moving money between cost_breakdown parts with the total kept, passed verification
in 10 of 10 plans each. Each tampering below must now be rejected, and the untouched plans
of two bundled problems (one with contracts and hourly runs, one with storage and egress)
still pass.
"""

from __future__ import annotations

import pytest
from tests.builders import ROOT

from solver.api import solve_problem
from solver.load import load_problem
from solver.model.plan import Plan
from solver.verify import verify_plan

PROBLEMS = ["seed-13b-100b.yaml", "debug-then-train.yaml"]


@pytest.fixture(scope="module", params=PROBLEMS)
def solved(request):
    prob, cat = load_problem(ROOT / "problems" / request.param)
    plan = solve_problem(prob, cat)   # verified inside
    assert verify_plan(prob, cat, plan) == []
    return prob, cat, plan


def tampered(plan: Plan, where: str, index: int, **update) -> Plan:
    rows = list(getattr(plan, where))
    rows[index] = rows[index].model_copy(update=update)
    return plan.model_copy(update={where: rows})


def other(values, current):
    return next(v for v in sorted(values) if v != current)


def test_allocation_fields_are_re_derived(solved):
    prob, cat, plan = solved
    a = plan.allocations[0]
    offers = cat.offers.values()
    cases = {
        "cost": dict(cost=a.cost + 100.0),
        "vendor": dict(vendor=other({o.vendor for o in offers}, a.vendor)),
        "datacenter": dict(datacenter=other(cat.datacenters, a.datacenter)),
        "gpu": dict(gpu=other(cat.gpus, a.gpu)),
        "gpus": dict(gpus=a.gpus + 8),
        "nodes": dict(nodes=a.nodes + 1, gpus=(a.nodes + 1) * cat.offers[a.offer].gpus_per_node),
        "days": dict(end_day=a.end_day + 1),
    }
    for name, update in cases.items():
        found = verify_plan(prob, cat, tampered(plan, "allocations", 0, **update))
        assert any(v.startswith("allocations:") for v in found), name


def test_job_fields_are_re_derived(solved):
    prob, cat, plan = solved
    r = plan.jobs[-1]
    cases = {
        "finish_day": dict(finish_day=max(1, r.finish_day - 1)),
        "gpus": dict(gpus=r.gpus + 8),
        "done_eflop": dict(done_eflop=r.done_eflop * 1.5),
        "done below the need": dict(done_eflop=r.required_eflop * 0.5),
        "required_eflop": dict(required_eflop=r.required_eflop * 0.5),
        "gpu_types": dict(gpu_types=[other(cat.gpus, r.gpu_types[0])]),
        "sites": dict(sites=[other(cat.datacenters, r.sites[0])]),
    }
    for name, update in cases.items():
        found = verify_plan(prob, cat, tampered(plan, "jobs", len(plan.jobs) - 1, **update))
        assert any(v.startswith("jobs:") for v in found), name


def test_money_moved_between_cost_parts_is_found_with_the_total_kept(solved):
    prob, cat, plan = solved
    parts = dict(plan.cost_breakdown)
    biggest = max(parts, key=parts.get)
    for part in parts:
        if part == biggest:
            continue
        moved = dict(parts)
        moved[biggest] -= 100.0
        moved[part] += 100.0
        found = verify_plan(prob, cat, plan.model_copy(update={"cost_breakdown": moved}))
        assert sum(moved.values()) == pytest.approx(plan.total_cost, abs=0.01)
        assert any(v.startswith("cost_breakdown:") for v in found), part

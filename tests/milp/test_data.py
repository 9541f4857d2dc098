"""Storage and egress: charged once per (job, vendor, datacenter) the job runs at.

Storage is kept from the job's first GPU day at a site (less its dataset's transfer there)
until it finishes, never before: storage_tb × price × days / 30;
egress is one export: egress_tb × price. The job: 2 TB stored, 3 TB exported, 40
GPU-days (5 node-days of 768 CNY, up to 10 nodes a day) by day 15.
"""

import pytest

from tests.builders import catalog, datacenter, hourly, job, problem, solve
from solver.api import build


def data_job(**kw):
    fields = dict(days=40, deadline_days=15, storage_tb=2, egress_tb=3)
    fields.update(kw)
    return job(**fields)


def site_offer(name="H", price=4, **kw):
    return hourly(name, price, storage_per_tb_month=1_000, egress_per_tb=500, **kw)


def test_storage_until_the_job_finishes_and_egress_once():
    # 5 nodes on day 0 (3 840) finish the job that day: storage 2 × 1 000 × 1/30 = 66.67;
    # egress 3 × 500 = 1 500. Billed over the window it was 1 000.
    plan = solve(problem(data_job(), horizon_days=15), catalog(site_offer()))
    assert plan.total_cost == pytest.approx(3_840 + 2_000 / 30 + 1_500, abs=0.01)
    assert plan.cost_breakdown["storage"] == pytest.approx(2_000 / 30, abs=0.01)
    assert plan.cost_breakdown["egress"] == pytest.approx(1_500)
    assert [j.finish_day for j in plan.jobs] == [1]


def test_storage_counts_from_the_first_gpu_day_not_the_window():
    # One node a day (max_nodes 1): days 5..10 run, storage from day 5 to 10 = 5 days.
    plan = solve(problem(data_job(start_day=5), horizon_days=15), catalog(site_offer(max_nodes=1)))
    assert plan.total_cost == pytest.approx(3_840 + 2_000 * 5 / 30 + 1_500, abs=0.01)


def test_a_later_deadline_never_raises_the_storage_bill():
    # The user's what-if: the same plan finishing on the same day, deadline 10 or 15.
    cat = catalog(site_offer(max_nodes=1))
    early = solve(problem(data_job(deadline_days=10), horizon_days=15), cat)
    late = solve(problem(data_job(deadline_days=15), horizon_days=15), cat)
    assert late.total_cost == pytest.approx(early.total_cost)
    assert early.cost_breakdown["storage"] == pytest.approx(2_000 * 5 / 30, abs=0.01)


def test_no_data_no_charge_and_no_rows():
    prob = problem(job(days=40, deadline_days=15), horizon_days=15)
    plan = solve(prob, catalog(site_offer()))
    assert plan.total_cost == pytest.approx(3_840)
    assert not any(name.startswith("Data-") for name in build(prob, catalog(site_offer()))[1].rows)


def test_each_site_used_is_charged_at_its_own_prices():
    # Not synchronous; 80 GPU-days in 5 days, cheap D1 has 1 node, dear D2 the rest.
    # compute 5 × 768 + 5 × 1 152 = 9 600
    # D1: 2 × 1 000 × 5/30 + 3 × 500 = 333.33 + 1 500 = 1 833.33
    # D2: 2 × 2 000 × 5/30 + 3 × 800 = 666.67 + 2 400 = 3 066.67       total 14 500
    # (the job needs all 5 days, so it finishes on day 5: storage for the whole window)
    # (D2 alone: 11 520 + 3 066.67 = 14 586.67, dearer.)
    cat = catalog(site_offer("A", 4, max_nodes=1),
                  hourly("B", 6, datacenter="D2", storage_per_tb_month=2_000, egress_per_tb=800, max_nodes=1),
                  datacenters=(datacenter("D1"), datacenter("D2")))
    prob = problem(data_job(days=80, deadline_days=5, single_site=False), horizon_days=5)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(14_500, abs=0.01)
    assert plan.cost_breakdown["storage"] == pytest.approx(1_000, abs=0.01)
    assert plan.cost_breakdown["egress"] == pytest.approx(3_900)
    _, milp = build(prob, cat)
    assert {"Data-j-v1-D1", "Data-j-v1-D2"} <= set(milp.rows)


def test_a_feasible_solution_with_an_idle_site_flag_still_verifies():
    from solver.engine.solve import solve_milp
    from solver.milp.extract import extract_plan
    from solver.verify import verify_plan

    # B is far dearer (100 CNY/GPU-h), so the job runs only on A at D1.
    cat = catalog(site_offer("A", 4), site_offer("B", 100, datacenter="D2"), datacenters=(datacenter("D1"), datacenter("D2")))
    prob = problem(data_job(single_site=False), horizon_days=15)
    _, milp = build(prob, cat)
    milp.data_sites["j", "v1", "D2"].lower_bound = 1   # an incumbent still paying for D2
    plan = extract_plan(solve_milp(milp))
    assert plan.schedule.assignments and {a.offer for a in plan.schedule.assignments} == {"A"}
    assert verify_plan(prob, cat, plan) == []


def _relaxed_storage(prob, cat) -> float:
    """Storage CNY in the LP relaxation's optimum (HiGHS on the model with every variable continuous)."""
    from solver.engine.backends import run_model_builder
    from solver.milp.build import build_milp

    inst, _ = build(prob, cat)
    milp = build_milp(inst, relax=True)
    run = run_model_builder(milp, "highs", 30, None, False)
    return sum(coef * run.values[var.index] for var, coef in milp.cost["storage"])


def test_the_relaxation_cannot_finish_a_job_faster_than_its_capacity():
    # One node a day and 5 node-days of work: every plan stores for 5 days (333.33 CNY).
    # Before the `Finish-…-now` rows the LP let the job "finish" in proportion to the work
    # left and charged 187 CNY; now each day's work needs that day's flag: 309.
    prob = problem(data_job(), horizon_days=15)
    cat = catalog(site_offer(max_nodes=1))
    assert solve(prob, cat).cost_breakdown["storage"] == pytest.approx(2_000 * 5 / 30, abs=0.01)
    assert _relaxed_storage(prob, cat) >= 0.9 * 2_000 * 5 / 30


def test_a_slow_fabric_elsewhere_does_not_weaken_the_relaxation():
    # The job runs on A's IB node (5 days, 333.33 CNY of storage); E's Ethernet nodes are
    # dearer and slower across nodes. Its share of the job was once counted against the
    # work it would need on Ethernet, so the LP saw IB's work as a part-done job: 0.66 CNY
    # of storage. Counted against each domain's own most work: 88 (83.3 since storage
    # starts on the first GPU day at the site, issue 36).
    prob = problem(data_job(), horizon_days=15)
    cat = catalog(site_offer("A", 4, max_nodes=1), site_offer("E", 5, max_nodes=4, interconnect="ethernet"))
    assert solve(prob, cat).cost_breakdown["storage"] == pytest.approx(2_000 * 5 / 30, abs=0.01)
    assert _relaxed_storage(prob, cat) >= 0.24 * 2_000 * 5 / 30


def _broken_rows(milp, values: dict[int, float]) -> list[str]:
    """Names of the model's rows that `values` (by variable index) break."""
    proto = milp.model.export_to_proto()
    broken = []
    for row in proto.constraint:
        level = sum(c * values.get(k, 0.0) for k, c in zip(row.var_index, row.coefficient))
        if level < row.lower_bound - 1e-6 or level > row.upper_bound + 1e-6:
            broken.append(row.name)
    return broken


def testpolishing_a_plan_that_stores_past_its_finish_keeps_every_row():
    # A stopped solver may leave the job "running" (and storing) after its last work, with
    # slack in the tails W (units of work still to do). polish ends the run at the last
    # work; the tails must follow, or W ≤ units·r breaks in the MIP start of the next round.
    from solver.engine.run import polish
    from solver.engine.solve import solve_milp

    _, milp = build(problem(data_job(), horizon_days=15), catalog(site_offer(max_nodes=1)))
    values = dict(solve_milp(milp).values)
    job = "j"
    last = max(t for (j, t), r in milp.running.items() if j == job and values[r.index] > 0.5)
    assert last < 14 and _broken_rows(milp, values) == []
    done = 0.0   # the units done from t on, plus one spare unit carried to the horizon's end
    for t in range(14, -1, -1):
        tail, terms = milp.tails[job, t]
        done += sum(units * round(values[v.index]) for v, units in terms)
        assert done + 1 <= tail.upper_bound   # 41 units, the plan does 40
        values[tail.index] = done + 1
        if t > last:
            values[milp.running[job, t].index] = 1.0
    for (j, vendor, dc_name, t), stored in milp.stored.items():
        values[stored.index] = max(values[stored.index], values[milp.running[j, t].index]
                                   + values[milp.data_sites[j, vendor, dc_name].index] - 1)
    assert _broken_rows(milp, values) == []   # the slack state is a feasible plan

    polish(milp, values)
    assert _broken_rows(milp, values) == []
    assert [values[milp.running[job, t].index] for t in range(last + 1, 15)] == [0.0] * (14 - last)


def test_no_storage_before_the_gpus_arrive():
    # The Fangshan case in small: the only offer's nodes arrive on day 4 (lead time);
    # the job's window opens on day 0. Five node-days on days 4..8: storage for 5 days
    # (333.33), not from day 0 (9 days, 600) as it was billed.
    plan = solve(problem(data_job(), horizon_days=15), catalog(site_offer(max_nodes=1, lead_time_days=4)))
    assert min(a.period for a in plan.schedule.assignments) == 4
    assert plan.cost_breakdown["storage"] == pytest.approx(2_000 * 5 / 30, abs=0.01)
    assert [p.start_day for p in plan.cash_flow if p.mode == "storage"] == [0]
    assert sum(p.amount for p in plan.cash_flow if p.mode == "storage") == pytest.approx(2_000 * 5 / 30, abs=0.01)


def test_storage_starts_when_the_dataset_starts_moving_there():
    # The data sits at D1; only D2 trains, 250 TB over 10 Gbit/s take 3 days, and D2's
    # nodes arrive on day 5: the copy starts on day 2, GPUs run days 5..9, storage 8 days.
    from solver.model.problem import DataSpec
    d1, d2 = datacenter("D1"), datacenter("D2")
    cat = catalog(site_offer("B", datacenter="D2", max_nodes=1, lead_time_days=5), datacenters=(d1, d2))
    data = DataSpec(site="D1", dataset_tb=250, egress_per_tb=0)
    plan = solve(problem(data_job(data=data), horizon_days=15), cat)
    assert min(a.period for a in plan.schedule.assignments) == 5
    assert plan.cost_breakdown["storage"] == pytest.approx(2_000 * 8 / 30, abs=0.01)


def test_the_verifier_rejects_storage_billed_before_the_first_gpu_day():
    from solver.verify import verify_plan

    cat = catalog(site_offer(max_nodes=1, lead_time_days=4))
    prob = problem(data_job(), horizon_days=15)
    plan = solve(prob, cat)
    assert verify_plan(prob, cat, plan) == []
    early = 2_000 * 4 / 30              # days 0..3, before the nodes arrive
    parts = dict(plan.cost_breakdown, storage=plan.cost_breakdown["storage"] + early)
    billed_from_day_0 = plan.model_copy(update={"total_cost": plan.total_cost + early, "cost_breakdown": parts})
    assert any("cost" in problem_ for problem_ in verify_plan(prob, cat, billed_from_day_0))

"""Why this plan: one tiny problem per reason code in which exactly that reason makes a
candidate lose; forced costs equal independent solves with the job restricted to the candidate.

Numbers as in tests/builders.py: one G80 GPU does one GPU-day of work a day; an 8-GPU
node at 4 CNY/GPU-h is 768 CNY a day, at 6 CNY/GPU-h 1 152 CNY a day.
"""

from __future__ import annotations

import json

import pytest
from tests.builders import BIG, MID, ROOT, catalog, count_builds, datacenter, hourly, job, problem, solve
from typer.testing import CliRunner

from solver.analysis.why import force_job, why
from solver.api import solve_problem
from solver.model.catalog import Offer
from solver.model.problem import Restrict

HOSTED = Offer(offer="R", vendor="v9", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
               price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
               interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100, source="test")


def alternative(result, label: str, job_name: str = "j"):
    jw = next(j for j in result.jobs if j.job == job_name)
    every = jw.alternatives + jw.infeasible + jw.excluded
    found = [a for a in every if a.label == label]
    assert found, f"{label} not among {[a.label for a in every]}"
    return found[0]


def restricted_cost(prob, cat, alt, job_name: str = "j"):
    """An independent forced solve: the job's own restrict list narrowed to the alternative."""
    restrict = Restrict(gpus=[alt.gpu], modes=[alt.mode], vendors=[alt.vendor], datacenters=[alt.datacenter])
    jobs = [j.model_copy(update={"restrict": restrict}) if j.name == job_name else j for j in prob.jobs]
    return solve(prob.model_copy(update={"jobs": jobs}), cat).total_cost


def test_price_a_dearer_vendor_loses_by_its_price_difference():
    # 80 GPU-days by day 10: one node for 10 days, 7 680 at 4 CNY vs 11 520 at 6 CNY.
    cat = catalog(hourly("A", 4), hourly("B", 6, vendor="v2"))
    prob = problem(job(days=80, deadline_days=10), horizon_days=10)
    result = why(prob, cat)
    assert result.cost == pytest.approx(7_680)
    alt = alternative(result, "v2/G80/hourly @ D1")
    assert alt.code == "price" and alt.cost == pytest.approx(11_520) and alt.delta == pytest.approx(3_840)
    assert "dearer by 3,840 CNY" in alt.text
    assert alt.cost == pytest.approx(restricted_cost(prob, cat, alt))


def test_forced_costs_equal_independent_forced_solves():
    # Two jobs and three vendors; every runner-up's forced cost equals a solve with the job
    # restricted to it, and one with the forcing row alone.
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 5, vendor="v2", max_nodes=2),
                  hourly("C", 6, vendor="v3"))
    prob = problem(job("j", days=80, deadline_days=10), job("k", days=120, deadline_days=10), horizon_days=10)
    result = why(prob, cat, k=5)
    checked = 0
    for jw in result.jobs:
        for alt in jw.alternatives:
            if alt.cost is None:
                continue
            assert alt.cost == pytest.approx(restricted_cost(prob, cat, alt, jw.job))
            keys = {f"{o}:ib_hdr" for o in alt.offers}
            assert alt.cost == pytest.approx(solve_problem(prob, cat, constrain=force_job(jw.job, keys)).total_cost)
            assert alt.delta == pytest.approx(alt.cost - result.cost)
            checked += 1
    assert checked >= 3


def test_memory_a_small_gpu_that_cannot_hold_the_model():
    # MID needs 32 GB of states: one 24 GB GPU (the offer's whole stock) cannot hold it.
    cat = catalog(hourly("A", 6), hourly("S", 1, gpu="G24", gpus_per_node=1, max_nodes=1, vendor="v2"))
    prob = problem(job(days=8, deadline_days=10, model=MID), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G24/hourly @ D1")
    assert alt.code == "memory" and alt.cost is None
    assert "G24" in alt.text and "the offer has 1" in alt.text


def test_memory_words_never_say_a_copy_fits_the_offer(monkeypatch):
    """Issue 36: "needs 32 × A100-80G per model copy; the offer has 48" read as a contradiction. When
    a copy's GPUs fit the offer, the reason is preprocessing's own (what did not fit), not the count."""
    from types import SimpleNamespace

    import solver.api

    monkeypatch.setattr(solver.api, "job_layout", lambda *a, **k: SimpleNamespace(gpus=1))
    cat = catalog(hourly("A", 6), hourly("S", 1, gpu="G24", gpus_per_node=1, max_nodes=1, vendor="v2"))
    prob = problem(job(days=8, deadline_days=10, model=MID), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G24/hourly @ D1")
    assert alt.code == "memory" and alt.text and "the offer has" not in alt.text


def test_power_a_cheap_hosted_rack_without_quota():
    # Quota 0 kW: the hosted racks (20 000 a node-month, 2 needed = 40 000) would need 20 kW.
    cat = catalog(HOSTED, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=0),))
    prob = problem(job(days=480, deadline_days=30), horizon_days=30)
    result = why(prob, cat)
    assert result.cost == pytest.approx(69_120)
    alt = alternative(result, "v9/G80/hosted @ D1")
    assert alt.code == "power" and "20 kW" in alt.text and "0 kW available" in alt.text


def test_lead_time_an_offer_that_arrives_after_the_deadline():
    cat = catalog(hourly("A", 6), hourly("L", 2, vendor="v2", lead_time_days=20))
    prob = problem(job(days=80, deadline_days=10), horizon_days=30)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "lead_time" and "20 days" in alt.text


def test_lead_time_that_leaves_too_little_of_the_window():
    # L (2 CNY, 1 node) arrives on day 5: 80 GPU-days by day 10 would need it from day 0.
    cat = catalog(hourly("A", 6), hourly("L", 2, vendor="v2", max_nodes=1, lead_time_days=5))
    prob = problem(job(days=80, deadline_days=10), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "lead_time" and "5 days" in alt.text


def test_over_the_budget_is_price_with_the_cost_without_the_budget():
    # B alone costs 11 520; the budget of 10 000 admits only A's 7 680.
    cat = catalog(hourly("A", 4), hourly("B", 6, vendor="v2"))
    prob = problem(job(days=80, deadline_days=10), horizon_days=10, budget=10_000)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "price" and alt.cost == pytest.approx(11_520)
    assert "over the budget by 1,520 CNY" in alt.text


def test_only_the_k_cheapest_are_solved_and_shown():
    cat = catalog(hourly("A", 4), *(hourly(f"B{i}", 5 + i, vendor=f"v{i + 2}") for i in range(4)))
    prob = problem(job(days=80, deadline_days=10), horizon_days=10)
    result = why(prob, cat, k=2)
    jw = result.jobs[0]
    assert jw.considered == 4 and [a.offers for a in jw.alternatives] == [["B0"], ["B1"]]
    assert any("not re-solved" in note for note in result.notes)
    # The title counts only what was re-solved, so the note's "more ... not re-solved" adds up (issue 36).
    from rich.console import Console

    from solver.report.why import render_why
    skipped = int(next(n for n in result.notes if "not re-solved" in n).split(": ")[1].split()[0])
    assert jw.feasible == 2 and jw.feasible + skipped == jw.considered   # re-solved + not re-solved = all
    console = Console(record=True, width=200)
    render_why(result, console)
    assert "re-solved with a plan" not in " ".join(console.export_text().split())   # all re-solved shown
    jw.alternatives = jw.alternatives[:1]                          # one shown of the two re-solved
    console = Console(record=True, width=200)
    render_why(result, console)
    assert "best 1 of the 2 re-solved with a plan" in " ".join(console.export_text().split())  # title wraps


def test_availability_another_job_holds_the_stock():
    # B (v2) has 2 nodes; job k may only use B and holds one, so j (2 nodes) cannot move there.
    cat = catalog(hourly("A", 6), hourly("B", 5, vendor="v2", max_nodes=2))
    k = job("k", days=70, deadline_days=10, restrict=Restrict(vendors=["v2"]))
    prob = problem(job("j", days=150, deadline_days=10), k, horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "availability" and "B has 2 nodes" in alt.text and "needs 3" in alt.text


def test_residency_a_site_without_the_jobs_residency():
    cat = catalog(hourly("A", 6), hourly("F", 2, vendor="v2", datacenter="D2"),
                  datacenters=(datacenter("D1", residency=("cn",)), datacenter("D2")))
    prob = problem(job(days=80, deadline_days=10, residency="cn"), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D2")
    assert alt.code == "residency" and "D2" in alt.text


def test_deadline_too_little_stock_to_finish_at_any_size():
    # One node of D can do 80 GPU-days by day 10; the job needs 160.
    cat = catalog(hourly("A", 6), hourly("D", 2, vendor="v2", max_nodes=1))
    prob = problem(job(days=160, deadline_days=10), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "deadline" and "day 10" in alt.text


def test_fabric_a_model_that_spans_nodes_over_ethernet():
    # BIG needs a group of several 80 GB GPUs: on 1-GPU ethernet nodes it would span nodes.
    cat = catalog(hourly("A", 6), hourly("E", 1, vendor="v2", gpus_per_node=1, interconnect=("ethernet",)))
    prob = problem(job(days=40, deadline_days=10, model=BIG), horizon_days=10)
    alt = alternative(why(prob, cat), "v2/G80/hourly @ D1")
    assert alt.code == "fabric" and "RDMA" in alt.text


def test_binding_power_is_worth_a_rack():
    # Quota 10 kW: one rack + one cloud node (54 560); one more rack's 10 kW → 40 000.
    cat = catalog(HOSTED.model_copy(update={"vendor": "v1"}), hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    prob = problem(job(days=480, deadline_days=30), horizon_days=30)
    result = why(prob, cat)
    assert result.cost == pytest.approx(54_560)
    power = next(b for b in result.binding if b.kind == "power")
    assert power.method == "re-solve delta" and "one rack" in power.relax
    assert power.cost == pytest.approx(40_000) and power.delta == pytest.approx(-14_560)


def test_binding_availability_and_deadline_deltas():
    # A (4 CNY) has 1 node; the job needs 2 nodes × 10 days: 1 of A + 1 of B (same vendor).
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 6))
    prob = problem(job(days=160, deadline_days=10), horizon_days=10)
    result = why(prob, cat)
    assert result.cost == pytest.approx(7_680 + 11_520)
    stock = next(b for b in result.binding if b.kind == "availability" and b.name == "A")
    assert stock.delta == pytest.approx(-3_840)
    late = next(b for b in result.binding if b.kind == "deadline")
    assert late.delta is not None and late.delta <= 0
    data = json.loads(json.dumps(result.to_dict()))
    assert data["binding"][0]["method"] == "re-solve delta"


def test_cli_why_table_and_json(tmp_path):
    from tests.builders import write_catalog

    from solver.cli import app

    cat = catalog(hourly("A", 4), hourly("B", 6, vendor="v2"))
    write_catalog(cat, tmp_path / "cat")
    path = tmp_path / "p.yaml"
    path.write_text("name: t\ncatalog: cat\nhorizon_days: 10\nredundancy: 0\n"
                    f"jobs:\n  - name: j\n    model: {{params: 1.0e8, layers: 4, hidden: 512, heads: 4, seq_len: 512}}\n"
                    f"    flops: {80 * 4.32e18 * (1 - 1e-9)}\n    deadline_days: 10\n")
    runner = CliRunner()
    out = runner.invoke(app, ["why", str(path)])
    assert out.exit_code == 0, out.output
    assert "price" in out.output and "v2/G80/hourly @ D1" in out.output
    assert max(len(line) for line in out.output.splitlines()) <= 100
    out = runner.invoke(app, ["why", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["jobs"][0]["alternatives"][0]["code"] == "price"


def test_a_spent_budget_reports_not_analysed_instead_of_running_on():
    # The run's budget bounds the whole run, not each solve: with the optimum given and a
    # budget already spent, no forced or lever solve starts, and nothing is called infeasible.
    cat = catalog(hourly("A", 4), hourly("B", 6, vendor="v2"))
    prob = problem(job(days=80, deadline_days=10), horizon_days=10)
    plan = solve(prob, cat)
    result = why(prob, cat, plan=plan, max_seconds=1e-9)
    alt = alternative(result, "v2/G80/hourly @ D1")   # dearer by 3,840 CNY when solved (test above)
    assert not alt.determined and alt.cost is None and "time budget ran out" in alt.text
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 6))     # binding stock and deadline
    prob = problem(job(days=160, deadline_days=10), horizon_days=10)
    plan = solve(prob, cat)
    result = why(prob, cat, plan=plan, max_seconds=1e-9)
    assert result.binding and all(not b.determined and b.cost is None for b in result.binding)
    assert any("--max-seconds" in note for note in result.notes)
    full = why(prob, cat, plan=plan)
    assert full.binding and all(b.determined and b.cost is not None for b in full.binding)


def test_cli_why_max_seconds_is_checked():
    from solver.cli import app

    out = CliRunner().invoke(app, ["why", "problems/seed-7b-200b-30d.yaml", "--max-seconds", "0"])
    assert out.exit_code == 2 and "--max-seconds" in out.output


@pytest.mark.parametrize("horizon, step", [(120, 1), (125, 5)])
def test_a_later_deadline_moves_by_one_period_and_never_costs_more(horizon, step):
    # A (4 CNY) has 1 node, B (6 CNY) the rest; the job needs 1.5 nodes over the whole plan,
    # so its deadline binds. On 5-day periods one more day adds no whole period but moved
    # the horizon, which reshaped the last period (hybrid-burst: +1,750 CNY for "+1 day");
    # past 120 days a longer horizon would also switch a daily plan to 5-day periods.
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 6))
    prob = problem(job(days=12 * horizon, deadline_days=horizon), horizon_days=horizon)
    result = why(prob, cat)
    late = next(b for b in result.binding if b.kind == "deadline")
    assert late.edits == [f"jobs.j.deadline_days+={step}", f"horizon_days={horizon + step}", f"period_days={step}"]
    assert late.relax.startswith(f"+{step} day") and late.relax.endswith("deadline and the horizon")
    assert late.delta is not None and late.delta < 0        # more time on the cheap node


def test_runners_up_are_forced_plans_and_the_rest_is_listed_apart(tmp_path):
    """Issue 24 item 7: the runners-up are the alternatives the job can be forced onto, ranked by
    forced cost; what preprocessing left out (lead time past the deadline, spot for a job that
    cannot be interrupted) and what has no plan when forced are listed apart with their reason,
    never among the best k with no cost."""
    from tests.builders import write_catalog

    from solver.cli import app

    cat = catalog(hourly("A", 4), hourly("B", 6, vendor="v2"), hourly("C", 7, vendor="v3"),
                  hourly("L", 2, vendor="v4", lead_time_days=20),                    # arrives after the deadline
                  hourly("S", 1, vendor="v5", mode="spot", preemptions_per_day=0.1),  # the job is not interruptible
                  HOSTED, datacenters=(datacenter("D1", power_quota_kw=0),))        # no power for the rack
    prob = problem(job(days=80, deadline_days=10), horizon_days=30)
    result = why(prob, cat, k=3)
    jw = result.jobs[0]
    assert [a.label for a in jw.alternatives] == ["v2/G80/hourly @ D1", "v3/G80/hourly @ D1"]
    assert all(a.cost is not None for a in jw.alternatives) and jw.feasible == 2
    assert [a.cost for a in jw.alternatives] == sorted(a.cost for a in jw.alternatives)
    apart = {a.label: a for a in jw.excluded}
    assert apart["v4/G80/hourly @ D1"].code == "lead_time" and "20 days" in apart["v4/G80/hourly @ D1"].text
    assert apart["v5/G80/spot @ D1"].code == "availability" and "interrupt" in apart["v5/G80/spot @ D1"].text
    assert [(a.label, a.code) for a in jw.infeasible] == [("v9/G80/hosted @ D1", "power")]
    assert all(a.cost is None for a in jw.excluded + jw.infeasible)
    assert jw.considered == 2 + 2 + 1

    write_catalog(cat, tmp_path / "cat")
    path = tmp_path / "p.yaml"
    path.write_text("name: t\ncatalog: cat\nhorizon_days: 30\nredundancy: 0\n"
                    f"jobs:\n  - name: j\n    model: {{params: 1.0e8, layers: 4, hidden: 512, heads: 4, seq_len: 512}}\n"
                    f"    flops: {80 * 4.32e18 * (1 - 1e-12)}\n    deadline_days: 10\n")
    out = CliRunner().invoke(app, ["why", str(path), "-k", "3"], env={"COLUMNS": "100"})
    assert out.exit_code == 0, out.output
    assert "best 3 of" not in out.output and "—" not in out.output
    assert "Left out before solving (2)" in out.output and "No plan when the job is forced onto it (1)" in out.output
    data = json.loads(CliRunner().invoke(app, ["why", str(path), "--json"]).output)["jobs"][0]
    assert len(data["alternatives"]) == 2 and len(data["excluded"]) == 2 and len(data["infeasible"]) == 1


def test_runners_up_are_probes_on_one_built_model(monkeypatch):
    """Issue 34: each forced runner-up is a bound delta on the one built model, not a new
    Instance and model (`why` on global-burst built 78 Instances and 81 models). The answers
    are the golden ones (tests/cli/test_golden_outputs.py, why-seed-7b-200b-30d). Its one
    binding limit is pretrain-7b's deadline at the horizon: a day more moves the horizon, which
    no model built to day 30 has, so the levers' model is the second (and last) build."""
    from solver.analysis.why import why
    from solver.load import load_problem

    counts = count_builds(monkeypatch)
    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    result = why(prob, cat, k=3)
    forced = [a for j in result.jobs for a in j.alternatives]
    assert forced and all(a.cost is not None for a in forced)
    assert [b.kind for b in result.binding] == ["deadline"] and result.binding[0].cost == pytest.approx(295_800)
    assert counts == {"instance": 2, "model": 2}    # the base; the levers' model (before: the same, one per lever)


def _three_levers_and_a_rack():
    """A job of 3 nodes × 10 days by day 10 (horizon 20): A (4 CNY) and B (5 CNY) have one node
    each, C (6 CNY) the rest, so A's and B's stock and the deadline bind; the hosted rack R has
    no power quota, so forced onto it the job has no plan (its elastic probe names the power)."""
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 5, max_nodes=1), hourly("C", 6),
                  hourly("V", 9, vendor="v2"), HOSTED, datacenters=(datacenter("D1", power_quota_kw=0),))
    return problem(job(days=240, deadline_days=10), horizon_days=20), cat


def test_levers_and_elastic_runners_up_share_two_models(monkeypatch):
    """Issue 34: the stock and deadline levers are probes of one levers' model (each rebuilt
    the problem before), the infeasible runner-up's elastic solve a probe of the elastic twin
    (an Instance and a model each before): two Instances (the base, the levers') and three
    models (the base, its elastic twin, the levers'), where this case built six and six."""
    from solver.analysis.edits import apply_edits

    prob, cat = _three_levers_and_a_rack()
    counts = count_builds(monkeypatch)
    result = why(prob, cat, k=3)
    assert counts == {"instance": 2, "model": 3}
    levers = {(b.kind, b.name): b for b in result.binding}
    assert {("availability", "A"), ("availability", "B"), ("deadline", "j")} <= set(levers)
    assert all(levers[k].delta < 0 for k in [("availability", "A"), ("availability", "B"), ("deadline", "j")])
    assert [(a.label, a.code) for a in result.jobs[0].infeasible] == [("v9/G80/hosted @ D1", "power")]
    for lever in result.binding:  # each probe's answer is the edited problem's own optimum
        edited, edited_cat, _ = apply_edits(prob, cat, lever.edits)
        assert lever.determined and lever.cost == pytest.approx(solve(edited, edited_cat).total_cost)
        assert lever.delta == pytest.approx(lever.cost - result.cost)


def test_levers_are_announced_as_rows_as_they_are_determined():
    from solver.rows import ROWS

    prob, cat = _three_levers_and_a_rack()
    seen: list[str] = []
    ROWS.listener = lambda words, done, expected: seen.append(words)
    try:
        result = why(prob, cat, k=3)
    finally:
        ROWS.listener = None
    relax = {b.relax for b in result.binding}
    levers = [w for w in seen if w.split(": ")[0] in relax]
    assert len(levers) == len(result.binding) >= 3
    assert all(w == f"{b.relax}: {b.delta:+,.0f} CNY" for w, b in zip(levers, result.binding))


def test_a_lever_out_of_time_shows_the_interval_its_probe_reached(monkeypatch):
    """Issue 34: every figure proven or an interval. Each probe here answers with a plan it did
    not prove (the optimum's plan, the bound 1,000 CNY below): each lever reports that interval,
    in --json (low, high), in its note and in the terminal's cost and delta cells."""
    from rich.console import Console

    from solver.probes import Answer, Probes
    from solver.report.why import render_why

    prob, cat = _three_levers_and_a_rack()
    plan = solve(prob, cat)
    monkeypatch.setattr(Probes, "probe", lambda self, *changes, **kw: Answer("feasible", plan.total_cost - 1_000, plan))
    result = why(prob, cat, k=3, plan=plan)
    assert result.binding and all(not b.determined and b.cost is None for b in result.binding)
    assert all((b.low, b.high) == (plan.total_cost - 1_000, plan.total_cost) for b in result.binding)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["binding"][0]["low"] == plan.total_cost - 1_000 and data["binding"][0]["high"] == plan.total_cost
    assert any("-1,000 to +0 CNY (not proven" in note for note in result.notes)
    console = Console(record=True, width=200)
    render_why(result, console)
    text = console.export_text()
    assert f"{plan.total_cost - 1_000:,.0f}–{plan.total_cost:,.0f}" in text and "-1,000…+0" in text


def test_lead_time_questions_share_one_instance_without_lead_times(monkeypatch):
    """L (lead 5 days) and M (lead 3 days), one node each, cannot finish 80 GPU-days by day 10
    once they arrive, but could from day 0: lead time; N (no lead time, one node) could not
    at all: deadline. Both lead-time questions read one Instance preprocessed with no lead
    time anywhere (preprocessing reads an offer's lead time for its own configurations only),
    where each built its own before."""
    cat = catalog(hourly("A", 6), hourly("L", 2, vendor="v2", max_nodes=1, lead_time_days=5),
                  hourly("M", 3, vendor="v3", max_nodes=1, lead_time_days=3),
                  hourly("N", 2, vendor="v4", max_nodes=1, gpus_per_node=4))
    prob = problem(job(days=80, deadline_days=10), horizon_days=20)
    counts = count_builds(monkeypatch)
    result = why(prob, cat)
    codes = {a.label: (a.code, a.text) for a in result.jobs[0].excluded}
    assert codes["v2/G80/hourly @ D1"][0] == "lead_time" and "5 days" in codes["v2/G80/hourly @ D1"][1]
    assert codes["v3/G80/hourly @ D1"][0] == "lead_time" and "3 days" in codes["v3/G80/hourly @ D1"][1]
    assert codes["v4/G80/hourly @ D1"][0] == "deadline"
    levers = 1 if any(b.kind in ("availability", "deadline") for b in result.binding) else 0
    assert counts == {"instance": 2 + levers, "model": 1 + levers}   # the base, the lead-free Instance, the levers'


def test_runners_up_without_lp_bounds_are_the_same(monkeypatch):
    """When the LP bounds' share of the time is spent (why.LP_SHARE), the rest are unranked, never
    skipped: the same runners-up at the same costs, only more of them solved."""
    from solver.analysis import why as why_module
    from solver.load import load_problem

    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")   # 1 s of CPU for both; seed-13b-100b: 14
    ranked = why_module.why(prob, cat, k=2, max_seconds=10_000)
    monkeypatch.setattr(why_module, "LP_SHARE", 0.0)
    unranked = why_module.why(prob, cat, k=2, max_seconds=10_000)
    costs = lambda w: [(a.label, a.cost) for j in w.jobs for a in j.alternatives]  # noqa: E731
    assert costs(unranked) == costs(ranked) and costs(ranked)


def test_a_limit_binding_in_two_spans_is_one_lever_naming_both():
    """The cheap offer's one node is full while each of two jobs runs (days 0–5 and 10–15), idle
    between: the plan binds it twice, but "+1 node of cheap" is one lever, one row, one solve."""
    cat = catalog(hourly("cheap", 4.0, max_nodes=1), hourly("dear", 6.0))
    prob = problem(job("a", deadline_days=5, days=60), job("b", deadline_days=15, days=60, start_day=10),
                   horizon_days=15)
    plan = solve(prob, cat)
    spans = [(b.start_day, b.end_day) for b in plan.binding if (b.kind, b.name) == ("availability", "cheap")]
    assert len(spans) == 2, plan.binding                   # the case this test is about
    result = why(prob, cat)
    levers = [lv for lv in result.binding if (lv.kind, lv.name) == ("availability", "cheap")]
    assert len(levers) == 1
    assert all(f"days {a}–{b}" in levers[0].text for a, b in spans)
    # one more node of cheap saves (6 − 4) CNY/GPU-h on the 8 GPUs it takes from dear, both spans
    plus_one = solve(prob, catalog(hourly("cheap", 4.0, max_nodes=2), hourly("dear", 6.0))).total_cost
    assert levers[0].delta == pytest.approx(plus_one - plan.total_cost) and levers[0].delta < 0

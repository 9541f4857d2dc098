"""What-if: edits applied to copies, solved beside the baseline; the edit language's errors.

Power case as in tests/milp/test_power.py: hosted "R" 20 000 CNY per node-month at 10 kW a node,
cloud "C" 34 560 per node for 30 days; the job needs 2 nodes all month.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import count_builds, ROOT, catalog, datacenter, hourly, job, problem, solve
from solver import api
from solver.analysis.edits import apply_edits, parse_edit
from solver.analysis.whatif import what_if
from solver.errors import Infeasible, ProblemError
from solver.load import load_problem
from solver.model.catalog import Offer

HYBRID = ROOT / "problems" / "hybrid-burst.yaml"

HOSTED = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
               price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
               interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100, source="test")


def power_case():
    cat = catalog(HOSTED, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    return problem(job(days=480, deadline_days=30), horizon_days=30), cat


def test_raising_a_binding_quota_saves_the_burst_and_frees_the_limit():
    prob, cat = power_case()
    result = what_if(prob, cat, ["datacenters.D1.power_quota_kw=30"])
    assert result.baseline.cost == pytest.approx(54_560)     # 1 rack + 1 cloud node
    assert result.scenario.cost == pytest.approx(40_000)     # 2 racks, 10 kW to spare
    assert result.delta == pytest.approx(-14_560)
    now, gone = result.binding_changes()
    assert any(text.startswith("power at D1") for text in gone)
    assert ("v1/G80/hourly @ D1", 240.0, 0.0) in result.mix_changes()


def test_the_scenario_equals_a_solve_of_the_edited_problem():
    prob, cat = power_case()
    edits = ["offers[mode=hourly].price*=0.5", "jobs.j.deadline_days=20", "horizon_days=40"]
    result = what_if(prob, cat, edits)
    edited, edited_cat, _ = apply_edits(prob, cat, edits)
    assert result.scenario.cost == pytest.approx(solve(edited, edited_cat).total_cost)
    assert result.baseline.cost == pytest.approx(solve(prob, cat).total_cost)


def test_an_infeasible_scenario_is_reported_not_raised():
    prob, cat = power_case()
    result = what_if(prob, cat, ["offers.C.max_nodes=1", "datacenters.D1.power_quota_kw=0"])
    assert result.scenario.plan is None and result.scenario.infeasible
    assert result.delta is None and result.baseline.plan is not None
    assert result.scenario.explanation is None                   # only when asked: it means solving again
    assert result.mix_changes() == [] and result.binding_changes() == ([], [])  # nothing to compare with
    assert result.to_dict()["mix_changes"] == [] and result.to_dict()["binding_no_longer"] == []


def test_an_infeasible_scenario_says_how_far_to_relax_each_limit():
    # One node of C and no power for R: 10 kW more at D1 (one rack node) or one more node of
    # C makes the edited problem feasible again, each checked by a verified re-solve.
    prob, cat = power_case()
    result = what_if(prob, cat, ["offers.C.max_nodes=1", "datacenters.D1.power_quota_kw=0"], explain=True)
    alone = {(r["kind"], r["target"]): r for r in result.scenario.explanation["alone"]}
    assert alone["power", "D1"]["amount"] == 10 and alone["power", "D1"]["verified"]
    assert alone["availability", "C"]["amount"] == 1 and alone["availability", "C"]["verified"]
    assert result.scenario.proven


@pytest.mark.parametrize("edit, where, new", [
    ("offers[vendor=v1,mode=hosted].max_nodes+=4", "offers.R.max_nodes", 14),
    ("offers.C.interconnect_price=[0.5]", "offers.C.interconnect_price", [0.5]),
    ("jobs[*].deadline_days*=0.5", "jobs.j.deadline_days", 15),
    ("jobs[0].mfu=0.4", "jobs.j.mfu", 0.4),
    ("jobs[kind=pretrain,start_day=0].deadline_days=20", "jobs.j.deadline_days", 20),
    ("budget=1e5", "budget", 100_000.0),
    ("restrict.modes=[hosted]", "restrict.modes", ["hosted"]),
])
def test_edit_paths(edit, where, new):
    prob, cat = power_case()
    edited, edited_cat, changes = apply_edits(prob, cat, [edit])
    assert [(c.where, c.new) for c in changes] == [(where, new)]
    assert prob.budget is None and cat.offers["R"].max_nodes == 10     # the originals are untouched


@pytest.mark.parametrize("edit, words", [
    ("offers[vendor=nobody].price*=0.9", "matches no row"),
    ("offers.X.price=1", "no offer 'X'"),
    ("offers[*].prize*=0.9", "no column 'prize'"),
    ("jobs.nobody.deadline_days=3", "no entry 'nobody'"),
    ("budgett=5", "no key 'budgett'"),
    ("offers[*].price*=cheap", "needs a number"),
    ("offers[*].price*=-1", "greater than 0"),
    ("jobs[*].deadline_days=99", "horizon"),
    ("no operator here", "not an edit"),
])
def test_bad_edits_name_the_edit_and_the_fix(edit, words):
    prob, cat = power_case()
    with pytest.raises(ProblemError) as err:
        apply_edits(prob, cat, [edit])
    assert words in str(err.value) and edit.strip() in str(err.value)


def test_parse_keeps_selectors_with_equals_signs_whole():
    e = parse_edit("offers[gpu=A100-80G,mode=monthly].price*=0.9")
    assert e.path == ("offers", "[gpu=A100-80G,mode=monthly]", "price") and e.op == "*=" and e.value == 0.9


def gpuplan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_whatif_json_on_the_bundled_hybrid_problem():
    out = gpuplan("whatif", str(HYBRID), "--set", "datacenters.Shunyi.power_quota_kw=400", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["delta"] < 0                                   # more power for the cheap racks saves money
    assert data["scenario"]["total_cost"] == pytest.approx(data["baseline"]["total_cost"] + data["delta"], abs=0.01)
    assert any(t.startswith("power at Shunyi") for t in data["binding_no_longer"])


def test_cli_bad_edit_exits_2_and_infeasible_scenario_exits_1():
    bad = gpuplan("whatif", str(HYBRID), "--set", "offers[vendor=nobody].price*=0.9")
    assert bad.returncode == 2 and "matches no row" in bad.stderr and "Traceback" not in bad.stderr
    assert "offers[vendor=nobody].price*=0.9" in bad.stderr      # brackets are text, not rich markup
    tight = gpuplan("whatif", str(HYBRID), "--set", "jobs[*].deadline_days=10", "--no-explain")
    assert tight.returncode == 1 and "infeasible" in tight.stdout and "smallest relaxations" not in tight.stdout


def test_cli_whatif_explains_an_infeasible_scenario(tmp_path):
    from tests.builders import write_catalog

    import yaml
    prob, cat = power_case()
    write_catalog(cat, tmp_path / "cat")
    data = prob.model_dump(mode="json", exclude_defaults=True)
    data["catalog"] = "cat"
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    edits = ["--set", "offers.C.max_nodes=1", "--set", "datacenters.D1.power_quota_kw=0"]
    text = gpuplan("whatif", str(tmp_path / "p.yaml"), *edits)
    assert text.returncode == 1, text.stderr
    assert "smallest relaxations" in text.stdout and "10 kW more at D1" in text.stdout
    as_json = gpuplan("whatif", str(tmp_path / "p.yaml"), *edits, "--json")
    scenario = json.loads(as_json.stdout)["scenario"]
    assert scenario["status"] == "infeasible" and scenario["proven"] is True
    assert "1 more node of C" in " ".join(scenario["explanation"]["lines"])


def test_edit_values_are_written_like_the_costs():
    import io

    from rich.console import Console

    from solver.report.whatif import _value
    assert (_value(150000), _value(None), _value(True), _value(0.3), _value("A100-80G")) == \
        ("150,000", "not set", "true", "0.3", "A100-80G")
    # large floats keep every digit (a budget of 1,411,000 × 0.9 read 1.2699e+06)
    assert (_value(1_411_000 * 0.9), _value(14_050_000.0), _value(123_456.75)) == ("1,269,900", "14,050,000", "123,456.75")
    from solver.report.whatif import render_whatif
    prob, cat = power_case()
    out = io.StringIO()
    render_whatif(what_if(prob, cat, ["budget=100000"]), Console(file=out, width=100))
    assert "100,000" in out.getvalue() and "not set" in out.getvalue()


def test_job_names_with_brackets_are_text_not_markup():
    # A reviewer's case: a job named "pre[/]train" crashed the what-if table with a MarkupError.
    import io

    from rich.console import Console

    from solver.report.whatif import render_whatif
    prob, cat = power_case()
    prob = prob.model_copy(update={"jobs": [j.model_copy(update={"name": "pre[/]train"}) for j in prob.jobs]})
    out = io.StringIO()
    render_whatif(what_if(prob, cat, ["offers.C.price*=0.9"]), Console(file=out, width=100))
    assert "pre[/]train day" in out.getvalue()


@pytest.mark.parametrize("value", ["null", "[]"])
def test_cli_whatif_lifts_a_restriction_with_null_or_an_empty_list(value):
    # README's edit table: values are YAML, null among them. seed-7b-200b-30d is held to
    # A100-80G monthly (307,180 CNY); lifting the GPU list lets a cheaper card in.
    out = gpuplan("whatif", str(ROOT / "problems" / "seed-7b-200b-30d.yaml"), "--set", f"restrict.gpus={value}",
                  "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["baseline"]["total_cost"] == pytest.approx(307_180)
    assert data["scenario"]["total_cost"] < 307_180


# ----- bounds as probes of one built model (issue 34) ---------------------------------------

def _old_scenario(prob, cat, edits):
    """Today's reading before issue 34: the edited problem built and solved as a problem."""
    edited, edited_cat, _ = apply_edits(prob, cat, edits)
    try:
        return api.solve_problem(edited, edited_cat)
    except Infeasible:
        return None


def _counting(monkeypatch):
    built = count_builds(monkeypatch)
    return built


BOUND_EDITS = [
    ["datacenters.D1.power_quota_kw=30"],            # a quota raised: the power rows' bound
    ["datacenters.D1.power_quota_kw=0"],             # lowered
    ["budget=60000"],                                # a budget where the problem has none: a row switched on
    ["budget=50000"],                                # below the optimum: infeasible
    ["offers.C.max_nodes=1"],                        # stock lowered: variables' and rows' bounds
    ["jobs.j.deadline_days=28"],                     # earlier, uniform daily periods: replicas after day 28 at 0
    ["offers.R.max_nodes=1", "budget=1e6"],          # stock lowered below the plan's: the kept baseline re-read
]


@pytest.mark.parametrize("edits", BOUND_EDITS, ids=lambda e: " ".join(e))
def test_a_bound_edit_is_a_probe_that_answers_as_the_edited_problem_solved(edits, monkeypatch):
    prob, cat = power_case()
    old = _old_scenario(prob, cat, edits)
    built = _counting(monkeypatch)
    result = what_if(prob, cat, edits)
    assert built == {"instance": 1, "model": 1} or old is None   # an infeasible scenario is worded by a build
    if old is None:
        assert result.scenario.plan is None and result.scenario.proven
        return
    assert result.scenario.cost == pytest.approx(old.total_cost, abs=0.01)
    assert result.scenario.plan.status == "optimal"
    if not result.scenario.kept_baseline:
        assert sorted(b.text for b in result.scenario.plan.binding) == sorted(b.text for b in old.binding)


def test_the_edited_limits_word_what_binds():
    prob, cat = power_case()
    result = what_if(prob, cat, ["datacenters.D1.power_quota_kw=20"])     # two racks fit: the quota binds at 20
    assert any("of 20.0 kW" in b.text for b in result.scenario.plan.binding)


def test_an_edit_that_is_not_a_bound_builds_the_edited_problem_once(monkeypatch):
    prob, cat = power_case()
    edits = ["offers[mode=hourly].price*=0.5"]
    old = _old_scenario(prob, cat, edits)
    built = _counting(monkeypatch)
    result = what_if(prob, cat, edits)
    assert built == {"instance": 2, "model": 2}        # the problem's model and the edited problem's
    assert result.scenario.cost == pytest.approx(old.total_cost, abs=0.01)


@pytest.mark.parametrize("edits", [["budget=310000"], ["jobs.pretrain-7b.deadline_days=25"],
                                   ["datacenters[*].power_quota_kw*=0.5"]], ids=str)
def test_bundled_problem_bound_edits_answer_as_re_solves(edits):
    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    old = _old_scenario(prob, cat, edits)
    result = what_if(prob, cat, edits)
    assert (result.scenario.cost is None) == (old is None)
    if old is not None:
        assert result.scenario.cost == pytest.approx(old.total_cost, abs=0.01)


def test_an_unproven_side_shows_its_interval():
    prob, cat = power_case()
    result = what_if(prob, cat, ["datacenters.D1.power_quota_kw=30"])
    scenario = result.scenario.plan
    loose = scenario.model_copy(update={"status": "feasible", "lower_bound": scenario.total_cost - 500})
    result.scenario = type(result.scenario)(loose)
    low, high = result.delta_interval
    assert low == pytest.approx(result.delta - 500) and high == pytest.approx(result.delta)
    shown = result.to_dict()
    assert shown["delta_interval"] == [round(low, 2), round(high, 2)]
    assert shown["scenario"]["lower_bound"] == loose.lower_bound


def test_the_terminal_shows_an_unproven_side_as_an_interval():
    from rich.console import Console

    from solver.report.whatif import render_whatif

    prob, cat = power_case()
    result = what_if(prob, cat, ["datacenters.D1.power_quota_kw=30"])
    loose = result.scenario.plan.model_copy(update={"status": "feasible",
                                                    "lower_bound": result.scenario.plan.total_cost - 500})
    result.scenario = type(result.scenario)(loose)
    console = Console(record=True, width=200)
    render_whatif(result, console)
    text = console.export_text()
    assert "the optimum is at least 39,500" in text
    assert "between the two optima: -15,060 to -14,560" in text


# ----- issue 47, item 1: a plan in hand answers a tightened limit; "infeasible" only when proven --------

def _no_time_after_the_baseline(monkeypatch, *, unproven_by: float = 0.0) -> dict[str, int]:
    """The command's budget ends as soon as the baseline is solved (a stop injected at that step,
    not a clock): and, with `unproven_by`, the baseline is a plan its solve did not prove, its
    bound that much below it. Returns a counter of the solves started after the baseline."""
    from solver.clock import stop_command
    from solver.probes import Probes

    real, after = Probes.plan, {"solves": 0}

    def baseline_then_stop(self, *args, **kwargs):
        plan = real(self, *args, **kwargs)
        if unproven_by:
            self.base.low = plan.total_cost - unproven_by
            plan = plan.model_copy(update={"status": "feasible", "lower_bound": self.base.low,
                                           "gap": unproven_by / plan.total_cost})
        stop_command("budget")
        real_solve = api.solve_milp

        def counted(*a, **kw):
            after["solves"] += 1
            return real_solve(*a, **kw)
        monkeypatch.setattr(api, "solve_milp", counted)
        return plan
    monkeypatch.setattr(Probes, "plan", baseline_then_stop)
    return after


@pytest.fixture
def command():
    """A command's clock for the test, put back after (the stop is the command's, in solver.clock)."""
    from solver.clock import end_command, start_command
    start_command()
    yield
    end_command()


def test_a_tightened_limit_the_proven_baseline_meets_is_its_optimum_with_no_solve(monkeypatch, command):
    prob, cat = power_case()
    after = _no_time_after_the_baseline(monkeypatch)
    result = what_if(prob, cat, ["budget=1e6"])             # a budget the baseline plan is far inside
    assert after["solves"] == 0
    scenario = result.scenario
    assert scenario.plan is not None and scenario.kept_baseline and not result.changed
    assert scenario.plan.status == "optimal" and scenario.cost == pytest.approx(result.baseline.cost)


def test_a_tightened_limit_an_unproven_baseline_meets_is_an_interval_with_no_solve(monkeypatch, command):
    """The issue's case: budget*=0.9 on a plan stopped at a gap, no time left for the scenario:
    [the baseline's bound, its cost], exit 0, never "infeasible"."""
    from rich.console import Console

    from solver.report.whatif import render_whatif

    prob, cat = power_case()
    built = count_builds(monkeypatch)
    after = _no_time_after_the_baseline(monkeypatch, unproven_by=500)
    result = what_if(prob, cat, ["budget=1e6", "offers.C.max_nodes=5"])
    assert after["solves"] == 0 and built == {"instance": 1, "model": 1}    # the baseline's build alone
    plan = result.scenario.plan
    assert plan is not None and plan.status == "feasible" and result.scenario.kept_baseline
    assert plan.total_cost == pytest.approx(result.baseline.cost)
    assert plan.lower_bound == pytest.approx(result.baseline.cost - 500)
    data = result.to_dict()
    assert data["scenario"]["lower_bound"] == pytest.approx(result.baseline.cost - 500)
    console = Console(record=True, width=200)
    render_whatif(result, console)
    text = " ".join(console.export_text().split())
    assert "infeasible" not in text and "nothing is cheaper" not in text
    assert f"costs at most {plan.total_cost:,.0f} CNY" in text
    assert f"the optimum is at least {plan.total_cost - 500:,.0f}" in text


def test_a_scenario_out_of_time_is_not_determined_never_infeasible(monkeypatch, command):
    """A price edit needs a solve; with no time left the scenario has no plan and no proof: "not
    determined", not "infeasible"."""
    from rich.console import Console

    from solver.report.whatif import render_whatif

    prob, cat = power_case()
    built = count_builds(monkeypatch)
    after = _no_time_after_the_baseline(monkeypatch)
    result = what_if(prob, cat, ["offers[mode=hourly].price*=0.5"])
    assert result.scenario.undetermined
    assert after["solves"] == 0 and built == {"instance": 1, "model": 1}   # the edited problem is not built
    assert result.to_dict()["scenario"]["status"] == "not determined"
    console = Console(record=True, width=200)
    render_whatif(result, console)
    text = console.export_text()
    assert "scenario: not determined" in text and "infeasible —" not in text


def test_a_tightening_out_of_time_keeps_the_baselines_bound_as_its_floor(monkeypatch, command):
    """A deadline earlier than the baseline plan finishes: no plan in hand meets it and no time; the
    scenario's optimum is still at least the baseline's proven bound (a tightening only adds cost)."""
    prob, cat = power_case()
    _no_time_after_the_baseline(monkeypatch, unproven_by=500)
    result = what_if(prob, cat, ["jobs.j.deadline_days=28"])     # the plan runs to day 30
    assert result.scenario.undetermined
    assert result.scenario.low == pytest.approx(result.baseline.cost - 500)
    assert result.to_dict()["scenario"]["lower_bound"] == pytest.approx(result.baseline.cost - 500)


def test_cli_an_undetermined_scenario_exits_0(monkeypatch, tmp_path, command):
    from typer.testing import CliRunner

    from solver.cli import app
    from tests.builders import write_problem

    prob, cat = power_case()
    path = write_problem(tmp_path, prob, cat)
    _no_time_after_the_baseline(monkeypatch)
    run = CliRunner().invoke(app, ["whatif", str(path), "--set", "offers[mode=hourly].price*=0.5", "--json"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["scenario"]["status"] == "not determined"


def _stop_after(monkeypatch, solves: int) -> None:
    """The command's budget ends when `solves` solves have started: the next is refused (an
    injected stop at a step, independent of the machine's speed)."""
    from solver import clock

    real = clock._count_solve

    def counted() -> None:
        real()
        if clock.COMMAND.solves > solves:
            clock.stop_command("budget")
    monkeypatch.setattr(clock, "_count_solve", counted)


STOPPED_CASES = [("seed-7b-200b-30d", "budget=1e7"), ("seed-7b-200b-30d", "offers[mode=hourly].price*=0.9"),
                 ("debug-then-train", "budget=1e9"), ("debug-then-train", "offers[vendor=21vianet].price*=1.2")]


@pytest.mark.parametrize("name,edit", STOPPED_CASES, ids=lambda v: str(v))
def test_a_budget_end_at_any_step_never_claims_a_proof_it_lacks(name, edit, monkeypatch, command):
    """Issue 47: whatever step the budget ends at, a side is "optimal" only at the optimum and
    "infeasible" only when proven; the terminal never says "infeasible" otherwise."""
    from rich.console import Console

    from solver.report.whatif import render_whatif

    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    full = what_if(prob, cat, [edit])
    assert full.baseline.plan is not None and full.scenario.plan is not None
    for solves in range(4):
        with monkeypatch.context() as patch:
            from solver.clock import start_command
            start_command()
            _stop_after(patch, solves)
            try:
                result = what_if(prob, cat, [edit])
            except Infeasible as exc:            # the baseline had no time: said as not proven
                assert not exc.proven
                continue
        for got, want in ((result.baseline, full.baseline), (result.scenario, full.scenario)):
            assert got.plan is not None or not got.proven, (solves, got.infeasible)
            if got.plan is not None and got.plan.status == "optimal":
                assert got.plan.total_cost == pytest.approx(want.plan.total_cost, abs=0.01), solves
            if got.plan is not None:
                assert got.plan.lower_bound <= want.plan.total_cost + 0.01, solves
        console = Console(record=True, width=200)
        render_whatif(result, console)
        assert "infeasible" not in console.export_text().replace("not proven infeasible", ""), solves


def test_a_plan_in_hand_off_the_usual_stack_notes_its_switch_unpriced(monkeypatch, command):
    """No time to price the switch under the edits: the plan in hand still answers, its switch
    named with no saving claimed."""
    from tests.builders import gpu, monthly

    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    prob = problem(job("a", days=8, deadline_days=30), horizon_days=30)
    after = _no_time_after_the_baseline(monkeypatch)
    result = what_if(prob, cat, ["budget=1e6"])
    assert after["solves"] == 0
    switch = result.scenario.plan.stack_switch
    assert result.scenario.plan.total_cost == 15_000 and switch is not None and switch.saving is None
    assert "not priced under the edits" in switch.text and " saves " not in switch.text


def test_a_solve_that_ends_without_a_plan_falls_back_on_the_plan_in_hand(monkeypatch, command):
    """Time is left when the scenario starts, so the switch of the plan in hand is to be priced
    by a solve; the budget ends as that solve is asked for: the plan in hand still answers."""
    from solver import clock
    from solver.probes import Probes
    from tests.builders import gpu, monthly

    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    prob = problem(job("a", days=8, deadline_days=30), horizon_days=30)
    real_plan, real_count, done = Probes.plan, clock._count_solve, []

    def baseline(self, *args, **kwargs):
        plan = real_plan(self, *args, **kwargs)
        done.append(True)
        return plan

    def counted() -> None:
        real_count()
        if done:  # the first solve the scenario asks for: the budget ends there
            clock.stop_command("budget")
    monkeypatch.setattr(Probes, "plan", baseline)
    monkeypatch.setattr(clock, "_count_solve", counted)
    result = what_if(prob, cat, ["budget=1e6"])
    plan = result.scenario.plan
    assert plan is not None and plan.total_cost == 15_000 and result.scenario.kept_baseline
    assert "not priced under the edits" in plan.stack_switch.text

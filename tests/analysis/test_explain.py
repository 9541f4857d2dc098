"""Infeasibility explanation: each suggested relaxation re-solves feasible, one unit less does not.

Tiny cases (tests/builders.py: an 8-GPU node does 8 GPU-days a day; the job needs just
under `days` GPU-days), each blocked by exactly one written limit:

- power:  hosted racks R (10 kW a node) only, quota 13 kW; 480 GPU-days in 30 days
          need 2 racks = 20 kW → 7 kW more (6 kW is not enough).
- budget: hourly C at 1 152 CNY per node-day; 2 nodes × 30 days = 69 120 CNY against a
          budget of 50 000 → 19 120 CNY more (19 119 is not enough).
- stock:  C with max_nodes 1 and 960 GPU-days in 30 days: 4 nodes → 3 more (2 are not).
- deadline: C arrives after a 10-day lead time, the deadline is day 10; 10 nodes do
          80 GPU-days a day, 400 are needed → 5 more days (4 are not).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.builders import count_builds, ROOT, catalog, datacenter, hourly, job, problem, write_catalog
from solver import api
from solver.analysis import explain as explain_module
from solver.analysis.edits import apply_edits
from solver.analysis.explain import explain_infeasible
from solver.api import solve_problem
from solver.cli import app
from solver.errors import Infeasible
from solver.load import load_problem
from solver.model.catalog import Offer
from solver.model.problem import ModelSpec

EXAMPLE = ROOT / "problems" / "infeasible" / "shunyi-racks-short.yaml"

HOSTED = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
               price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
               interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100,
               source="test")


def power_case():
    return problem(job(days=480, deadline_days=30), horizon_days=30), catalog(HOSTED, datacenters=(datacenter("D1", power_quota_kw=13),))


def budget_case():
    return problem(job(days=480, deadline_days=30), horizon_days=30, budget=50_000), catalog(hourly("C", 6))


def stock_case(**offer):
    return problem(job(days=960, deadline_days=30), horizon_days=30), catalog(hourly("C", 6, max_nodes=1, **offer))


def deadline_case():
    return problem(job(days=400, deadline_days=10), horizon_days=10), catalog(hourly("C", 6, lead_time_days=10))


def write_case(prob, cat, folder: Path) -> Path:
    """The case as a problem YAML beside its catalog's CSV tables, for the CLI."""
    write_catalog(cat, folder / "cat")
    data = prob.model_dump(mode="json", exclude_defaults=True)
    data["catalog"] = "cat"
    path = folder / "p.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def feasible(prob, cat, edits) -> bool:
    """Re-solve the edited problem through the verified solve."""
    prob, cat, _ = apply_edits(prob, cat, edits)
    try:
        solve_problem(prob, cat)
    except Infeasible as exc:
        assert exc.proven
        return False
    return True


def one(expl, kind):
    (rel,) = [r for r in expl.alone if r.kind == kind]
    return rel


def test_cases_are_infeasible_as_written():
    for prob, cat in (power_case(), budget_case(), stock_case(), deadline_case()):
        assert not feasible(prob, cat, [])


def test_power_needs_7_kw_and_6_is_not_enough():
    prob, cat = power_case()
    expl = explain_infeasible(prob, cat)
    power = one(expl, "power")
    assert (power.target, power.amount, power.unit) == ("D1", 7, "kW")
    assert power.edits == ["datacenters.D1.power_quota_kw+=7"] and power.verified
    assert feasible(prob, cat, ["datacenters.D1.power_quota_kw+=7"])
    assert not feasible(prob, cat, ["datacenters.D1.power_quota_kw+=6"])
    assert power.cost == pytest.approx(40_000)  # two racks
    assert not one(expl, "availability").helps  # more racks than the quota holds do not help
    assert "7 kW more at D1" in expl.text_lines()[0]


def test_power_is_reported_per_site_and_only_where_it_helps():
    # a second site whose racks are slower than needed alone: only D1's power helps
    other = HOSTED.model_copy(update={"offer": "R2", "datacenter": "D2", "vendor": "v2", "max_nodes": 1})
    prob, _ = power_case()
    cat = catalog(HOSTED, other, datacenters=(datacenter("D1", power_quota_kw=13), datacenter("D2", power_quota_kw=0)))
    powers = [r for r in explain_infeasible(prob, cat).alone if r.kind == "power"]
    assert [(r.target, r.amount) for r in powers] == [("D1", 7)]


def test_budget_needs_19120_cny_and_19119_is_not_enough():
    prob, cat = budget_case()
    expl = explain_infeasible(prob, cat)
    budget = one(expl, "budget")
    assert (budget.amount, budget.unit, budget.edits) == (19_120, "CNY", ["budget+=19120"])
    assert budget.verified and budget.cost == pytest.approx(69_120)
    assert feasible(prob, cat, ["budget+=19120"])
    assert not feasible(prob, cat, ["budget+=19119"])
    assert not one(expl, "deadline").helps and not one(expl, "availability").helps
    assert expl.text_lines()[0] == "needs 19,120 CNY more budget"


@pytest.mark.parametrize("interconnect", [("ib_hdr",), ("ib_hdr", "roce")])
def test_stock_needs_3_nodes_and_2_are_not_enough(interconnect):
    # with two interconnect options the cap is an Availability row, with one a variable bound
    prob, cat = stock_case(interconnect=interconnect, interconnect_price=(0.0,) * len(interconnect))
    stock = one(explain_infeasible(prob, cat), "availability")
    assert (stock.target, stock.amount, stock.unit, stock.edits) == ("C", 3, "nodes", ["offers.C.max_nodes+=3"])
    assert stock.verified
    assert not feasible(prob, cat, ["offers.C.max_nodes+=2"])


def test_stock_that_a_layout_needs_is_found_though_no_configuration_survives_preprocessing():
    # an 8e9 model needs a group of two 80 GB GPUs; one-GPU nodes, one of them: nothing fits
    big = ModelSpec(params=8e9, layers=32, hidden=4096, heads=32, seq_len=512)
    prob = problem(job(days=8, deadline_days=30, model=big), horizon_days=30)
    cat = catalog(hourly("S", 6, gpus_per_node=1, max_nodes=1))
    stock = one(explain_infeasible(prob, cat), "availability")
    assert stock.verified and stock.amount >= 1
    edits = stock.edits
    assert feasible(prob, cat, edits)
    assert not feasible(prob, cat, [f"offers.S.max_nodes+={int(stock.amount) - 1}"])


def test_deadline_needs_5_days_and_4_are_not_enough():
    prob, cat = deadline_case()
    expl = explain_infeasible(prob, cat)
    deadline = one(expl, "deadline")
    assert (deadline.amount, deadline.unit) == (5, "days") and deadline.verified
    assert deadline.edits == ["jobs[*].deadline_days+=5", "horizon_days=15"]
    assert not feasible(prob, cat, ["jobs[*].deadline_days+=4", "horizon_days=14"])
    assert not one(expl, "availability").helps  # nothing arrives before the deadline
    assert expl.combination is None  # only time helps: no combination of the other limits
    # the words say the horizon too: a deadline past it is rejected as input
    assert expl.text_lines()[0] == "needs 5 more days on every deadline (and the horizon to 15 days)"


def test_deadline_within_the_written_horizon_names_no_horizon():
    prob, cat = deadline_case()
    prob = prob.model_copy(update={"horizon_days": 20})
    deadline = one(explain_infeasible(prob, cat), "deadline")
    assert deadline.edits == ["jobs[*].deadline_days+=5"] and deadline.verified
    assert deadline.text == "5 more days on every deadline"
    assert deadline.parts[0].horizon_days is None


def test_combination_mixes_limits_in_proportion_and_re_solves_feasible():
    # racks R (20 000 a month, 10 kW) and cloud C (34 560 a month) at D1, 10 kW of quota,
    # budget 45 000: one rack + one cloud node cost 54 560. Alone: 9 560 CNY (21 %) or
    # 10 kW (100 %) → the combination is the budget.
    prob = problem(job(days=480, deadline_days=30), horizon_days=30, budget=45_000)
    cat = catalog(HOSTED, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    expl = explain_infeasible(prob, cat)
    assert (one(expl, "budget").amount, one(expl, "power").amount) == (9_560, 10)
    combo = expl.combination
    assert combo is not None and combo.verified
    assert [(p.kind, p.amount) for p in combo.parts] == [("budget", 9_560)]
    assert combo.relative == pytest.approx(9_560 / 45_000)
    assert feasible(prob, cat, combo.edits)
    assert "cheapest combination" in expl.text_lines()[-1]


def test_combination_of_two_limits_when_neither_helps_alone():
    # racks only, budget 30 000 and 10 kW: one rack (20 000) is not enough work, two need
    # 20 kW and cost 40 000, and one rack for 60 days pays two terms. Only budget and power
    # together help.
    prob = problem(job(days=480, deadline_days=30), horizon_days=30, budget=30_000)
    cat = catalog(HOSTED, datacenters=(datacenter("D1", power_quota_kw=10),))
    expl = explain_infeasible(prob, cat)
    assert not any(r.helps for r in expl.alone)
    combo = expl.combination
    assert combo is not None and combo.verified
    assert {(p.kind, p.amount) for p in combo.parts} == {("budget", 10_000), ("power", 10)}
    assert combo.amount is None and combo.unit == "mixed"
    assert feasible(prob, cat, combo.edits)
    assert not feasible(prob, cat, ["budget+=9999", "datacenters.D1.power_quota_kw+=10"])
    assert not feasible(prob, cat, ["budget+=10000", "datacenters.D1.power_quota_kw+=9"])
    assert expl.text_lines()[0] == "no single limit relaxed alone makes it feasible"


def test_to_dict_is_json_and_carries_the_lines():
    expl = explain_infeasible(*power_case())
    data = json.loads(json.dumps(expl.to_dict()))
    assert data["lines"] == expl.text_lines()
    assert {r["kind"] for r in data["alone"]} == {"deadline", "power", "availability"}
    assert data["combination"]["edits"] == ["datacenters.D1.power_quota_kw+=7"]


# --- the bundled example through the CLI ---------------------------------------------------------

@pytest.fixture(scope="module")
def example_run():
    """One solve of the example: the JSON object on stdout, the printed words on stderr."""
    result = CliRunner().invoke(app, ["solve", str(EXAMPLE), "--json"])
    assert result.exit_code == 1, result.output
    return result


@pytest.fixture(scope="module")
def example_json(example_run):
    return json.loads(example_run.stdout)


def test_bundled_example_is_infeasible_and_not_picked_up_by_problems_glob():
    assert EXAMPLE.is_file() and EXAMPLE.parent.name == "infeasible"
    assert "catalog: ../../catalogs/beijing-sample" in EXAMPLE.read_text(encoding="utf-8")


def test_cli_json_has_status_reasons_and_explanation(example_json):
    data = example_json
    assert data["status"] == "infeasible" and data["message"] and data["reasons"]
    expl = data["explanation"]
    helping = {r["kind"]: r for r in expl["alone"] if r["parts"]}
    assert set(helping) == {"deadline", "availability"}
    assert all(r["verified"] for r in helping.values())
    assert expl["combination"]["verified"]


def test_cli_json_suggestions_re_solve_and_one_unit_less_does_not(example_json):
    prob, cat = load_problem(EXAMPLE)
    alone = {r["kind"]: r for r in example_json["explanation"]["alone"]}
    deadline = alone["deadline"]["amount"]
    assert not feasible(prob, cat, [f"jobs[*].deadline_days+={deadline - 1}",
                                    f"horizon_days={prob.horizon_days + deadline - 1}"] if deadline > 1 else [])
    (stock,) = alone["availability"]["parts"]
    assert not feasible(prob, cat, [f"offers.{stock['target']}.max_nodes+={stock['amount'] - 1}"])
    combo = example_json["explanation"]["combination"]
    assert feasible(prob, cat, combo["edits"])


def test_cli_text_prints_the_explanation(example_run, example_json):
    out = example_run.stderr
    assert "infeasible" in out and "smallest relaxations" in out and "Traceback" not in out
    for line in example_json["explanation"]["lines"]:
        assert line in out


def test_the_example_comment_shows_the_printed_explanation(example_json):
    comment = " ".join(line.lstrip("# ").strip() for line in EXAMPLE.read_text(encoding="utf-8").splitlines()
                       if line.startswith("#"))
    for line in example_json["explanation"]["lines"]:
        assert line in comment, f"the example's comment does not show: {line}"


# --- the printed words, followed literally ---------------------------------------------------------
# A reader of the text, written apart from explain.py: each phrase → the edits it asks for.

PHRASES = (
    (r"(\d+) more days? on every deadline(?: \(and the horizon to (\d+) days\))?",
     lambda k, h: [f"jobs[*].deadline_days+={k}"] + ([f"horizon_days={h}"] if h else [])),
    (r"([\d,]+) CNY more budget", lambda x: [f"budget+={x.replace(',', '')}"]),
    (r"([\d,]+) kW more at (.+)", lambda x, d: [f"datacenters.{d}.power_quota_kw+={x.replace(',', '')}"]),
    (r"(\d+) more nodes? of (.+)", lambda n, o: [f"offers.{o}.max_nodes+={n}"]),
)


def printed_suggestions(text: str) -> list[str]:
    """Each suggestion of the printed explanation: the `needs` alternatives, then the combination."""
    out = []
    for line in text.splitlines():
        line = line.strip().removeprefix("* ")
        if line.startswith("needs "):
            out += line.removeprefix("needs ").split(", or ")
        elif line.startswith("cheapest combination"):
            out.append(line.split("): ", 1)[1])
    return out


def read_literally(words: str) -> list[str]:
    """The edits a user makes who does exactly what one suggestion says, and nothing else."""
    edits = []
    words = re.sub(r" \((not verified: out of time|re-solved: still infeasible)\)$", "", words)
    for part in words.split(" and "):
        part = re.sub(r" \(\+[\d.]+%\)$", "", part)
        for pattern, to_edits in PHRASES:
            found = re.fullmatch(pattern, part)
            if found:
                edits += to_edits(*found.groups())
                break
        else:
            raise AssertionError(f"words no phrase reads: {part!r}")
    return edits


def json_suggestions(expl: dict) -> list[list[str]]:
    return [r["edits"] for r in expl["alone"] if r["parts"]] + \
        ([expl["combination"]["edits"]] if expl["combination"] else [])


def whatif(path: Path, edits: list[str]):
    return CliRunner().invoke(app, ["whatif", str(path), *[a for e in edits for a in ("--set", e)]])


def test_example_words_followed_literally_are_the_json_edits_and_whatif_runs_them(example_run, example_json):
    printed = printed_suggestions(example_run.stderr)
    assert printed[0] == "1 more day on every deadline (and the horizon to 51 days)"
    read = [read_literally(words) for words in printed]
    assert read == json_suggestions(example_json["explanation"])
    for edits in read:
        result = whatif(EXAMPLE, edits)
        assert result.exit_code == 0, (edits, result.output)
        assert "scenario: " in result.output and "infeasible" in result.output  # the baseline is not


@pytest.mark.parametrize("case", [power_case, budget_case, stock_case, deadline_case])
def test_each_kind_of_words_followed_literally_is_the_json_edits_and_runs(case, tmp_path):
    path = write_case(*case(), tmp_path)
    result = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert result.exit_code == 1, result.output
    expl = json.loads(result.stdout)["explanation"]
    read = [read_literally(words) for words in printed_suggestions(result.stderr)]
    assert read and read == json_suggestions(expl)
    kinds = {p["kind"] for r in expl["alone"] if r["parts"] for p in r["parts"]}
    assert case.__name__.removesuffix("_case").replace("stock", "availability") in kinds
    for edits in read:
        assert whatif(path, edits).exit_code == 0, edits


def test_no_explain_flag_skips_it(tmp_path):
    path = write_case(*budget_case(), tmp_path)
    result = CliRunner().invoke(app, ["solve", str(path), "--json", "--no-explain"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["explanation"] is None
    result = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["explanation"]["lines"][0] == "needs 19,120 CNY more budget"


def test_out_of_time_leaves_limits_undetermined_and_says_so():
    expl = explain_infeasible(*budget_case(), max_seconds=0)
    assert not any(r.helps or r.determined for r in expl.alone) and expl.combination is None
    lines = expl.text_lines()
    assert all("not determined" in line for line in lines)
    assert not any("makes it feasible" in line for line in lines)  # no claim it could not


def test_an_unverified_suggestion_says_why():
    """Out of time and proven still infeasible are different news for the user."""
    from solver.analysis.explain import Relaxation, _flag

    def rel(**kw):
        return Relaxation("budget", "budget", 10.0, "CNY", text="10 CNY more budget", **kw)

    assert _flag(rel(verified=True, cost=5.0)) == "10 CNY more budget"
    assert _flag(rel()) == "10 CNY more budget (not verified: out of time)"
    assert _flag(rel(refuted=True)) == "10 CNY more budget (re-solved: still infeasible)"


# --- pairs: a later deadline and more budget (issue 36) ----------------------------------------

def _late_and_poor():
    """C arrives on day 14 (one node, 8 GPU-days a day), the job (just under 40 GPU-days) is due on
    day 7 with a budget of 1,000: no deadline alone (the budget holds 0.87 node-days), no budget
    alone (nothing arrives in the window). Day 19 with 5 node-days at 1,152 = 5,760 CNY is the
    first pair that works: 12 more days and 4,760 more budget. Racks at D2 draw power but arrive
    on day 60, never usable: the power quota there is a limit the problem does not touch."""
    prob = problem(job("j", days=40, deadline_days=7), horizon_days=30, budget=1000)
    racks = HOSTED.model_copy(update={"offer": "R2", "datacenter": "D2", "lead_time_days": 60})
    cat = catalog(hourly("C", 6.0, max_nodes=1, lead_time_days=14), racks,
                  datacenters=(datacenter("D1"), datacenter("D2", power_quota_kw=13)))
    return prob, cat


def test_the_two_limit_explanation_finds_deadline_and_budget_with_numbers():
    prob, cat = _late_and_poor()
    exp = explain_infeasible(prob, cat, time_limit=None, max_seconds=None)
    assert all(r.determined and not r.helps for r in exp.alone)
    (pair,) = exp.pairs
    assert pair.verified and pair.cost == pytest.approx(5760)
    parts = {p.kind: p.amount for p in pair.parts}
    assert parts == {"deadline": 12, "budget": 4760}
    lines = exp.text_lines()
    assert any(line.startswith("needs both: 12 more days on every deadline and 4,760 CNY more budget")
               for line in lines), lines
    # each reason with its numbers; no line about limits the problem does not touch
    assert any("within the budget of 1,000 CNY" in line for line in lines), lines
    assert not any("power" in line or "D2" in line for line in lines), lines
    # the smallest: one day less, or one CNY less, has no plan
    for edits in (["jobs[*].deadline_days+=11", "budget+=4760"], ["jobs[*].deadline_days+=12", "budget+=4759"]):
        with pytest.raises(Infeasible):
            solve_problem(*apply_edits(prob, cat, edits)[:2])


def test_quick_reasons_give_the_lead_time_against_the_window():
    prob, cat = _late_and_poor()
    with pytest.raises(Infeasible) as caught:
        solve_problem(prob, cat)
    assert any("14 d" in r and "7-day window" in r for r in caught.value.reasons), caught.value.reasons


# ----- two built models, each question a probe of one of them (issue 34) ---------------------

def _counting(monkeypatch):
    built = count_builds(monkeypatch)
    monkeypatch.setattr(explain_module, "build_instance", api.build_instance)
    return built


@pytest.mark.parametrize("case, instances, models", [
    (power_case, 5, 4),      # before issue 34: 16 Instances, 16 models
    (budget_case, 5, 4),     # 13, 12
    (stock_case, 4, 1),      # 12, 3
    (deadline_case, 5, 1),   # 13, 3
], ids=lambda c: getattr(c, "__name__", str(c)))
def test_the_explanation_builds_a_model_per_stock_raise_and_one_for_the_deadlines(case, instances, models,
                                                                                  monkeypatch):
    """The problem as written (its Instance only: the quick words and the sites), one model per
    stock raise tried (×2; ×8 and ×64 only while more stock is asked and not enough: every
    elastic solve, the budget dropped and the suggestions' checks are probes of it) and one
    with every deadline moved by the search's cap (the day searches). An Instance without a
    model is a raise or a later deadline that still leaves a job no offer."""
    prob, cat = case()
    built = _counting(monkeypatch)
    expl = explain_infeasible(prob, cat)
    assert any(r.helps and r.verified for r in expl.alone)
    assert built == {"instance": instances, "model": models}


def test_the_bundled_example_is_explained_on_two_models(monkeypatch):
    prob, cat = load_problem(EXAMPLE)
    built = _counting(monkeypatch)
    lines = explain_infeasible(prob, cat).text_lines()
    assert built == {"instance": 3, "model": 2}
    assert lines[0] == ("needs 1 more day on every deadline (and the horizon to 51 days), or 2 more nodes of "
                        "vnet-yz-a100-80-8x-monthly")
    assert lines[-1] == ("cheapest combination (smallest change relative to each limit): 648,032 CNY more budget "
                         "(+4.6%) and 10 kW more at Shunyi (+4.0%)")


def test_a_deadline_search_on_periods_of_several_days_re_solves(monkeypatch):
    """The caps are exact on daily periods only: with 5-day periods the search re-solves the
    edited problems, and finds what the caps would not be allowed to say."""
    prob, cat = deadline_case()
    prob = prob.model_copy(update={"period_days": 5})
    deadline = one(explain_infeasible(prob, cat), "deadline")
    assert deadline.verified and feasible(prob, cat, deadline.edits)
    fewer = int(deadline.amount) - 1
    assert not feasible(prob, cat, [f"jobs[*].deadline_days+={fewer}", f"horizon_days={10 + fewer}"])

"""Sweeps: grid files, rows equal to single solves, failed scenarios as rows, CSV/Parquet, Ray = process.

On problems/hybrid-burst.yaml (~0.2–1 s a solve). One process sweep with two workers and
one Ray sweep (local instance, two CPUs) of the same four scenarios are shared by the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from solver.analysis.edits import apply_edits
from solver.analysis.sweep import Scenario, check_edits, load_grid, run_sweep, scenarios_from_grid
from solver.api import solve_problem
from solver.cli import app
from solver.errors import Infeasible, ProblemError
from solver.load import load_problem
from tests.builders import ROOT, count_builds
from tests.extras import need_ray

HYBRID = ROOT / "problems" / "hybrid-burst.yaml"
EXAMPLE = ROOT / "problems" / "sweeps" / "hybrid-burst-grid.yaml"

SCENARIOS = [
    Scenario("base", ()),
    Scenario("cheap-vnet", ("offers[vendor=21vianet].price*=0.9",)),
    Scenario("more-power", ("datacenters.Shunyi.power_quota_kw=400", "offers[vendor=21vianet].price*=1.1")),
    Scenario("past-horizon", ("jobs[*].deadline_days=300",)),     # invalid edited problem → error row
    Scenario("too-soon", ("jobs[*].deadline_days=60",)),          # nothing can finish in time → infeasible row
]


@pytest.fixture(scope="module")
def base():
    return load_problem(HYBRID)


@pytest.fixture(scope="module")
def process_table(base):
    done = []
    df = run_sweep(*base, SCENARIOS, executor="process", jobs=2, on_row=lambda i, row: done.append(i))
    assert sorted(done) == list(range(len(SCENARIOS)))          # progress heard of every scenario once
    return df


def cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


# --- rows --------------------------------------------------------------------------------------

def test_rows_equal_single_solves_of_the_same_scenario(base, process_table):
    df = process_table.set_index("scenario")
    assert list(df.index) == [s.name for s in SCENARIOS]         # scenario order, whatever finished first
    for sc in SCENARIOS[:3]:
        problem, catalog, _ = apply_edits(*base, list(sc.edits))
        plan = solve_problem(problem, catalog)
        row = df.loc[sc.name]
        assert row["status"] == plan.status == "optimal"
        assert row["total_cost"] == pytest.approx(plan.total_cost, rel=1e-9)
        assert row["finish_pretrain-30b"] == plan.jobs[0].finish_day
        assert row["binding"] == "; ".join(b.text for b in plan.binding)
        assert row["edits"] == "; ".join(sc.edits) and row["error"] == ""
        gpu_days = {c: row[c] for c in df.columns if c.startswith("gpu_days[") and row[c] > 0}
        expected: dict[str, int] = {}
        for a in plan.allocations:
            key = f"gpu_days[{a.gpu}/{a.mode}/{a.datacenter}]"
            expected[key] = expected.get(key, 0) + a.gpus * (a.end_day - a.start_day)
        assert gpu_days == expected


def test_failed_scenarios_are_rows_with_their_error(base, process_table):
    df = process_table.set_index("scenario")
    bad = df.loc["past-horizon"]
    assert bad["status"] == "error" and "past horizon_days" in bad["error"]
    assert pd.isna(bad["total_cost"]) and pd.isna(bad["finish_pretrain-30b"])
    tight = df.loc["too-soon"]
    assert tight["status"] == "infeasible" and "pretrain-30b" in tight["error"]
    with pytest.raises(Infeasible):                              # the same as a single solve says
        solve_problem(*apply_edits(*base, ["jobs[*].deadline_days=60"])[:2])
    assert (df.loc[["base", "cheap-vnet", "more-power"], "status"] == "optimal").all()
    assert df.loc["cheap-vnet", "total_cost"] < df.loc["base", "total_cost"]


def test_serial_and_pool_give_the_same_table(base, process_table):
    # a row does not depend on which worker ran it or after which scenario (no MIP start carried over)
    serial = run_sweep(*base, SCENARIOS, jobs=1)
    pd.testing.assert_frame_equal(serial.drop(columns="seconds"), process_table.drop(columns="seconds"))


def test_each_row_says_how_it_was_solved(process_table):
    how = process_table.set_index("scenario")["how"].to_dict()
    # bounds and prices are probes of the base model; the edited problem that fails to load is
    # never solved; the proven-infeasible one is worded by its own build (preprocessing's reasons)
    assert how == {"base": "probe", "cheap-vnet": "probe", "more-power": "probe", "past-horizon": "",
                   "too-soon": "rebuilt"}
    solved = process_table[process_table["status"] == "optimal"]
    assert (solved["lower_bound"] == solved["total_cost"]).all()     # proven: the interval is one number


def test_the_ray_executor_gives_the_same_table_as_the_process_executor(base, process_table):
    need_ray()
    ray_table = run_sweep(*base, SCENARIOS, executor="ray", jobs=2)   # two actors, each one build
    pd.testing.assert_frame_equal(ray_table.drop(columns="seconds"), process_table.drop(columns="seconds"))


# --- grid files --------------------------------------------------------------------------------

def test_grid_is_a_cartesian_product_in_file_order_then_the_explicit_list():
    scenarios = scenarios_from_grid({
        "grid": {"offers[vendor=sinnet].price*=": [0.8, 0.9, 1.0], "jobs[*].deadline_days": [30, 45],
                 "restrict.gpus=": [["A100-80G"], ["A100-80G", "H800-80G"]]},
        "scenarios": [{"name": "base", "set": []}, {"set": ["budget=2e6"]}]})
    assert len(scenarios) == 3 * 2 * 2 + 2
    assert [s.name for s in scenarios[:3]] == ["grid-01", "grid-02", "grid-03"]
    assert scenarios[0].edits == ("offers[vendor=sinnet].price*=0.8", "jobs[*].deadline_days=30",
                                  "restrict.gpus=[A100-80G]")
    assert scenarios[1].edits[2] == "restrict.gpus=[A100-80G, H800-80G]"          # last key varies fastest
    assert scenarios[2].edits[1:] == ("jobs[*].deadline_days=45", "restrict.gpus=[A100-80G]")
    assert scenarios[11].params == {"offers[vendor=sinnet].price*=": 1.0, "jobs[*].deadline_days": 45,
                                    "restrict.gpus=": ["A100-80G", "H800-80G"]}
    assert [s.name for s in scenarios[12:]] == ["base", "scenario-2"]
    assert scenarios[13].edits == ("budget=2e6",) and scenarios[13].params == {}


def test_the_example_grid_loads_and_its_edits_fit_its_problem(base):
    scenarios = load_grid(EXAMPLE)
    assert len(scenarios) == 3 * 2 * 2 + 2
    check_edits(*base, scenarios, str(EXAMPLE))                  # the past-horizon scenario is a row, not a typo


@pytest.mark.parametrize("data, key", [
    ({"grid": {"jobs[*].deadline_days=": 30}}, "grid.jobs[*].deadline_days="),
    ({"grid": {"jobs[*].deadline_days=": []}}, "grid.jobs[*].deadline_days="),
    ({"grid": {"offers[vendor=x].price*=": ["cheap"]}}, "grid.offers[vendor=x].price*="),
    ({"scenarios": [{"name": "a", "edits": ["budget=1"]}]}, "scenarios[0]"),
    ({"scenarios": [{"name": "a", "set": ["budget"]}]}, "scenarios[0].set"),
    ({"scenarios": [{"name": "a", "set": []}, {"name": "a", "set": []}]}, "scenarios"),
    ({"grids": {}}, None),
    ({"grid": {"budget=": [1]}, "problem": "x.yaml"}, "problem"),
])
def test_bad_grids_name_the_key(data, key):
    with pytest.raises(ProblemError) as exc:
        scenarios_from_grid(data, "g.yaml")
    assert exc.value.file == "g.yaml"
    assert exc.value.key is None if key is None else exc.value.key.startswith(key)


def test_a_typo_in_a_path_fails_before_solving(base):
    scenarios = scenarios_from_grid({"grid": {"jobs[*].deadlin_days=": [30]}})
    with pytest.raises(ProblemError, match="no key 'deadlin_days'"):
        check_edits(*base, scenarios, "g.yaml")
    later = [Scenario("ok", ("offers.vnet-sy-a100-80-8x-hosted.vendor=acme", "offers[vendor=acme].price*=0.9"))]
    check_edits(*base, later)                                    # matches only after the scenario's first edit


# --- the command -------------------------------------------------------------------------------

GRID = ('grid:\n  "offers[vendor=21vianet].price*=": [0.9, 1.1]\n'
        'scenarios:\n  - {name: bad, set: ["jobs[*].deadline_days=300"]}\n')


def test_cli_writes_csv_and_parquet_and_refuses_to_overwrite(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID, encoding="utf-8")
    out_csv, out_parquet = tmp_path / "sweep.csv", tmp_path / "sweep.parquet"
    run = cli("sweep", HYBRID, "--grid", grid, "-o", out_csv, "-j", "1", "--quiet")
    assert run.exit_code == 0, run.output
    assert "3 scenarios: 2 optimal, 1 error" in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 100   # README: tables within 100 columns
    table = pd.read_csv(out_csv)
    assert list(table["scenario"]) == ["grid-1", "grid-2", "bad"]
    assert list(table["status"]) == ["optimal", "optimal", "error"]
    assert table["total_cost"][0] < table["total_cost"][1]

    again = cli("sweep", HYBRID, "--grid", grid, "-o", out_csv, "-j", "1")
    assert again.exit_code == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert pd.read_csv(out_csv).equals(table)                    # untouched

    run = cli("sweep", HYBRID, "--grid", grid, "-o", out_parquet, "-j", "1", "--json")
    assert run.exit_code == 0, run.output
    rows = json.loads(run.stdout)
    back = pd.read_parquet(out_parquet)
    assert [r["scenario"] for r in rows] == list(back["scenario"]) == ["grid-1", "grid-2", "bad"]
    assert rows[2]["total_cost"] is None and "past horizon_days" in rows[2]["error"]
    assert back["total_cost"].iloc[:2].tolist() == pytest.approx(table["total_cost"].iloc[:2].tolist())
    assert cli("sweep", HYBRID, "--grid", grid, "-o", out_parquet, "-j", "1", "--force", "-q").exit_code == 0


def test_cli_bad_grid_file_exits_2_naming_file_and_key(tmp_path):
    grid = tmp_path / "bad-grid.yaml"
    grid.write_text('grid:\n  "datacenters.Shunyi.power_quota_kw=": 400\n', encoding="utf-8")
    run = cli("sweep", HYBRID, "--grid", grid)
    assert run.exit_code == 2
    assert "bad-grid.yaml" in run.stderr and "grid.datacenters.Shunyi.power_quota_kw=" in run.stderr
    assert "non-empty list" in run.stderr and "Traceback" not in run.output

    grid.write_text('grid:\n  "offers[vendor=nobody].price*=": [0.9]\n', encoding="utf-8")
    run = cli("sweep", HYBRID, "--grid", grid)
    assert run.exit_code == 2 and "matches no row" in run.stderr and "bad-grid.yaml" in run.stderr
    assert cli("sweep", HYBRID, "--grid", tmp_path / "missing.yaml").exit_code == 2
    assert cli("sweep", HYBRID, "--grid", EXAMPLE, "-o", tmp_path / "x.txt").exit_code == 2


def test_cli_error_keeps_selectors_in_brackets(tmp_path):
    grid = tmp_path / "bad-grid.yaml"
    grid.write_text('grid:\n  "offers[vendor=21vianet].price*=": 0.9\n', encoding="utf-8")
    run = cli("sweep", HYBRID, "--grid", grid)
    assert run.exit_code == 2 and "grid.offers[vendor=21vianet].price*=" in run.stderr


def test_whole_grid_values_stay_whole_beside_scenarios_without_them(base):
    # The bundled grid's power quotas are 250 and 400; its explicit scenarios set none, and
    # the CSV read 250.0 (pandas makes a column of ints and blanks float before it is typed).
    from solver.analysis.sweep import to_frame

    scenarios = [Scenario("a", ("datacenters.Shunyi.power_quota_kw=250",), {"datacenters.Shunyi.power_quota_kw=": 250}),
                 Scenario("b", ())]
    rows = [{"status": "optimal", "total_cost": 1.0, "finish": {}, "gpu_days": {}, "binding": "", "error": "",
             "seconds": 0.1}] * 2
    df = to_frame(base[0], scenarios, rows)
    column = df["datacenters.Shunyi.power_quota_kw="]
    assert str(column.dtype) == "Int64" and column.iloc[0] == 250 and column.isna().iloc[1]
    assert "250.0" not in df.to_csv(index=False)


# --- one build per worker (issue 34) -------------------------------------------------------------

BOUNDS = [Scenario("base", ()), Scenario("budget", ("budget=40000000",)),
          Scenario("less-power", ("datacenters.Shunyi.power_quota_kw=200",)),
          Scenario("more-power", ("datacenters.Shunyi.power_quota_kw=400",)),
          Scenario("cheap-vnet", ("offers[vendor=21vianet].price*=0.9",)),
          Scenario("cheaper-more-power", ("offers[vendor=21vianet].price*=0.8", "datacenters.Shunyi.power_quota_kw=300"))]


@pytest.fixture
def builds(monkeypatch):
    return count_builds(monkeypatch)


def test_a_serial_sweep_of_bounds_and_prices_builds_one_instance_and_one_model(base, builds, monkeypatch):
    from solver.rows import ROWS

    heard = []
    monkeypatch.setattr(ROWS, "listener", lambda words, done, expected: heard.append((words, done, expected)))
    df = run_sweep(*base, BOUNDS, jobs=1)
    assert builds == {"instance": 1, "model": 1}
    assert list(df["how"]) == ["probe"] * len(BOUNDS)
    assert [(done, expected) for _, done, expected in heard] == [(i + 1, len(BOUNDS)) for i in range(len(BOUNDS))]
    assert [words.split(":")[0] for words, _, _ in heard] == [s.name for s in BOUNDS]   # each row as it came
    assert heard[0][0].endswith("(probe)") and "CNY" in heard[0][0]


def test_probe_rows_equal_rows_of_scenarios_built_alone(base):
    from solver.analysis.sweep import run_scenario, to_frame

    probed = run_sweep(*base, BOUNDS, jobs=1)
    built = to_frame(base[0], BOUNDS, [run_scenario(*base, sc, {"time_limit": None, "gap": None}) for sc in BOUNDS])
    assert list(built["how"]) == ["rebuilt"] * len(BOUNDS)
    pd.testing.assert_frame_equal(probed.drop(columns=["seconds", "how"]), built.drop(columns=["seconds", "how"]))


def test_a_scenario_that_changes_preprocessing_is_built(base, builds):
    # a deadline made earlier is a bound of the model, but the plan a probe finds there finishes
    # earlier than the built scenario's (see solver.probes.edit_changes): built too
    later = [Scenario("more-stock", ("offers.vnet-sy-a100-80-8x-hosted.max_nodes=60",)),
             Scenario("mfu", ("jobs[*].mfu_factor=0.9",)), Scenario("sooner", ("jobs[*].deadline_days=200",))]
    df = run_sweep(*base, [Scenario("base", ()), *later], jobs=1)
    assert list(df["how"]) == ["probe", "rebuilt", "rebuilt", "rebuilt"]
    assert builds == {"instance": 4, "model": 4}


def test_a_row_out_of_time_reads_as_an_interval():
    from solver.analysis.sweep import row_words

    row = {"status": "feasible", "total_cost": 25_100.0, "lower_bound": 23_954.0, "currency": "CNY", "how": "probe"}
    assert row_words(Scenario("grid-03", ()), row) == "grid-03: feasible from 23,954 to 25,100 CNY (probe)"
    assert row_words(Scenario("x", ()), {**row, "lower_bound": 25_100.0}) == "x: feasible 25,100 CNY (probe)"
    assert row_words(Scenario("bad", ()), {"status": "error", "total_cost": None, "how": ""}) == "bad: error"


def test_a_probe_proven_infeasible_reads_as_the_built_scenario(base, builds):
    import re

    from solver.analysis.sweep import run_scenario

    broke = Scenario("broke", ("budget=1000000",))
    df = run_sweep(*base, [broke], jobs=1)
    assert builds == {"instance": 1, "model": 1}
    built = run_scenario(*base, broke, {"time_limit": None, "gap": None})
    row = df.iloc[0]
    assert (row["status"], row["how"], built["status"]) == ("infeasible", "probe", "infeasible")

    def timeless(text: str) -> str:
        return re.sub(r"ran [0-9.]+ s", "ran … s", text)
    assert timeless(row["error"]) == timeless(built["error"])


class _Dies:
    """A scenario value whose unpickling ends the worker process that receives it (os._exit), as the
    system's memory killer would."""

    def __reduce__(self):
        import os
        return os._exit, (3,)


def test_a_scenario_whose_worker_died_is_an_error_row_and_the_sweep_goes_on(base):
    """Issue 44: one policy for a dead worker, sweep's and negotiate's (solver.analysis.executor): the
    row says so, "worker failed: …", and the table is still written."""
    dies = Scenario("dies", (), {"boom": _Dies()})
    rows = {}
    df = run_sweep(*base, [dies, Scenario("base", ())], executor="process", jobs=2,
                   on_row=lambda i, row: rows.update({i: row}))
    assert df["status"][0] == "error" and rows[0]["status"] == "error"   # a broken pool may take the other too
    assert df["error"][0].startswith("worker failed: BrokenProcessPool")
    assert list(df["scenario"]) == ["dies", "base"] and set(rows) == {0, 1}

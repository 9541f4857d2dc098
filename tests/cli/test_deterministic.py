"""`solve --deterministic` (issue 47 item 4): each HiGHS solve stops at a node limit, not a time
limit, so a run cut short gives the same plan every time, on any machine and load."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from solver import api
from solver.cli import app
from solver.engine import child, tiebreak
from tests.builders import ROOT

PROBLEM = str(ROOT / "problems" / "debug-then-train.yaml")


def _without_clock(value):
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if not k.endswith("seconds")}
    if isinstance(value, list):
        return [_without_clock(v) for v in value]
    return value


def test_a_node_limited_run_gives_the_same_plan_twice_and_says_why(monkeypatch):
    monkeypatch.setattr(api, "DETERMINISTIC_NODES", 1)  # so small that the solves stop at it, unproven
    asked = []
    real = child.highs_parameters
    monkeypatch.setattr(child, "highs_parameters", lambda **kw: asked.append(kw) or real(**kw))
    runs = [CliRunner().invoke(app, ["solve", PROBLEM, "--deterministic", "--json"]) for _ in range(2)]
    assert [r.exit_code for r in runs] == [0, 0], runs[0].output
    one, two = (_without_clock(json.loads(r.stdout)) for r in runs)
    assert one == two and one["status"] == "feasible"
    assert asked and all(kw["node_limit"] == 1 for kw in asked)
    # the clock is not the solves' limit (only the command's budget, as a backstop, stays)
    shown = CliRunner().invoke(app, ["solve", PROBLEM, "--deterministic"], env={"COLUMNS": "200"})
    assert "node limit (--deterministic)" in shown.stdout and "another run" not in shown.stdout
    assert api.PROGRESS.node_limit is None  # put back after the command


def test_without_the_flag_no_node_limit_is_set(monkeypatch):
    asked = []
    real = child.highs_parameters
    monkeypatch.setattr(child, "highs_parameters", lambda **kw: asked.append(kw) or real(**kw))
    assert CliRunner().invoke(app, ["solve", PROBLEM, "--json"]).exit_code == 0
    assert asked and all(kw["node_limit"] in (None, tiebreak.NODES) for kw in asked)  # the tie-break's own


def test_another_backend_is_exit_2_naming_the_option():
    done = CliRunner().invoke(app, ["solve", PROBLEM, "--deterministic", "--backend", "scip"])
    assert done.exit_code == 2 and "--deterministic" in done.output and "HiGHS" in done.output

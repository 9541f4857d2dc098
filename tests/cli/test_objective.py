"""`gpuplan solve --objective min_time`: the earliest-finishing plan, the same as the library's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from solver.analysis.min_time import min_time_plan
from solver.api import solve_problem
from solver.load import load_problem
from tests.builders import ROOT

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def test_min_time_objective_finishes_earlier_at_a_higher_cost_than_min_cost():
    run = subprocess.run([sys.executable, "-m", "solver.cli", "--quiet", "solve", str(SEED), "--objective", "min_time",
                          "--json"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    fast = json.loads(run.stdout)
    prob, cat = load_problem(SEED)
    cheap = solve_problem(prob, cat)
    library = min_time_plan(prob, cat)
    assert max(j["finish_day"] for j in fast["jobs"]) == max(j.finish_day for j in library.jobs)
    assert max(j["finish_day"] for j in fast["jobs"]) < max(j.finish_day for j in cheap.jobs)
    assert fast["total_cost"] == pytest.approx(library.total_cost) and fast["total_cost"] >= cheap.total_cost

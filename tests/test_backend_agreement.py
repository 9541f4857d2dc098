"""Every backend finds the same optimum on the instances where they once disagreed.

The cases (tests/data/backend_disagreements.json) come from a differential test of 11,290
random tiny instances solved by HiGHS, SCIP, CP-SAT and, where it applies, the brute-force
oracle (2026-12-03). Two were HiGHS 1.12 presolve bugs (solver.milp.solve.HIGHS_PRESOLVE_RULES_OFF),
four CP-SAT rounding the storage rows' continuous work-to-do (solver.milp.data._running).
Each case fails on the code before its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.model.catalog import Catalog
from solver.model.problem import Problem

CASES = json.loads((Path(__file__).parent / "data" / "backend_disagreements.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("backend, time_limit", [("highs", None), ("highs", 30), ("scip", None), ("cp_sat", None)])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_backend_finds_the_optimum(case, backend, time_limit):
    prob, cat = Problem.model_validate(case["problem"]), Catalog.model_validate(case["catalog"])
    plan = solve_problem(prob, cat, backend=backend, time_limit=time_limit)   # verified inside
    assert plan.total_cost == pytest.approx(case["optimum"], abs=0.01), case["was"]
    assert plan.status == "optimal"

"""A command's MILP solves in a child process (solver/engine/child.py, issue 43 item 4).

HiGHS through MathOpt does not stop when interrupted, so a command's long solves run in a child
that the command kills on Ctrl-C or at its budget's end; the plan so far is read from the file
HiGHS appends each improving plan to. The stop is injected (GPUPLAN_INTERRUPT_AT_PLAN: SIGINT when
a child solve first shows a plan), never timed.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solver.engine import child
from solver.engine.progress import PROGRESS
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.build import build_milp
from solver.milp.instance import build_instance
from tests.builders import ROOT

STORAGE = ROOT / "tests" / "bench" / "problems" / "issue33-2job-45d-storage.yaml"


def test_the_last_whole_plan_is_read_and_a_block_cut_by_the_kill_is_skipped(tmp_path):
    path = tmp_path / "improving.txt"
    path.write_text("Objective 10\n# Columns 3\n 1\n 0\n 2\nObjective 7.5\n# Columns 3\n 1\n 1\n 0\n"
                    "Objective 5\n# Columns 3\n 4\n", encoding="utf-8")
    assert child.last_plan(path, 3) == (7.5, [1.0, 1.0, 0.0])
    assert child.last_plan(tmp_path / "missing.txt", 3) is None
    path.write_text("Objective 5\n# Columns 3\n 4\n", encoding="utf-8")
    assert child.last_plan(path, 3) is None


@pytest.fixture
def in_child(monkeypatch):
    """Every MILP solve of this test in a child once a stoppable command's interrupter is set."""
    monkeypatch.setattr(child, "CHILD_VARIABLES", 0)
    monkeypatch.delenv("GPUPLAN_IN_PROCESS", raising=False)
    monkeypatch.setattr(PROGRESS, "interrupter", None)
    spawned = []
    real = child.solve_in_child
    monkeypatch.setattr(child, "solve_in_child", lambda *a, **k: spawned.append(1) or real(*a, **k))
    return spawned


def test_a_solve_in_a_child_gives_the_in_process_optimum(in_child):
    problem, catalog = load_problem(ROOT / "problems" / "debug-then-train.yaml")
    inst = build_instance(problem, catalog)
    alone = solve_milp(build_milp(inst))
    assert not in_child
    PROGRESS.interrupter = object()
    heard = []
    PROGRESS.listener = lambda plan, bound: heard.append((plan, bound))
    try:
        there = solve_milp(build_milp(inst))
    finally:
        PROGRESS.listener = PROGRESS.interrupter = None
    assert in_child and there.status == alone.status == "optimal"
    assert math.isclose(there.objective, alone.objective, rel_tol=1e-6)
    assert any(plan is not None for plan, _ in heard)  # the log lines streamed back to the listener


def test_a_model_the_solver_refuses_is_no_plan_not_a_traceback(in_child, tmp_path):
    from ortools.math_opt.python import mathopt

    model = mathopt.Model()
    x = model.add_integer_variable(lb=0, ub=3, name="x")
    model.minimize(x)
    result = child.solve_in_child(model, dict(time_limit=5, gap=0.0, log=False, node_limit=None, ipm_lp=False),
                                  None, lambda lines: None, lambda: False)
    assert result.termination.reason == mathopt.TerminationReason.OPTIMAL and result.objective_value() == 0
    with pytest.raises(child.ChildFailed):
        child.solve_in_child(model, dict(time_limit=5, gap=0.0, log=False, node_limit=None, ipm_lp=False,
                                         unknown_setting=1), None, lambda lines: None, lambda: False)


def _children(marker: str) -> list[int]:
    """Live processes whose command line names `marker` (the test's temp folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "solver.engine.child" in cmd and marker in cmd:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts processes through /proc")
def test_ctrl_c_in_the_middle_of_a_solve_keeps_the_plan_so_far_and_leaves_no_child(tmp_path):
    """The signal comes when the whole model's solve (the second in a child, after the first plan's)
    shows its first plan: the command prints a verified plan and exits 130, and no solver process
    is left (before: the solve ran to its limit, the budget's end at the latest)."""
    env = {**os.environ, child.INTERRUPT_AT_PLAN: "2", "TMPDIR": str(tmp_path)}
    env.pop("GPUPLAN_INTERRUPT_AFTER_SOLVES", None)
    env.pop("GPUPLAN_IN_PROCESS", None)
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(STORAGE), "--json"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 130, run.stderr
    plan = json.loads(run.stdout)
    assert plan["status"] in ("feasible", "optimal") and plan["total_cost"] > 0
    assert "interrupted" in run.stderr
    assert _children(str(tmp_path)) == []
    assert not list(tmp_path.glob("gpuplan-solve-*"))  # its folder removed too

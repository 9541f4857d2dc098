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
import time
from pathlib import Path

import pytest

from solver.engine import child
from solver.engine.progress import PROGRESS
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.build import build_milp
from solver.milp.instance import build_instance
from tests.builders import ROOT

STOPPED = ROOT / "problems" / "bench" / "sweep-then-train-45d.yaml"
"""3,423 variables: past CHILD_VARIABLES and FIRST_PLAN_VARIABLES, so its solve is two solves in a
child (the first plan's, then the whole model's), and the whole model's runs seconds past its first
plan (stopped there at 290,802 CNY against the optimum 243,855). Issue 33's storage problem (11k
variables) did the same at twenty times the CPU (66 s, most of the suite's child time)."""

pytestmark = pytest.mark.child_process   # as a command solves by default (tests/conftest.py)


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
    # --deterministic: every step by nodes, none by the clock (the first plan's own limit is 10 s), so
    # the second solve in a child is the same on any load; without it the storage problem's run once
    # ended at load 15 with no signal sent (exit 0)
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(STOPPED), "--json", "--deterministic"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 130, run.stderr
    plan = json.loads(run.stdout)
    assert plan["status"] in ("feasible", "optimal") and plan["total_cost"] > 0
    assert "interrupted" in run.stderr
    assert _children(str(tmp_path)) == []
    assert not list(tmp_path.glob("gpuplan-solve-*"))  # its folder removed too


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts processes through /proc")
def test_a_child_whose_parent_was_killed_outright_ends_too(tmp_path):
    """SIGKILL gives the parent no chance to kill its solve: the child notices and ends, rather than
    run on alone. Its model is a market-split instance (Cornuéjols & Dawande 1998: four equations
    over 30 binaries, 10(m − 1) of them, the hard case), which branch and bound does not finish in hours, with no time limit: only
    the child's watch on its parent can end it."""
    script = tmp_path / "parent.py"
    script.write_text(f"""
import random, sys
sys.path.insert(0, {str(ROOT)!r})
from ortools.math_opt.python import mathopt
from solver.engine import child
rng = random.Random(7)
model = mathopt.Model()
x = [model.add_binary_variable() for _ in range(30)]
slack = []
for _ in range(4):
    a = [rng.randrange(100) for _ in x]
    up, down = model.add_variable(lb=0), model.add_variable(lb=0)
    slack += [up, down]
    model.add_linear_constraint(sum(c * v for c, v in zip(a, x)) + up - down == sum(a) // 2)
model.minimize(sum(slack))
def on_lines(lines):
    print("started", flush=True)
child.solve_in_child(model, dict(time_limit=None, gap=0.0, log=False, node_limit=None, ipm_lp=False),
                     None, on_lines, lambda: False)
""", encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    assert parent.stdout.readline().strip() == "started"  # the child is solving: its log came back
    assert _children(str(tmp_path))
    parent.kill()
    parent.wait()
    for _ in range(3000):  # the child looks twice a second; the wait is only a backstop, no time is asserted
        if not _children(str(tmp_path)):
            break
        time.sleep(0.1)
    assert _children(str(tmp_path)) == []


def test_a_budget_that_ends_while_the_model_is_handed_over_starts_no_solve(monkeypatch):
    """Issue 47 item 12: converting a 154k-variable model for the solver takes about 5 s; when the
    budget ends meanwhile, no solve starts after it (the plan given as a start stands, if any). A
    solve asked for after the stop (the deliberate repair of an unpacked plan) still runs."""
    from solver import clock
    from solver.engine import run as run_module
    from solver.milp.solution import NoSolution

    problem, catalog = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    inst = build_instance(problem, catalog)
    known = solve_milp(build_milp(inst))
    real = run_module.to_mathopt

    def slow_handover(model):
        clock.stop_command("budget")
        return real(model)
    monkeypatch.setattr(run_module, "to_mathopt", slow_handover)
    try:
        with pytest.raises(NoSolution) as caught:
            solve_milp(build_milp(inst), time_limit=30)
        assert not caught.value.proven
        clock.end_command()
        kept = solve_milp(build_milp(inst), time_limit=30, start=known)  # the start stands, no solve
        assert kept.objective == pytest.approx(known.objective) and kept.status == "feasible"
        monkeypatch.setattr(run_module, "to_mathopt", real)  # stopped before it began: it runs
        assert solve_milp(build_milp(inst), time_limit=30).status == "optimal"
    finally:
        clock.end_command()

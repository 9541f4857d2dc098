"""Never silent (issue 34): a command stopped by Ctrl-C prints what it knows and exits 130; an
infeasible problem's verdict comes before its search for relaxations.

The stop is injected, not timed: GPUPLAN_INTERRUPT_AFTER_SOLVES=k makes the process send itself
SIGINT when its (k+1)-th solve would start (solver.clock), so the same solves ran on every
machine and the same partial answer is printed. No assertion reads a clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from solver.clock import INTERRUPT_AFTER
from tests.builders import ROOT

SEED = "problems/seed-7b-200b-30d.yaml"
INFEASIBLE = "problems/infeasible/shunyi-racks-short.yaml"
DEBUG = "problems/debug-then-train.yaml"   # solves in seconds: long enough for progress lines


def gpuplan(*args: str, after: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop(INTERRUPT_AFTER, None)
    if after is not None:
        env[INTERRUPT_AFTER] = str(after)
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)


def test_why_stopped_prints_what_it_knows_and_exits_130():
    run = gpuplan("why", SEED, after=2)
    assert run.returncode == 130, run.stderr
    assert "optimum 307,180 CNY" in run.stdout and "not determined" in run.stdout, run.stdout
    assert "interrupted" in run.stderr and "Traceback" not in run.stderr
    # the stop came between two solves (GPUPLAN_INTERRUPT_AFTER_SOLVES): no "the running solve may go on"
    # note, which is said only while a solve runs in this process (solver.engine.child kills its own)
    assert "HiGHS does not stop mid-solve" not in run.stderr


def test_why_stopped_still_prints_one_json_object():
    run = gpuplan("why", SEED, "--json", after=2)
    assert run.returncode == 130, run.stderr
    data = json.loads(run.stdout)
    assert data["cost"] == pytest.approx(307180)
    undetermined = [a for j in data["jobs"] for a in j["alternatives"] if a.get("cost") is None]
    assert undetermined, data["jobs"]


@pytest.mark.parametrize("args, after", [(("negotiate", SEED), 3), (("frontier", SEED, "--points", "4"), 6)])
def test_other_analyses_stopped_print_their_partial_table(args, after):
    """Stopped once some rows are known (the frontier's first MILP comes after the LP bounds of
    its fabric choices, each a probe that counts as a solve): the partial table, exit 130."""
    run = gpuplan(*args, after=after)
    assert run.returncode == 130, run.stderr
    assert "307,180" in run.stdout, run.stdout
    assert "interrupted" in run.stderr and "Traceback" not in run.stderr


def test_negotiate_stopped_by_ctrl_c_says_so_not_that_the_budget_ran_out():
    run = gpuplan("negotiate", SEED, "--json", "--jobs", "1", after=3)
    assert run.returncode == 130, run.stderr
    data = json.loads(run.stdout)
    left = [o for o in data["offers"] if not o["analysed"]]
    assert left and all(o["reason"] == "not analysed: the run was stopped (Ctrl-C)" for o in left)
    assert "--max-seconds" not in json.dumps(data)


def test_unstopped_run_is_unchanged():
    """The hook off: the same command ends normally, exit 0 and nothing on stderr."""
    run = gpuplan("why", SEED)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "not determined" not in run.stdout


def test_infeasible_verdict_comes_first_then_the_relaxations_found_so_far():
    run = gpuplan("solve", INFEASIBLE, after=3)
    assert run.returncode == 130, run.stderr
    err = run.stderr
    assert err.index("infeasible:") < err.index("stopping:") < err.index("smallest relaxations")
    assert "needs 1 more day on every deadline" in err and "not determined" in err


def test_progress_lines_on_stderr_when_it_is_not_a_terminal():
    """A log or CI job sees the command working: progress lines on stderr (here every 0.01 s,
    the shortest allowed, on a problem that solves in seconds), none on stdout, whose JSON stays one object."""
    env = {**os.environ, "GPUPLAN_HEARTBEAT_SECONDS": "0.5"}   # the shortest allowed
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", DEBUG, "--json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["status"] == "optimal"
    assert any(line.startswith("solving debug-then-train") and " s" in line for line in run.stderr.splitlines()), \
        run.stderr[:500]


@pytest.mark.parametrize("name", ["GPUPLAN_MAX_SECONDS", "GPUPLAN_HEARTBEAT_SECONDS"])
def test_a_bad_seconds_setting_is_exit_2_for_the_command_and_help_still_works(name):
    env = {**os.environ, name: "soon"}
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", SEED], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 2 and name in run.stderr and "Traceback" not in run.stderr, run.stderr
    helped = subprocess.run([sys.executable, "-m", "solver.cli", "--help"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1800)
    assert helped.returncode == 0 and "Usage" in helped.stdout


ODD_SETTINGS = [("GPUPLAN_MAX_SECONDS", "1e20"), ("GPUPLAN_MAX_SECONDS", "1e308"), ("GPUPLAN_MAX_SECONDS", "0"),
                ("GPUPLAN_MAX_SECONDS", "-inf"), ("GPUPLAN_HEARTBEAT_SECONDS", "1e20"),
                ("GPUPLAN_HEARTBEAT_SECONDS", "1e-6"), ("GPUPLAN_INTERRUPT_AFTER_SOLVES", "abc"),
                ("GPUPLAN_INTERRUPT_AFTER_SOLVES", "-1")]


@pytest.mark.parametrize("command", [["solve", SEED], ["negotiate", SEED, "--jobs", "1"], ["frontier", SEED]],
                         ids=lambda c: c[0])
@pytest.mark.parametrize("name, value", ODD_SETTINGS)
def test_an_odd_setting_is_exit_2_naming_it_before_any_work(command, name, value):
    """Issue 47, item 14: 1e20 was an OverflowError traceback (a timer, a timedelta), 0 seconds of budget
    was taken though --max-seconds 0 is refused, a heartbeat of 1e-6 s wrote 9,260 lines in 4.6 s and
    `abc` solves was a ValueError at the first solve."""
    env = {**os.environ, name: value, "COLUMNS": "200"}
    run = subprocess.run([sys.executable, "-m", "solver.cli", *command], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 2 and name in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert "Exception" not in run.stderr and run.stdout == "", run.stdout


@pytest.mark.parametrize("name, value", [s for s in ODD_SETTINGS if s[0] != "GPUPLAN_MAX_SECONDS"])
def test_sweep_refuses_an_odd_setting_before_any_scenario(name, value):
    """sweep has no whole-run budget, but reads the other two: `abc` was an error on each of its rows."""
    env = {**os.environ, name: value, "COLUMNS": "200"}
    run = subprocess.run([sys.executable, "-m", "solver.cli", "sweep", "problems/hybrid-burst.yaml", "--grid",
                          "problems/sweeps/hybrid-burst-grid.yaml", "--json"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 2 and name in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("value", ["0", "0.5", "2592000"])
def test_the_heartbeat_takes_0_and_its_floor_and_the_longest(value, monkeypatch):
    from solver.commands.common import heartbeat_seconds

    monkeypatch.setenv("GPUPLAN_HEARTBEAT_SECONDS", value)
    assert heartbeat_seconds() == float(value)

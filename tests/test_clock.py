"""RunClock (solver.clock): each solve's limit is the per-solve one cut to what is left of
the whole run, and a solve that stops without an answer names the option to raise."""

from __future__ import annotations

import time

import pytest

from solver.clock import OutOfTime, RunClock
from tests.builders import ROOT


def test_no_budget_gives_the_per_solve_limit():
    clock = RunClock.starting_now(20.0, None)
    assert clock.left() is None
    assert clock.next_limit() == 20.0 and clock.more_time == "--time-limit"
    assert RunClock.starting_now(None, None).next_limit() is None


def test_the_budget_cuts_the_limit_and_says_so():
    clock = RunClock.starting_now(60.0, 10.0)
    limit = clock.next_limit()
    assert 9.0 < limit <= 10.0 and clock.more_time == "--max-seconds"
    roomy = RunClock.starting_now(5.0, 100.0)
    assert roomy.next_limit() == 5.0 and roomy.more_time == "--time-limit"
    unlimited = RunClock.starting_now(None, 30.0)
    assert unlimited.next_limit() <= 30.0 and unlimited.more_time == "--max-seconds"


def test_a_spent_budget_starts_no_solve():
    clock = RunClock(10.0, time.perf_counter() + 0.2, least=0.5)
    with pytest.raises(OutOfTime):
        clock.next_limit()
    assert RunClock(10.0, time.perf_counter() - 1, least=0.0).left() == 0.0


# --- the command's budget counts from its start ---------------------------------------------

def test_a_budget_since_start_counts_the_time_before_the_clock_was_made(monkeypatch):
    from solver.clock import COMMAND, left_of, start_command

    monkeypatch.setattr(COMMAND, "process", time.perf_counter() - 4.0)   # a start-up of 4 s
    start_command()
    assert 5.0 < left_of(10.0) <= 6.0
    assert left_of(None) is None and left_of(3.0) == 0.0
    assert 5.0 < RunClock.since_start(60.0, 10.0).next_limit() <= 6.0
    start_command()                       # the next command in this process starts now
    assert 9.0 < left_of(10.0) <= 10.0


def test_a_command_started_later_in_the_same_process_gets_its_whole_budget(monkeypatch):
    # a long-lived process (tests, a notebook): the package's import time is long past
    from pathlib import Path

    from typer.testing import CliRunner

    import solver
    from solver.cli import app

    monkeypatch.setattr(solver, "STARTED", time.perf_counter() - 100.0)
    problems = ROOT / "problems"
    result = CliRunner().invoke(app, ["solve", str(problems / "seed-7b-200b-30d.yaml"), "--max-seconds", "50"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", [
    ["solve", "debug-then-train.yaml"],
    ["solve", "debug-then-train.yaml", "--objective", "min_time"],
    ["why", "debug-then-train.yaml"],
    ["frontier", "debug-then-train.yaml", "--points", "3"],
])
def test_a_command_whose_start_up_spent_its_budget_starts_no_solve(monkeypatch, command):
    # --max-seconds 50 after a (pretended) 100-s start-up of the console script: nothing is
    # solved, and the message says which option to raise
    from pathlib import Path

    from typer.testing import CliRunner

    from solver.cli import app
    from solver.clock import COMMAND
    from solver.engine import solve as solve_module

    solves = []
    monkeypatch.setattr(solve_module, "solve_once", lambda *a, **k: solves.append(1))
    monkeypatch.setattr(COMMAND, "process", time.perf_counter() - 100.0)
    problems = ROOT / "problems"
    result = CliRunner().invoke(app, [command[0], str(problems / command[1]), *command[2:], "--max-seconds", "50"])
    assert solves == []
    assert result.exit_code == 1, result.output
    assert "--max-seconds" in result.output


def test_a_solver_call_stops_by_its_own_clock_at_the_budget_end(monkeypatch):
    """hard_stop: a call's time limit is cut to the command's budget end + the grace (HiGHS reads
    its own clock inside a simplex solve, where it does not look at the interrupt)."""
    from solver import clock

    monkeypatch.setattr(clock.time, "perf_counter", lambda: 1000.0)
    monkeypatch.setattr(clock.COMMAND, "stop_at", None)
    assert clock.hard_stop(None) is None and clock.hard_stop(7.0) == 7.0   # no budget: as given
    monkeypatch.setattr(clock.COMMAND, "stop_at", 1030.0)
    assert clock.hard_stop(None) == 30.0 + clock.HARD_STOP_GRACE
    assert clock.hard_stop(7.0) == 7.0 and clock.hard_stop(100.0) == 30.0 + clock.HARD_STOP_GRACE
    monkeypatch.setattr(clock.COMMAND, "stop_at", 990.0)   # spent: only the grace
    assert clock.hard_stop(None) == clock.HARD_STOP_GRACE

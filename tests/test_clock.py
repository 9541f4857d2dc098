"""RunClock (solver.clock): each solve's limit is the per-solve one cut to what is left of
the whole run, and a solve that stops without an answer names the option to raise."""

from __future__ import annotations

import time

import pytest

from solver.clock import OutOfTime, RunClock


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

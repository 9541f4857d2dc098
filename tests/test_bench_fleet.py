"""The synthetic generator's fleet mode (tests/bench/bench_milp.py --fleet): staggered windows
and shares scaled to the stock, so a 20-job instance is not oversold by construction (before
the staggering every target-size fleet seed was proven infeasible)."""

from __future__ import annotations

import sys

import pytest

from tests.builders import ROOT, job

sys.path.insert(0, str(ROOT / "tests" / "bench"))
from bench_milp import FLEET_LOAD, FLEET_OVERLAP, SIZES, _fleet_shares, _staggered  # noqa: E402


def test_fleet_windows_at_target_size_overlap_only_a_few_jobs():
    size = SIZES["target"]
    jobs = [_staggered(job(f"j{i}", days=1, deadline_days=size.periods), i, size) for i in range(size.jobs)]
    assert all(0 <= j.start_day < j.deadline_days <= size.periods and j.deadline_days - j.start_day >= 5
               for j in jobs)
    busiest = max(sum(j.start_day <= day < j.deadline_days for j in jobs) for day in range(size.periods))
    assert busiest <= FLEET_OVERLAP + 1
    assert jobs[0].start_day == 0 and jobs[-1].deadline_days == size.periods  # spread over the horizon


def test_fleet_shares_are_scaled_where_overlapping_jobs_ask_for_more_than_the_load():
    size = SIZES["target"]
    jobs = [_staggered(job(f"j{i}", days=1, deadline_days=size.periods), i, size) for i in range(size.jobs)]
    drawn = [0.2 + 0.4 * ((7 * i) % 11) / 10 for i in range(size.jobs)]
    scaled = _fleet_shares(jobs, drawn)
    for j, d, s in zip(jobs, drawn, scaled):
        together = sum(dk for k, dk in zip(jobs, drawn)
                       if k.start_day < j.deadline_days and j.start_day < k.deadline_days)
        assert s == pytest.approx(d if together <= FLEET_LOAD else d * FLEET_LOAD / together)
    assert any(s < d for s, d in zip(scaled, drawn))

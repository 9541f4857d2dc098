"""The published runs' spread as intervals, planning factors and probabilities (solver.estimate.spread)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.estimate.spread import MEASURED_P90, PUBLISHED, Z90, Spread, fit, job_spread, planned_factor

spreads = st.builds(Spread, mu=st.floats(-0.5, 0.5), sigma=st.floats(0.01, 1.0))


@given(spreads, st.floats(1, 1e9))
def test_the_interval_is_ordered(spread, hours):
    low, high = spread.gpu_hours_interval(hours)
    assert 0 < low < high


@given(st.floats(1, 1e9))
def test_the_shipped_interval_contains_the_point_estimate(hours):
    low, high = PUBLISHED.gpu_hours_interval(hours)
    assert low <= hours <= high
    low, high = Spread.measured().gpu_hours_interval(hours)
    assert low <= hours <= high


def test_interval_worked_by_hand():
    s = Spread(mu=0.0, sigma=0.5)
    low, high = s.gpu_hours_interval(1000)
    assert (low, high) == pytest.approx((1000 / math.exp(0.5 * Z90), 1000 * math.exp(0.5 * Z90)))


@given(spreads, st.floats(0.01, 0.98), st.floats(0.001, 0.01))
def test_higher_confidence_never_plans_faster(spread, c, step):
    assert spread.throughput_factor(c + step) <= spread.throughput_factor(c)
    assert spread.throughput_factor(c) <= 1.0


@given(spreads, st.floats(0.05, 2.0), st.floats(0.001, 0.5))
def test_the_probability_rises_with_the_margin(spread, fraction, step):
    # a lower fraction of the estimate suffices: more headroom, likelier to meet the deadline
    assert spread.meets_probability(fraction - step * fraction) >= spread.meets_probability(fraction)


@given(spreads, st.floats(0.02, 0.98))
def test_planning_at_a_confidence_meets_it(spread, c):
    factor = spread.ratio_at(1 - c)
    assert spread.meets_probability(factor) == pytest.approx(c, abs=1e-9)
    assert spread.quantile_of(factor) == pytest.approx(1 - c, abs=1e-9)


def test_the_measured_spread_is_narrower_and_centred():
    m = Spread.measured()
    assert m.source == "measured" and PUBLISHED.source == "published"
    assert m.ratio_at(0.9) == pytest.approx(1 + MEASURED_P90)
    assert m.sigma < PUBLISHED.sigma
    assert job_spread(True) == m and job_spread(False) == PUBLISHED


def test_planned_factor():
    assert planned_factor(None) == 1.0
    assert planned_factor(0.9) == pytest.approx(PUBLISHED.throughput_factor(0.9))
    assert planned_factor(0.9) < planned_factor(0.5) <= 1.0
    assert planned_factor(0.9, measured=True) > planned_factor(0.9)   # a measurement is surer
    with pytest.raises(ValueError):
        planned_factor(1.0)


def test_fit():
    assert fit([0.0, 0.2]) == pytest.approx((0.1, math.sqrt(0.02)))
    with pytest.raises(ValueError):
        fit([0.1])

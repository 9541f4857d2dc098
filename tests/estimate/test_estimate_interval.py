"""`gpuplan estimate` gives the GPU-hours' P10–P90 from the published runs (issue 48, item 3)."""

from __future__ import annotations

import json

import pytest

from solver.estimate.spread import PUBLISHED
from tests.builders import run_cli

ARGS = ("estimate", "--params", "7e9", "--tokens", "200e9", "--mfu", "0.4")


def test_json_carries_an_ordered_interval_around_the_estimate():
    data = json.loads(run_cli(*ARGS, "--json").stdout)
    low, point, high = data["gpu_hours_p10"], data["gpu_hours"], data["gpu_hours_p90"]
    assert low < point < high
    assert (low, high) == pytest.approx(PUBLISHED.gpu_hours_interval(point))
    assert round(point) == 18_697 and (round(low), round(high)) == (10_736, 28_375)   # as docs/COMMANDS.md says


def test_the_table_shows_it():
    text = run_cli(*ARGS).stdout
    assert "GPU-hours P10–P90 (published runs)" in text and "10,736–28,375" in text


def test_a_model_that_fits_nowhere_still_has_its_interval():
    done = run_cli("estimate", "--params", "1e12", "--tokens", "1e9", "--gpu", "RTX4090-24G", "--gpus-per-node", "1",
                   "--json")
    data = json.loads(done.stdout)
    assert data["gpu_hours_p10"] < data["gpu_hours"] < data["gpu_hours_p90"]

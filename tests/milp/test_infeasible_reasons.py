"""An infeasible problem says what stands in the way, with numbers, and exits 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.errors import Infeasible
from tests.builders import HANG_SECONDS, ROOT, catalog, gpu_day_flops, job, offer, problem



def test_capacity_reason_names_the_fabric_that_comes_closest_and_its_numbers():
    # two vendors, 1 and 2 one-GPU nodes, 3 days: at most 3 and 6 GPU-days; 10 are needed
    cat = catalog(offer("a", vendor="vA", max_nodes=1), offer("b", vendor="vB", max_nodes=2))
    prob = problem(job("j", flops=10 * gpu_day_flops(), deadline_days=3), horizon_days=3, redundancy=0.0)
    with pytest.raises(Infeasible) as err:
        solve_problem(prob, cat, backend="highs")
    (line,) = [r for r in err.value.reasons if "capacity" in r]
    assert "vB@" in line and "by day 3" in line
    done, needed = [float(x.replace(",", "")) for x in line.split("at most ")[1].split(" EFLOP")[0].split(" of the ")]
    assert done == pytest.approx(6 * gpu_day_flops() / 1e18, abs=0.5)  # shown to the nearest EFLOP
    assert needed == pytest.approx(10 * gpu_day_flops() / 1e18, abs=0.5)  # shown to the nearest EFLOP


def test_lead_time_reason_names_an_offer_and_cli_exits_1(tmp_path: Path):
    out = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(ROOT / "tests/data/infeasible-lead-time.yaml")],
                         capture_output=True, text=True, timeout=HANG_SECONDS)
    assert out.returncode == 1
    assert "lead_time" in out.stderr and "monthly" in out.stderr and "Traceback" not in out.stderr


def test_a_window_holding_no_whole_period_says_so_not_lead_time():
    # 200-day horizon: 5-day periods. A job open on days 3–9 holds no whole period (5–10
    # ends after its deadline), although its offer has no lead time at all.
    cat = catalog(offer("a"))
    jobs = [job("long", flops=gpu_day_flops(), deadline_days=200), job("short", flops=gpu_day_flops(),
                                                                   start_day=3, deadline_days=9)]
    with pytest.raises(Infeasible) as err:
        solve_problem(problem(*jobs, horizon_days=200, redundancy=0.0), cat, backend="highs")
    (line,) = [r for r in err.value.reasons if "short" in r]
    assert "window: days 3–9 hold no whole 5-day period" in line and "lead_time" not in line

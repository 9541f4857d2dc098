"""A problem too large for its budget says so (issue 47 item 18): 5,000 unrestricted offers ended in a
bare "no plan", exit 1. The budget ends before the first solve can start (--max-seconds 1e-6: always
past by then, on any machine), so no assertion depends on speed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.bench.bench_milp import Size, generate
from tests.builders import HANG_SECONDS, ROOT, write_problem


def _solve(problem) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(problem), "--max-seconds", "0.000001"],
                          capture_output=True, text=True, cwd=ROOT, timeout=HANG_SECONDS, env=None)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """249 offers for 6 jobs over 60 days: about 99,000 variables, past BIG_MODEL_VARIABLES."""
    prob, cat = generate(Size("many-offers", 400, 60, 6), seed=3)
    return write_problem(tmp_path_factory.mktemp("big"), prob, cat)


def test_a_big_problem_whose_budget_ends_first_is_told_to_restrict_its_offers(big):
    run = _solve(big)
    assert run.returncode == 1, run.stderr
    err = " ".join(run.stderr.split())
    assert "no plan:" in err and "too large to solve in the run's time: 249 offers for 6 jobs" in err, err
    assert "`restrict:`" in err and "raise --max-seconds" in err and "Traceback" not in err


def test_a_small_problem_is_not_called_too_large():
    run = _solve(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    assert run.returncode == 1 and "raise --max-seconds" in run.stderr, run.stderr
    assert "too large" not in run.stderr and "restrict" not in run.stderr

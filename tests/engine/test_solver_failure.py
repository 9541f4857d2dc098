"""HiGHS failing on a model (an error of its own, not ours) is "no plan from this solve", never a
traceback: a fault hunt on a user-like problem (generator seed 23, `solve --objective min_time`)
met `HighsStatus: kError [INTERNAL]` on the restricted model of the big-model path, and OR-Tools
9.15 then failed converting the status (AttributeError: no `canonical_code`). The failure is
injected here: MathOpt's solve raises what it raised there."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from solver.api import build_milp, build_instance, solve_milp
from solver.cli import app
from solver.engine.backends import solver_failed
from solver.milp.solution import NoSolution
from tests.builders import ROOT, catalog, hourly, job, problem


class StatusNotOk(Exception):
    """The name of the pybind11 status error MathOpt raises."""


def _highs_fails(*args, **kwargs):
    try:
        raise StatusNotOk("HighsStatus: kError [INTERNAL]")
    except StatusNotOk:
        raise AttributeError("'StatusNotOk' object has no attribute 'canonical_code'")  # as OR-Tools 9.15 does


@pytest.fixture
def failing_highs(monkeypatch):
    from ortools.math_opt.python import mathopt
    monkeypatch.setattr(mathopt, "solve", _highs_fails)


def test_a_highs_error_is_no_plan_not_proven(failing_highs):
    prob = problem(job(deadline_days=10, days=40), horizon_days=10)
    milp = build_milp(build_instance(prob, catalog(hourly("A", 4.0))))
    with pytest.raises(NoSolution) as caught:
        solve_milp(milp, backend="highs")
    assert not caught.value.proven and "kError [INTERNAL]" in str(caught.value)


def test_the_cli_says_so_without_a_traceback(failing_highs):
    result = CliRunner().invoke(app, ["solve", str(ROOT / "problems" / "seed-7b-200b-30d.yaml")])
    assert result.exit_code == 1, result.output
    assert "HiGHS stopped with an error of its own" in result.output and "Traceback" not in result.output


def test_our_own_errors_are_not_taken_for_the_solvers():
    assert not solver_failed(AttributeError("'Milp' object has no attribute 'x'"))
    assert not solver_failed(ValueError("bad bound"))

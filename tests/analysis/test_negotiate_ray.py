"""negotiate on Ray actors (`--ray ADDRESS`, issue 34 item 1): the same answer as this process,
and one clear message (exit 2, naming --ray) when Ray is not installed.

Ray is the `ray` extra, not `dev`: the actors' test is skipped without it, except under CI
(.ci/run installs it, and there it must run)."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from solver.analysis.negotiate import negotiate
from solver.analysis.ray_actors import ray_session
from solver.cli import app
from solver.errors import ProblemError
from solver.load import load_problem
from tests.builders import ROOT
from tests.extras import need_ray

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def _answer(result) -> dict:
    out = result.to_dict()
    out.pop("seconds")
    return out


def test_ray_actors_give_the_answer_of_this_process():
    need_ray()
    problem, catalog = load_problem(SEED)
    here = negotiate(problem, catalog, jobs=1)
    on_ray = negotiate(problem, catalog, jobs=2, ray="local")   # two actors on a local Ray, each one build
    assert on_ray.jobs == 2                  # the offers did run on the actors
    assert _answer(on_ray) == _answer(here)
    assert here.solves > 3 and any(t.limit_price is not None for t in here.offers)


def test_without_ray_the_option_is_refused_by_name(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)   # `import ray` fails as when it is not installed
    with pytest.raises(ProblemError) as caught:
        with ray_session("local", 2, "--ray"):
            pass
    assert caught.value.key == "--ray" and "pip install" in caught.value.fix
    result = CliRunner().invoke(app, ["negotiate", str(SEED), "--ray", "local", "--json"])
    assert result.exit_code == 2, result.output
    assert "--ray" in result.output and "Ray is not installed" in result.output and "Traceback" not in result.output
    assert "walk-away" not in result.output    # refused before anything was solved

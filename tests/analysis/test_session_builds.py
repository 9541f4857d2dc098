"""The frontiers and the min-time objective build one Instance and one model (issue 34): the
Session (solver/session.py) asks every solve, LP bound and feasibility probe of the probe
engine's model (solver/probes/), with no second, relaxed model beside it.

Counted below the api's door: every `Instance` made by solver.milp.instance.build_instance and
every `Milp` made by solver.milp.build.build_milp, whoever calls them (the Session's relaxed
model used to be built through solver.milp.build directly, where a count at solver.api missed it).
"""

from __future__ import annotations

import json

import pytest
from tests.builders import ROOT
from typer.testing import CliRunner

import solver.milp.build as build
import solver.milp.instance as instance
from solver.cli import app

SEED = str(ROOT / "problems" / "seed-7b-200b-30d.yaml")


@pytest.fixture
def built(monkeypatch):
    counts = {"instance": 0, "model": 0, "relaxed": 0}
    Instance, Milp = instance.Instance, build.Milp

    def an_instance(*a, **k):
        counts["instance"] += 1
        return Instance(*a, **k)

    def a_model(*a, **k):
        counts["model"] += 1
        counts["relaxed"] += bool(k.get("relaxed"))
        return Milp(*a, **k)
    monkeypatch.setattr(instance, "Instance", an_instance)
    monkeypatch.setattr(build, "Milp", a_model)
    return counts


@pytest.mark.parametrize("args", [
    ["frontier", SEED, "--points", "3", "--json"],
    ["frontier", SEED, "--x", "budget", "--points", "3", "--json"],
    ["solve", SEED, "--objective", "min_time", "--json"],
], ids=["frontier deadline", "frontier budget", "solve --objective min_time"])
def test_one_instance_and_one_model(args, built):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert built == {"instance": 1, "model": 1, "relaxed": 0}
    if args[0] == "frontier":  # the seed has a job that chooses its fabric: LP bounds were asked
        assert answer["lp_solves"] > 0 and answer["points"]

"""No NaN or infinity reaches `--json` (issue 47, item 17).

`negotiate problems/debug-then-train.yaml --jobs 1 --json` at the 60-s default printed
`"target_cost_low": -Infinity`: Python's json writes non-finite floats as NaN/Infinity, which no
strict JSON reader accepts. Every command's --json goes through one writer
(solver.report.json_out.print_json → solver.files.json_text): non-finite numbers become null (an
interval's open end: nothing proven on that side), and allow_nan=False guards the rest.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from solver import files
from solver.cli import app
from tests.builders import DATA, ROOT

SEED = str(ROOT / "problems" / "seed-7b-200b-30d.yaml")


def strict(text: str):
    """Parse as a strict JSON reader does: NaN, Infinity and -Infinity are errors."""
    def refuse(word: str):
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


def test_json_text_writes_open_interval_ends_as_null():
    data = {"low": -math.inf, "high": math.inf, "odd": math.nan, "rows": [1.5, (-math.inf, 2)], "n": 3}
    assert strict(files.json_text(data)) == {"low": None, "high": None, "odd": None, "rows": [1.5, [None, 2]], "n": 3}


def test_negotiate_json_with_an_unproven_low_end_is_strict_json(monkeypatch):
    """The issue's case, deterministic: the analysis returns an offer whose target cost has no proven
    low end (-inf, what a solve cut by the budget before its first bound leaves)."""
    import solver.analysis.negotiate as negotiation
    from solver.analysis.negotiate_offers import OfferTerms

    def analysed(*args, **kwargs):
        offer = OfferTerms(offer="o1", vendor="v", datacenter="d", gpu="H800", mode="hourly", price=10.0,
                           price_unit="gpu_hour", currency="CNY", status="not_in_plan", limit_kind="break_even",
                           limit_price=8.0, limit_low=8.0, limit_high=math.inf, target_price=8.0,
                           target_cost=9253.0, target_cost_low=-math.inf, converged=False)
        return negotiation.Negotiation(problem="p", currency="CNY", base_cost=10000.0, base_status="feasible",
                                       margin=0.1, gap=0.0, vendors=None, offers=[offer], levers=[], solves=3,
                                       seconds=1.0, unproven=1, base_low=-math.inf)

    monkeypatch.setattr(negotiation, "negotiate", analysed)
    result = CliRunner().invoke(app, ["negotiate", SEED, "--jobs", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = strict(result.stdout)
    assert data["offers"][0]["target_cost_low"] is None and data["offers"][0]["limit_high"] is None
    assert data["base_low"] is None and data["offers"][0]["target_cost"] == 9253.0


COMMANDS = {   # each command that prints JSON, as quick as it can be asked
    "solve": ["solve", SEED, "--why", "--baselines", "--json"],
    "why": ["why", SEED, "--json"],
    "whatif": ["whatif", SEED, "--set", "budget=400000", "--json"],
    "frontier": ["frontier", SEED, "--points", "3", "--json"],
    "sweep": ["sweep", str(ROOT / "problems" / "hybrid-burst.yaml"),
              "--grid", str(ROOT / "problems" / "sweeps" / "hybrid-burst-grid.yaml"), "--json"],
    "estimate": ["estimate", "--params", "7e9", "--tokens", "200e9", "--json"],
    "schema": ["schema", "problem"],   # JSON is its only output
    "split-bill": ["split-bill", "--sacct", str(DATA / "sacct-shared-rack.txt"), "--rack-cost", "48000",
                   "--power-cost", "13572.37", "--bandwidth-cost", "3000.01", "--json"],
    "calibrate": ["calibrate", "--gpu", "A100-80G", "--log", str(DATA / "train-log.txt"),
                  "--global-batch-tokens", str(64 * 4096), "--gpus", "8", "--params", "7e9", "--json"],
}


@pytest.mark.parametrize("args", list(COMMANDS.values()), ids=list(COMMANDS))
def test_every_command_s_json_is_strict_json(args):
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    strict(result.stdout)


def test_every_command_with_json_prints_it_through_the_one_writer():
    """A command that printed its own json.dumps would bypass the guard: none does."""
    for module in sorted((ROOT / "solver" / "commands").glob("*.py")):
        text = module.read_text(encoding="utf-8")
        assert not re.search(r"json\.dumps?\(", text), f"{module.name}: print --json through print_json"
        if "as_json" in text:
            assert "print_json(" in text, f"{module.name}: --json not printed by print_json"

"""No output names the project's internal sources ("seed 000", "seed 002's 10% baseline"): a user
reads the rule itself and where it is published (issue 24, item 9).

What is searched, without solving anything new: the bundled catalog's CSV tables; every recorded
--json answer in tests/data/golden/ (tests/test_golden_outputs.py keeps them equal to what the
CLI prints); each bundled problem's recorded plan drawn as the terminal tables, the HTML report
and the spreadsheet tables; and the terminal output of estimate, calibrate, split-bill, catalog
show and every command's --help.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from tests.builders import ROOT
from typer.testing import CliRunner

from solver.cli import app
from solver.load import load_problem
from solver.model.plan import Plan
from solver.report.html import render_html
from solver.report.tables import plan_tables
from solver.report.terminal import render_plan

GOLDEN = ROOT / "tests" / "data" / "golden"
INTERNAL = re.compile(r"seed\s*0\d\d", re.IGNORECASE)


def internal(text: str) -> list[str]:
    return [text[max(0, m.start() - 40):m.end() + 40] for m in INTERNAL.finditer(text)]


def test_the_pattern_catches_what_it_is_for():
    assert internal("within seed 002's 10% baseline") and internal("Seed 000 rule of thumb")
    assert not internal("seed-7b-200b-30d") and not internal("random seeds 0-7")


@pytest.mark.parametrize("name", ["gpus.csv", "datacenters.csv", "offers.csv", "README.md"])
def test_catalog_files_name_no_internal_source(name):
    # the README ships with the catalog inside the package: a user reads it too
    text = (ROOT / "catalogs" / "beijing-sample" / name).read_text(encoding="utf-8")
    assert not internal(text)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_json_answers_name_no_internal_source(path):
    assert not internal(path.read_text(encoding="utf-8"))


SOLVED = sorted(GOLDEN.glob("solve-*.json"))


@pytest.mark.parametrize("path", [p for p in SOLVED if "infeasible" not in p.stem], ids=lambda p: p.stem)
def test_plan_as_terminal_html_and_tables_names_no_internal_source(path):
    name = path.stem.removeprefix("solve-")
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    plan = Plan.model_validate({**json.loads(path.read_text(encoding="utf-8"))["output"], "solve_seconds": 0.0})
    buf = io.StringIO()
    render_plan(plan, Console(file=buf, width=100, color_system=None))
    assert not internal(buf.getvalue())
    assert not internal(render_html(plan, prob, cat))
    for sheet, frame in plan_tables(plan, prob, cat).items():
        assert not internal(frame.to_csv(index=False)), sheet


COMMANDS = {
    "estimate": ["estimate", "--params", "7e9", "--tokens", "200e9"],
    "calibrate": ["calibrate", "--gpu", "A100-80G", "--params", "7e9", "--log", "tests/data/train-log.txt", "--global-batch-tokens",
                  "262144", "--gpus", "8", "--nvidia-smi", "tests/data/nvidia-smi.csv"],
    "split-bill": ["split-bill", "--sacct", "tests/data/sacct-shared-rack.txt", "--rack-cost", "48000",
                   "--power-cost", "13572.37", "--bandwidth-cost", "3000.01"],
    "split-bill-json": ["split-bill", "--sacct", "tests/data/sacct-shared-rack.txt", "--rack-cost", "48000",
                        "--json"],
    "catalog-show": ["catalog", "show"],
    "catalog-gpus": ["catalog", "show", "--table", "gpus"],
    "catalog-dcs": ["catalog", "show", "--table", "datacenters"],
}
HELP = ["solve", "estimate", "catalog show", "whatif", "sweep", "frontier", "negotiate", "why", "report",
        "schema", "calibrate", "split-bill"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_output_names_no_internal_source(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    out = CliRunner().invoke(app, COMMANDS[name])
    assert out.exit_code == 0, out.output
    assert not internal(out.output)


@pytest.mark.parametrize("command", HELP)
def test_help_names_no_internal_source(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = CliRunner().invoke(app, [*command.split(), "--help"])
    assert out.exit_code == 0, out.output
    assert not internal(out.output)

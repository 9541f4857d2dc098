"""No output names the project's internal sources ("seed 000", "seed 002's 10% baseline"): a user
reads the rule itself and where it is published (issue 24, item 9). Also: a plan that needs two
software stacks (CUDA and CANN) says so.

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
from pathlib import Path

import pytest
from families import catalog, dc, gpu, job, monthly, problem, solve
from rich.console import Console
from typer.testing import CliRunner

from solver.cli import app
from solver.load import load_problem
from solver.milp.stacks import stack_warnings
from solver.model.plan import Plan
from solver.model.problem import Restrict
from solver.report.html import render_html
from solver.report.tables import plan_tables
from solver.report.terminal import render_plan

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden"
INTERNAL = re.compile(r"seed\s*0\d\d", re.IGNORECASE)


def internal(text: str) -> list[str]:
    return [text[max(0, m.start() - 40):m.end() + 40] for m in INTERNAL.finditer(text)]


def test_the_pattern_catches_what_it_is_for():
    assert internal("within seed 002's 10% baseline") and internal("Seed 000 rule of thumb")
    assert not internal("seed-7b-200b-30d") and not internal("random seeds 0-7")


@pytest.mark.parametrize("table", ["gpus", "datacenters", "offers"])
def test_catalog_tables_name_no_internal_source(table):
    text = (ROOT / "catalogs" / "beijing-sample" / f"{table}.csv").read_text(encoding="utf-8")
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


# ----- software stacks ---------------------------------------------------------------------------------
def _two_stacks():
    """Two jobs, one kept on CUDA cards, one on CANN cards: the plan needs both stacks."""
    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(dc("D1"),))
    prob = problem(job("a", days=8, deadline=30, restrict=Restrict(gpus=["G80"])),
                   job("b", days=8, deadline=30, restrict=Restrict(gpus=["N80"])), horizon=30)
    return prob, cat


def test_a_plan_on_two_stacks_says_so():
    prob, cat = _two_stacks()
    plan = solve(prob, cat)
    mixed = [w for w in plan.warnings if "software stacks" in w]
    assert len(mixed) == 1 and "G80 (CUDA)" in mixed[0] and "N80 (CANN)" in mixed[0], plan.warnings


def test_a_job_on_two_stacks_is_named_and_one_stack_says_nothing():
    prob, cat = _two_stacks()
    plan = solve(prob, cat)
    split = plan.model_copy(update={"jobs": [j.model_copy(update={"gpu_types": ["G80", "N80"]}) if j.name == "a"
                                             else j for j in plan.jobs]})
    words = stack_warnings(split, cat)
    assert len(words) == 1 and words[0].startswith("job a runs on N80 (CANN) and G80 (CUDA)")
    one = plan.model_copy(update={"jobs": [j for j in plan.jobs if j.name == "a"]})
    assert stack_warnings(one, cat) == []

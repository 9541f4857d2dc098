"""Names are user text: brackets, dots, commas, quotes and `=` in a problem, job, offer or
vendor name must neither crash the terminal output (rich reads `[/x]` as markup and raised
MarkupError) nor break the edit language that why, negotiate and whatif write paths in
(`offers.NAME.max_nodes+=1` with NAME holding `[` did not parse: negotiate exited 2).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.analysis.edits import apply_edits, parse_edit, row_path
from solver.load import load_problem
from tests.builders import HANG_SECONDS, ROOT

SAMPLE = ROOT / "catalogs" / "beijing-sample"
PROBLEM = "[red]demo[/red] [/x]"
JOB = "pretrain-7b[/oops], \"v2\"=1"
OFFER = "vnet-yz-a100-80-8x-monthly[/v]"        # the seed problem's optimum rents it
VENDOR = "21vianet[/w]"


@pytest.fixture(scope="module")
def odd(tmp_path_factory) -> Path:
    """The seed problem with markup-like names everywhere; returns the problem file."""
    folder = tmp_path_factory.mktemp("odd")
    catalog = folder / "cat"
    catalog.mkdir()
    for table in ("gpus.csv", "datacenters.csv"):
        (catalog / table).write_bytes((SAMPLE / table).read_bytes())
    with open(SAMPLE / "offers.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["offer"] = OFFER if row["offer"] == "vnet-yz-a100-80-8x-monthly" else row["offer"]
        row["vendor"] = VENDOR if row["vendor"] == "21vianet" else row["vendor"]
    with open(catalog / "offers.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    text = (ROOT / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        if line.startswith("name:"):
            line = f"name: '{PROBLEM}'"
        elif line.startswith("catalog:"):
            line = f"catalog: {catalog.as_posix()}"
        elif line.strip().startswith("- name:"):
            line = line.split("- name:")[0] + f"- name: '{JOB}'"
        lines.append(line)
    problem = folder / "p.yaml"
    problem.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return problem


def gpuplan(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_SECONDS, cwd=ROOT, env=env)


def test_the_fixture_holds_the_odd_names(odd):
    prob, cat = load_problem(odd)
    assert prob.name == PROBLEM and prob.jobs[0].name == JOB
    assert OFFER in cat.offers and cat.offers[OFFER].vendor == VENDOR


@pytest.mark.parametrize("args, shown", [
    (("solve", "--baselines"), [PROBLEM, JOB, VENDOR, OFFER]),
    (("why",), [JOB, VENDOR]),
    (("frontier", "--max-seconds", "60"), [PROBLEM]),
    (("negotiate",), [OFFER]),
], ids=["solve", "why", "frontier", "negotiate"])
def test_commands_print_odd_names_as_written(odd, args, shown):
    run = gpuplan(args[0], odd, *args[1:])
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    for name in shown:
        assert name[:15] in run.stdout, name      # narrow columns may cut a long name with …


def test_why_relaxes_a_job_whose_name_holds_brackets(odd):
    """why's deadline lever writes jobs[name="..."]: it must apply, not end as 'matches no row'."""
    run = gpuplan("why", odd)
    assert "matches no row" not in run.stdout + run.stderr
    assert "+1 day on" in run.stdout


def test_whatif_edits_rows_by_quoted_names(odd):
    run = gpuplan("whatif", odd, "--set", f"{row_path('offers', 'offer', OFFER)}.price*=0.9",
                  "--set", f"{row_path('jobs', 'name', JOB)}.deadline_days=28")
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"offers.{OFFER}.price" in run.stdout and "day 28" in run.stdout


def test_negotiate_levers_apply_to_odd_offer_names(odd):
    run = gpuplan("negotiate", odd, "--json")
    assert run.returncode == 0, run.stderr[-2000:]
    assert OFFER in run.stdout


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab.[]=,\"'\\ /*+x"), min_size=1, max_size=12))
def test_row_path_selects_exactly_that_row(name):
    """row_path writes any name so that the parsed edit selects that row and no other."""
    if not name.strip():
        return
    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    data = prob.model_dump(mode="python", by_alias=True)
    data["jobs"] = [{**data["jobs"][0], "name": name}, {**data["jobs"][0], "name": name + "x"}]
    from solver.model.problem import Problem
    two = Problem.model_validate(data)
    edit = parse_edit(f"{row_path('jobs', 'name', name)}.tokens*=2")
    new, _, changes = apply_edits(two, cat, [edit])
    assert len(changes) == 1
    assert new.jobs[0].tokens == 2 * two.jobs[0].tokens and new.jobs[1].tokens == two.jobs[1].tokens


@pytest.mark.parametrize("text", ['jobs[name="abc].tokens=1', "offers[offer=x.price=1"])
def test_unbalanced_paths_are_refused_with_the_fix(text):
    from solver.errors import ProblemError
    with pytest.raises(ProblemError, match="unbalanced|not an edit"):
        parse_edit(text)


def test_catalog_validate_prints_a_folder_name_holding_brackets(odd):
    """A path is user text too: `catalog validate` read `[bold]` in it as markup and dropped it."""
    folder = odd.parent / "[bold]quotes"
    folder.mkdir()
    for table in ("gpus.csv", "datacenters.csv", "offers.csv"):
        (folder / table).write_bytes((odd.parent / "cat" / table).read_bytes())
    run = gpuplan("catalog", "validate", folder)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "[bold]quotes: ok" in run.stdout


def test_split_bill_prints_odd_tenant_names_as_written(tmp_path):
    sacct = tmp_path / "[bold]sacct.txt"
    text = (ROOT / "tests" / "data" / "sacct-shared-rack.txt").read_text(encoding="utf-8")
    sacct.write_text(text.replace("qingyun", "qing[/y]yun").replace("mobai", "[bold]mobai"), encoding="utf-8")
    run = gpuplan("split-bill", "--sacct", sacct, "--rack-cost", "48000")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "qing[/y]yun" in run.stdout and "[bold]mobai" in run.stdout and "[bold]sacct.txt" in run.stdout


def test_catalog_template_and_import_print_odd_paths_as_written(tmp_path):
    sheet = tmp_path / "[red]quotes.csv"
    target = tmp_path / "[bold]my-catalog"
    target.mkdir()
    for table in ("gpus.csv", "datacenters.csv"):
        (target / table).write_bytes((SAMPLE / table).read_bytes())
    written = gpuplan("catalog", "template", sheet)
    assert written.returncode == 0, written.stderr[-2000:]
    assert "[red]quotes.csv" in written.stdout
    imported = gpuplan("catalog", "import", sheet, "--into", target)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert "[bold]my-catalog" in imported.stdout + imported.stderr

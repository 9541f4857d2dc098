"""Names are third-party text (vendor quote sheets, `catalog import`): they never become a live
spreadsheet formula, and no escape sequence in them reaches the terminal.

Items 2 and 7 of issue 35, each reproduced: a job, vendor or offer named `=HYPERLINK(…)` or
`=cmd|' /C calc'!A0` was a formula cell in --xlsx, `catalog template --prefill` and
`negotiate --export-vendor`, and --csv wrote cells starting =, +, -, @ raw; `ESC[2J` and
`ESC]0;…` in a name reached the terminal in `solve`, `why` and `catalog show`.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import HANG_SECONDS, ROOT

from solver.files import FORMULA_START

SAMPLE = ROOT / "catalogs" / "beijing-sample"
JOB = "=cmd|' /C calc'!A0"
OFFER = "@SUM(1+1)*cmd|' /C calc'!A0"             # the seed problem's optimum rents it
VENDOR = '=HYPERLINK("http://evil.example","click")'
HOSTILE = {JOB, OFFER, VENDOR}


def gpuplan(*args, cwd=ROOT, lang: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "300", **({"GPUPLAN_LANG": lang} if lang else {})}
    return subprocess.run([sys.executable, "-m", "solver.cli", "--quiet", *map(str, args)], capture_output=True,
                          text=True, timeout=HANG_SECONDS, cwd=cwd, env=env)


def copy_catalog(folder: Path, rename) -> Path:
    """beijing-sample with offers.csv rows passed through `rename(row)`."""
    folder.mkdir()
    for table in ("gpus.csv", "datacenters.csv"):
        (folder / table).write_bytes((SAMPLE / table).read_bytes())
    with open(SAMPLE / "offers.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with open(folder / "offers.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rename(dict(row)) for row in rows)
    return folder


def seed_problem(folder: Path, catalog: Path, job_name: str) -> Path:
    text = (ROOT / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        if line.startswith("catalog:"):
            line = f"catalog: {catalog.as_posix()}"
        elif line.strip().startswith("- name:"):
            line = line.split("- name:")[0] + "- name: " + json.dumps(job_name)   # YAML reads JSON strings
        lines.append(line)
    path = folder / "p.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")

    def rename(row):
        row["offer"] = OFFER if row["offer"] == "vnet-yz-a100-80-8x-monthly" else row["offer"]
        row["vendor"] = VENDOR if row["vendor"] == "21vianet" else row["vendor"]
        return row
    return seed_problem(folder, copy_catalog(folder / "cat", rename), JOB)


OURS = re.compile(r"=[A-Z0-9$:(),.*/+<>=-]*")
"""The shape of every formula gpuplan writes itself: cell references, numbers, operators, SUM and IF.
A name from data never has it: it carries lower case, quotes or spaces (a header capitalises it,
so a vendor named =HYPERLINK(…) heads a column as '=hyperlink(…) monthly', which the check by name
missed)."""


def formula_cells(path: Path) -> list[str]:
    """Every formula cell of every sheet of the workbook that gpuplan did not write as a formula."""
    from openpyxl import load_workbook

    book = load_workbook(path)
    return [f"{sheet.title}!{cell.coordinate}: {cell.value}" for sheet in book.worksheets
            for row in sheet.iter_rows() for cell in row
            if cell.data_type == "f" and not (OURS.fullmatch(str(cell.value))
                                              and set(re.findall(r"[A-Z]+(?=\()", str(cell.value))) <= {"SUM", "IF"})]


def text_values(path: Path) -> set[str]:
    from openpyxl import load_workbook

    book = load_workbook(path)
    return {cell.value for sheet in book.worksheets for row in sheet.iter_rows() for cell in row
            if cell.data_type == "s"}


def csv_cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [cell for row in csv.reader(fh) for cell in row]


def assert_no_formula_text(cells: list[str]) -> None:
    """No text cell a spreadsheet would run: numbers (-1500.5) are numbers, not formulas."""
    def number(cell: str) -> bool:
        try:
            float(cell)
            return True
        except ValueError:
            return False
    live = [c for c in cells if c.startswith(FORMULA_START) and not number(c)]
    assert not live, live[:3]


def test_solve_xlsx_and_csv_keep_hostile_names_as_text(hostile, tmp_path):
    run = gpuplan("solve", hostile, "--xlsx", tmp_path / "p.xlsx", "--csv", tmp_path / "t")
    assert run.returncode == 0, run.stderr
    assert not formula_cells(tmp_path / "p.xlsx")
    assert {JOB, VENDOR, OFFER} <= text_values(tmp_path / "p.xlsx")
    cells = [c for table in (tmp_path / "t").iterdir() for c in csv_cells(table)]
    assert_no_formula_text(cells)
    assert "'" + VENDOR in cells and "'" + JOB in cells


def test_the_prefilled_quote_sheet_keeps_names_as_text(hostile, tmp_path):
    catalog = hostile.parent / "cat"
    assert gpuplan("catalog", "template", tmp_path / "q.xlsx", "--catalog", catalog, "--prefill").returncode == 0
    assert not formula_cells(tmp_path / "q.xlsx") and {VENDOR, OFFER} <= text_values(tmp_path / "q.xlsx")
    assert gpuplan("catalog", "template", tmp_path / "q.csv", "--catalog", catalog, "--prefill").returncode == 0
    cells = csv_cells(tmp_path / "q.csv")
    assert_no_formula_text(cells)
    assert "'" + VENDOR in cells


def test_negotiate_export_vendor_keeps_names_as_text(hostile, tmp_path):
    for name in ("v.xlsx", "v.csv"):
        run = gpuplan("negotiate", hostile, "--export-vendor", VENDOR, tmp_path / name)
        assert run.returncode == 0, run.stderr
    assert not formula_cells(tmp_path / "v.xlsx") and OFFER in text_values(tmp_path / "v.xlsx")
    cells = csv_cells(tmp_path / "v.csv")
    assert_no_formula_text(cells)
    assert "'" + OFFER in cells


def workbooks(problem: Path, folder: Path, lang: str) -> list[Path]:
    """Every workbook gpuplan writes, from a problem with hostile names: solve --xlsx, frontier --xlsx,
    sweep -o *.xlsx, negotiate --export-vendor *.xlsx and the prefilled quote sheet."""
    grid = folder / "grid.yaml"
    grid.write_text("grid:\n  \"budget=\": [400000, 500000]\nscenarios:\n  - name: " + json.dumps(VENDOR)
                    + "\n    set: []\n", encoding="utf-8")
    runs = {"solve.xlsx": ["solve", problem, "--xlsx"], "frontier.xlsx": ["frontier", problem, "--points", "2", "--xlsx"],
            "sweep.xlsx": ["sweep", problem, "--grid", grid, "-o"],
            "vendor.xlsx": ["negotiate", problem, "--jobs", "1", "--export-vendor", VENDOR],
            "quotes.xlsx": ["catalog", "template", "--catalog", problem.parent / "cat", "--prefill"]}
    for name, args in runs.items():
        run = gpuplan(*args, folder / name, lang=lang)
        assert run.returncode == 0, (name, run.stderr)
    return [folder / name for name in runs]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_no_cell_of_any_workbook_is_a_formula_from_data(hostile, tmp_path, lang):
    """Issue 47, item 13: headers too (cash_by_month's `<vendor> <mode>` column was a formula)."""
    problem = tmp_path / "p.yaml"   # the hostile problem, its own name hostile too (frontier's summary sheet)
    problem.write_text(hostile.read_text(encoding="utf-8").replace("name: seed-7b-200b-30d", "name: " + json.dumps(VENDOR)),
                       encoding="utf-8")
    (tmp_path / "cat").symlink_to(hostile.parent / "cat")
    for book in workbooks(problem, tmp_path, lang):
        assert not formula_cells(book), (book.name, formula_cells(book)[:3])
        assert any(VENDOR in str(text) or OFFER in str(text) for text in text_values(book)), book.name


ESCAPES = ["\x1b[2J", "\x1b]0;owned\x07", "\x1b]8;;http://evil.example\x1b\\"]


@pytest.mark.parametrize("escape", ESCAPES, ids=["clear", "title", "link"])
def test_every_escape_in_a_name_is_refused_at_load(escape):
    from pydantic import ValidationError

    from solver.model.catalog import Datacenter
    from solver.model.problem import Job
    with pytest.raises(ValidationError, match="control character U\\+001B"):
        Job.model_validate({"name": "j" + escape, "deadline_days": 3, "flops": 1e20})
    with pytest.raises(ValidationError, match="control character U\\+001B"):
        Datacenter.model_validate({"datacenter": "d" + escape, "power_quota_kw": 10})


def test_a_name_with_an_escape_sequence_is_refused_and_never_printed(tmp_path):
    escape = ESCAPES[2]   # a hidden link

    def rename(row):
        row["vendor"] = "21vianet" + escape if row["vendor"] == "21vianet" else row["vendor"]
        return row
    catalog = copy_catalog(tmp_path / "cat", rename)
    problem = seed_problem(tmp_path, catalog, "j")
    for args in (("catalog", "show", catalog), ("solve", problem), ("why", problem)):
        run = gpuplan(*args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "\x1b" not in run.stdout + run.stderr, args
        assert "control character U+001B" in run.stderr and "Fix:" in run.stderr.replace("\n", " ")
    problem = seed_problem(tmp_path, SAMPLE, "job" + escape)
    run = gpuplan("solve", problem)
    assert run.returncode == 2 and "\x1b" not in run.stdout + run.stderr and "jobs[0].name" in run.stderr


def test_a_quote_sheet_with_an_escape_in_a_name_is_refused(tmp_path):
    sheet = tmp_path / "q.csv"
    assert gpuplan("catalog", "template", sheet).returncode == 0
    rows = list(csv.DictReader(open(sheet, newline="", encoding="utf-8")))
    rows[0]["vendor"] = "acme\x1b[2J"
    with open(sheet, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    into = copy_catalog(tmp_path / "cat", lambda row: row)
    before = (into / "offers.csv").read_bytes()
    run = gpuplan("catalog", "import", sheet, "--into", into)
    assert run.returncode == 2 and "\x1b" not in run.stdout + run.stderr, run.stderr
    assert (into / "offers.csv").read_bytes() == before


def test_outside_text_in_an_error_message_is_shown_escaped(tmp_path):
    """An unknown key is printed back to the user; its escape is written out, not sent."""
    problem = tmp_path / "p.yaml"
    text = (ROOT / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    problem.write_text(text.replace("../catalogs/", str(ROOT / "catalogs") + "/") + '"ev\\e[2Jil": 1\n',
                       encoding="utf-8")
    run = gpuplan("solve", problem)
    assert run.returncode == 2 and "\x1b" not in run.stderr and "\\x1b" in run.stderr, run.stderr


def test_a_prefilled_csv_template_imports_back_to_the_same_names(hostile, tmp_path):
    """The leading quote that keeps =… from being a formula is read off again on import."""
    from solver.load import load_catalog
    from solver.ingest.quote_template import write_template
    from solver.ingest.quotes import read_quotes

    catalog = load_catalog(hostile.parent / "cat")
    write_template(tmp_path / "q.csv", catalog, prefill=True)
    quotes = read_quotes(tmp_path / "q.csv", catalog.gpus, catalog.datacenters)
    assert not quotes.bad, quotes.bad[:2]
    assert {o.vendor for o in quotes.offers.values()} == {o.vendor for o in catalog.offers.values()}
    assert OFFER in {o.offer for o in quotes.offers.values()}

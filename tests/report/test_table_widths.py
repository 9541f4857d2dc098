"""Issue 47, item 6: plan tables keep numbers, dates and ids whole at 80, 100 and 120 columns.

Piped output at 100 columns read "2027-04-2 / 9", "DP1 / 0" and "volcano-en / gine": rich folded
cells anywhere once a table was too wide. The check: every word a table shows at a width is a
word of the same output at 1,000 columns (nothing wrapped), or a piece of an id cut right after
a '-' or '_'; a number or a date is never a piece.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from datetime import date

import pytest
from rich.console import Console

from solver.load import load_problem
from solver.model.ledger import cash_flow
from solver.model.plan import Plan
from solver.report.fit import Col, Grid, fitted
from solver.report.terminal import render_plan
from tests.builders import DATA, ROOT
from tests.bundled import bundled_plan

BOX = re.compile(r"[│┃┏┓┗┛┡┩└┘━─┳┻╇╈┼┬┴]")
WHOLE = re.compile(r"^[(\[]?(\d{4}-\d{2}-\d{2}|[-+]?\d[\d,.]*%?)[)\],;]?$")
"""Words never cut at all: dates and numbers (amounts, percentages)."""
RECORDED = ("data-locality", "debug-then-train", "hybrid-burst", "seed-13b-100b", "seed-7b-200b-30d")
SOLVED = ("global-burst", "global-burst-residency")   # no golden plan: solved here (long cloud ids, 3 vendors)


def _plan(name: str) -> tuple:
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    if name in RECORDED:
        data = json.loads((DATA / "golden" / f"solve-{name}.json").read_text(encoding="utf-8"))["output"]
        return prob, cat, Plan.model_validate({**data, "solve_seconds": 0.0})
    return prob, cat, bundled_plan(ROOT / "problems" / f"{name}.yaml")


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    """Every bundled problem's plan, as is and with a start date (the tables then show dates)."""
    out = {}
    for name in RECORDED + SOLVED:
        prob, cat, plan = _plan(name)
        out[name] = plan
        start = date(2027, 4, 20)
        dated = prob.model_copy(update={"start_date": start})
        out[name + " dated"] = plan.model_copy(update={"start_date": start, "cash_flow": cash_flow(
            plan.allocations, plan.schedule.assignments, dated, cat, plan.schedule.period_days)})
    return out


def rendered(plan: Plan, width: int) -> str:
    out = io.StringIO()
    render_plan(plan, Console(file=out, width=width, color_system=None, highlight=False))
    return out.getvalue()


def words(text: str) -> list[str]:
    return [w for line in text.splitlines() for w in BOX.sub(" ", line).split()]


def whole_or_id_piece(word: str, full: set[str]) -> bool:
    """The word is shown whole, or it is a piece of an id cut only right after '-' or '_'."""
    if word in full:
        return True
    for x in full:
        if WHOLE.match(x):
            continue
        at = x.find(word)
        while at >= 0:
            before, after = x[:at], x[at + len(word):]
            if (not before or before[-1] in "-_") and (not after or word[-1] in "-_"):
                return True
            at = x.find(word, at + 1)
    return False


def cut_words(text: str, wide: str) -> list[str]:
    full = set(words(wide))
    return [w for w in words(text) if not whole_or_id_piece(w, full)]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_plan_tables_never_cut_a_number_date_or_id(plans, width):
    for name, plan in plans.items():
        text = rendered(plan, width)
        assert max(map(len, text.splitlines())) <= width, name
        assert cut_words(text, rendered(plan, 1000)) == [], f"{name} at {width} columns"


def test_a_narrow_table_folds_columns_before_it_cuts_a_date():
    """Two dates side by side that do not fit fold one above the other, both whole."""
    grid = Grid("t", [Col("from"), Col("to")], [["2027-04-29", "2027-05-28"]], folds=[("from", "to")])
    out = io.StringIO()
    Console(file=out, width=16, color_system=None).print(fitted(grid, 16))
    assert "2027-04-29" in out.getvalue() and "2027-05-28" in out.getvalue()


def test_an_id_longer_than_its_column_breaks_only_after_a_separator():
    grid = Grid("t", [Col("offer", ident=True), Col("cost", "right")],
                [["nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-hourly", "20,107"]])
    out = io.StringIO()
    Console(file=out, width=40, color_system=None).print(fitted(grid, 40))
    pieces = [w for w in words(out.getvalue()) if w not in ("t", "offer", "cost", "20,107")]
    assert "".join(pieces) == "nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-hourly"
    assert all(p[-1] in "-_" for p in pieces[:-1]) and "20,107" in out.getvalue()


def _cli(columns: str, terminal: bool) -> str:
    """`gpuplan solve` piped, or in a terminal (a pty) of `columns` columns."""
    args = [sys.executable, "-m", "solver.cli", "--no-color", "solve", "problems/global-burst.yaml"]
    env = {**os.environ, "COLUMNS": columns, "LINES": "50"}
    if not terminal:
        return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, check=True).stdout
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=follower, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=600)
    os.close(leader)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize("columns,terminal", [("80", True), ("100", False)])
def test_the_cli_keeps_ids_whole_in_a_terminal_and_piped(columns, terminal):
    """The long cloud ids of global-burst, at 80 columns in a terminal and at 100 piped."""
    text = _cli(columns, terminal)
    assert max(map(len, text.splitlines())) <= int(columns)
    _, _, plan = _plan("global-burst")
    ids = {a.datacenter for a in plan.allocations} | {a.offer for a in plan.allocations} | {"volcano-engine"}
    shown = {a.vendor for a in plan.allocations} | ids
    cut = [w for w in words(text) if w not in shown for name in ids if name.startswith(w) and w[-1] not in "-_"]
    assert cut == [] and "nebius-eu-north1" in text


def _why_like() -> "Table":
    from rich.table import Table
    table = Table(title="runners-up")
    for col in ("alternative", "forced cost", "vs plan", "lost on", "why"):
        table.add_column(col, justify="right" if col in ("forced cost", "vs plan") else "left")
    table.add_row("volcano-engine/H800-80G/spot @ Yizhuang", "2,557,159", "+14,682", "price",
                  "dearer by 14,682 CNY than the plan's offer for this job")
    return table


def test_the_analyses_tables_keep_ids_and_numbers_whole_when_they_fit():
    """why, whatif, negotiate, sweep, frontier and the baselines print rich tables through keep_whole:
    rich alone cut `volcano-engine/H800-80G/spot` at 80 columns."""
    from solver.report.fit import keep_whole
    shown = {}
    for name, table in (("rich", _why_like()), ("kept", keep_whole(_why_like(), 80))):
        out = io.StringIO()
        Console(file=out, width=80, color_system=None).print(table)
        shown[name] = out.getvalue()
    wide = io.StringIO()
    Console(file=wide, width=1000, color_system=None).print(_why_like())
    assert cut_words(shown["rich"], wide.getvalue()) != []           # what rich does on its own
    assert cut_words(shown["kept"], wide.getvalue()) == []
    assert max(map(len, shown["kept"].splitlines())) <= 80

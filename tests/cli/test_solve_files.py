"""`gpuplan solve --html/--xlsx/--csv`: files checked before solving, written after, never replaced without --force."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from tests.builders import ROOT

import solver.cli  # noqa: F401 - the commands bind solve_problem now, not first under _no_solving's patch

HYBRID = ROOT / "problems" / "hybrid-burst.yaml"


def gpuplan(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", "--quiet", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def test_solve_writes_report_workbook_and_csv_tables(tmp_path):
    run = gpuplan("solve", HYBRID, "--html", tmp_path / "p.html", "--xlsx", tmp_path / "p.xlsx",
                  "--csv", tmp_path / "tables")
    assert run.returncode == 0, run.stderr
    assert "<svg id=\"gantt\"" in (tmp_path / "p.html").read_text(encoding="utf-8")
    sheets = pd.read_excel(tmp_path / "p.xlsx", sheet_name=None)
    assert {"allocations", "jobs", "cost_breakdown", "assumptions"} <= set(sheets)
    csv = pd.read_csv(tmp_path / "tables" / "cost_breakdown.csv")
    assert len(csv) == len(sheets["cost_breakdown"])


def test_sheet_detail_day_gives_one_allocation_row_per_rental_day(tmp_path):
    seed = ROOT / "problems" / "seed-7b-200b-30d.yaml"          # one 30-day contract, days 3–33
    run = gpuplan("solve", seed, "--csv", tmp_path / "days", "--sheet-detail", "day")
    assert run.returncode == 0, run.stderr
    days = pd.read_csv(tmp_path / "days" / "allocations.csv")
    assert list(days["day"]) == list(range(3, 33)) and (days["gpu_days"] == 40).all()
    run = gpuplan("solve", seed, "--csv", tmp_path / "months")
    months = pd.read_csv(tmp_path / "months" / "allocations.csv")
    assert list(months["month"]) == ["days 0–29", "days 30–59"] and list(months["days"]) == [27, 3]
    bad = gpuplan("solve", seed, "--csv", tmp_path / "weeks", "--sheet-detail", "week")
    assert bad.returncode == 2 and not (tmp_path / "weeks").exists()


def test_an_existing_file_is_refused_before_solving_and_replaced_with_force(tmp_path):
    target = tmp_path / "p.html"
    target.write_text("mine", encoding="utf-8")
    run = gpuplan("solve", HYBRID, "--html", target)
    assert run.returncode == 2 and "--force" in run.stderr and target.read_text(encoding="utf-8") == "mine"
    assert gpuplan("solve", HYBRID, "--html", target, "--force").returncode == 0
    assert target.read_text(encoding="utf-8") != "mine"


def test_frontier_and_sweep_tables_as_workbooks(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text('grid:\n  "datacenters.Shunyi.power_quota_kw=": [250, 400]\n', encoding="utf-8")
    run = gpuplan("sweep", HYBRID, "--grid", grid, "-j", "1", "-o", tmp_path / "sweep.xlsx")
    assert run.returncode == 0, run.stderr
    sweep = pd.read_excel(tmp_path / "sweep.xlsx", sheet_name="sweep")
    assert len(sweep) == 2 and set(sweep["Status"]) == {"optimal"}        # headers in words
    run = gpuplan("frontier", HYBRID, "--points", "3", "--xlsx", tmp_path / "frontier.xlsx")
    assert run.returncode == 0, run.stderr
    points = pd.read_excel(tmp_path / "frontier.xlsx", sheet_name="frontier")
    assert len(points) >= 1 and "Point" in points.columns


def test_solve_why_in_json_and_in_the_html_report(tmp_path):
    import json

    run = gpuplan("solve", HYBRID, "--why", "--why-k", "2", "--json", "--html", tmp_path / "p.html")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    alternatives = data["why"]["jobs"][0]["alternatives"]
    assert len(alternatives) == 2 and all(a["cost"] >= data["total_cost"] for a in alternatives)
    assert all(a["code"] == "price" for a in alternatives)          # both are dearer, feasible plans
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "Why this plan" in page and alternatives[0]["label"].split(" @")[0] in page


# --- --export-mps, split-bill --csv, negotiate --export-vendor: checked before any work ------------
# In process (CliRunner) on the small seed problem; solve_problem / negotiate are replaced by a
# stub that fails, so a refusal that came only after solving would show.

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
SACCT = ROOT / "tests" / "data" / "sacct-shared-rack.txt"


def invoke(*args):
    from typer.testing import CliRunner

    from solver.cli import app
    return CliRunner().invoke(app, ["--quiet", *map(str, args)], env={"COLUMNS": "1000"})


def _no_solving(monkeypatch) -> None:
    """Replace solve_problem and negotiate wherever a module holds them. The CLI is imported first:
    a command module imported while they are patched would keep the stub for the rest of the run
    (`from solver.api import solve_problem` binds the name), and a later test would fail."""
    import solver.analysis.negotiate
    import solver.api
    import solver.cli  # noqa: F401 - every command module, bound to the real functions

    def boom(*args, **kwargs):
        raise AssertionError("solved before checking the output file")
    real = {solver.api.solve_problem, solver.analysis.negotiate.negotiate}
    for name, module in list(sys.modules.items()):
        if name.startswith("solver"):
            for attr in ("solve_problem", "negotiate"):
                if getattr(module, attr, None) in real:
                    monkeypatch.setattr(module, attr, boom)


def assert_refused(result, *needles) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr and result.stdout.strip() == ""
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def test_export_mps_into_a_missing_folder_is_refused_before_solving(monkeypatch, tmp_path):
    _no_solving(monkeypatch)
    target = tmp_path / "no-such-dir" / "m.mps"
    assert_refused(invoke("solve", SEED, "--export-mps", target), "--export-mps", "folder does not exist",
                   str(target.parent))
    assert_refused(invoke("solve", SEED, "--export-mps", tmp_path), "--export-mps", "is a folder")


def test_export_mps_never_replaces_a_file_without_force(monkeypatch, tmp_path):
    target = tmp_path / "m.mps"
    first = invoke("solve", SEED, "--export-mps", target)
    assert first.exit_code == 0, first.stderr
    written = target.read_text()
    assert "ROWS" in written
    target.write_text("mine\n")
    with monkeypatch.context() as m:
        _no_solving(m)
        assert_refused(invoke("solve", SEED, "--export-mps", target), "--export-mps", "already exists", "--force")
    assert target.read_text() == "mine\n"
    again = invoke("solve", SEED, "--export-mps", target, "--force")
    assert again.exit_code == 0, again.stderr
    assert target.read_text() == written


def test_export_mps_is_refused_with_min_time_which_would_not_write_it(monkeypatch, tmp_path):
    _no_solving(monkeypatch)
    result = invoke("solve", SEED, "--objective", "min_time", "--export-mps", tmp_path / "m.mps")
    assert_refused(result, "--export-mps", "min_time")
    assert not (tmp_path / "m.mps").exists()


def test_split_bill_csv_refuses_to_overwrite_without_force(tmp_path):
    target = tmp_path / "bill.csv"
    target.write_text("mine\n")
    args = ("split-bill", "--sacct", SACCT, "--rack-cost", "48000", "--csv", target)
    assert_refused(invoke(*args), "--csv", "already exists", "--force")
    assert target.read_text() == "mine\n"
    forced = invoke(*args, "--force")
    assert forced.exit_code == 0, forced.stderr
    assert target.read_text().startswith("tenant,")
    assert_refused(invoke("split-bill", "--sacct", SACCT, "--rack-cost", "48000", "--csv",
                          tmp_path / "missing" / "bill.csv"), "--csv", "folder does not exist")


def test_negotiate_export_into_a_missing_folder_is_refused_before_solving(monkeypatch, tmp_path):
    _no_solving(monkeypatch)
    result = invoke("negotiate", SEED, "--export-vendor", "21vianet", tmp_path / "missing" / "sheet.csv")
    assert_refused(result, "--export-vendor", "folder does not exist")


def test_negotiate_export_of_an_unknown_vendor_is_refused_before_solving(monkeypatch, tmp_path):
    # A reviewer's typo: '21vainet' ran the whole 27-s negotiation before being refused.
    _no_solving(monkeypatch)
    result = invoke("negotiate", SEED, "--export-vendor", "21vainet", tmp_path / "sheet.csv")
    assert_refused(result, "--export-vendor", "no vendor '21vainet'", "21vianet")
    assert not (tmp_path / "sheet.csv").exists()


def test_every_output_of_one_solve_is_the_same_plan_object(monkeypatch, tmp_path):
    """Issue 47, item 4: within one command the terminal, --json, --html, --xlsx and --csv show one
    plan (the object itself, not an equal copy), also a plan its solve did not prove (injected: the
    base answered as stopped at a gap), whose terminal headline says another run may differ."""
    from typer.testing import CliRunner

    import solver.report.outputs as outputs
    import solver.report.terminal as terminal
    from solver.cli import app
    from solver.probes import Probes

    real_plan, seen = Probes.plan, []

    def stopped(self, *args, **kwargs):
        plan = real_plan(self, *args, **kwargs)
        return plan.model_copy(update={"status": "feasible", "lower_bound": plan.total_cost * 0.9, "gap": 0.1})

    def capture(real):
        def captured(*args, **kwargs):
            seen.append(next(a for a in (*args, *kwargs.values()) if type(a).__name__ == "Plan"))
            return real(*args, **kwargs)
        return captured
    monkeypatch.setattr(Probes, "plan", stopped)
    for module, name in ((outputs, "write_html"), (outputs, "plan_tables"), (terminal, "render_plan"),
                         (terminal, "solve_json")):
        monkeypatch.setattr(module, name, capture(getattr(module, name)))
    files = ["--html", tmp_path / "p.html", "--xlsx", tmp_path / "p.xlsx", "--csv", tmp_path / "t"]
    shown = CliRunner().invoke(app, ["solve", str(HYBRID), *map(str, files)])
    assert shown.exit_code == 0, shown.output
    assert len(seen) == 3 and seen[0] is seen[1] is seen[2] and seen[0].status == "feasible"
    assert "another run (or more time) may find a different plan" in " ".join(shown.stdout.split())
    seen.clear()
    files = ["--html", tmp_path / "q.html", "--xlsx", tmp_path / "q.xlsx", "--csv", tmp_path / "u"]
    as_json = CliRunner().invoke(app, ["solve", str(HYBRID), "--json", *map(str, files)])
    assert as_json.exit_code == 0, as_json.output
    assert len(seen) == 3 and seen[0] is seen[1] is seen[2]
    sheets = pd.read_excel(tmp_path / "q.xlsx", sheet_name=None)
    csv = pd.read_csv(tmp_path / "u" / "cost_breakdown.csv")
    assert len(csv) == len(sheets["cost_breakdown"])


def test_asking_for_files_does_not_change_the_plan(tmp_path):
    """`solve P` and `solve P --html --xlsx --csv` answer with the same plan: the files' checks
    and writers take nothing from the solve (a proven plan, so the clock cannot move it)."""
    import json

    seed = ROOT / "problems" / "seed-7b-200b-30d.yaml"
    alone = gpuplan("solve", seed, "--json")
    with_files = gpuplan("solve", seed, "--json", "--html", tmp_path / "p.html", "--xlsx", tmp_path / "p.xlsx",
                         "--csv", tmp_path / "t")
    assert alone.returncode == 0 and with_files.returncode == 0, alone.stderr + with_files.stderr
    a, b = json.loads(alone.stdout), json.loads(with_files.stdout)
    assert a["status"] == b["status"] == "optimal"
    assert (a["total_cost"], a["allocations"], a["schedule"]) == (b["total_cost"], b["allocations"], b["schedule"])
    parts = pd.read_excel(tmp_path / "p.xlsx", sheet_name="cost_breakdown").set_index("Part")["Cost"]
    assert parts.drop("total").sum() == pytest.approx(b["total_cost"], abs=0.01)   # the total row is a formula

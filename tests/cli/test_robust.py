"""Margin and robust plan through `gpuplan solve` (issue 36, item 5): every job's `mfu_margin` in
--json and the terminal's jobs table; `--robust` (or the problem's `robust`) adds `robust_plan`
with its cost beside the optimum in the terminal, --json, the HTML report and the xlsx sheet.

Numbers: one job of 36 GPU-days on hourly 8-GPU nodes (768 CNY a node-day): 5 node-days,
3,840 CNY, margin 0.9; at 0.8 of the MFU, 6 node-days: 4,608 CNY (+768, 20 %).
"""

from __future__ import annotations

import json

from tests.builders import catalog, hourly, job, problem, run_cli, write_problem


def _files(tmp_path, **extra):
    return write_problem(tmp_path, problem(job("j", days=36, deadline_days=10), horizon_days=10),
                         catalog(hourly("h", 4)), **extra)


def test_margin_always_and_robust_plan_when_asked(tmp_path):
    path = _files(tmp_path)
    plain = json.loads(run_cli("solve", str(path), "--json").stdout)
    assert 0.9 <= plain["jobs"][0]["mfu_margin"] <= 0.901 and "robust_plan" not in plain
    asked = json.loads(run_cli("solve", str(path), "--json", "--robust").stdout)
    robust = asked["robust_plan"]
    assert (robust["mfu_factor"], robust["total_cost"], robust["premium"], robust["premium_pct"]) == \
        (0.8, 4_608, 768, 20.0)
    html, xlsx = tmp_path / "r.html", tmp_path / "r.xlsx"
    text = run_cli("solve", str(path), "--robust", "--html", str(html), "--xlsx", str(xlsx))
    assert text.returncode == 0, text.stderr[-2000:]
    assert "robust plan (every MFU × 0.8): at 80% of the assumed MFU every deadline is met for 4,608 CNY" in \
        " ".join(text.stdout.split())
    assert "MFU margin" in text.stdout and "down to 90.0%" in text.stdout
    page = html.read_text(encoding="utf-8")
    assert 'id="robust-plan"' in page and "4,608 CNY" in page and "MFU margin" in page
    from openpyxl import load_workbook
    cells = [c.value for ws in load_workbook(xlsx).worksheets for row in ws.iter_rows() for c in row]
    assert "robust_plan_cost" in cells and 4_608 in cells and "MFU margin (share of the planned MFU)" in cells


def test_the_problems_robust_key_asks_for_it(tmp_path):
    out = json.loads(run_cli("solve", str(_files(tmp_path, robust={"mfu_factor": 0.9})), "--json").stdout)
    assert out["robust_plan"]["mfu_factor"] == 0.9 and out["robust_plan"]["total_cost"] == 3_840

"""`gpuplan whatif` reports "no change" for an edit that binds nothing (issue 24 item 6): the
baseline plan is kept and read under the edit, so a tie is never shown as a change."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from tests.builders import HANG_SECONDS, ROOT


def _with_budget(tmp_path, name: str, budget: float):
    """A bundled problem with a budget well above its optimum, its catalog path made absolute."""
    data = yaml.safe_load((ROOT / "problems" / f"{name}.yaml").read_text(encoding="utf-8"))
    data["catalog"] = str((ROOT / "problems" / data["catalog"]).resolve())
    data["budget"] = budget
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _whatif(path, *edits: str, as_json: bool = True) -> subprocess.CompletedProcess:
    args = [arg for edit in edits for arg in ("--set", edit)]
    return subprocess.run([sys.executable, "-m", "solver.cli", "whatif", str(path), *args,
                           *(["--json"] if as_json else [])],
                          capture_output=True, text=True, cwd=ROOT, timeout=HANG_SECONDS,
                          env={**os.environ, "COLUMNS": "200"})


def test_a_non_binding_budget_cut_reports_no_change(tmp_path):
    path = _with_budget(tmp_path, "debug-then-train", 400_000)  # optimum 211,984.80: 80 % still covers it
    run = _whatif(path, "budget*=0.8")
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["scenario"]["changed"] is False and out["scenario"]["kept_baseline_plan"] is True
    assert out["binding_now"] == [] and out["binding_no_longer"] == [] and out["mix_changes"] == []
    assert out["scenario"]["finish_days"] == out["baseline"]["finish_days"] and out["delta"] == 0
    text = _whatif(path, "budget*=0.8", as_json=False)
    assert "no change" in text.stdout and "now binds" not in text.stdout


def test_a_binding_edit_still_reports_the_change(tmp_path):
    path = _with_budget(tmp_path, "data-locality", 100_000)
    out = json.loads(_whatif(path, "offers.bce-yz-a100-80-8x-hourly.price*=1.2").stdout)
    assert out["scenario"]["changed"] is True and out["scenario"]["kept_baseline_plan"] is False
    assert out["delta"] > 0


@pytest.mark.parametrize("edits", [("budget*=1.5",), ("horizon_days=20", "jobs.finetune-7b.deadline_days=20"),
                                   ("offers[*].max_nodes+=2",)])
def test_edits_that_bind_nothing_all_report_no_change(tmp_path, edits):
    out = json.loads(_whatif(_with_budget(tmp_path, "data-locality", 100_000), *edits).stdout)
    assert out["scenario"]["changed"] is False and out["scenario"]["kept_baseline_plan"] is True
    assert out["binding_now"] == [] and out["delta"] == 0

"""Rows as they are determined (solver.rows, issue 34 item 3): an analysis announces each row the
moment it is known, and a command run with stderr to a log prints it there at once, before
the table; a runner-up a solve could not settle is shown as an interval, never a guess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from solver.analysis import why as why_module
from solver.analysis.why import why
from solver.load import load_problem
from solver.probes import Answer, Probes
from solver.rows import ROWS

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def test_why_announces_each_re_solved_runner_up():
    heard = []
    ROWS.listener = lambda words, done, expected: heard.append((done, words))
    try:
        result = why(*load_problem(SEED), k=3)
    finally:
        ROWS.listener = None
    resolved = [a for j in result.jobs for a in j.alternatives + j.infeasible]
    assert len(heard) == len(resolved) + len(result.binding) and len(resolved) >= 2   # each lever is a row too
    assert [d for d, _ in heard] == list(range(1, len(heard) + 1))
    for alt in resolved:
        assert any(alt.label in words for _, words in heard)
    for lever in result.binding:
        assert any(words.startswith(lever.relax) for _, words in heard)
    # the levers come first: a few probes a user acts on, not left to whatever the runners-up leave
    assert result.binding and all(words.startswith(lever.relax) for (_, words), lever in zip(heard, result.binding))


def test_a_runner_up_the_time_did_not_settle_is_an_interval(monkeypatch):
    """A forced probe that ends with a plan but no proof gives 'dearer by low to high'."""
    problem, catalog = load_problem(SEED)
    real = Probes.probe

    def unsettled(self, *changes, **kw):
        answer = real(self, *changes, **kw)
        if changes and answer.plan is not None:  # a forced runner-up: as if stopped 1,000 above its bound
            plan = answer.plan.model_copy(update={"total_cost": answer.plan.total_cost + 1000.0, "gap": 0.01,
                                                  "status": "feasible"})
            return Answer("feasible", answer.low, plan, answer.solution)
        return answer
    monkeypatch.setattr(Probes, "probe", unsettled)
    result = why(problem, catalog, k=3)
    alt = result.jobs[0].alternatives[0]
    assert not alt.determined and alt.cost is None
    assert alt.high - alt.low >= 1000.0 - 0.01
    assert f"{alt.low - result.cost:,.0f} to {alt.high - result.cost:,.0f}" in alt.text


def test_the_cli_prints_rows_on_stderr_as_they_come(tmp_path):
    env = {**os.environ, "GPUPLAN_HEARTBEAT_SECONDS": "10000", "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "solver.cli", "why", str(SEED), "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=1800)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stderr.splitlines() if ", row " in line]
    out = json.loads(done.stdout)
    labels = [a["label"] for j in out["jobs"] for a in j["alternatives"] + j["infeasible"]]
    assert len(rows) == len(labels) + len(out["binding"]) and len(labels) >= 2   # runners-up, then levers
    assert rows[0].split(", row ")[1].startswith("1: ")

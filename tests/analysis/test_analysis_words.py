"""explain and why: one out-of-time exception, one wording for a solve that settled nothing, no
OR-Tools (issue 44 item 4).

Why: each had its own `_Undetermined` (why a second, `_OutOfBudget`), wrote "not determined
within the time limit" and its Ctrl-C variant itself, and why built a row with OR-Tools.
"""

from __future__ import annotations

import ast

import pytest

from solver.analysis import words
from solver.clock import OutOfTime
from tests.builders import ROOT

ANALYSES = [ROOT / "solver" / "analysis" / f"{name}.py" for name in ("why", "explain")]


def _imports(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
    return out


@pytest.mark.parametrize("path", ANALYSES, ids=lambda p: p.stem)
def test_the_analysis_imports_no_or_tools_and_has_no_exception_of_its_own(path):
    assert not [m for m in _imports(path) if m.startswith("ortools")]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
           and any(isinstance(b, ast.Name) and b.id.endswith(("Exception", "Undetermined")) for b in n.bases)]
    assert own == []


@pytest.mark.parametrize("path", ANALYSES, ids=lambda p: p.stem)
def test_the_words_for_an_unsettled_solve_are_written_once(path):
    source = path.read_text(encoding="utf-8")
    for phrase in ("not determined within the time limit", "not determined: the run was stopped",
                   "the run's time budget ran out", "not proven within the time"):
        assert phrase not in source, (path.stem, phrase)


def test_the_words():
    assert words.no_plan_text() == "not determined within the time limit"
    assert words.no_plan_text("raise --time-limit") == "not determined within the time limit (raise --time-limit)"
    assert words.not_analysed_text() == "the run's time budget ran out (raise --max-seconds)"
    assert words.not_proven_text("--time-limit") == "(not proven within the time; raise --time-limit)"


def test_out_of_time_says_whether_a_solve_started_and_what_it_reached():
    spent = OutOfTime("the run's time is spent")
    assert (spent.started, spent.low, spent.high) == (False, None, None)
    stopped = OutOfTime("stopped at a 3.0% gap", started=True, low=90.0, high=100.0)
    assert (stopped.started, stopped.low, stopped.high, str(stopped)) == (True, 90.0, 100.0, "stopped at a 3.0% gap")


def test_a_forced_runner_up_goes_through_the_milp_layer():
    """force_job's row is written by solver.probes.elastic.only_these: Σ outside ≤ 0."""
    from solver.analysis.why import force_job
    from solver.api import build
    from tests.builders import catalog, gpu_day_flops, hourly, job, problem

    cat = catalog(hourly("A", 5, max_nodes=2), hourly("B", 6, max_nodes=2))
    _, milp = build(problem(job("j", flops=2 * gpu_day_flops(), deadline_days=3), horizon_days=3), cat)
    keep = {milp.inst.options[0].config}
    force_job("j", keep)(milp)
    row = milp.rows["Why-j-only"]
    assert row.upper_bound == 0

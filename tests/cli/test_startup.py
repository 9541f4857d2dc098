"""Start-up stays light: `gpuplan --help`, shell completion and `gpuplan estimate` must not load the
solver stack (issue 34: every Tab paid 1.3 s of OR-Tools, pandas and pydantic).

No clock is read here: what is checked is which modules a fresh interpreter holds after
importing the CLI or running a light command (sys.modules), which is what the time was spent on.
The measured times are tests/bench/bench_startup.py's.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.builders import ROOT

HEAVY = ("ortools", "pandas", "numpy", "matplotlib", "openpyxl", "pyarrow", "solver.milp", "solver.engine",
         "solver.api", "solver.analysis")
"""Never imported unless a command solves (or writes a sheet, or plots)."""
NOT_FOR_HELP = HEAVY + ("yaml", "solver.model", "solver.load", "solver.estimate")
"""Help and completion need only the command tree: not even the problem's models. (pydantic itself
is typer's: it converts some option types with it when a command's help is drawn.)"""


def loaded_after(code: str) -> set[str]:
    """Top-level packages and solver modules in sys.modules after running `code` in a fresh interpreter."""
    probe = f"""
import sys, json
try:
{chr(10).join('    ' + line for line in code.splitlines())}
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)
"""
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    return set(json.loads(run.stderr.strip().splitlines()[-1]))


LIGHT = ("solver.model", "solver.model.text")
"""Allowed although under a heavy prefix: the model package itself imports none of its modules, and
its text helpers (control characters spelled out, which every console applies) need no pydantic."""


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m not in LIGHT and any(m == n or m.startswith(n + ".") for n in names))


def test_importing_the_cli_loads_no_solver_stack():
    assert heavy(loaded_after("import solver.cli"), NOT_FOR_HELP) == []


@pytest.mark.parametrize("argv", [["--help"], ["solve", "--help"], ["why", "--help"], ["estimate", "--help"]])
def test_help_loads_no_solver_stack(argv):
    code = f"import sys\nsys.argv = ['gpuplan', *{argv!r}]\nimport solver.cli\nsolver.cli.main()"
    assert heavy(loaded_after(code), NOT_FOR_HELP) == []


def test_completion_loads_no_solver_stack():
    code = ("import os, sys\nos.environ['_GPUPLAN_COMPLETE'] = 'bash_complete'\nos.environ['COMP_WORDS'] = 'gpuplan so'\n"
            "os.environ['COMP_CWORD'] = '1'\nsys.argv = ['gpuplan']\nimport solver.cli\nsolver.cli.main()")
    assert heavy(loaded_after(code), NOT_FOR_HELP) == []


def test_estimate_loads_no_solver_stack():
    """estimate reads the catalog (pydantic) but neither pandas nor OR-Tools; and it did run."""
    code = ("import sys\nsys.argv = ['gpuplan', 'estimate', '--params', '7e9', '--tokens', '1e11', '--json']\n"
            "import solver.cli\nsolver.cli.main()")
    modules = loaded_after(code)
    assert "solver.estimate.summary" in modules
    assert heavy(modules, HEAVY) == []


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_estimate_loads_no_plan_tables(json_flag):
    """estimate's table and JSON come from modules of their own: the plan tables, the HTML report's
    words and the plan models stay unloaded (they cost a third of its start-up)."""
    code = ("import sys\nsys.argv = ['gpuplan', 'estimate', '--params', '7e9', '--tokens', '1e11'"
            f"{''.join(', ' + repr(f) for f in json_flag)}]\nimport solver.cli\nsolver.cli.main()")
    modules = loaded_after(code)
    assert "solver.estimate.summary" in modules
    assert heavy(modules, ("solver.report.terminal", "solver.report.html", "solver.model.plan")) == []


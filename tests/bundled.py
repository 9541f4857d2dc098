"""The bundled problems' plans as `solve_problem` gives them with its defaults, solved once per test run.

Why: several test modules read the default plan of the same bundled problem (problems/*.yaml;
debug-then-train's takes seconds); each solved it again. The first caller solves it (no time
limit: the plan does not depend on the CPU), and every caller gets its own deep copy, so a test that
edits what it got cannot change another's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from solver.api import solve_problem
from solver.load import load_problem
from solver.model.plan import Plan


def bundled_plan(path: str | Path) -> Plan:
    """The default plan of the problem file at `path` (read with solver.load.load_problem, unedited)."""
    return _solved(str(Path(path).resolve())).model_copy(deep=True)


@cache
def _solved(path: str) -> Plan:
    return solve_problem(*load_problem(path))

"""The experimental solve methods stay off the default path, and the one switch turns them on.

Why a test: solver.engine.switches promises that a default solve never imports
solver.engine.experimental (a method measured no better must cost nothing, not even its
import), and that `GPUPLAN_EXPERIMENTAL` is the way to run one. Each solve runs in a fresh
interpreter, because this test process has imported the experimental modules already (their
own tests do).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import grimp
import pytest

from solver.engine import switches
from solver.errors import ProblemError
from tests.builders import ROOT

SOLVE = """
import json, sys
from solver.api import solve_problem
from tests.builders import catalog, hourly, job, monthly, problem

# Cheap vendor A has one node, B and C more; two synchronous jobs each need a node for the whole
# window: the LP shares A between them, the integer plan cannot (so the LP and the plan differ).
cat = catalog(hourly("A", 4, vendor="vA", max_nodes=1), hourly("B", 6, vendor="vB"),
              monthly("C", 9_000, vendor="vC", max_nodes=2))
prob = problem(job("j1", days=39, deadline_days=5), job("j2", days=30, deadline_days=5), horizon_days=5)
plan = solve_problem(prob, cat)
loaded = sorted(name for name in sys.modules if name.startswith("solver.engine.experimental"))
print(json.dumps({"cost": plan.total_cost, "status": plan.status, "loaded": loaded}))
"""


def _solve(switch: str | None) -> dict:
    """The tiny problem solved through solver.api in a fresh interpreter, under `switch`."""
    env = {k: v for k, v in os.environ.items() if k != switches.ENV}
    if switch is not None:
        env[switches.ENV] = switch
    done = subprocess.run([sys.executable, "-c", SOLVE], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def default() -> dict:
    return _solve(None)


def test_the_default_solve_imports_no_experimental_module(default):
    assert default["status"] == "optimal"
    assert default["loaded"] == []


@pytest.mark.parametrize("method", ["rcfix", "fixopt"])
def test_the_switch_loads_the_method_and_keeps_the_optimum(default, method):
    switched = _solve(method)
    assert f"solver.engine.experimental.{method}" in switched["loaded"]
    assert switched["status"] == "optimal"
    assert switched["cost"] == pytest.approx(default["cost"], rel=1e-9)


def test_an_empty_switch_is_the_default(monkeypatch):
    monkeypatch.setenv(switches.ENV, " , ")
    assert not any(switches.switched_on(method) for method in switches.METHODS)


def test_the_switch_names_only_what_it_lists(monkeypatch):
    monkeypatch.setenv(switches.ENV, "rcfix, lagrange")
    assert [switches.switched_on(m) for m in switches.METHODS] == [True, True, False]


def test_a_misspelt_switch_is_an_error_not_the_default(monkeypatch):
    monkeypatch.setenv(switches.ENV, "lagrangian")
    with pytest.raises(ProblemError, match=f"{switches.ENV}: unknown experimental method lagrangian"):
        switches.switched_on("lagrange")
    with pytest.raises(ValueError, match="unknown experimental method"):
        switches.switched_on("cuts")


def _module_level_imports(path, package: str) -> list[int]:
    """Lines of `path` importing from `package` outside any function (at load time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested = {id(node) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(fn)}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and id(node) not in nested
            and (node.module or "").startswith(package)]


def test_only_the_engine_loads_the_experimental_methods_and_only_inside_a_function():
    """The sys.modules check above sees one tiny solve; this sees every path: outside the package,
    only the engine's run and big import it, each inside the function that runs the method."""
    package = "solver.engine.experimental"
    graph = grimp.build_graph("solver", cache_dir=None)
    importers = {m for name in graph.find_children(package)
                 for m in graph.find_modules_that_directly_import(name) if not m.startswith(package)}
    assert importers == {"solver.engine.run", "solver.engine.big"}
    for module in importers:
        path = ROOT / (module.replace(".", "/") + ".py")
        assert _module_level_imports(path, package) == [], module

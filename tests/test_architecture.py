"""The package's imports follow docs/ARCHITECTURE.md: layers one way, one door to the MILP, no cycles.

Why a test: a layer rule that only a reviewer remembers is broken by the first hurried
import. The layers and the "one door" rule are import-linter contracts in pyproject.toml
(`[tool.importlinter]`); the cycle check is grimp's graph, which counts imports inside
functions too, so a cycle hidden behind a function-level import fails here as well.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
from tests.builders import ROOT

PYPROJECT = ROOT / "pyproject.toml"


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_among_solver_modules():
    graph = grimp.build_graph("solver", cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "cyclic_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from cyclic_pkg import b\n")
    (pkg / "b.py").write_text("import cyclic_pkg.a\n")
    (pkg / "c.py").write_text("import cyclic_pkg.a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("cyclic_pkg", cache_dir=None)) == [["cyclic_pkg.a", "cyclic_pkg.b"]]


def test_layer_and_one_door_contracts_hold():
    # In a child process: import-linter's console writes to the real stderr, which pytest's capture
    # has swapped out, and its cache would hide an import added since the last run.
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(PYPROJECT)!r}, no_cache=True, no_logo=True))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout, done.stdout


def test_the_contracts_are_the_ones_docs_name():
    import tomllib

    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    kinds = {c["type"] for c in config["contracts"]}
    assert kinds == {"layers", "forbidden", "protected"}
    ortools = next(c for c in config["contracts"] if c["type"] == "protected")   # issue 44: OR-Tools in two folders
    assert ortools["protected_modules"] == ["ortools"] and ortools["allowed_importers"] == ["solver.milp", "solver.engine"]
    assert config.get("include_external_packages") is True   # else the contract sees no ortools and passes
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    order = [name for layer in layers for name in layer.replace(":", "|").split("|")]
    order = [name.strip() for name in order]
    for high, low in [("solver.cli", "solver.commands"), ("solver.commands", "solver.report"),
                      ("solver.report", "solver.analysis"), ("solver.analysis", "solver.api"),
                      ("solver.api", "solver.milp"), ("solver.milp", "solver.estimate"),
                      ("solver.estimate", "solver.model")]:
        assert order.index(high) < order.index(low), (high, low)


"""The CLI's shape: every command module is listed in solver/cli.py; the CLI reaches the MILP
only through solver.api; nothing below the report layer imports it; the report modules import
one another without a cycle. Imports are read from the source (function-level ones included),
so a lazy import cannot hide a crossing."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import pytest

import solver.commands
from solver import cli

SOLVER = Path(solver.commands.__file__).resolve().parent.parent
NOT_COMMANDS = {"common", "options"}
"""Modules of solver/commands that hold what the commands share, not a command."""


def imported(path: Path) -> set[str]:
    """Every module the file imports, anywhere in it (`from solver.x import y` gives solver.x and solver.x.y)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def module_name(path: Path) -> str:
    parts = path.relative_to(SOLVER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def solver_files(*under: str) -> list[Path]:
    return sorted(p for p in SOLVER.rglob("*.py") if not under or p.relative_to(SOLVER).parts[0] in under)


def test_every_command_module_is_listed_in_cli():
    modules = {m.name for m in pkgutil.iter_modules(solver.commands.__path__)} - NOT_COMMANDS
    listed = {c.__name__.rsplit(".", 1)[1] for c in cli.COMMANDS}
    assert listed == modules


@pytest.mark.parametrize("path", [SOLVER / "cli.py", *solver_files("commands")], ids=lambda p: p.name)
def test_the_cli_reaches_the_milp_only_through_the_api(path):
    below = ("solver.milp", "solver.engine")  # the formulation and the solve engine
    assert not {m for m in imported(path) if m in below or m.startswith(tuple(f"{b}." for b in below))}


ABOVE_REPORT = ("report", "commands", "cli.py")


@pytest.mark.parametrize("path", [p for p in solver_files() if p.relative_to(SOLVER).parts[0] not in ABOVE_REPORT],
                         ids=lambda p: str(p.relative_to(SOLVER)))
def test_no_layer_below_report_imports_it(path):
    upward = {m for m in imported(path) if m.split(".")[:2] in (["solver", "report"], ["solver", "commands"],
                                                                 ["solver", "cli"])}
    assert not upward, f"{path.relative_to(SOLVER)} imports {sorted(upward)}"


def test_report_modules_import_each_other_without_a_cycle():
    files = solver_files("report")
    names = {module_name(p) for p in files}
    graph = {module_name(p): {m for m in imported(p) if m in names} - {module_name(p)} for p in files}
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, " → ".join((*path, node))
        if node in done:
            return
        for nxt in graph[node]:
            visit(nxt, (*path, node))
        done.add(node)
    for node in graph:
        visit(node, ())

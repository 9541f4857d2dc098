"""The stop a running solve heeds: one OR-Tools SolveInterrupter for the command (or a worker), kept
in PROGRESS.interrupter, which the backends hand to HiGHS and the LP child watches (solver.engine.child).

Why a module: only the formulation and the engine import OR-Tools (docs/ARCHITECTURE.md §2, an
import-linter contract); the command's stop (solver.commands.common) and a worker's
(solver.analysis.workers) arm and fire it through solver.api.
"""

from __future__ import annotations

from ortools.util.python.solve_interrupter import SolveInterrupter

from solver.engine.progress import PROGRESS


def arm_interrupter() -> SolveInterrupter:
    """A new interrupter for this process's solves from now on (PROGRESS.interrupter)."""
    PROGRESS.interrupter = SolveInterrupter()
    return PROGRESS.interrupter


def fire_interrupter() -> None:
    """Interrupt the running solve, if this process armed an interrupter."""
    if PROGRESS.interrupter is not None:
        PROGRESS.interrupter.interrupt()

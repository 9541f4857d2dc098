"""The built model's modelling types (OR-Tools' model_builder), for the layers above that name them.

Why a module: only the formulation (solver.milp) and the solve engine (solver.engine) import
OR-Tools (docs/ARCHITECTURE.md §2, an import-linter contract); a probe that adds a row or fixes
variables (solver.probes) names a variable or sums some through solver.api, which takes them
from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ortools.linear_solver.python import model_builder as mb

Variable = mb.Variable
LinearConstraint = mb.LinearConstraint
LinearExpr = mb.LinearExpr


def total(variables: Iterable[Variable]) -> LinearExpr:
    """The sum of `variables` (a row's left-hand side)."""
    return mb.LinearExpr.sum(list(variables))


def weighted(variables: Sequence[Variable], weights: Sequence[float]) -> LinearExpr:
    """Σ weight·variable (an objective's terms; no terms: the constant 0)."""
    return mb.LinearExpr.weighted_sum(list(variables), list(weights))

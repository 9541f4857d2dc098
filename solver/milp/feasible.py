"""Does a given plan meet the model as it stands? Every row and every variable's bounds,
checked on the model's own numbers.

Why: a probe (solver.probes) changes the built model — a tighter bound, an offer left out, a
row switched on — and starts its solve from the best plan found so far, but only from one
that still meets the changed model: HiGHS drops an infeasible start without a word, and a
plan kept as the probe's answer when the solve finds nothing better must be a plan of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.linear_solver.python import model_builder as mb

TOLERANCE = 1e-6
"""Absolute slack allowed per row and bound, scaled by the row's size (as the solvers' own
feasibility tolerance: a plan HiGHS returned must pass)."""


@dataclass
class ModelNumbers:
    """The model's rows and bounds as arrays, read once and checked against many plans."""

    rows: np.ndarray        # row index of each nonzero
    cols: np.ndarray        # variable index of each nonzero
    coefs: np.ndarray
    row_lo: np.ndarray
    row_hi: np.ndarray
    var_lo: np.ndarray
    var_hi: np.ndarray
    integer: np.ndarray

    @classmethod
    def read(cls, model: mb.Model) -> ModelNumbers:
        proto = model.export_to_proto()
        rows, cols, coefs = [], [], []
        for r, row in enumerate(proto.constraint):
            rows.extend([r] * len(row.var_index))
            cols.extend(row.var_index)
            coefs.extend(row.coefficient)
        return cls(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=float),
                   np.asarray([c.lower_bound for c in proto.constraint], dtype=float),
                   np.asarray([c.upper_bound for c in proto.constraint], dtype=float),
                   np.asarray([v.lower_bound for v in proto.variable], dtype=float),
                   np.asarray([v.upper_bound for v in proto.variable], dtype=float),
                   np.asarray([v.is_integer for v in proto.variable], dtype=bool))

    def vector(self, values: dict[int, float]) -> np.ndarray | None:
        """The plan as a vector over the model's variables (integers rounded); None when it
        names a variable the model no longer has."""
        x = np.zeros(len(self.var_lo))
        for k, v in values.items():
            if k >= len(x):
                return None
            x[k] = v
        x[self.integer] = np.round(x[self.integer])
        return x

    def meets(self, values: dict[int, float], tolerance: float = TOLERANCE) -> bool:
        """Whether the plan `values` (variable index → value; missing ones are 0) meets every
        row and bound of the model as read."""
        x = self.vector(values)
        if x is None:
            return False
        slack = tolerance * np.maximum(1.0, np.abs(x))
        if np.any(x < self.var_lo - slack) or np.any(x > self.var_hi + slack):
            return False
        activity = np.zeros(len(self.row_lo))
        np.add.at(activity, self.rows, self.coefs * x[self.cols])
        size = np.zeros(len(self.row_lo))
        np.add.at(size, self.rows, np.abs(self.coefs * x[self.cols]))
        room = tolerance * np.maximum(1.0, size)
        return bool(np.all(activity >= self.row_lo - room) and np.all(activity <= self.row_hi + room))


def meets(model: mb.Model, values: dict[int, float], tolerance: float = TOLERANCE) -> bool:
    """Whether one plan meets the model as it stands (ModelNumbers.meets, read once)."""
    return ModelNumbers.read(model).meets(values, tolerance)

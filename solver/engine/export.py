"""Handing the built model to other interfaces without losing digits.

Why: OR-Tools' model builder writes MPS and LP text with six significant digits
(1.2345678 becomes 1.23457), enough to turn a plan that spends exactly its budget into
an infeasible one. Both exits here start from the exact protocol buffer instead:
MathOpt gets its own ModelProto (to solve HiGHS with a time limit and keep the
incumbent), and `--export-mps` gets free-format MPS written with every digit.
"""

from __future__ import annotations

import math
from pathlib import Path

from ortools.linear_solver.python import model_builder as mb

from solver.files import write_text


def to_mathopt(model: mb.Model):
    """A MathOpt Model equal to `model`; variable k of the model builder has id k."""
    from ortools.math_opt import model_pb2
    from ortools.math_opt.python import mathopt

    src = model.export_to_proto()
    out = model_pb2.ModelProto(name=src.name)
    ids = list(range(len(src.variable)))
    out.variables.ids.extend(ids)
    out.variables.lower_bounds.extend(v.lower_bound for v in src.variable)
    out.variables.upper_bounds.extend(v.upper_bound for v in src.variable)
    out.variables.integers.extend(v.is_integer for v in src.variable)
    out.objective.maximize = src.maximize
    out.objective.offset = src.objective_offset
    objective = [(k, v.objective_coefficient) for k, v in enumerate(src.variable) if v.objective_coefficient]
    out.objective.linear_coefficients.ids.extend(k for k, _ in objective)
    out.objective.linear_coefficients.values.extend(c for _, c in objective)
    rows, cols, coefs = [], [], []
    for r, row in enumerate(src.constraint):
        for k, c in sorted(zip(row.var_index, row.coefficient)):
            if c:
                rows.append(r)
                cols.append(k)
                coefs.append(c)
    out.linear_constraints.ids.extend(range(len(src.constraint)))
    out.linear_constraints.lower_bounds.extend(c.lower_bound for c in src.constraint)
    out.linear_constraints.upper_bounds.extend(c.upper_bound for c in src.constraint)
    out.linear_constraint_matrix.row_ids.extend(rows)
    out.linear_constraint_matrix.column_ids.extend(cols)
    out.linear_constraint_matrix.coefficients.extend(coefs)
    return mathopt.Model.from_model_proto(out)


def write_mps(model: mb.Model, path: str | Path) -> None:
    """Free-format MPS with full double precision (repr), integer columns in MARKER blocks."""
    src = model.export_to_proto()
    names = [_name(v.name, f"x{k}") for k, v in enumerate(src.variable)]
    rows = [_name(c.name, f"r{k}") for k, c in enumerate(src.constraint)]
    columns: list[list[tuple[str, float]]] = [[] for _ in src.variable]
    for k, v in enumerate(src.variable):
        if v.objective_coefficient:
            columns[k].append(("COST", v.objective_coefficient))
    for r, row in enumerate(src.constraint):
        for k, c in zip(row.var_index, row.coefficient):
            columns[k].append((rows[r], c))
    lines = [f"NAME {_name(src.name, 'gpuplan')}", *(["OBJSENSE MAX"] if src.maximize else []), "ROWS", " N COST"]
    lines += [f" {_sense(c)} {rows[r]}" for r, c in enumerate(src.constraint)]
    lines.append("COLUMNS")
    marker = False
    for k, v in enumerate(src.variable):
        if v.is_integer != marker:
            kind = "'INTORG'" if v.is_integer else "'INTEND'"
            lines.append(f" M{k} 'MARKER' {kind}")
            marker = v.is_integer
        lines += [f" {names[k]} {row} {coef!r}" for row, coef in columns[k]] or [f" {names[k]} COST 0.0"]
    if marker:
        lines.append(" MEND 'MARKER' 'INTEND'")
    lines.append("RHS")
    if src.objective_offset:
        lines.append(f" RHS COST {-src.objective_offset!r}")
    lines += [f" RHS {rows[r]} {_rhs(c)!r}" for r, c in enumerate(src.constraint) if _rhs(c) != 0]
    ranges = [(rows[r], c.upper_bound - c.lower_bound) for r, c in enumerate(src.constraint) if _ranged(c)]
    if ranges:
        lines.append("RANGES")
        lines += [f" RNG {name} {width!r}" for name, width in ranges]
    lines.append("BOUNDS")
    for k, v in enumerate(src.variable):
        lines += _bounds(names[k], v.lower_bound, v.upper_bound)
    lines.append("ENDATA")
    write_text(path, "\n".join(lines) + "\n")   # atomic (solver.files)


def _name(text: str, fallback: str) -> str:
    """MPS names carry no spaces; an empty name gets a positional one."""
    return "".join("_" if ch.isspace() else ch for ch in text) or fallback


def _sense(c) -> str:
    if c.lower_bound == c.upper_bound:
        return "E"
    if math.isinf(c.lower_bound):
        return "L"
    return "G"


def _ranged(c) -> bool:
    return not math.isinf(c.lower_bound) and not math.isinf(c.upper_bound) and c.lower_bound != c.upper_bound


def _rhs(c) -> float:
    return c.upper_bound if _sense(c) == "L" else c.lower_bound if not math.isinf(c.lower_bound) else 0.0


def _bounds(name: str, lo: float, hi: float) -> list[str]:
    if math.isinf(lo) and math.isinf(hi):
        return [f" FR BND {name}"]
    out = []
    if lo == hi:
        return [f" FX BND {name} {lo!r}"]
    if math.isinf(lo):
        out.append(f" MI BND {name}")
    elif lo != 0:
        out.append(f" LO BND {name} {lo!r}")
    if not math.isinf(hi):
        out.append(f" UP BND {name} {hi!r}")
    return out

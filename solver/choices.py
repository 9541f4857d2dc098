"""The names the command line offers as choices, defined where nothing heavy is loaded.

Why a module of its own: typer builds each command's options when `solver.cli` is imported,
so every list a `--backend`, `--x`, `--executor`, `--kind` or `--sheet-detail` choice is built
from must be importable without OR-Tools, pandas or pydantic (issue 34: `gpuplan --help` took
1.3 s because building the choices loaded the whole solver). The library modules that use
these names import them from here, so each list is still written once.
"""

from __future__ import annotations

from typing import Literal

BACKENDS = {"scip": "scip", "highs": "highs", "cp_sat": "sat"}
"""The backends a solve may use (--backend), by OR-Tools' name for each (solver.engine.backends)."""
DEFAULT_BACKEND = "highs"
"""Chosen by measurement (tests/bench/bench_milp.py; README "Performance", tests/bench/HISTORY.md):
HiGHS proved the bundled problems optimal fastest overall; CP-SAT wins some instances, SCIP is slowest."""

AXES = ("deadline", "budget", "spot_share", "vendors")
"""The frontier's axes (solver.analysis.frontier, `gpuplan frontier --x`)."""

EXECUTORS = ("process", "ray")
"""Where a sweep's scenarios run (solver.analysis.sweep, `gpuplan sweep --executor`)."""

DETAILS = ("month", "day", "period")
"""Rows of the allocations sheet: per rental per month (a calendar month with a start_date, else a
30-day block; the default), per day, or per planning period (solver.report.tables, `--sheet-detail`)."""

Kind = Literal["pretrain", "full_finetune", "lora", "qlora", "sweep", "preprocess", "inference"]
"""A job's kind (solver.model.problem, `gpuplan estimate --kind`)."""
Precision = Literal["bf16", "fp16", "fp8"]
"""A job's number format (solver.model.problem, `gpuplan estimate --precision`)."""

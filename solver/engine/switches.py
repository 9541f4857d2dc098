"""The one switch for the solve engine's experimental methods: `GPUPLAN_EXPERIMENTAL`.

Why a switch, and why here: three methods were measured and kept for measuring again after
model changes, but none helps today, so none is on by default (tests/bench/HISTORY.md):
- `lagrange`: a big model's Lagrangian bound (solver.engine.experimental.lagrange) in place
  of the LP relaxation beside it (solver.engine.big). Measured at 60 s on an idle 2-core
  machine (tests/bench/bench_milp.py --backends highs,highs-lagrange, target seeds 1-2), one
  evaluation at the start prices took 47-63 s on one core, the LP 37-55 s; seed 1's
  Lagrangian bound was 2,138,191 CNY against the LP's 2,279,700, seed 2's 2,080,956 against
  2,035,100 but it came too late (no bound at all, and the solve ran to 72 s).
- `rcfix`: reduced-cost fixing (solver.engine.experimental.rcfix) before each HiGHS solve,
  as `solve_milp(reduced_cost_fixing=True)` asks for one solve: exact, measured no faster.
- `fixopt`: LP-guided fix-and-optimize (solver.engine.experimental.fixopt): a mixed A/B
  (faster on the mean, up to 2x slower on some problems), and with it the bundled problems
  get other plans of the same cost, which their golden answers would see.
The default solve path imports none of them (tests/engine/test_experimental.py checks it):
they sit in solver.engine.experimental, loaded only where this switch (or the keyword)
turns one on. This module is outside that package so asking costs no import.

The variable is read at each question, not once at import: a test or a benchmark sets it
for one run, and the worker processes of a sweep inherit it.
"""

from __future__ import annotations

import os

from solver.errors import ProblemError

ENV = "GPUPLAN_EXPERIMENTAL"
"""Comma-separated names of METHODS to switch on, e.g. `GPUPLAN_EXPERIMENTAL=lagrange,rcfix`."""
METHODS = ("lagrange", "rcfix", "fixopt")


def switched_on(method: str) -> bool:
    """Whether `GPUPLAN_EXPERIMENTAL` names `method`. A name there not in METHODS is a
    ProblemError, so a misspelt switch never runs the default in silence; `method` not in
    METHODS is the caller's bug (ValueError)."""
    if method not in METHODS:
        raise ValueError(f"unknown experimental method {method!r}; known: {', '.join(METHODS)}")
    named = {name.strip() for name in os.environ.get(ENV, "").split(",") if name.strip()}
    unknown = sorted(named - set(METHODS))
    if unknown:  # the user's input, so bad input (exit 2), said with its fix
        raise ProblemError(f"unknown experimental method {', '.join(unknown)} in {os.environ[ENV]!r}.", key=ENV,
                           fix=f"name some of {', '.join(METHODS)}, comma-separated, or unset {ENV}.")
    return method in named

"""The LP relaxation of a big model, solved in a child process while the MILP runs.

Why: on a model too big for HiGHS to finish its root LP within the time limit, a
time-limited solve otherwise ends with no lower bound at all. HiGHS' interior-point
method without crossover solves the same LP several times faster than the dual simplex
HiGHS' MIP uses for its root (target synthetic instance, 187k variables: 37-55 s against
470 s; large, 45k: 6-8 s against 28 s), so on the second core it gives, within the time
limit, a lower bound on every plan and a solution that says where the jobs' work goes
(solver.engine.warmstart.lp_shortlist).

Why a child process, not a thread: OR-Tools cannot interrupt HiGHS (a SolveInterrupter
is ignored), and a MILP that ends early must neither wait for the LP nor leave it
running in the background of the caller's process.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np
from ortools.linear_solver import linear_solver_pb2
from ortools.linear_solver.python import model_builder as mb

from solver.clock import stopped
from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF

BOUND_SLACK = 1e-6
"""Relative amount taken off the LP value before it is used as a bound. Without crossover
the interior point's objective is exact only to its tolerances (relative primal/dual
infeasibility 1e-7, gap 1e-8); this margin keeps the stated bound on the safe side."""

MIN_SECONDS = 1.0
"""Below this the child does not try: HiGHS ignores a time limit of a fraction of a second
(measured: 0.2 s on the large synthetic LP ran 6 s to optimal), and no big LP is solved
that fast anyway."""

INFEASIBLE = 2
"""The child's exit code when HiGHS proves the LP relaxation infeasible."""

IPM_OPTIONS = f"solver=ipm\nrun_crossover=off\noutput_flag=false\npresolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}"
"""Interior point without crossover, quiet, and presolve's faulty rule off as in the MILP: the
child's "infeasible" ends a big solve as proof (solver.engine.big.run_big), so it must not rest
on the rule that called a feasible problem infeasible. Large synthetic LP: 5.7-6.1 s either way."""


def cores() -> int:
    """CPU cores this process may use (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Relaxation:
    """A solved LP relaxation: its optimal value and every variable's value (by index)."""

    value: float
    values: np.ndarray

    @property
    def bound(self) -> float:
        """A lower bound on every integer plan's cost (see BOUND_SLACK)."""
        return self.value - BOUND_SLACK * abs(self.value)


class BackgroundRelaxation:
    """Starts the LP relaxation of `model` (its bounds as they are now) in a child process.

    `discounts`: (v, x, y, rows) per volume discount of the model (solver.milp.capacity:
    nodes at full price v ≤ x, flag y, the indices of its three rows; capacity.discount_table
    makes it); the child gives every
    one in full (see `full_discount`). Use as a context manager: leaving it stops the child
    if it is still running.
    """

    MODULE = "solver.engine.relaxation"
    """The child's module (`python -m`); solver.engine.experimental.lagrange's child answers the same way."""

    def __init__(self, model: mb.Model, seconds: float, *, discounts: np.ndarray | None = None,
                 log: bool = False) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="gpuplan-lp-")
        folder = Path(self._dir.name)
        self._out = folder / "relaxation.npz"
        model.export_to_proto_file(str(folder / "model.pb"))
        np.save(folder / "discounts.npy", np.zeros((0, 6), dtype=np.int64) if discounts is None else discounts)
        self._files(folder)
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", self.MODULE, str(folder / "model.pb"), str(self._out), repr(float(seconds))],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=None if log else subprocess.DEVNULL,
            start_new_session=True)  # Ctrl-C in a terminal goes to the command, which stops this child itself
        self._result: Relaxation | None = None

    def _files(self, folder: Path) -> None:
        """What else the child reads beside the model (none for the LP)."""

    def wait(self, seconds: float) -> Relaxation | None:
        """The relaxation, if the child finishes within `seconds` with an optimal LP; else None."""
        if self._result is None and self._proc.returncode is None:
            until = time.perf_counter() + max(seconds, 0.0)
            while True:  # in short steps: the command's stop (Ctrl-C) ends the wait, not only `seconds`
                try:
                    self._proc.wait(timeout=max(0.0, min(0.2, until - time.perf_counter())))
                    break
                except subprocess.TimeoutExpired:
                    if stopped() or time.perf_counter() >= until:
                        return None
        if self._result is None and self._proc.returncode == 0 and self._out.exists():
            with np.load(self._out) as data:
                self._result = Relaxation(float(data["value"]), data["values"])
        return self._result

    @property
    def running(self) -> bool:
        """The child is still solving."""
        return self._proc.poll() is None

    @property
    def infeasible(self) -> bool:
        """The child proved the LP relaxation infeasible, so the MILP has no plan either."""
        return self._proc.returncode == INFEASIBLE

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._dir.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def full_discount(proto, discounts: np.ndarray) -> bool:
    """Give every volume discount in full (no node at full price), in place; False (and
    `proto` untouched) if some row could not take it.

    Why: the LP relaxation of a discount (v ≤ x, v ≥ x − X̄·y, x ≥ N0·y, y ∈ [0,1]) already
    reaches v = 0 for every x ≤ X̄ (y = min(1, x/N0) is enough since X̄ ≥ N0), so fixing
    v = y = 0 and freeing the row v ≥ x − X̄·y leaves the LP's value as it is while its
    three rows and two columns go: on the target synthetic instance the interior point then took 37 s
    instead of 51 s. x already carries the discounted price (solver.milp.capacity). That
    lowers v from wherever it was to 0; this only keeps the LP a relaxation if lowering v
    can break no row and not raise the cost (a budget row, cost ≤ B, is fine), and if y
    sits in no row but its own and costs nothing, which is checked first.
    """
    if proto.maximize:
        return False
    full = {int(v) for v, *_ in discounts}
    flags = {int(y) for _, _, y, *_ in discounts}
    own = {int(r) for row in discounts[:, 3:] for r in row}
    if any(proto.variable[v].objective_coefficient < 0 for v in full) or any(
            proto.variable[y].objective_coefficient < 0 for y in flags):
        return False
    for r, row in enumerate(proto.constraint):
        if r in own:
            continue
        for k, c in zip(row.var_index, row.coefficient):
            if k in flags or (k in full and not ((c >= 0 and row.lower_bound == -math.inf) or
                                                 (c <= 0 and row.upper_bound == math.inf))):
                return False
    for v, _x, y, _le, cap, _least in discounts:
        for k in (int(v), int(y)):
            proto.variable[k].lower_bound = proto.variable[k].upper_bound = 0.0
        proto.constraint[int(cap)].lower_bound, proto.constraint[int(cap)].upper_bound = -math.inf, math.inf
    return True


def solve_relaxation(model_path: str, out_path: str, seconds: float) -> int:
    """The child's work: read the model, drop integrality, solve by interior point, save.

    Exit code 0 with the file written only when HiGHS proves the LP optimal; INFEASIBLE when
    it proves it infeasible; 1 otherwise (out of time, or nothing to try)."""
    if seconds < MIN_SECONDS:
        return 1
    proto = linear_solver_pb2.MPModelProto()
    proto.ParseFromString(Path(model_path).read_bytes())
    if proto.maximize:  # its LP value would bound plans from above; callers use it from below
        return 1
    discounts = np.load(Path(model_path).with_name("discounts.npy"))
    if len(discounts) and full_discount(proto, discounts):
        Path(model_path).write_bytes(proto.SerializeToString())
    model = mb.Model()
    if not model.import_from_proto_file(model_path):
        return 1
    for var in model.get_variables():
        var.is_integral = False
    solver = mb.Solver("highs")
    solver.set_time_limit_in_seconds(seconds)
    solver.set_solver_specific_parameters(IPM_OPTIONS)
    start = time.perf_counter()
    status = solver.solve(model)
    if status != mb.SolveStatus.OPTIMAL:
        print(f"LP relaxation: {status.name} after {time.perf_counter() - start:.1f} s", file=sys.stderr)
        return INFEASIBLE if status == mb.SolveStatus.INFEASIBLE else 1
    values = solver.values(model.get_variables()).to_numpy()
    with open(out_path, "wb") as out:
        np.savez(out, value=solver.objective_value, values=values)
    return 0


if __name__ == "__main__":
    sys.exit(solve_relaxation(sys.argv[1], sys.argv[2], float(sys.argv[3])))

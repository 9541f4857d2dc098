"""What the solvers' C++ code prints never reaches standard output (where --json goes).

HiGHS printed "HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();"
into `gpuplan frontier … --json`, so the JSON did not parse. The fakes below print on
file descriptor 1 the way native code does, around the real solver call.
"""

import os

import pytest
from ortools.linear_solver.python import model_builder as mb
from ortools.math_opt.python import mathopt

from tests.builders import catalog, hourly, job, problem
from solver.api import build
from solver.engine.solve import solve_milp

NOISE = b"native noise on fd 1\n"


def noisy(real):
    def call(*args, **kwargs):
        os.write(1, NOISE)
        return real(*args, **kwargs)
    return call


def tiny():
    return build(problem(job(days=8, deadline_days=1), horizon_days=1), catalog(hourly("H", 6)))[1]


@pytest.mark.parametrize("path", ["model_builder", "mathopt"])
def test_native_prints_go_to_stderr(path, capfd, monkeypatch):
    if path == "model_builder":
        monkeypatch.setattr(mb.Solver, "solve", noisy(mb.Solver.solve))
        solution = solve_milp(tiny(), backend="scip")  # SCIP and CP-SAT go through the model builder
    else:
        monkeypatch.setattr(mathopt, "solve", noisy(mathopt.solve))
        solution = solve_milp(tiny())                   # HiGHS goes through MathOpt
    print("python output stays")
    out, err = capfd.readouterr()
    assert solution.status == "optimal"
    assert NOISE.decode() not in out and "python output stays" in out
    assert NOISE.decode() in err

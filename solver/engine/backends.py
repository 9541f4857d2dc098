"""One call of a solver on the model: OR-Tools' model builder for SCIP and CP-SAT, MathOpt for
HiGHS; time limit, relative gap and the solvers' own settings; the answer in one shape (`Run`).

What is done with the answer (polishing, pricing, the status) is solver.engine.run's; which
calls to make for a big model is solver.engine.big's.
"""

from __future__ import annotations

import math
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.clock import hard_stop, stopped
from solver.engine import child
from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF
from solver.engine.progress import PROGRESS, Listener, report_progress
from solver.milp.core import Milp
from solver.milp.solution import OPTIMALITY_GAP, NoSolution

from solver.choices import BACKENDS, DEFAULT_BACKEND  # re-exported: written without OR-Tools, for the CLI


@dataclass
class Run:
    """What one backend call returned, in one shape for both OR-Tools interfaces."""

    values: dict[int, float] | None
    objective: float = 0.0
    bound: float = 0.0
    optimal: bool = False
    proven_infeasible: bool = False
    status_name: str = ""


@dataclass
class Incumbent:
    """A plan of the model in hand (from a restricted solve, or a repaired one): variable values
    by id, and its cost; a HiGHS solve may start from it."""

    values: dict[int, float]
    cost: float


def run_model_builder(milp: Milp, backend: str, time_limit: float | None, gap: float | None, log: bool) -> Run:
    """One solve through OR-Tools' model builder (SCIP and CP-SAT)."""
    solver = mb.Solver(BACKENDS[backend])
    if not solver.solver_is_supported():
        raise ValueError(f"backend {backend!r} is not available in this OR-Tools build")
    time_limit = hard_stop(time_limit)  # SCIP and CP-SAT take no interrupter: the budget's end is their clock
    if time_limit:
        solver.set_time_limit_in_seconds(time_limit)
    params = _parameters(backend, gap)
    if params:
        solver.set_solver_specific_parameters(params)
    solver.enable_output(log)
    with native_stdout_to_stderr():
        status = solver.solve(milp.model)
    if status not in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
        return Run(None, proven_infeasible=status == mb.SolveStatus.INFEASIBLE, status_name=status.name)
    variables = milp.model.get_variables()
    values = dict(zip((v.index for v in variables), solver.values(variables).to_numpy()))
    return Run(values, solver.objective_value, solver.best_objective_bound, status == mb.SolveStatus.OPTIMAL)


def _parameters(backend: str, gap: float | None) -> str:
    """Solver-specific settings: the relative gap, and HiGHS kept quiet (it ignores enable_output)
    with its faulty presolve rule off (HIGHS_PRESOLVE_RULES_OFF)."""
    lines = ["output_flag=false", f"presolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}"] if backend == "highs" else []
    if gap is not None:
        lines.append({"scip": f"limits/gap = {gap}", "highs": f"mip_rel_gap={gap}",
                      "cp_sat": f"relative_gap_limit:{gap}"}[backend])
    return "\n".join(lines)


def mathopt_once(model, time_limit: float | None, gap: float | None, log: bool, listener: Listener | None,
                 hint: dict[int, float] | None = None, *, ipm_lp: bool = False, node_limit: int | None = None):
    """One HiGHS solve of a MathOpt model, optionally from a MIP start (values by variable id).
    node_limit: stop after that many branch-and-bound nodes (a limit that, unlike time, stops
    the same search at the same place on every run: solver.engine.tiebreak).
    ipm_lp: HiGHS' MIP solves its LPs by interior point (`mip_lp_solver=ipm`), see
    solver.engine.big.run_big."""
    from ortools.math_opt.python import mathopt

    if PROGRESS.node_limit is not None:  # solve --deterministic: nodes, not seconds (the budget still ends it)
        node_limit, time_limit = min(node_limit or PROGRESS.node_limit, PROGRESS.node_limit), None
    time_limit = hard_stop(time_limit)  # the command's budget end, as HiGHS' own clock (solver.clock)
    settings = dict(time_limit=time_limit, gap=gap if gap is not None else OPTIMALITY_GAP, log=log,
                    node_limit=node_limit, ipm_lp=ipm_lp)
    if child.wanted(model):
        return _in_child(model, settings, hint, listener, log)
    params = child.highs_parameters(**settings)
    model_params = None if hint is None else mathopt.ModelSolveParameters(solution_hints=[mip_start(model, hint)])
    callback = (lambda lines: report_progress(lines, listener)) if listener is not None else None
    with native_stdout_to_stderr():
        PROGRESS.in_process = True
        try:
            return mathopt.solve(model, mathopt.SolverType.HIGHS, params=params, model_params=model_params,
                                 msg_cb=callback, interrupter=PROGRESS.interrupter)
        except Exception as exc:
            if not solver_failed(exc):
                raise
            raise NoSolution(f"HiGHS stopped with an error of its own on this model ({status_text(exc)}); "
                             "no plan from this solve", proven=False) from None
        finally:
            PROGRESS.in_process = False


def _in_child(model, settings: dict, hint: dict[int, float] | None, listener: Listener | None, log: bool):
    """mathopt_once's solve in a child process (solver.engine.child): stopped within a tenth of a
    second by Ctrl-C or the budget's end, with the last plan HiGHS found. Its log lines go to the
    listener as in process, and to stderr when the log is asked for."""
    start = None if hint is None else [(v.id, x) for v, x in mip_start(model, hint).variable_values.items()]

    def on_lines(lines: list[str]) -> None:
        if log:
            print("\n".join(lines), file=sys.stderr, flush=True)
        if listener is not None:
            report_progress(lines, listener)
    try:
        return child.solve_in_child(model, {**settings, "log": False}, start, on_lines, stopped)
    except child.ChildFailed as exc:
        raise NoSolution(f"HiGHS stopped with an error of its own on this model ({exc}); no plan from this solve",
                         proven=False) from None


def solver_failed(exc: BaseException) -> bool:
    """Is `exc` HiGHS (through MathOpt) refusing or failing a solve, rather than a bug of ours?"""
    return _solver_status(exc) is not None


def status_text(exc: BaseException) -> str:
    """The solver's own words: the status error's message where the chain has one."""
    status = _solver_status(exc) or exc
    return str(status).strip() or type(status).__name__


def _solver_status(exc: BaseException) -> BaseException | None:
    """The solver's status error in `exc`'s chain. MathOpt raises its status as an error; OR-Tools
    9.15 may fail converting it (an AttributeError from `_status_not_ok_to_exception`, seen on a
    user-like problem: `HighsStatus: kError [INTERNAL]` on a restricted model), so the chain is read."""
    for e in (exc.__context__, exc.__cause__, exc):
        if e is not None and (type(e).__name__ == "StatusNotOk" or "HighsStatus" in str(e)):
            return e
    return None


@contextmanager
def native_stdout_to_stderr():
    """Send what the solvers' C++ code prints on standard output to standard error meanwhile.

    Why: HiGHS prints debugging lines of its own to stdout even with output off (seen:
    "HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();" in the
    middle of `frontier --json`), and stdout is where --json and tables go. Python's own
    writes keep going to sys.stdout's buffer, flushed first so nothing is reordered."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (an embedding host): nothing to protect
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def mip_start(model, values: dict[int, float]):
    """A MathOpt solution hint with every variable set: integers rounded (a solver's values
    carry tolerance noise), continuous ones as they are (an analysis' slack may be 2.5)."""
    from ortools.math_opt.python import mathopt

    start = {v: values.get(v.id, 0.0) for v in model.variables()}
    return mathopt.SolutionHint(variable_values={v: round(x) if v.integer else x for v, x in start.items()})


def read(result, hint: Incumbent | None = None) -> Run:
    """A MathOpt result as a Run; if HiGHS kept no plan of its own, `hint` stands (with
    HiGHS' bound: solve_milp prices every integer plan from the model's cost terms)."""
    from ortools.math_opt.python import mathopt

    reason = result.termination.reason
    bound = result.termination.objective_bounds.dual_bound
    if reason in (mathopt.TerminationReason.UNBOUNDED, mathopt.TerminationReason.INFEASIBLE_OR_UNBOUNDED):
        return Run(None, status_name=reason.name)  # no plan to read; a cost model is never unbounded
    if not result.has_primal_feasible_solution():
        if hint is not None:
            return Run(hint.values, hint.cost, bound if math.isfinite(bound) else -math.inf)
        return Run(None, proven_infeasible=reason == mathopt.TerminationReason.INFEASIBLE, status_name=reason.name)
    return Run(result_values(result), result.objective_value(), bound, reason == mathopt.TerminationReason.OPTIMAL)


def result_values(result) -> dict[int, float]:
    """A MathOpt result's plan by variable id (= the model builder's index, solver.engine.export)."""
    return {var.id: value for var, value in result.variable_values().items()}

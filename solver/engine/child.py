"""A HiGHS MILP solve in a child process, so that Ctrl-C and the budget's end stop it at once.

Why: HiGHS through OR-Tools' MathOpt does not heed the SolveInterrupter (tests/bench/HISTORY.md:
a solve interrupted after 2 s ran to its 40-s limit), and an exception raised from its log
callback ends the whole process. So a command's long solves run in a child (`python -m
solver.engine.child FOLDER`, in a session of its own so a terminal's Ctrl-C reaches only the
parent), which the parent kills when the command is stopped. Nothing is lost with it: HiGHS
appends each improving plan to a file as it finds it (its `mip_improving_solution_save`), the
log lines stream back on the child's stdout (the progress line and the best bound), and after a
kill the parent reads the last whole plan in that file as the solve's answer, with the best
bound the log showed.

The parent (`solve_in_child`) hands over the exact model (its MathOpt proto: variable ids kept),
the settings (`highs_parameters`, the same function the in-process solve builds them with) and
the MIP start, and gets back MathOpt's own result proto, parsed against the same model, so the
caller reads it exactly as an in-process result (solver.engine.backends.read).
"""

from __future__ import annotations

import json
import math
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF, HIGHS_PSCOST_MIN_RELIABLE
from solver.engine.progress import _BNB_LINE, PROGRESS, _number

CHILD_VARIABLES = 3_000
"""A stoppable command's MILP solves of at least this many variables run in a child. Smaller ones
end within about a second anyway, and starting the child costs about 0.3 s (importing MathOpt)."""
POLL_SECONDS = 0.1
"""How often the parent looks at the command's stop while the child solves."""
GRACE_SECONDS = 5.0
"""A child still running this long after its own time limit is killed (HiGHS reads its clock
inside the simplex, so it ends within a second of the limit; this is only the backstop)."""
INTERRUPT_AT_PLAN = "GPUPLAN_INTERRUPT_AT_PLAN"
"""Environment variable for tests: the process sends itself SIGINT when the n-th solve in a child
first shows a plan in its log: a Ctrl-C in the middle of a solve at a point that does not depend
on the machine's speed (tests/engine/test_child.py; solver.clock's GPUPLAN_INTERRUPT_AFTER_SOLVES
stops between solves)."""
_SOLVES = [0]  # child solves this process started, for INTERRUPT_AT_PLAN


def highs_parameters(time_limit: float | None, gap: float, log: bool, node_limit: int | None, ipm_lp: bool):
    """MathOpt's parameters of one HiGHS solve, in the child and in process alike (presolve's faulty
    rule off, pseudo-cost reliability; interior point for the MIP's LPs when asked)."""
    from ortools.math_opt.python import mathopt

    params = mathopt.SolveParameters(time_limit=timedelta(seconds=max(time_limit, 0.1)) if time_limit else None,
                                     enable_output=log, relative_gap_tolerance=gap, node_limit=node_limit)
    params.highs.int_options["presolve_rule_off"] = HIGHS_PRESOLVE_RULES_OFF
    params.highs.int_options["mip_pscost_minreliable"] = HIGHS_PSCOST_MIN_RELIABLE
    if ipm_lp:
        params.highs.string_options["mip_lp_solver"] = "ipm"
    return params


def wanted(model) -> bool:
    """Should this solve run in a child: a stoppable command is running (its interrupter is set),
    and the model is a MILP of CHILD_VARIABLES or more."""
    if PROGRESS.interrupter is None or os.environ.get("GPUPLAN_IN_PROCESS"):
        return False
    variables = list(model.variables())
    return len(variables) >= CHILD_VARIABLES and any(v.integer for v in variables)


class ChildFailed(RuntimeError):
    """The child ended without an answer: HiGHS' own error (its words), or the process died."""


def solve_in_child(model, params: dict, hint: list[tuple[int, float]] | None, on_lines, stop) -> object:
    """Solve `model` in a child; a MathOpt SolveResult of `model`.

    params: highs_parameters' arguments; hint: (variable id, value) pairs of a MIP start;
    on_lines(lines): each batch of HiGHS' log lines as they come; stop(): true once the command
    is stopped, then the child is killed and the last plan it found is the answer (or none)."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-solve-") as name:
        folder = Path(name)
        (folder / "model.pb").write_bytes(model.export_model().SerializeToString())
        (folder / "spec.json").write_text(json.dumps({"params": params, "hint": hint}), encoding="utf-8")
        proc = subprocess.Popen([sys.executable, "-m", "solver.engine.child", str(folder)],
                                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, bufsize=1,
                                start_new_session=True)
        _SOLVES[0] += 1
        on_lines = _interrupting(on_lines, _SOLVES[0])
        lines: queue.Queue = queue.Queue()
        reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
        reader.start()
        limit = params.get("time_limit")
        give_up = None if not limit else time.perf_counter() + limit + GRACE_SECONDS
        bound, killed = -math.inf, False
        try:
            while proc.poll() is None:
                bound = max(bound, _relay(lines, on_lines, POLL_SECONDS))
                if stop() or (give_up is not None and time.perf_counter() > give_up):
                    killed = True
                    break
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            reader.join(timeout=2)
        bound = max(bound, _relay(lines, on_lines, 0.0))
        return _answer(model, folder, proc.returncode, killed, bound)


def _interrupting(on_lines, solve: int):
    """on_lines, and SIGINT to this process at the first plan of the INTERRUPT_AT_PLAN-th solve."""
    at = os.environ.get(INTERRUPT_AT_PLAN, "")
    if not at.isdigit() or int(at) != solve:
        return on_lines
    sent = []

    def relay(batch: list[str]) -> None:
        on_lines(batch)
        plans = (m.group(2) for m in map(_BNB_LINE.match, batch) if m)
        if not sent and any(_number(p) is not None for p in plans):
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
    return relay


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _relay(lines: queue.Queue, on_lines, wait: float) -> float:
    """Pass the lines that came (waiting up to `wait` for the first) on; the best bound among them."""
    batch: list[str] = []
    try:
        item = lines.get(timeout=wait) if wait > 0 else lines.get_nowait()
        while item is not None:
            batch.append(item)
            item = lines.get_nowait()
    except queue.Empty:
        pass
    if batch:
        on_lines(batch)
    bounds = (_number(m.group(1)) for m in map(_BNB_LINE.match, batch) if m)  # HiGHS' log, read as the spinner reads it
    return max((b for b in bounds if b is not None), default=-math.inf)


def _answer(model, folder: Path, code: int | None, killed: bool, bound: float):
    """The child's result, or after a kill the last plan HiGHS saved (with the best bound heard)."""
    from ortools.math_opt import result_pb2
    from ortools.math_opt.python import mathopt

    result = folder / "result.pb"
    if not killed and code == 0 and result.exists():
        return mathopt.parse_solve_result(result_pb2.SolveResultProto.FromString(result.read_bytes()), model)
    error = folder / "error.txt"
    if not killed and error.exists():
        raise ChildFailed(error.read_text(encoding="utf-8"))
    if not killed:
        raise ChildFailed(f"the solver's process ended with exit code {code}")
    return mathopt.parse_solve_result(_stopped(folder / "improving.txt", model, bound), model)


def last_plan(path: Path, columns: int) -> tuple[float, list[float]] | None:
    """The last whole plan in HiGHS' improving-solution file: blocks of `Objective X`, `# Columns N`,
    then N values in column order (= MathOpt's variable order); a block cut short by the kill is skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for block in reversed(text.split("Objective")[1:]):
        rows = block.splitlines()
        values = [r.split()[-1] for r in rows[2:] if r.strip()]
        if len(rows) < 2 or len(values) != columns:
            continue
        try:
            return float(rows[0]), [float(v) for v in values]
        except ValueError:
            continue
    return None


def _stopped(path: Path, model, bound: float):
    """A result proto for a solve stopped by the command: the last saved plan, feasible, or none."""
    from ortools.math_opt import result_pb2, solution_pb2

    proto = result_pb2.SolveResultProto()
    proto.termination.limit = result_pb2.LIMIT_INTERRUPTED
    proto.termination.detail = "stopped by the command (Ctrl-C or its budget)"
    proto.termination.objective_bounds.dual_bound = bound
    status = proto.termination.problem_status
    status.primal_status = status.dual_status = result_pb2.FEASIBILITY_STATUS_UNDETERMINED
    ids = sorted(v.id for v in model.variables())
    plan = last_plan(path, len(ids))
    if plan is None:
        proto.termination.reason = result_pb2.TERMINATION_REASON_NO_SOLUTION_FOUND
        proto.termination.objective_bounds.primal_bound = math.inf
        return proto
    cost, values = plan
    proto.termination.reason = result_pb2.TERMINATION_REASON_FEASIBLE
    proto.termination.objective_bounds.primal_bound = cost
    status.primal_status = result_pb2.FEASIBILITY_STATUS_FEASIBLE
    primal = proto.solutions.add().primal_solution
    primal.variable_values.ids.extend(ids)
    primal.variable_values.values.extend(values)
    primal.objective_value = cost
    primal.feasibility_status = solution_pb2.SOLUTION_STATUS_FEASIBLE
    return proto


def main(folder: Path) -> int:
    """The child: solve the model in `folder`, HiGHS' log lines on stdout, its result proto beside."""
    from ortools.math_opt import model_pb2
    from ortools.math_opt.python import mathopt

    _end_with(os.getppid())
    spec = json.loads((folder / "spec.json").read_text(encoding="utf-8"))
    model = mathopt.Model.from_model_proto(model_pb2.ModelProto.FromString((folder / "model.pb").read_bytes()))
    params = highs_parameters(**spec["params"])
    params.highs.bool_options["mip_improving_solution_save"] = True
    params.highs.string_options["mip_improving_solution_file"] = str(folder / "improving.txt")
    model_params = None
    if spec["hint"] is not None:
        hint = {model.get_variable(i): x for i, x in spec["hint"]}
        model_params = mathopt.ModelSolveParameters(solution_hints=[mathopt.SolutionHint(variable_values=hint)])
    try:
        result = mathopt.solve(model, mathopt.SolverType.HIGHS, params=params, model_params=model_params,
                               msg_cb=lambda lines: print("\n".join(lines), flush=True))
    except Exception as exc:  # HiGHS refusing or failing the model: its words for the parent
        (folder / "error.txt").write_text(f"{type(exc).__name__}: {exc} {exc.__context__ or ''}".strip(),
                                          encoding="utf-8")
        return 3
    staged = folder / "result.pb.part"
    staged.write_bytes(result.to_proto().SerializeToString())
    staged.replace(folder / "result.pb")
    return 0


def _end_with(parent: int) -> None:
    """End this child when its parent is gone (killed outright, so it could not kill the child):
    a solve with no time limit would otherwise run on alone. Checked twice a second."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(4)
    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

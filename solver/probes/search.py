"""The frontiers' and min-time's changes (solver.session on the engine): one job's fabric choice
fixed (`Choice`), and a feasibility probe that returns the plan it found (`any_plan`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from solver import api
from solver.probes.changes import Change, Undo
from solver.probes.engine import Answer, KEEP_PLANS, Probes
from solver.probes.readings import NoObjective



@dataclass(eq=False)
class Choice(Change):
    """One job's fabric choice fixed (flag k at 1, the others at 0; solver.milp.decompose), freed
    after: solver.session searches the choices one probe at a time. Tightening: a choice's plans
    are plans of the model."""

    flags: Sequence[api.Variable] = ()
    k: int = 0
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        saved = [(v, v.lower_bound, v.upper_bound) for v in self.flags]
        for i, flag in enumerate(self.flags):
            flag.lower_bound = flag.upper_bound = 1.0 if i == self.k else 0.0

        def undo() -> None:
            for v, lo, hi in saved:
                v.lower_bound, v.upper_bound = lo, hi
        return undo


def any_plan(probes: Probes, *changes: Change, time_limit: float | None = None) -> Answer:
    """Some plan of the model with `changes` (the first one found: every plan costs 0 to the
    solver), as an Answer whose solution is priced under the cost when it is a plan an earlier
    probe found (answered without a solve, `solved` False). infeasible: proven none; unknown:
    the time ran out first. OutOfTime when the command's time is spent before the solve."""
    undo = [c.apply(probes.milp) for c in changes]
    try:
        known = probes._start()
    finally:
        for u in reversed(undo):
            u()
    if known is not None:
        probes.answered_without_solve += 1
        return Answer("feasible", -math.inf, None, known, solved=False)
    kept, probes.known = probes.known, []  # none meets it: the probe need not check them again
    try:
        return probes.probe(*changes, NoObjective(), verify=False, time_limit=time_limit)
    finally:
        probes.known = kept + probes.known
        del probes.known[:-KEEP_PLANS]

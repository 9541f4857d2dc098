"""The probe engine: one built model under every question a command asks (issue 34).

Why: an analysis — why, negotiate, the infeasibility explanation, what-if, the frontiers, the
MFU margin, the baselines — asks many questions of one problem: "and with this offer left
out?", "at this price?", "with this budget?". Asked as new problems, each cost an Instance, a
model and a cold solve (`why` on global-burst built 78 Instances and 81 models; 90 % of the
analyses' time went to cold solves). Here the base model is built once and each question is
a *probe*: a list of `Change`s applied to the built model, solved, and undone.

What one probe reuses of the others:
- a start: the cheapest plan found so far that still meets the changed model (checked on the
  model's own numbers, solver.milp.feasible), priced under its objective, is the solve's MIP
  start and stands when the solve finds nothing better in its time;
- a bound: a probe whose changes only tighten the model (`Change.tightens`: every plan after
  is a plan before, with the same cost) cannot be cheaper than the base optimum, so the base
  bound bounds it; when the start already costs that, the probe is answered without a solve.

Every answer is an interval from a proven bound to a plan's cost (`Answer.low`, `Answer.cost`):
one number when proven, "+23,954 to +25,100 CNY" when the time ran out first. One clock for
the command (solver.clock): each solve is cut to what is left; a probe with no time left
raises OutOfTime for the caller to report what it has.

The changes say what they do in words (`Change.words`), so what a user reads is generated from
the change itself, never parsed back from edit text.

The package: `engine` (Probes, Answer), `changes` (the generic changes: bounds, a switchable
row, costs, the LP relaxation, a family's limit), and the analyses' own changes written the same
way: `prices` (negotiate, baselines), `readings` (an edited problem as changes: margin, what-if,
sweep, explain), `elastic` (slack switched on and off; why's twin), `search` (the frontiers'
fabric choices). Import them from here.
"""

from solver.probes.changes import AtLeast, Change, Costs, Limit, Relaxed, RowBounds, Undo, VarBounds
from solver.probes.elastic import Objective, add_slacks, slack_on, twin
from solver.probes.engine import KEEP_PLANS, Answer, Probes
from solver.probes.prices import Reprice, Restock, early_nodes, no_budget, reprice
from solver.probes.readings import (
    NoObjective, Pinned, ReadAs, ScaledWork, bound_changes, budget_changes, edit_changes, exists,
)
from solver.probes.search import Choice, any_plan

__all__ = [
    "Probes", "Answer", "KEEP_PLANS",
    "Change", "Undo", "RowBounds", "VarBounds", "AtLeast", "Costs", "Relaxed", "Limit",
    "Reprice", "reprice", "no_budget", "early_nodes", "Restock",
    "ScaledWork", "Pinned", "NoObjective", "exists", "ReadAs", "bound_changes", "budget_changes", "edit_changes",
    "Objective", "add_slacks", "slack_on", "twin",
    "Choice", "any_plan",
]

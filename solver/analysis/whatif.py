"""What-if: the same problem with a few edits, solved beside the baseline.

Why beside the baseline: a number alone ("24.1M") means little; what users negotiate on
is the difference — what the edit saves, which capacity moves where, and which limit
now binds (a cheaper vendor is worth nothing if the site's power quota still binds).

An edit that binds nothing changes nothing: when the baseline plan still passes the
verifier under the edits and costs no more than the edited problem's optimum, the scenario
is the baseline plan itself, re-read under the edits (`kept_baseline`). Why: a cost model
has many optimal plans, and another one of the same cost (a finish a day later, a deadline
that "now binds") would show a tie as a change.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from solver.analysis.edits import Change, apply_edits
from solver.api import DEFAULT_BACKEND, NotInModel, pin_schedule, solve_problem
from solver.errors import Infeasible, PlanRejected
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.verify import verify_plan

CENT = 0.01
"""Costs within a cent are the same cost (plans' costs are rounded to cents)."""


@dataclass
class Outcome:
    """One solve: a plan, or why there is none."""

    plan: Plan | None
    infeasible: str | None = None
    reasons: list[str] = field(default_factory=list)
    proven: bool = True                 # infeasible: proven, or no plan found in the time limit
    explanation: dict | None = None     # infeasible and asked for: solver.analysis.explain's payload
    kept_baseline: bool = False         # the scenario is the baseline plan, re-read under the edits

    @property
    def cost(self) -> float | None:
        return self.plan.total_cost if self.plan else None


@dataclass
class WhatIf:
    baseline: Outcome
    scenario: Outcome
    changes: list[Change]
    currency: str                       # the problem's, as written: the costs and the delta are in it

    @property
    def delta(self) -> float | None:
        """Scenario cost minus baseline cost (negative: the edits save money)."""
        if self.baseline.cost is None or self.scenario.cost is None:
            return None
        return self.scenario.cost - self.baseline.cost

    @property
    def changed(self) -> bool:
        """False when the baseline plan stands under the edits (the edits bind nothing)."""
        return not self.scenario.kept_baseline

    @property
    def same_cost(self) -> bool:
        """Both sides have a plan of the same cost (to the cent)."""
        return self.delta is not None and abs(self.delta) < CENT

    def mix_changes(self) -> list[tuple[str, float, float]]:
        """(vendor/gpu/mode @ datacenter, GPU-days before, after) for every line that moved;
        none when either side has no plan (an infeasible side rents nothing to compare)."""
        if self.baseline.plan is None or self.scenario.plan is None:
            return []
        before, after = gpu_days(self.baseline.plan), gpu_days(self.scenario.plan)
        keys = sorted(set(before) | set(after))
        return [(k, before.get(k, 0.0), after.get(k, 0.0)) for k in keys
                if abs(before.get(k, 0.0) - after.get(k, 0.0)) > 1e-9]

    def binding_changes(self) -> tuple[list[str], list[str]]:
        """(limits that bind now and did not, limits that no longer bind), by kind and name;
        none when either side has no plan (its limits did not "stop binding", it has none)."""
        if self.baseline.plan is None or self.scenario.plan is None:
            return [], []
        before, after = _binding(self.baseline.plan), _binding(self.scenario.plan)
        return [after[k] for k in after if k not in before], [before[k] for k in before if k not in after]

    def to_dict(self) -> dict:
        new, gone = self.binding_changes()
        return {
            "currency": self.currency,
            "edits": sorted({c.edit for c in self.changes}, key=[c.edit for c in self.changes].index),
            "changes": [{"where": c.where, "old": c.old, "new": c.new} for c in self.changes],
            "baseline": _outcome_dict(self.baseline),
            "scenario": {**_outcome_dict(self.scenario), "changed": self.changed,
                         "kept_baseline_plan": self.scenario.kept_baseline},
            "delta": None if self.delta is None else round(self.delta, 2),
            "mix_changes": [{"line": k, "gpu_days_before": b, "gpu_days_after": a} for k, b, a in self.mix_changes()],
            "binding_now": new, "binding_no_longer": gone,
        }


def what_if(problem: Problem, catalog: Catalog, edits: list[str], *, explain: bool = False,
            **solve_options) -> WhatIf:
    """Solve the problem as written and with the edits (bad edits raise ProblemError before any solve).

    explain=True: when the edits make the problem proven infeasible, also find the smallest
    relaxation of each limit that makes the edited problem feasible again (as `solve` does).
    Why: "infeasible" alone leaves the user guessing how far the edit went; "a budget of at
    least 1,234,567" (in the problem's currency) is the answer to the what-if they were asking."""
    new_problem, new_catalog, changes = apply_edits(problem, catalog, edits)
    scenario = _solve(new_problem, new_catalog, solve_options)
    if explain and scenario.plan is None and scenario.proven:
        from solver.analysis.explain import explain_infeasible
        scenario.explanation = explain_infeasible(
            new_problem, new_catalog, backend=solve_options.get("backend", DEFAULT_BACKEND),
            time_limit=solve_options.get("time_limit") or 60.0).to_dict()
    baseline = _solve(problem, catalog, solve_options)
    kept = _kept_baseline(baseline, scenario, new_problem, new_catalog, solve_options)
    return WhatIf(baseline, kept or scenario, changes, problem.currency)


def _kept_baseline(baseline: Outcome, scenario: Outcome, problem: Problem, catalog: Catalog,
                   options: dict) -> Outcome | None:
    """The baseline plan re-read under the edits, when the edits leave it valid and no dearer
    than the edited problem's optimum; else None (the scenario's own plan stands).

    The verifier's check against the edited problem and catalog comes first (no solve); then
    the baseline schedule is fixed in the edited model (solver.api.pin_schedule) and solved,
    so its cost, binding limits and warnings are the edited model's reading of that plan (a
    budget cut to 80 % that still covers it does not "now bind"). No dearer, not equal: an
    optimum proven within the solver's gap may cost a few units more than the baseline."""
    if baseline.plan is None or scenario.plan is None or verify_plan(problem, catalog, baseline.plan):
        return None
    try:
        replay = solve_problem(problem, catalog, constrain=pin_schedule(baseline.plan.schedule), **options)
    except (Infeasible, PlanRejected, NotInModel):
        return None
    if replay.total_cost > scenario.plan.total_cost + CENT:
        return None
    return Outcome(replay, kept_baseline=True)


def _solve(problem: Problem, catalog: Catalog, options: dict) -> Outcome:
    try:
        return Outcome(solve_problem(problem, catalog, **options))
    except Infeasible as exc:
        return Outcome(None, str(exc), exc.reasons, exc.proven)


def gpu_days(plan: Plan | None) -> dict[str, float]:
    """GPU-days rented per vendor/GPU/mode @ datacenter (contracts count their whole term)."""
    out: dict[str, float] = defaultdict(float)
    for a in plan.allocations if plan else []:
        out[f"{a.vendor}/{a.gpu}/{a.mode} @ {a.datacenter}"] += a.gpus * (a.end_day - a.start_day)
    return dict(out)


def _binding(plan: Plan | None) -> dict[tuple[str, str], str]:
    return {(b.kind, b.name): b.text for b in plan.binding} if plan else {}


def _outcome_dict(o: Outcome) -> dict:
    if o.plan is None:
        return {"status": "infeasible", "proven": o.proven, "message": o.infeasible, "reasons": o.reasons,
                "explanation": o.explanation}
    p = o.plan
    return {"status": p.status, "total_cost": p.total_cost, "currency": p.currency, "gap": p.gap,
            "finish_days": {j.name: j.finish_day for j in p.jobs},
            "binding": [b.text for b in p.binding], "cost_breakdown": p.cost_breakdown,
            **({"stack_switch": p.stack_switch.model_dump()} if p.stack_switch is not None else {}),
            **({"warnings": [w for w in p.warnings if "software stack" in w]}
               if any("software stack" in w for w in p.warnings) else {})}

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

import math
from collections import defaultdict
from dataclasses import dataclass, field

from solver.analysis.edits import Change, apply_edits
from solver.api import DEFAULT_BACKEND, NotInModel, off_stack, pin_schedule, solve_problem, stack_switch
from solver.clock import OutOfTime, not_started
from solver.errors import Infeasible, PlanRejected
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Answer, Pinned, Probes, ReadAs, bound_changes
from solver.rows import ROWS
from solver.probes import Change as ProbeChange
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
    low: float | None = None            # no plan, not proven: the least its optimum can cost (None: unknown)

    @property
    def cost(self) -> float | None:
        return self.plan.total_cost if self.plan else None

    @property
    def undetermined(self) -> bool:
        """No plan, and no proof that there is none: the time ran out (never "infeasible")."""
        return self.plan is None and not self.proven


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
    def delta_interval(self) -> tuple[float, float] | None:
        """(least, most) the difference of the two optima can be, from each side's proven bound
        and plan (Plan.lower_bound, total_cost); None when either side has no plan."""
        b, s = self.baseline.plan, self.scenario.plan
        if b is None or s is None:
            return None
        return s.lower_bound - b.total_cost, s.total_cost - b.lower_bound

    @property
    def proven(self) -> bool:
        """Both sides' costs proven optimal (or a side proven infeasible): the delta is one number."""
        return all(o.plan.status == "optimal" if o.plan is not None else o.proven
                   for o in (self.baseline, self.scenario))

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
            **({} if self.proven or self.delta_interval is None else
               {"delta_interval": [round(x, 2) for x in self.delta_interval]}),
            "mix_changes": [{"line": k, "gpu_days_before": b, "gpu_days_after": a} for k, b, a in self.mix_changes()],
            "binding_now": new, "binding_no_longer": gone,
        }


def what_if(problem: Problem, catalog: Catalog, edits: list[str], *, explain: bool = False,
            **solve_options) -> WhatIf:
    """Solve the problem as written and with the edits (bad edits raise ProblemError before any solve).

    explain=True: when the edits make the problem proven infeasible, also find the smallest
    relaxation of each limit that makes the edited problem feasible again (as `solve` does).
    Why: "infeasible" alone leaves the user guessing how far the edit went; "a budget of at
    least 1,234,567" (in the problem's currency) is the answer to the what-if they were asking.

    Builds (issue 34): the problem is built once (solver.probes.Probes) and solved there; when
    every edit is a limit's bound (solver.probes.bound_changes: the budget, a site's power
    quota, an offer's stock lowered, a job's deadline made earlier on uniform periods) the
    scenario and the kept baseline's replay are probes of that one model. Otherwise the edited
    problem is built a second time (its preprocessing differs) and both are solved on that.
    An infeasible scenario is worded by solving the edited problem as before (its quick reasons
    come from its own preprocessing), and so is a scenario plan off the catalog's usual stack
    (its switch priced as solve_problem prices it). A problem with soft preferences is solved
    as problems throughout (solver.api.solve_problem weighs them with re-solves of its own)."""
    new_problem, new_catalog, changes = apply_edits(problem, catalog, edits)
    sides = _Sides(problem, catalog, new_problem, new_catalog, solve_options)
    ROWS.expect(2)
    baseline = _announced("baseline", sides.baseline())
    scenario = _announced("scenario", sides.scenario())
    if explain and scenario.plan is None and scenario.proven:
        from solver.analysis.explain import explain_infeasible
        scenario.explanation = explain_infeasible(
            new_problem, new_catalog, backend=solve_options.get("backend", DEFAULT_BACKEND),
            time_limit=solve_options.get("time_limit") or 60.0).to_dict()
    kept = None if scenario.kept_baseline else sides.kept_baseline(baseline, scenario)
    return WhatIf(baseline, kept or scenario, changes, problem.currency)


class _Sides:
    """The baseline and the scenario of one what-if, on as few built models as the edits allow."""

    def __init__(self, problem: Problem, catalog: Catalog, new_problem: Problem, new_catalog: Catalog,
                 options: dict) -> None:
        self.problem, self.catalog, self.options = problem, catalog, options
        self.new_problem, self.new_catalog = new_problem, new_catalog
        self.engine: Probes | None = None       # the problem's built model
        self.deltas: list[ProbeChange] | None = None  # the edits as changes of it, when they are bounds
        self.edited: Probes | None = None       # the edited problem's own model, when they are not

    def baseline(self) -> Outcome:
        if self.problem.preferences:
            return _solve(self.problem, self.catalog, self.options)
        try:
            self.engine = Probes(self.problem, self.catalog, **self.options)
            plan = self.engine.plan()  # as solve_problem: a stack switch priced by a probe
        except Infeasible as exc:
            self.engine = None  # and the scenario solved as a problem too
            return Outcome(None, str(exc), exc.reasons, exc.proven)
        self.deltas = bound_changes(self.engine, self.new_problem, self.new_catalog)
        return Outcome(plan)

    def scenario(self) -> Outcome:
        if self.engine is None:
            return _solve(self.new_problem, self.new_catalog, self.options)
        held, final = self._in_hand()
        if held is not None and (final or self.engine.clock.spent()):
            return held
        if self.engine.clock.spent():  # no model is built, nor solved, after the time is over
            return self._out_of_time()
        outcome = self._solved()
        if held is not None and (outcome.plan is None or outcome.plan.total_cost > held.plan.total_cost + CENT):
            return held  # the plan in hand answers whenever the solve did not do better
        return outcome

    def _solved(self) -> Outcome:
        """The scenario solved: a probe of the one model (or of the edited problem's own), or the
        edited problem solved alone for its words (infeasible) or its stack switch's price."""
        assert self.engine is not None
        answer: Answer | None = Answer("infeasible", math.inf)
        if self.deltas is None:
            try:
                self.edited = Probes(self.new_problem, self.new_catalog, **self.options)
            except Infeasible:  # a job no offer carries: worded below
                self.edited = None
        if self.deltas is not None or self.edited is not None:
            answer = self._probe()
        if answer is None or answer.plan is None or off_stack(answer.plan, self.new_problem, self.new_catalog):
            outcome = _solve(self.new_problem, self.new_catalog, self.options)  # its own words (or stack price)
            if outcome.undetermined and self.deltas is not None:  # a tightening's floor: the base's bound
                outcome.low = self.engine.bound_of(*self.deltas, self._read_as())
            return outcome
        return Outcome(answer.plan)

    def _out_of_time(self) -> Outcome:
        """The scenario not determined: the time ended before its solve (no build either: a large
        problem's second model took longer than the budget it was past). A tightening keeps the
        baseline's proven bound as its floor."""
        assert self.engine is not None
        low = None if self.deltas is None else self.engine.bound_of(*self.deltas, self._read_as())
        exc = not_started("the scenario's solve")  # the one wording of a solve the run's end kept from starting
        return Outcome(None, str(exc), exc.reasons, proven=False, low=low)

    def _read_as(self) -> ReadAs:
        return ReadAs("edited", problem=self.new_problem, catalog=self.new_catalog)

    def _in_hand(self) -> tuple[Outcome | None, bool]:
        """The scenario from a plan already in hand, with no solve (issue 47): when every edit
        tightens a limit (a budget cut, a quota or stock lowered, an earlier deadline) and a
        plan of the baseline's solve meets the edited model, the scenario's optimum lies between
        the baseline's proven bound and that plan's cost, whatever time is left; proven when
        they meet. With the flag `final`: the answer stands (the baseline plan itself, or a
        proven one, on the usual stack). Otherwise a solve with time left may do better (another
        plan than the baseline's, unproven) or must price the stack switch under the edits; the
        plan in hand answers when no time is left or that solve ends without a plan, its switch
        noted unpriced. Verified against the edited problem like any plan."""
        assert self.engine is not None
        if self.deltas is None:
            return None, False
        answer = self.engine.in_hand(*self.deltas, self._read_as(), problem=self.new_problem, catalog=self.new_catalog)
        if answer is None or answer.plan is None:
            return None, False
        plan, others = answer.plan, off_stack(answer.plan, self.new_problem, self.new_catalog)
        base = self.engine.base.plan if self.engine.base is not None else None
        kept = base is not None and plan.schedule == base.schedule
        if others:
            plan = plan.model_copy(update={"stack_switch": stack_switch(
                plan, self.new_catalog, others, None, "not priced under the edits (no time was left)")})
        return Outcome(plan, kept_baseline=kept), not others and (kept or plan.status == "optimal")

    def _probe(self, *pins: ProbeChange) -> Answer | None:
        """The scenario (with `pins`) as a probe of the one model, or of the edited problem's own."""
        try:
            if self.edited is not None:
                return self.edited.probe(*pins, tiebreak=True)
            assert self.engine is not None and self.deltas is not None
            return self.engine.probe(*pins, *self.deltas, ReadAs("edited", problem=self.new_problem,
                                                                 catalog=self.new_catalog),
                                     problem=self.new_problem, catalog=self.new_catalog, tiebreak=True)
        except OutOfTime:
            return None

    def kept_baseline(self, baseline: Outcome, scenario: Outcome) -> Outcome | None:
        """The baseline plan re-read under the edits, when the edits leave it valid and no dearer
        than the edited problem's optimum; else None (the scenario's own plan stands).

        The verifier's check against the edited problem and catalog comes first (no solve); then
        the baseline schedule is fixed in the edited model (solver.api.pin_schedule) and solved,
        so its cost, binding limits and warnings are the edited model's reading of that plan (a
        budget cut to 80 % that still covers it does not "now bind"). No dearer, not equal: an
        optimum proven within the solver's gap may cost a few units more than the baseline.
        The replay is a probe of a built model when the scenario had one."""
        if baseline.plan is None or scenario.plan is None or \
                verify_plan(self.new_problem, self.new_catalog, baseline.plan):
            return None
        if self.engine is not None and (self.deltas is not None or self.edited is not None):
            try:
                answer = self._probe(Pinned("the baseline plan", pin=pin_schedule(baseline.plan.schedule)))
            except NotInModel:
                return None
            replay = None if answer is None else answer.plan
            if replay is not None and off_stack(replay, self.new_problem, self.new_catalog):
                replay = _replay(self.new_problem, self.new_catalog, baseline.plan, self.options)
        else:
            replay = _replay(self.new_problem, self.new_catalog, baseline.plan, self.options)
        if replay is None or replay.total_cost > scenario.plan.total_cost + CENT:
            return None
        return Outcome(replay, kept_baseline=True)


def _replay(problem: Problem, catalog: Catalog, plan: Plan, options: dict) -> Plan | None:
    """The plan's schedule fixed in the problem built anew and solved (its reading there)."""
    try:
        return solve_problem(problem, catalog, constrain=pin_schedule(plan.schedule), **options)
    except (Infeasible, PlanRejected, NotInModel):
        return None


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
    if o.plan is None:  # "infeasible" only when proven; else not determined, with the bound known
        return {"status": "infeasible" if o.proven else "not determined", "proven": o.proven,
                "message": o.infeasible, "reasons": o.reasons, "explanation": o.explanation,
                **({"lower_bound": o.low} if o.low is not None else {})}
    p = o.plan
    return {"status": p.status, "total_cost": p.total_cost, "currency": p.currency, "gap": p.gap,
            **({"lower_bound": p.lower_bound} if p.status != "optimal" else {}),  # the interval [lower_bound, total_cost]
            "finish_days": {j.name: j.finish_day for j in p.jobs},
            "binding": [b.text for b in p.binding], "cost_breakdown": p.cost_breakdown,
            **({"stack_switch": p.stack_switch.model_dump()} if p.stack_switch is not None else {}),
            **({"warnings": [w for w in p.warnings if "software stack" in w]}
               if any("software stack" in w for w in p.warnings) else {})}


def _announced(side: str, outcome: Outcome) -> Outcome:
    """Tell the command line one side is determined (solver.rows), in words."""
    plan = outcome.plan
    ROWS.announce(f"{side}: {plan.total_cost:,.0f} {plan.currency}" if plan is not None
                  else f"{side}: no plan ({outcome.infeasible or 'not determined'})")
    return outcome


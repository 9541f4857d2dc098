"""Soft preferences with a price (job.prefer, problem.prefer), made exact by solving again.

A preference matches offers by site, vendor, mode and GPU (solver.model.problem.Prefer) and
asks, for one job or for every job, that (a) the work run only there (the old site form
`{site: Yizhuang, up_to_pct: 5}`), (b) at least `share_pct` % of the GPU-hours run there ("a
hosted base"), or (c) nothing run there (`avoid: true`, "no spot for this job").

"Honour it unless a plan that does not is more than up_to_pct cheaper" compares two optima
— the cheapest plan with and without it — so no single linear objective states it exactly.
solver.api.solve_problem therefore solves as usual and weighs each preference in turn (each
job's own in job order, then the problem's): when the plan already honours it, it is met at
no cost and held; otherwise the problem is solved once more with it imposed (row
`Prefer-<n>`, n its place in Problem.preferences; earlier held ones stay), and the pinned
plan is kept when

    cost(current plan) ≥ cost(pinned plan) × (1 − up_to_pct / 100)

i.e. unless the plan without it is cheaper by more than up_to_pct % of the plan with it.
Costs are whole-plan costs (jobs share nodes, so a job's own cost is not defined). A
preference no plan can meet is dropped. Each re-solve costs one more solve of the whole
problem (the time limit applies to each). `Plan.preferences` records, for each, what it
did and its premium (the honouring plan's cost − the plan's cost before it was weighed);
the plan's warnings say it in words — the plan alone reads "optimal", which it is only for
the problem with the kept preferences.

The rows, with m[o,t] the replicas of job option o in period t, w = GPUs per replica ×
hours of t, S the options in scope (the job's, or every job's) and M ⊆ S those on matching
offers:
    only there:        Σ_{S∖M} m ≤ 0
    a share p there:   (1 − p)·Σ_M w·m − p·Σ_{S∖M} w·m ≥ 0     (Σ_M w·m ≥ p·Σ_S w·m)
    avoid:             Σ_M m ≤ 0
"""

from __future__ import annotations

from collections.abc import Callable

from ortools.linear_solver.python import model_builder as mb

from solver.errors import Infeasible
from solver.milp.build import build_milp
from solver.milp.core import Milp
from solver.milp.instance import Instance
from solver.model.plan import Plan, PreferenceResult
from solver.model.problem import Prefer

TOL_REL = 1e-6


def _inside(inst: Instance, option: int, pref: Prefer) -> bool:
    o = inst.configs[inst.options[option].config].offer
    return pref.matches(o.vendor, o.datacenter, o.mode, o.gpu)


def pin(milp: Milp, index: int, job: str | None, pref: Prefer) -> None:
    """Row `Prefer-<index>`: the preference imposed on the job's replicas (every job's when job is None)."""
    inst = milp.inst
    scope = [(i, t, var) for (i, t), var in milp.replicas.items() if job is None or inst.options[i].job == job]
    if pref.avoid:
        there = [var for i, _t, var in scope if _inside(inst, i, pref)]
        if there:
            milp.add_row(f"Prefer-{index}", mb.LinearExpr.sum(there) <= 0)
    elif pref.share_pct >= 100:
        away = [var for i, _t, var in scope if not _inside(inst, i, pref)]
        if away:
            milp.add_row(f"Prefer-{index}", mb.LinearExpr.sum(away) <= 0)
    else:
        p = pref.share_pct / 100
        weights = [inst.options[i].group_gpus * inst.hours[t] * ((1 - p) if _inside(inst, i, pref) else -p)
                   for i, t, _ in scope]
        if scope:
            milp.add_row(f"Prefer-{index}", mb.LinearExpr.weighted_sum([v for *_, v in scope], weights) >= 0)


def pinned_milp(inst: Instance, pins: list[int], constrain: Callable[[Milp], None] | None = None) -> Milp:
    """The model of inst with the preferences at these places of Problem.preferences imposed."""
    milp = build_milp(inst)
    if constrain is not None:
        constrain(milp)
    prefs = inst.problem.preferences
    for n in pins:
        job, pref = prefs[n]
        pin(milp, n, job, pref)
    return milp


def honours(inst: Instance, plan: Plan, job: str | None, pref: Prefer) -> bool:
    """Does the plan's schedule already meet the preference? (GPU-hours on matching offers)"""
    inside = outside = 0.0
    for a in plan.schedule.assignments:
        if job is not None and a.job != job:
            continue
        o = inst.catalog.offers[a.offer]
        weight = a.replicas * a.group_gpus * inst.timeline.grain_hours(a.period)
        if pref.matches(o.vendor, o.datacenter, o.mode, o.gpu):
            inside += weight
        else:
            outside += weight
    if pref.avoid:
        return inside <= 0
    if pref.share_pct >= 100:
        return outside <= 0
    return inside >= pref.share_pct / 100 * (inside + outside) * (1 - TOL_REL)


def describe(job: str | None, pref: Prefer) -> str:
    """The preference in words, e.g. `job train: avoid spot`, `all jobs: at least 50% of GPU-hours on hosted`."""
    who = f"job {job}" if job else "all jobs"
    if pref.avoid:
        return f"{who}: avoid {pref.where}"
    if pref.share_pct < 100:
        return f"{who}: at least {pref.share_pct:g}% of GPU-hours on {pref.where}"
    return f"{who}: only on {pref.where}"


def _site_only(job: str | None, pref: Prefer) -> bool:
    """The original form ({site, up_to_pct} under a job), whose warnings keep their wording."""
    return (job is not None and pref.site is not None and not (pref.vendor or pref.mode or pref.gpu)
            and not pref.avoid and pref.share_pct >= 100)


def keep_preferred(inst: Instance, plan: Plan, solve_pinned: Callable[[list[int]], Plan]) -> Plan:
    """The plan after weighing every preference in turn; solve_pinned(pins) solves with those imposed."""
    pins: list[int] = []
    notes: list[str] = []   # what each preference did, in words: the user reads its price here
    results: list[PreferenceResult] = []
    for n, (job, pref) in enumerate(inst.problem.preferences):
        pct, text = pref.up_to_pct, describe(job, pref)
        record = dict(preference=text, job=job, up_to_pct=pct)
        if honours(inst, plan, job, pref):
            pins.append(n)
            results.append(PreferenceResult(**record, outcome="met", premium=0.0, premium_pct=0.0,
                                            text=f"{text}: met by the cheapest plan, at no extra cost"))
            continue
        try:
            candidate = solve_pinned([*pins, n])
        except Infeasible as exc:
            outcome = "impossible" if exc.proven else "not_weighed"
            note = _unmet_words(job, pref, plan, text, outcome)
            notes.append(note)
            results.append(PreferenceResult(**record, outcome=outcome, premium=None, premium_pct=None, text=note))
            continue
        extra = candidate.total_cost - plan.total_cost
        share = extra / candidate.total_cost if candidate.total_cost > 0 else 0.0
        kept = plan.total_cost >= candidate.total_cost * (1 - pct / 100) * (1 - TOL_REL)
        note = _priced_words(job, pref, plan, text, kept, extra, share, candidate.currency)
        notes.append(note)
        results.append(PreferenceResult(**record, outcome="kept" if kept else "declined", premium=round(extra, 2),
                                        premium_pct=round(100 * share, 3), text=note))
        if kept:
            plan = candidate
            pins.append(n)
    update: dict = {"preferences": results}
    if notes:
        update["warnings"] = [*plan.warnings, *notes]
    return plan.model_copy(update=update)


def _elsewhere(plan: Plan, job: str) -> str:
    return ", ".join(sorted(next((set(r.sites) for r in plan.jobs if r.name == job), set())))


def _priced_words(job, pref, plan, text, kept, extra, share, currency) -> str:
    pct = pref.up_to_pct
    if _site_only(job, pref):
        elsewhere, site = _elsewhere(plan, job), pref.site
        if kept:
            return (f"job {job} kept at its preferred {site} (prefer up to {pct:g}%): "
                    f"{extra:,.0f} {currency} ({share:.1%}) more than running it at {elsewhere}")
        return (f"job {job} runs at {elsewhere}, not at its preferred {site}: that saves "
                f"{extra:,.0f} {plan.currency} ({share:.1%}), more than prefer's {pct:g}%")
    if kept:
        return f"{text} (prefer up to {pct:g}%): honoured for {extra:,.0f} {currency} ({share:.1%}) more"
    return (f"{text} (prefer up to {pct:g}%): not honoured; honouring it would cost {extra:,.0f} {currency} "
            f"({share:.1%}) more")


def _unmet_words(job, pref, plan, text, outcome) -> str:
    if _site_only(job, pref):
        if outcome == "not_weighed":
            return (f"job {job}'s preference for {pref.site} was not weighed: the re-solve pinned there "
                    "found no plan in the time given (raise --time-limit or --max-seconds)")
        return (f"job {job} runs at {_elsewhere(plan, job)}, not at its preferred {pref.site}: no plan runs it "
                "there within the problem's limits and offers")
    if outcome == "not_weighed":
        return (f"{text}: not weighed, its re-solve found no plan in the time given "
                "(raise --time-limit or --max-seconds)")
    return f"{text}: not honoured, no plan meets it within the problem's limits and offers"

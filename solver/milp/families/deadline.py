"""The deadline family: each job's work done inside its window (rows `Work-<j>`, written by
solver.milp.work), its bound on a built model (upper bounds of zero on replicas after a day),
and its every part (solver.milp.family)."""

from __future__ import annotations

import math

import ortools.linear_solver.python.model_builder as mb

from solver.i18n import N_, ngettext
from solver.milp.core import Milp
from solver.milp.family import WORK, Bound, Family, Labels, Lost, NotApplicable, Relax, Rows, Step, plural, whole
from solver.milp.solution import Solution
from solver.milp.work import add_work, add_work_slack, asked_work
from solver.model.catalog import Catalog
from solver.model.paths import row_path
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem

TOL = 1e-6
WORK_WEIGHT = 1000.0
"""why: missing work is the last resort — its slack weighs ×1000 against the others'."""


def deadline_bound(milp: Milp, job: str = "") -> int | None:
    """The last day the built model lets job `job` (every job: "") run: the end of its last
    period whose replicas may be positive; None when none may run at all."""
    ends = [milp.inst.timeline.end(t) for t in milp.inst.periods]
    days = [ends[t] for (i, t), var in milp.replicas.items()
            if var.upper_bound > 0 and (not job or milp.inst.options[i].job == job)]
    return max(days, default=None)


def set_deadline_bound(milp: Milp, job: str, day: int | None) -> None:
    """Job `job` (every job: "") done by `day` on the built model: upper bounds of zero on its
    replicas in every period ending after `day`, the others put back as built (None: its own
    deadline, the model as built). A day after the written deadline is refused (ValueError):
    the model has no variables past it.

    Why bounds, not rows: a replica variable exists only in periods wholly inside its job's
    window, so "done by D" is exactly "no replica in a period ending after D", and the model
    built with deadline D has the same variables minus those: with uniform periods the same
    optimum. The day is read on the built grid (the latest period end ≤ day); with
    `periods: events` a rebuilt problem would also cut its periods at the new day. The bounds
    as built are kept on the model the first time (Milp.built_replica_ub), so set this
    before any other caller changes replica bounds, or after it has put them back."""
    written = max((j.deadline_days for j in milp.inst.problem.jobs if not job or j.name == job), default=None)
    if written is None:
        raise KeyError(f"no job {job!r}")
    if day is not None and day > written:
        whose = f"{job}'s deadline" if job else "the latest deadline"
        raise ValueError(f"day {day} is after {whose} ({written}): a built model has no work past it; "
                         "rebuild from the edited problem")
    if not milp.built_replica_ub:
        milp.built_replica_ub.update({key: var.upper_bound for key, var in milp.replicas.items()})
    ends = [milp.inst.timeline.end(t) for t in milp.inst.periods]
    for (i, t), var in milp.replicas.items():
        if not job or milp.inst.options[i].job == job:
            var.upper_bound = 0.0 if day is not None and ends[t] > day else milp.built_replica_ub[i, t]


def add_deadline(milp: Milp) -> None:
    """Σ_{replicas of j in periods inside [start_j, deadline_j)} work·replicas ≥ required_j
    rows `Work-<j>` (solver.milp.work.add_work writes them: the same rows carry the work every
    job must get done, so a deadline is where a job's replicas may run)."""
    add_work(milp)


# --- slack, binding, check: the parts an analysis and the verifier ask -------------------------

def work_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    """s_j ≥ 0 EFLOP of each job's work allowed undone (solver.milp.work.add_work_slack)."""
    out = {}
    for job in [j.name for j in milp.inst.problem.jobs] if targets is None else targets:
        out[job] = milp.model.new_num_var(0, math.inf, f"slack[work,{job}]")
        add_work_slack(milp, job, out[job])
    return out


def deadline_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    problem = sol.milp.inst.problem
    out = []
    for job, result in zip(problem.jobs, jobs):
        if result.finish_day >= job.deadline_days:
            out.append(Binding(kind="deadline", name=job.name, start_day=job.start_day, end_day=job.deadline_days,
                               used=result.finish_day, limit=job.deadline_days, unit="days",
                               text=f"deadline of {job.name}: runs until day {job.deadline_days}"))
    return out


def check_deadline(v) -> None:
    """The verifier's rule: each assignment inside its job's window, and each job's work done by
    then, at the verifier's own reading of the work (v: solver.verify.rules.Verifier)."""
    for job, a in v.placed:
        start, end = v.days(a.period)
        if start < job.start_day or end > job.deadline_days:
            v.fail(f"window: job {job.name} runs in days {start}-{end}, outside "
                   f"[{job.start_day}, {job.deadline_days})")
    for job in v.p.jobs:
        need = v.need(job)
        if v.work[job.name] < need * (1 - 1e-6):
            v.fail(f"work: job {job.name} gets {v.work[job.name]:.4g} FLOPs by its deadline, "
                   f"needs {need:.4g} (redundancy included)")


def written_deadline(problem: Problem, catalog: Catalog, target: str) -> int:
    """A job's written deadline; any other target ("every job"): the latest of them."""
    mine = [j.deadline_days for j in problem.jobs if j.name == target]
    return mine[0] if mine else max(j.deadline_days for j in problem.jobs)


def _deadline_edits(a: float, target: str, horizon: int | None) -> list[str]:
    return [f"jobs[*].deadline_days+={whole(a)}", *([f"horizon_days={horizon}"] if horizon is not None else [])]


def _deadline_words(a: float, target: str, horizon: int | None, unit: str) -> str:
    text = f"{whole(a)} more {plural(a, 'day')} on every deadline"
    if horizon is not None:  # a deadline past the horizon is rejected as input
        text += f" (and the horizon to {horizon} days)"
    return text


def _deadline_lever(problem: Problem, catalog: Catalog, name: str, amount: float | None = None) -> Step:
    """One more period (a day, or 5 days on long plans) on a job's deadline, by default.

    Why a period, and the period length pinned when the horizon must grow: a job runs
    only in the periods wholly inside its window, so one more day on a 5-day grid
    adds nothing but can move the horizon, which reshapes the last period; and a
    horizon grown past 120 days would switch the whole plan to 5-day periods. A
    reviewer saw "+1 day on pretrain-30b's deadline" cost +1,750 CNY on hybrid-burst:
    the horizon 217 → 218 alone cost 57,936 (its deadline of 217 then no longer
    ended a whole period)."""
    job = next(j for j in problem.jobs if j.name == name)
    step = problem.effective_period_days if amount is None else int(amount)
    edits = [f"{row_path('jobs', 'name', name)}.deadline_days+={step}"]
    if amount is None:
        days = "1 day" if step == 1 else f"{step} days (one period)"
    else:
        days = f"{step} {plural(step, 'day')}"
    if job.deadline_days + step > problem.horizon_days:
        edits += [f"horizon_days={job.deadline_days + step}"]
        edits += [f"period_days={problem.effective_period_days}"] if problem.periods == "uniform" else []
        return Step(edits, f"+{days} on {name}'s deadline and the horizon")
    return Step(edits, f"+{days} on {name}'s deadline")


def _work_scale(milp: Milp, job: str) -> tuple[float, float]:
    need = asked_work(milp, job)  # what the rows ask (the words rescale to the job's own)
    return WORK_WEIGHT / max(need, TOL), need


def _unfinished_words(milp: Milp, name: str, amount: float, limit: float) -> str:
    job = next(j for j in milp.inst.problem.jobs if j.name == name)
    own = milp.inst.required[name]  # the rows may ask a tiny job more (solver.milp.work.asked_work)
    undone = amount * own / limit if limit > 0 else amount
    return (f"cannot finish {name} by day {job.deadline_days} at any size: "
            f"{eflop(undone)} of {eflop(own)} EFLOP left undone")


def eflop(x: float) -> str:
    """EFLOP as the tables write them; a job below one EFLOP keeps two significant digits."""
    return f"{x:,.0f}" if x >= 1 else f"{x:.2g}"



def more_days(amount: float, target: str, unit: str) -> str:
    return ngettext("{amount} more day on every deadline", "{amount} more days on every deadline",
                    whole(amount)).format(amount=f"{whole(amount):,}")


FAMILY = Family(
    name="deadline", order=40, unit="days", targets="job",
    rows=Rows(add_deadline, ("Work",), WORK),
    bounds=Bound(deadline_bound, set_deadline_bound,
                 NotApplicable("only moved earlier on a built model: a plan then meets the written deadline")),
    labels=Labels(N_("deadline"), N_("deadline of {name}: runs until day {limit}"), more_days,
                  NotApplicable("negotiate values more kW, nodes and shorter lead times, not later deadlines")),
    slack=work_slacks,
    binding=deadline_binding,
    relax=Relax("days", limit=written_deadline,
                edits=_deadline_edits, words=_deadline_words,
                over=NotApplicable("days change the periods and the jobs' windows: no linear slack, "
                                   "a search over whole days instead"),
                says={"noun": "deadline", "target": "every job", "smallest": "the smallest deadline extension",
                      "alone": "moving every deadline alone, by up to {cap} days, does not make it feasible{within}",
                      "later": "a later deadline (up to {cap} days)", "smallest_later": "the smallest later deadline",
                      "held": "the deadlines stay as written"},
                where=NotApplicable("every job's deadline moves together"),
                lift=NotApplicable("a model has no variables past a deadline: moved, never dropped"),
                raised=NotApplicable("moved by whole days, not raised by a factor")),
    lever=_deadline_lever,
    lost=Lost("deadline", scale=_work_scale, words=_unfinished_words,
              without=NotApplicable("a model has no variables past a deadline: the work left undone says it"),
              window=True),
    deal=NotApplicable("negotiate values more kW, nodes and shorter lead times, not this limit"),
    verify=check_deadline,
)

"""A job's throughput changed on the built model: its work read at another MFU, in place.

Why: the MFU margin (solver.analysis.margin) asks, a dozen times per job, whether a plan's
rentals still carry the job at a fraction f of its MFU, and the robust plan solves the whole
problem at such a fraction. Rebuilding the problem at f (`Job.mfu_factor`) cost an Instance,
a model and a cold solve each time. Here the model built at the assumed MFU is changed
instead, and changed back (`scale_work` returns the undo).

What f changes, and how each part of the model follows it:
- A replica's rate: peak × sustained MFU × …, where the sustained MFU is the job's MFU × f
  derated by tensor parallelism on the card's link (solver.estimate.efficiency). On NVLink
  cards and without tensor parallelism that derating does not depend on the MFU, so the rate
  is × f; on PCIe cards it does (a slower GPU waits less on the link), so each option's new
  rate is computed by the instance's own function (`effective_rate`), never assumed linear.
  The layout, the size tiers' factors, spot loss and recompute do not depend on the MFU.
- Rows whose coefficients are the job's work (exactly recomputed, × new ÷ old rate per
  option): the work row `Work-<j>` (its right-hand side and the choice flags' terms follow
  the asked work, solver.milp.work.asked_work, which a tiny job takes from the least replica
  work), each domain's need row, the domain-work rows `Site-<j>-<d>-work` (their right side,
  the most some optimal plan does, is kept: at a lower rate that plan does no more raw work,
  so it stays a valid bound) and the storage share rows `Data-<j>-<v>-<d>` (the shares fall
  with the rate against the same most work: still ≤ 1 in such a plan).
- The job's covering cuts (`Cover-<j>-…`) stay: each rounds Σ a_i·x_i ≥ need (a_i the most
  work a node or contract does at the built rate), and at a lower rate the true inequality
  has smaller a_i with the same need (the requirement, not the asked work), so the built one
  still holds for every plan and so does its rounding. A higher rate (f > 1) is refused.
- Rows derived from the work that a lower rate may cut wrongly: the whole
  units of the storage and finishing flags (`Storage-…-start`, `Finish-<j>-<t>-run` and the
  tails W[j,t]) get a big-M of every unit the job's replicas can do, so they still say only
  "the flag is 1 when the job works there / has work left", which is all they mean for an
  integer plan; the rows that strengthen the LP only (`…-now`) are switched off.
- Preprocessing at f may drop a size tier, a fabric domain or a configuration that can no
  longer do the job's work in its window; here they stay, and no plan can meet the need row
  through them, so the plans are the same. The one difference: with a plan's rentals pinned,
  a rental on a configuration preprocessing at f would drop for every job is idle here,
  where the rebuilt model had no variable for it (solver.milp.pin.NotInModel, read as "the
  rentals do not carry the job"). Dominance pruning (solver.milp.prune) compares options of
  one offer, whose GPU, layout and so rate change alike, so it keeps the same options.
- The Instance the plan is read from (`milp.inst`) is replaced by one whose options carry the
  new rates and whose problem is the one read at f, and the model's caches of work
  coefficients follow: the plan extracted reports the work done at f, for the verifier.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

from ortools.linear_solver.python import model_builder as mb

from solver.estimate.throughput import peak_tflops
from solver.milp.core import Milp
from solver.milp.instance import Instance, effective_rate
from solver.milp.work import asked_work, need_row, replica_factor, work_coefficients
from solver.model.problem import Problem


def scaled_rates(inst: Instance, problem: Problem, jobs: Iterable[str]) -> dict[int, float]:
    """Per option of `jobs`, its rate (FLOP/s per GPU) with the job as `problem` states it
    (its mfu_factor), everything else as `inst` built it."""
    wanted = set(jobs)
    specs = {j.name: j for j in problem.jobs if j.name in wanted}
    out = {}
    for i, opt in enumerate(inst.options):
        if opt.job in specs:
            offer = inst.configs[opt.config].offer
            gpu = inst.catalog.gpus[offer.gpu]
            peak = peak_tflops(gpu.bf16_tflops, gpu.fp8_tflops, specs[opt.job].precision)
            out[i] = effective_rate(specs[opt.job], offer, peak, gpu, opt.layout)
    return out


class _Edits:
    """Changes of one model, each saved before it is made, undone in reverse order."""

    def __init__(self, model: mb.Model) -> None:
        self.model, self.saved = model, []

    def coefficient(self, row: mb.LinearConstraint, var: mb.Variable, value: float, old: float) -> None:
        self.saved.append(lambda: row.set_coefficient(var, old))
        row.set_coefficient(var, value)

    def row_bounds(self, row: mb.LinearConstraint, lower: float, upper: float) -> None:
        lo, hi = row.lower_bound, row.upper_bound
        self.saved.append(lambda: _set_bounds(row, lo, hi))
        _set_bounds(row, lower, upper)

    def upper(self, var: mb.Variable, upper: float) -> None:
        old = var.upper_bound
        self.saved.append(lambda: setattr(var, "upper_bound", old))
        var.upper_bound = upper

    def undo(self) -> None:
        for step in reversed(self.saved):
            step()
        self.saved.clear()


def _set_bounds(row: mb.LinearConstraint, lower: float, upper: float) -> None:
    row.lower_bound, row.upper_bound = lower, upper


def _terms(model: mb.Model, row: mb.LinearConstraint) -> dict[int, float]:
    """The row's coefficients by variable index, as the model holds them now."""
    return dict(zip(model.helper.constraint_var_indices(row.index), model.helper.constraint_coefficients(row.index)))


def scale_work(milp: Milp, problem: Problem, jobs: Iterable[str]) -> Callable[[], None]:
    """Change the built model so that `jobs` run at the rates `problem` states (their
    mfu_factor), as the module docstring says; returns the undo. The other jobs are untouched."""
    jobs = sorted(set(jobs))
    inst, edits = milp.inst, _Edits(milp.model)
    rates = scaled_rates(inst, problem, jobs)
    ratio = {i: rate / inst.options[i].rate_flops for i, rate in rates.items()}
    if any(r > 1 + 1e-12 for r in ratio.values()):
        raise ValueError("scale_work reads work at a lower rate only (the covering cuts hold for those)")
    asked_before = {j: asked_work(milp, j) for j in jobs}  # fills milp.least_work first
    saved_caches = dict(milp.work_coef), dict(milp.least_work)
    slow = replace(inst, problem=problem, options=[replace(o, rate_flops=rates[i]) if i in rates else o
                                                   for i, o in enumerate(inst.options)])
    milp.inst = slow
    coef = work_coefficients(milp)
    coef.update({(i, t): slow.options[i].work_per_replica(inst.hours[t], replica_factor(milp, i))
                 for (i, t) in milp.replicas if i in rates})
    for j in jobs:
        milp.least_work.pop(j, None)
        least = [w for (i, _t), w in coef.items() if slow.options[i].job == j]
        if least:
            milp.least_work[j] = min(least)
    by_var = {var.index: ratio[i] for (i, _t), var in milp.replicas.items() if i in ratio}
    for j in jobs:
        asked = asked_work(milp, j) / asked_before[j] if asked_before[j] > 0 else 1.0
        _scale_work_rows(milp, edits, j, by_var, asked)
        _loosen_derived_rows(milp, edits, j)

    def undo() -> None:
        edits.undo()
        milp.inst = inst
        milp.work_coef.clear()
        milp.work_coef.update(saved_caches[0])
        milp.least_work.clear()
        milp.least_work.update(saved_caches[1])
    return undo


def _scale_work_rows(milp: Milp, edits: _Edits, job: str, by_var: dict[int, float], asked: float) -> None:
    """Replicas' work × their option's rate ratio in every row whose coefficients are work; in
    the rows asking the job's work (Work, need) the flags' terms and the bounds × the asked
    work's ratio (1 unless a tiny job's asked work follows its least replica work)."""
    asking = {milp.rows[name] for name in _work_rows(milp, job)}
    domain = [milp.rows[f"Site-{job}-{c.domain}-work"] for c in milp.choices.get(job, [])
              if f"Site-{job}-{c.domain}-work" in milp.rows]
    data = [milp.rows[f"Data-{j}-{v}-{d}"] for (j, v, d) in milp.data_sites if j == job]
    for row in [*asking, *dict.fromkeys(domain), *data]:
        for index, old in _terms(milp.model, row).items():
            factor = by_var.get(index, asked if row in asking else 1.0)
            if factor != 1.0:
                edits.coefficient(row, milp.model.var_from_index(index), old * factor, old)
        if row in asking and asked != 1.0:
            edits.row_bounds(row, row.lower_bound * asked, row.upper_bound * asked)


def _work_rows(milp: Milp, job: str) -> list[str]:
    domains = sorted({c.domain for c in milp.choices.get(job, [])})
    return [f"Work-{job}", *(need_row(job, d) for d in domains if need_row(job, d) in milp.rows)]


def _loosen_derived_rows(milp: Milp, edits: _Edits, job: str) -> None:
    """The LP-only `-now` rows off; the storage and finishing flags' units a big-M of every
    unit the job's replicas can do (module docstring)."""
    off = [name for (j, t) in milp.running if j == job and (name := f"Finish-{j}-{t}-now") in milp.rows]
    starts = [(key, f"Storage-{j}-{v}-{d}-{t}") for key in milp.started for (j, v, d, t) in [key] if j == job]
    off += [f"{name}-now" for _, name in starts if f"{name}-now" in milp.rows]
    for name in off:
        edits.row_bounds(milp.rows[name], -math.inf, math.inf)
    units = sum(w * var.upper_bound for (j, _t), (_tail, terms) in milp.tails.items() if j == job for var, w in terms)
    for key, name in starts:
        row = milp.rows.get(f"{name}-start")
        if row is not None:
            _big_m(milp, edits, row, milp.started[key])
    for (j, t), (tail, _terms_t) in milp.tails.items():
        if j == job:
            edits.upper(tail, max(tail.upper_bound, units))
    for (j, t), (_tail, _terms_t) in milp.tails.items():
        if j == job:
            _big_m(milp, edits, milp.rows[f"Finish-{j}-{t}-run"], milp.running[j, t])


def _big_m(milp: Milp, edits: _Edits, row: mb.LinearConstraint, flag: mb.Variable) -> None:
    """The flag's coefficient in the row raised in size to the most the row's other terms can
    sum to (their bounds as they stand; its sign kept): the row then only says "the flag is 1
    when they are not 0"."""
    terms = _terms(milp.model, row)
    old = terms.pop(flag.index)
    most = sum(abs(c) * max(abs(milp.model.var_from_index(k).upper_bound), abs(milp.model.var_from_index(k).lower_bound))
               for k, c in terms.items())
    if not math.isfinite(most):
        raise ValueError(f"row {row.name} has an unbounded term: no big-M for its flag")
    if abs(old) < most:
        edits.coefficient(row, flag, math.copysign(most, old), old)

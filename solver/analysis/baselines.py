"""What the optimum is worth: the same problem solved the spreadsheet way.

Why: a planner's answer is trusted when it is compared with what a team would have
done without it — one vendor quote for everything, or one rental mode for everything
(seed 002: debug on hourly, then train on monthly saves 30 %+). Each baseline is the
same problem with an extra allow-list, solved to optimality, so the saving printed is
exact for the catalog at hand.

Each baseline is a probe on one built model (solver.probes, issue 34): the problem's own model
with every offer outside the allow-list left out (its nodes and contracts fixed at 0), its plan
verified against the problem with that allow-list (`with_restrict`). A restriction only
tightens the model, so the problem's own optimum bounds it, and a restriction the optimum
already meets is answered without a solve. `solve --baselines` hands over the engine that
solved the plan: one Instance and one model for the whole command.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from solver.clock import OutOfTime, RunClock
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.problem import Problem, Restrict
from solver.probes import Answer, Change, Probes, VarBounds
from solver.rows import ROWS

MODE_BASELINES = {"all hourly": ["hourly"], "all monthly": ["monthly"]}


@dataclass(frozen=True)
class Baseline:
    name: str
    cost: float | None          # None: no plan this way (infeasible, or not determined)
    detail: str
    status: str = "optimal"     # optimal | feasible (time limit: cost is an upper bound) | infeasible | undetermined

    def saving(self, optimum: float) -> float | None:
        """Fraction of the baseline's cost the optimum saves (at most this much when the
        baseline is only `feasible`: its own optimum may be cheaper)."""
        if self.cost is None or self.cost <= 0:
            return None
        return (self.cost - optimum) / self.cost

    def to_dict(self, optimum: float) -> dict:
        return {"name": self.name, "cost": self.cost, "status": self.status, "saving": self.saving(optimum),
                "detail": self.detail}


def with_restrict(problem: Problem, **allow: list[str]) -> Problem:
    """The problem with allow-lists narrowed (intersected with any the user already has)."""
    base = problem.restrict or Restrict()
    update = {}
    for field, values in allow.items():
        mine = getattr(base, field)
        update[field] = [v for v in values if not mine or v in mine] or ["<none>"]
    return problem.model_copy(update={"restrict": base.model_copy(update=update)})


def engine(problem: Problem, catalog: Catalog, *, stop_at: float | None = None, backend: str | None = None,
           time_limit: float | None = None, gap: float | None = None) -> Probes:
    """The problem's model, built once for every baseline (when the caller has none)."""
    options = {"backend": backend} if backend else {}
    return Probes(problem, catalog, gap=gap, clock=RunClock(time_limit, stop_at, least=0.0), **options)


def only(probes: Probes, kept: Iterable[str], words: str) -> Change:
    """Every offer of the model but `kept` left out (a tightening: the base optimum bounds it)."""
    keep = set(kept)
    offers = sorted({cfg.offer.offer for cfg in probes.inst.configs.values()} - keep)
    return VarBounds(words, True, [v for o in offers for v in probes.offer_nodes(o)], upper=0.0)


def _ask(probes: Probes, change: Change, problem: Problem) -> Answer | str:
    """The answer, or "undetermined" when no time was left to start its solve."""
    try:
        return probes.probe(change, problem=problem, catalog=probes.catalog)
    except OutOfTime:
        return "undetermined"


def best_single_offer(problem: Problem, catalog: Catalog, *, stop_at: float | None = None,
                      probes: Probes | None = None, **solve_options) -> Baseline:
    """The cheapest plan that uses one offer (any of its interconnect options) for every job.

    An offer whose solve stopped without a plan, or that the run had no time left for, is
    named in the detail, and the baseline is then only `feasible`: that offer might have
    been cheaper, so the saving against it is an upper bound."""
    try:
        probes = probes or engine(problem, catalog, stop_at=stop_at, **solve_options)
    except Infeasible:
        return Baseline("best single offer", None, "no single offer can carry the problem alone", "infeasible")
    best: tuple[float, str, str] | None = None
    unknown, bounds = [], []
    for name in carriers(probes):  # no probe, no time: most offers fail on GPU, memory or capacity
        if probes.clock.spent():  # spent: named, not even built as a change (3 s for 59 offers past the budget)
            unknown.append(name)
            continue
        answer = _ask(probes, only(probes, [name], f"offer {name} alone"), with_restrict(problem, offers=[name]))
        if answer == "undetermined" or answer.status == "unknown":
            unknown.append(name)
        elif answer.plan is not None:
            bounds.append((answer.low, name))
            if best is None or answer.plan.total_cost < best[0]:
                best = (answer.plan.total_cost, name, answer.status)
    if best is None:
        if unknown:
            return Baseline("best single offer", None, f"not determined: {_unsolved(unknown)}", "undetermined")
        return Baseline("best single offer", None, "no single offer can carry the problem alone", "infeasible")
    # an offer stopped before its proof may still beat the best plan found: only an upper bound then
    unknown += [name for bound, name in bounds if name != best[1] and bound < best[0] * (1 - 1e-4)]
    detail = best[1] + (f" ({_unsolved(unknown)})" if unknown else "")
    return Baseline("best single offer", best[0], detail, "feasible" if unknown else best[2])


def carriers(probes: Probes) -> list[str]:
    """Offers that have an option for every job after preprocessing, by name: the others cannot
    carry the problem alone (what a restricted solve would check first)."""
    jobs = {job.name for job in probes.problem.jobs}
    by_offer: dict[str, set[str]] = {}
    for opt in probes.inst.options:
        by_offer.setdefault(probes.inst.configs[opt.config].offer.offer, set()).add(opt.job)
    return sorted(o for o, served in by_offer.items() if served == jobs)


def _unsolved(offers: list[str]) -> str:
    shown = ", ".join(offers[:3]) + (f" and {len(offers) - 3} more" if len(offers) > 3 else "")
    return f"{len(offers)} offer{'s' if len(offers) != 1 else ''} not solved in the time given: {shown}"


def mode_baselines(problem: Problem, catalog: Catalog, *, stop_at: float | None = None,
                   probes: Probes | None = None, **solve_options) -> list[Baseline]:
    """Everything on hourly, everything on monthly contracts."""
    try:
        probes = probes or engine(problem, catalog, stop_at=stop_at, **solve_options)
    except Infeasible:
        return [Baseline(name, None, f"infeasible with {'/'.join(modes)} only", "infeasible")
                for name, modes in MODE_BASELINES.items()]
    out = []
    for name, modes in MODE_BASELINES.items():
        kept = [o for o in probes.catalog.offers.values() if o.mode in modes]
        answer = _ask(probes, only(probes, (o.offer for o in kept), name), with_restrict(problem, modes=modes))
        if answer != "undetermined" and answer.plan is not None:
            out.append(Baseline(name, answer.plan.total_cost,
                                ", ".join(sorted({a.offer for a in answer.plan.allocations})), answer.status))
        elif answer != "undetermined" and answer.status == "infeasible":
            out.append(Baseline(name, None, f"infeasible with {'/'.join(modes)} only", "infeasible"))
        else:
            out.append(Baseline(name, None, "not determined: no plan found in the time given", "undetermined"))
    return out


def all_baselines(problem: Problem, catalog: Catalog, *, max_seconds: float | None = None,
                  probes: Probes | None = None, **solve_options) -> list[Baseline]:
    """The mode baselines first (two probes), then every single offer, all within max_seconds, on
    one model: `probes` (the engine that solved the plan) or one built here."""
    stop_at = None if max_seconds is None else time.perf_counter() + max_seconds
    try:
        probes = probes or engine(problem, catalog, **solve_options)
    except Infeasible:
        return [Baseline("best single offer", None, "no single offer can carry the problem alone", "infeasible"),
                *(Baseline(name, None, f"infeasible with {'/'.join(modes)} only", "infeasible")
                  for name, modes in MODE_BASELINES.items())]
    saved = probes.clock
    if stop_at is not None:  # the baselines' share of the command's time
        probes.clock = RunClock(saved.time_limit, min(stop_at, saved.stop_at or stop_at), least=saved.least)
    try:
        ROWS.expect(1 + len(MODE_BASELINES))
        modes = mode_baselines(problem, catalog, probes=probes, **solve_options)
        for b in modes:
            ROWS.announce(_row_words(b, problem.currency))
        best = best_single_offer(problem, catalog, probes=probes, **solve_options)
        ROWS.announce(_row_words(best, problem.currency))
        return [best, *modes]
    finally:
        probes.clock = saved


def _row_words(b: Baseline, currency: str) -> str:
    """A baseline's row in one line, for the command line as it is determined (solver.rows)."""
    return f"{b.name}: {b.cost:,.0f} {currency} ({b.detail})" if b.cost is not None else f"{b.name}: {b.detail}"


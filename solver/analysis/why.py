"""Why this plan: each job's runners-up with the reason each lost, and what the optimum's
binding limits are worth (issue 5, items 1 and 2).

Why: a planner that cannot say why a candidate was not chosen is not trusted with a
purchase. Every number here comes from a solve of the same MILP, every reason from
the model itself:

- An alternative is one GPU type × mode × site × vendor (all its offers and interconnect
  options). Forcing a job onto it: the job's replicas outside the alternative bounded to 0
  (the plans of the row `Why-<job>-only`, Σ replicas of the job outside it ≤ 0). Its cost is
  the verified plan's total; the difference to the optimum is what choosing it costs.
- An alternative preprocessing already dropped for the job carries the reason recorded
  there (Instance.excluded: `memory:`, `lead_time:`, `fabric:`, `capacity:`, residency,
  spot) — the same code that leaves those columns out of the MILP. It is listed apart
  (JobWhy.excluded), never ranked among the runners-up: it has no forced cost.
- An alternative that passes preprocessing but is infeasible when forced: an elastic
  solve of the forced model with slack on the `Power-<dc>-<t>` rows (per site), the
  offers' stock (node bounds raised, rows `Stock-<offer>-<t>` put the written caps back),
  the `Budget` row and the rows asking each job's work (`Work-<job>` and the domain
  `need` rows), minimising the slack relative to each limit (work slack weighted
  ×1000: missing work is the last resort). The family whose slack
  carries the most names the reason; with only budget slack the forced plan exists but
  breaks the budget, so it lost on `price`, its cost from a solve without the budget.
- A feasible forced plan that costs more lost on `price`.

Binding limits (plan.binding) get a re-solve delta: the problem solved again with the
limit relaxed by one meaningful unit — one node of the offer, one rack's kW at the site,
one day on the job's deadline, 1 % more budget — as its family's bound moved.

The models (issue 34: probes on built models, solver.probes, not a build per question):
1. the base: the optimum, every forced runner-up, their LP bounds, the budget-free forced
   solves and the budget and power levers are probes of it;
2. its elastic twin (`_Elastic`, the same Instance built again): every infeasible runner-up's
   elastic solve, built at the first one;
3. the levers' model (`_LeverModel`, a second Instance): the stock and deadline levers, built
   when one binds; the base has no variables past its written stock and deadlines.
4. on uniform periods, an Instance preprocessed with no lead times (`_lead_free`, no model):
   whether an excluded runner-up's lead time is what leaves it no time, for all of them.
Still solved whole: a lever on another horizon than the levers' model's, every question of a
problem with preferences (weighed by re-solves in solve_problem), and `_lead_time_blocks`
(an infeasible runner-up's forced plan without its offers' lead time: another preprocessing).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

from solver.analysis.edits import apply_edits
from solver.analysis.words import no_plan_text, not_analysed_text, not_proven_text
from solver.api import DEFAULT_BACKEND, FAMILIES, Exclusion, Family, Milp, NotApplicable, family
from solver.clock import OutOfTime, RunClock, not_started
from solver.errors import Infeasible
from solver.model.catalog import Catalog, Offer
from solver.model.plan import Binding, Plan
from solver.model.problem import Problem
from solver.probes import Limit, Objective, Probes, Relaxed, VarBounds, add_slacks, slack_on, twin
from solver.probes.elastic import only_these
from solver.rows import ROWS

OWN_CODES = ("memory", "lead_time", "residency", "fabric")
"""Reasons an alternative loses that are no limit a family owns: what preprocessing left out."""
CODES = (*dict.fromkeys(f.lost.code for f in FAMILIES if not isinstance(f.lost, NotApplicable)), *OWN_CODES)
"""Every reason an alternative may lose on: each family's (Family.lost.code), then why's own."""
STOCK_RAISE = 8
"""Offers' node bounds are raised this much for the stock slack of a forced model."""
TOL = 1e-6
_EXCLUDED_CODE = {"memory": "memory", "lead_time": "lead_time", "fabric": "fabric", "capacity": "deadline",
                  "residency": "residency", "spot": "availability", "window": "availability",
                  "precision": "availability", "stack": "availability", "dominated": "price"}
"""The code (of CODES) an alternative gets for each preprocessing reason (solver.milp.exclusion.CODES)."""
_DETAIL_ONLY = frozenset({"memory", "lead_time", "fabric", "capacity"})
_ORDER = ("residency", "memory", "lead_time", "fabric", "deadline", "availability")
"""Which preprocessing reason names an alternative whose configurations were dropped for several."""


@dataclass
class Alternative:
    """One GPU type × mode × site × vendor the optimum did not use for a job."""

    job: str
    vendor: str
    gpu: str
    mode: str
    datacenter: str
    offers: list[str]
    code: str                       # one of CODES
    text: str
    cost: float | None = None       # total cost of the best plan forced onto it (None: no such plan)
    delta: float | None = None      # cost − the optimum's cost
    determined: bool = True         # False: a solve ran out of time
    low: float | None = None        # not determined: the least the forced plan can cost (the solve's bound)
    high: float | None = None       # not determined: the cost of the forced plan it found (None: none)

    @property
    def label(self) -> str:
        return f"{self.vendor}/{self.gpu}/{self.mode} @ {self.datacenter}"

    def to_dict(self) -> dict:
        return {**asdict(self), "label": self.label}


@dataclass
class JobWhy:
    """A job's runners-up. `alternatives` are the best k the job could be forced onto, by forced
    cost (then any a solve could not decide); `infeasible` those with no plan when forced (the
    limit that stands in the way in `text`); `excluded` those preprocessing left out before any
    solve (lead time past the deadline, spot for a job that cannot be interrupted, memory, ...),
    each with its reason. None of the last two has a cost: they are listed apart, never ranked."""

    job: str
    used: list[str]                 # labels of what the optimum uses for the job
    alternatives: list[Alternative]
    considered: int                 # every GPU type × mode × site × vendor examined
    infeasible: list[Alternative] = field(default_factory=list)
    excluded: list[Alternative] = field(default_factory=list)
    feasible: int = 0               # forced plans found (before keeping the best k)

    def to_dict(self) -> dict:
        return {"job": self.job, "used": list(self.used), "considered": self.considered,
                "feasible": self.feasible, "alternatives": [a.to_dict() for a in self.alternatives],
                "infeasible": [a.to_dict() for a in self.infeasible],
                "excluded": [a.to_dict() for a in self.excluded]}


@dataclass
class Lever:
    """A binding limit of the optimum and the re-solve delta of relaxing it by one unit."""

    kind: str                       # power | availability | budget | deadline
    name: str
    text: str
    slack: float                    # limit − used, in unit
    unit: str
    relax: str                      # the unit of relaxation, in words
    edits: list[str]
    cost: float | None = None       # cost of the relaxed problem's plan (None: infeasible, or not determined)
    delta: float | None = None      # cost − the optimum's cost (negative: relaxing saves)
    method: str = "re-solve delta"
    determined: bool = True         # False: out of time before a proven answer (see the notes)
    low: float | None = None        # not determined: the least the relaxed problem can cost (the solve's bound)
    high: float | None = None       # not determined: the cost of the relaxed plan it found (None: none)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Why:
    problem: str
    cost: float
    currency: str                   # of cost and of every forced cost and delta
    k: int
    jobs: list[JobWhy]
    binding: list[Lever]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    status: str = "optimal"         # the plan's: "feasible" when its solve did not prove it cheapest
    lower_bound: float | None = None  # the plan's proven bound (= cost when optimal)

    def to_dict(self) -> dict:
        return {"problem": self.problem, "cost": self.cost, "status": self.status, "lower_bound": self.lower_bound,
                "currency": self.currency, "k": self.k, "jobs": [j.to_dict() for j in self.jobs],
                "binding": [b.to_dict() for b in self.binding], "notes": list(self.notes),
                "seconds": round(self.seconds, 3)}


def why(problem: Problem, catalog: Catalog, *, k: int = 3, backend: str = DEFAULT_BACKEND,
        time_limit: float | None = None, gap: float | None = None, plan: Plan | None = None,
        max_seconds: float | None = None, probes: Probes | None = None) -> Why:
    """Best k runners-up per job with the reason each lost, and the binding limits' re-solve deltas.

    `plan`: the optimum when the caller already has it (solve --why); solved here otherwise.
    `probes`: the engine that plan came from (solve --why: its model and its bound are reused;
    its clock, the command's, bounds the run).
    `max_seconds`: the whole run's budget; each solve gets at most what is left of it, and
    what is left unsolved is reported as not analysed (a user's run took 13 min with
    --time-limit 20, which bounds each solve, not their number).
    Raises Infeasible when the problem itself has no plan.
    """
    from solver.api import solve_problem

    start = time.perf_counter()
    clock = RunClock(time_limit, None if max_seconds is None else start + max_seconds, least=0.0)
    # the one Instance and model (solver.probes); each forced runner-up is a probe on it
    if probes is None or probes.base is None or plan is None:
        probes = Probes(problem, catalog, backend=backend, gap=gap, clock=clock)
    if plan is None and problem.preferences:
        plan = solve_problem(problem, catalog, backend=backend, time_limit=time_limit, gap=gap,
                             max_seconds=max_seconds)  # the optimum's solve is part of the budget too
    elif plan is None:
        plan = _base_plan(probes)
    ctx = _Ctx(problem, catalog, plan, probes)
    ROWS.expect(None)
    # the levers first: a handful of probes, and what a user acts on ("what is more power worth?");
    # the runners-up after them take what is left (bj-teams-150d: all five levers were "not
    # determined" when they came last, after 27 runners-up had used the 60-s budget)
    ctx.plan_levers(plan.binding)
    levers = [ctx.lever(b) for b in one_per_limit(plan.binding)]
    jobs = [ctx.job(j.name, k) for j in problem.jobs]
    return Why(problem.name, plan.total_cost, plan.currency, k, jobs, [lv for lv in levers if lv is not None],
               time.perf_counter() - start, ctx.notes, status=plan.status, lower_bound=plan.lower_bound)


def one_per_limit(binding: list[Binding]) -> list[Binding]:
    """One binding per limit (kind, name), in the plan's order. An offer's stock or a site's power
    binds in each span of days the plan runs into it, but the lever is one edit of the limit (+1
    node of the offer, +kW at the site): one row, its text naming every span."""
    merged: dict[tuple[str, str], Binding] = {}
    for b in binding:
        first = merged.get((b.kind, b.name))
        merged[b.kind, b.name] = b if first is None else first.model_copy(update={
            "text": f"{first.text}; {b.text}", "start_day": min(first.start_day, b.start_day),
            "end_day": max(first.end_day, b.end_day)})
    return list(merged.values())


def _base_plan(probes: Probes) -> Plan:
    """The optimum on the built model, as solve_problem finds it for a problem without preferences
    (the same Instance, model and solve), within the run's budget."""
    try:
        return probes.solve_base()
    except OutOfTime:
        raise not_started() from None


def groups(inst) -> dict[tuple[str, str, str, str], list[str]]:
    """(vendor, gpu, mode, datacenter) → configuration keys of the instance."""
    out: dict[tuple[str, str, str, str], list[str]] = {}
    for key, cfg in inst.configs.items():
        o = cfg.offer
        out.setdefault((o.vendor, o.gpu, o.mode, o.datacenter), []).append(key)
    return out


def _forced_hook(job: str, keys: set[str], lifted: Family | None):
    """force_job, and without the `lifted` family's limit (its bound None) when given (a `constrain=` hook)."""
    force = force_job(job, keys)

    def constrain(milp: Milp) -> None:
        force(milp)
        if lifted is not None:
            lifted.set_bound(milp, "", None)
    return constrain


def force_job(job: str, keys: set[str]):
    """constrain= for solve_problem: row `Why-<job>-only`, the job's replicas outside `keys` sum to 0."""
    def constrain(milp: Milp) -> None:
        outside = [var for (i, _), var in milp.replicas.items()
                   if milp.inst.options[i].job == job and milp.inst.options[i].config not in keys]
        only_these(milp, f"Why-{job}-only", outside)
    return constrain


LP_SHARE = 0.2
"""The share of the time left that ranking the runners-up by their LP bounds may take (the rest is
for the forced solves, which are the rows a user reads)."""


class _Ctx:
    def __init__(self, problem, catalog, plan, probes: Probes) -> None:
        self.problem, self.catalog, self.inst, self.plan = problem, catalog, probes.inst, plan
        self.probes, self.milp = probes, probes.milp  # the built model the forced runners-up are probes on
        self.backend, self.gap = probes.backend, probes.gap
        self.clock = probes.clock
        self.groups = groups(self.inst)
        self.notes: list[str] = []
        self.twin: _Elastic | None = None             # the elastic twin, built at the first infeasible runner-up
        self.levers: _LeverModel | None = None         # the levers' model, when a stock or deadline lever binds
        self.lead_free = None                          # the Instance with no lead times (`_lead_free`)

    def _elastic_twin(self) -> _Elastic:
        if self.twin is None:
            self.twin = _Elastic.build(self.probes)
        return self.twin

    @property
    def time_limit(self) -> float | None:
        """Seconds for the next solve (solver.clock); OutOfTime (not started) when none is left."""
        return self.clock.next_limit()

    def _solve(self, problem: Problem, catalog: Catalog | None = None, constrain=None) -> float | None:
        """Cost of the verified plan; None when proven infeasible; OutOfTime (started) when out of time."""
        from solver.api import solve_problem

        try:
            plan = solve_problem(problem, catalog or self.catalog, backend=self.backend, time_limit=self.time_limit,
                                 gap=self.gap, constrain=constrain)
        except Infeasible as exc:
            if not exc.proven:
                raise OutOfTime(str(exc), started=True) from None
            return None
        if plan.status != "optimal" and (self.gap is None or plan.gap > self.gap + 1e-9):
            # a time-limited plan only bounds the answer: +1 node "costing" 12 M CNY more was one
            raise OutOfTime(f"stopped at a {plan.gap:.1%} gap", started=True)
        return plan.total_cost

    # --- runners-up -----------------------------------------------------------------------

    def job(self, name: str, k: int) -> JobWhy:
        used_offers = {a.offer for a in self.plan.schedule.assignments if a.job == name}
        used = sorted({_label(self.catalog.offers[o]) for o in used_offers})
        excluded = _excluded_by_config(self.inst.excluded.get(name, []))
        usable = {o.config for o in self.inst.options if o.job == name}
        out, candidates = [], []
        for group, keys in sorted(self.groups.items()):
            offers = sorted({self.inst.configs[key].offer.offer for key in keys})
            if used_offers & set(offers):
                continue
            reasons = [excluded[key] for key in keys if key in excluded]
            if not any(key in usable for key in keys):
                if all(r.code == "restrict" for r in reasons):
                    continue  # the user's own restrict list: not a candidate at all
                out.append(self._excluded(name, group, offers, reasons))
            else:
                candidates.append((group, offers, set(keys)))
        considered = len(out) + len(candidates)
        # Cheapest LP bound first; once k forced plans cost no more than the next bound, the rest
        # cannot enter the k best (ranked by cost, infeasible ones after): not re-solved.
        bounds = self._lp_bounds(name, [c[2] for c in candidates])
        order = sorted(range(len(candidates)), key=lambda i: (bounds[i] is None, bounds[i] or 0.0))
        solved: list[Alternative] = []
        skipped, skipped_from = 0, math.inf
        for i in order:
            costs = sorted(a.cost for a in solved if a.cost is not None)
            if len(costs) >= k and bounds[i] is not None and bounds[i] >= costs[k - 1] - TOL:
                skipped += 1
                skipped_from = min(skipped_from, bounds[i])
                continue
            group, offers, keys = candidates[i]
            solved.append(alt := self._forced(name, group, offers, keys))
            if alt.determined or alt.high is not None:  # not every runner-up the budget left unsolved: the table says so
                ROWS.announce(f"{name}: {alt.label} — {alt.text}")
        feasible = sorted((a for a in solved if a.cost is not None), key=_rank)
        undecided = sorted((a for a in solved if a.cost is None and not a.determined), key=_rank)
        infeasible = sorted((a for a in solved if a.cost is None and a.determined), key=_rank)
        out.sort(key=lambda a: (_ORDER.index(a.code) if a.code in _ORDER else len(_ORDER), a.label))
        if skipped:
            self.notes.append(f"job {name}: {skipped} more alternative{'s' if skipped > 1 else ''} cost at least "
                              f"{skipped_from:,.0f} {self.problem.currency} forced (LP bound), more than the {k} shown; not re-solved")
        return JobWhy(name, used, (feasible + undecided)[:k], considered, infeasible, out, len(feasible))

    def _lp_bounds(self, name: str, key_sets: list[set[str]]) -> list[float | None]:
        """LP relaxation bound of each forced model (None: the LP is infeasible, or no time): probes
        on the one model, relaxed, the job's replicas outside each candidate bounded to 0 in turn.
        At most LP_SHARE of the run's time left goes to them: on finetune-sprint-30d eighteen LPs
        took the whole 60-s budget and `why` showed its first runner-up after 60 s."""
        if len(key_sets) <= 1:
            return [None] * len(key_sets)
        mine = [(self.inst.options[i].config, var) for (i, _), var in self.milp.replicas.items()
                if self.inst.options[i].job == name]
        left = self.clock.left()
        until = None if left is None else time.perf_counter() + LP_SHARE * left
        out: list[float | None] = []
        for keys in key_sets:
            if until is not None and time.perf_counter() > until:
                out.append(None)  # unknown: ranked after the bounded ones, never skipped on a bound
                continue
            outside = [var for config, var in mine if config not in keys]
            try:
                answer = self.probes.probe(Relaxed("LP relaxation", False), VarBounds("forced", True, outside, upper=0.0),
                                           verify=False, backend="highs")
            except OutOfTime:
                answer = None
            ok = answer is not None and answer.solution is not None and answer.status == "optimal"
            out.append(answer.solution.objective if ok else None)
        return out

    def _excluded(self, name: str, group, offers: list[str], reasons: list[Exclusion]) -> Alternative:
        coded = [(_EXCLUDED_CODE[r.code], _words(r)) for r in reasons if r.code != "restrict"] \
            or [("availability", "unusable")]
        code, text = min(coded, key=lambda cr: _ORDER.index(cr[0]) if cr[0] in _ORDER else len(_ORDER))
        if code == "memory":
            text = self._memory_words(name, group, offers) or text
        elif code == "deadline":
            text = f"cannot finish in time at any size ({text})"
            lead = max(self.catalog.offers[o].lead_time_days for o in offers)
            if lead and self._usable_without_lead_time(name, offers):
                code, text = "lead_time", f"lead time {lead} days leaves too little of the window: {text}"
        elif code == "lead_time":
            lead = min(self.catalog.offers[o].lead_time_days for o in offers)
            text = f"lead time {lead} days: {text}"
        return Alternative(name, *group, offers, code, text)

    def _memory_words(self, name: str, group, offers: list[str]) -> str | None:
        from solver.api import job_layout

        job = next(j for j in self.problem.jobs if j.name == name)
        gpu = self.catalog.gpus[group[1]]
        biggest = max(offers, key=lambda o: self.catalog.offers[o].gpus_per_node * self.catalog.offers[o].max_nodes)
        offer = self.catalog.offers[biggest]
        has = offer.gpus_per_node * offer.max_nodes
        try:
            layout = job_layout(job, gpu, offer.gpus_per_node, 4096)
        except Exception:  # noqa: BLE001 - wording only; the code stands without the number
            layout = None
        if layout is not None and layout.gpus <= has:
            return None  # a copy fits the offer's GPUs: preprocessing's own reason says what did not fit
        need = f"needs {layout.gpus}" if layout is not None else "needs more than 4096"
        return f"{need} × {gpu.gpu} per model copy; the offer has {has}"

    def _forced(self, name: str, group, offers: list[str], keys: set[str]) -> Alternative:
        alt = Alternative(name, *group, offers, "price", "")
        try:
            cost = self._solve_forced(name, keys)
            if cost is None:
                self._elastic(alt, keys)
            else:
                alt.cost, alt.delta = cost, cost - self.plan.total_cost
                alt.text = _dearer(alt.delta, self.problem.currency)
        except OutOfTime as exc:
            alt.code, alt.determined = "price", False
            if not exc.started:
                alt.text = "not analysed: " + not_analysed_text()
                return alt
            alt.low, alt.high = exc.low, exc.high
            alt.text = no_plan_text(f"raise {self.clock.more_time}")
            if exc.high is not None:  # an interval: from what the solve proved to the plan it found
                base, cur = self.plan.total_cost, self.problem.currency
                alt.text = (f"dearer by {max(exc.low - base, 0.0):,.0f} to {exc.high - base:,.0f} {cur} "
                            + not_proven_text(self.clock.more_time))
        return alt

    def _moved(self, fam, target: str, step) -> Limit | None:
        """The lever as its family's bound moved on the built model (Step.amount), when the family's
        setter takes the value; None: solve the edited problem (a later deadline, more stock than
        the catalog's, preferences to weigh)."""
        if step.amount is None or self.problem.preferences:
            return None
        now = fam.bound(self.milp, target)
        if now is None:
            return None
        change = Limit(step.words, False, fam, target, now + step.amount)
        try:
            change.apply(self.milp)()  # the setter's own check (ValueError: refused), undone at once
        except ValueError:
            return None
        return change

    def _probe_cost(self, *changes, probes: Probes | None = None, **verified) -> float | None:
        """Cost of the verified plan of a probe (of the base model, or of `probes`; `verified`:
        the problem and catalog its plan is checked against); None when proven infeasible;
        OutOfTime, started (with the interval the solve reached) when the time ran out first, or
        not started before it began."""
        answer = (probes or self.probes).probe(*changes, **verified)
        if answer.status == "infeasible":
            return None
        if answer.plan is None or (answer.status != "optimal"
                                   and (self.gap is None or answer.plan.gap > self.gap + 1e-9)):
            raise OutOfTime(answer.why or f"stopped at a {answer.plan.gap:.1%} gap", started=True,
                            low=answer.low, high=answer.cost)
        return answer.plan.total_cost

    def _solve_forced(self, name: str, keys: set[str], *, lifted: Family | None = None) -> float | None:
        """Cost of the verified plan with job `name` only on `keys`; None when proven infeasible;
        OutOfTime (started: with the interval the solve reached) when the time ran out first.
        `lifted`: without that family's limit (its bound lifted for the probe).

        A probe, not a rebuild (solver.probes): on the one built model, the job's replicas outside
        `keys` get an upper bound of 0 for this solve (the same plans as the row `Why-<job>-only`
        allows), then their bounds are put back; it starts from any plan found so far that meets
        it and is bounded below by the optimum. With preferences (weighed by re-solves in
        solve_problem) the problem is solved whole with that row."""
        if self.problem.preferences:
            return self._solve(self.problem, constrain=_forced_hook(name, keys, lifted))
        milp = self.milp
        outside = [var for (i, _), var in milp.replicas.items()
                   if milp.inst.options[i].job == name and milp.inst.options[i].config not in keys]
        changes = [VarBounds(f"job {name} only on {sorted(keys)}", True, outside, upper=0.0)]
        if lifted is not None:
            changes.append(Limit(f"without the {lifted.name}", False, lifted, "", None))
        return self._probe_cost(*changes)

    def _elastic(self, alt: Alternative, keys: set[str]) -> None:
        """Name the row family whose slack the forced model needs, with the amount: one probe of
        the elastic twin (`_Elastic`), the job forced by bounds, every slack on, the objective
        their weighted sum."""
        twin = self._elastic_twin()
        milp = twin.probes.milp
        outside = [var for (i, _), var in milp.replicas.items()
                   if milp.inst.options[i].job == alt.job and milp.inst.options[i].config not in keys]
        slacks = twin.slacks  # (family, target, var, weight, limit)
        try:
            answer = twin.probes.probe(VarBounds(f"job {alt.job} only on {sorted(keys)}", True, outside, upper=0.0),
                                       *slack_on("elastic", [(s[2], twin.on[i]) for i, s in enumerate(slacks)]),
                                       Objective("least slack", terms=[(s[2], s[3]) for s in slacks]), verify=False)
        finally:
            twin.probes.known = []  # its plans are priced by slack: none is a start for the next
        if answer.status == "infeasible":
            alt.code, alt.text = "deadline", "no plan on it even with every limit relaxed"
            return
        if answer.solution is None:
            raise OutOfTime(answer.why, started=True)
        sol = answer.solution
        used = [(fam, target, sol.value(var), w * sol.value(var), limit) for fam, target, var, w, limit in slacks]
        used = [u for u in used if u[2] > TOL]
        if not used:
            alt.code, alt.text = "deadline", "infeasible when forced (numerically at the edge)"
            return
        fam, target, amount, _, limit = max(used, key=lambda u: u[3])
        alt.code, alt.text = fam.lost.code, fam.lost.words(milp, target, amount, limit)
        if not isinstance(fam.lost.without, NotApplicable):  # only this limit stands in the way: the plan without it
            cost = self._solve_forced(alt.job, keys, lifted=fam)
            if cost is not None:
                alt.cost, alt.delta = cost, cost - self.plan.total_cost
                alt.text = f"{_dearer(alt.delta, self.problem.currency)}; {fam.lost.without(self.problem, cost)}"
        elif fam.lost.window and target == alt.job and self._lead_time_blocks(alt, keys):
            alt.code = "lead_time"
            lead = max(self.catalog.offers[o].lead_time_days for o in alt.offers)
            alt.text = f"lead time {lead} days leaves too little of the window: " + alt.text

    def _usable_without_lead_time(self, name: str, offers: list[str]) -> bool:
        """Would preprocessing keep the job on these offers if they had no lead time? (same rules, rerun)"""
        inst = self._lead_free(offers)
        return any(o.job == name and inst.configs[o.config].offer.offer in offers for o in inst.options)

    def _lead_free(self, offers: list[str]):
        """The problem preprocessed with no lead time on `offers`: on uniform periods one Instance
        with no lead time on any offer, built at the first question and asked every later one.

        Why one serves all: preprocessing reads an offer's lead time for that offer's own
        configurations only (their first period and contract term; the dominance pruning
        compares configurations of one offer, solver.milp.prune), so the others' lead times do
        not change what it keeps of these. Event periods are cut at every lead time, so there
        each question is preprocessed anew."""
        from solver.api import build_instance

        if self.problem.periods != "uniform":
            return build_instance(self.problem, _no_lead_time(self.catalog, offers))
        if self.lead_free is None:
            leads = [o for o, offer in self.catalog.offers.items() if offer.lead_time_days]
            self.lead_free = build_instance(self.problem, _no_lead_time(self.catalog, leads))
        return self.lead_free

    def _lead_time_blocks(self, alt: Alternative, keys: set[str]) -> bool:
        """Would the forced plan exist if the alternative's offers had no lead time? (one more re-solve)"""
        if not any(self.catalog.offers[o].lead_time_days for o in alt.offers):
            return False
        return self._solve(self.problem, _no_lead_time(self.catalog, alt.offers),
                           constrain=force_job(alt.job, keys)) is not None

    # --- binding limits --------------------------------------------------------------------

    def plan_levers(self, binding) -> None:
        """The levers the base model cannot take as a bound moved (more stock than built, a later
        deadline), all held in one second model (`_LeverModel`), built at the first of them."""
        if self.problem.preferences:
            return  # weighed by re-solves in solve_problem: every lever is solved whole
        edited = {}
        for b in binding:
            fam = family(b.kind)
            if isinstance(fam.lever, NotApplicable):
                continue
            step = fam.lever(self.problem, self.catalog, b.name)
            if self._moved(fam, b.name, step) is None:
                edited[fam.name, b.name] = apply_edits(self.problem, self.catalog, step.edits)[:2]
        if edited:
            self.levers = _LeverModel.plan(self.problem, self.catalog, edited)

    def lever(self, b) -> Lever | None:
        slack, unit = b.limit - b.used, b.unit
        fam = family(b.kind)
        if isinstance(fam.lever, NotApplicable):
            return None
        step = fam.lever(self.problem, self.catalog, b.name)
        edits, relax = step.edits, step.words
        lever = Lever(b.kind, b.name, b.text, slack, unit, relax, edits)
        try:
            moved = self._moved(fam, b.name, step)
            held = None if moved is not None or self.levers is None else self.levers.changes(fam.name, b.name)
            if moved is not None:  # the limit's bound moved on the one built model: a probe
                lever.cost = self._probe_cost(moved)
            elif held is not None:  # a probe of the levers' model, the other levers held back
                lever.cost = self._probe_cost(*held, probes=self.levers.engine(self.probes),
                                              problem=self.levers.edited[fam.name, b.name][0],
                                              catalog=self.levers.edited[fam.name, b.name][1])
            else:
                prob, cat, _ = apply_edits(self.problem, self.catalog, edits)
                lever.cost = self._solve(prob, cat)
        except OutOfTime as exc:
            lever.determined = False
            if not exc.started:
                self.notes.append(f"{relax}: not analysed, " + not_analysed_text())
            else:
                self._undetermined_lever(lever, relax, exc)
        except Exception as exc:  # noqa: BLE001 - an edit the model rejects is reported, not raised
            self.notes.append(f"{relax}: {exc}")
        if lever.cost is not None:
            lever.delta = lever.cost - self.plan.total_cost
        ROWS.announce(f"{relax}: {_lever_words(lever, self.plan.total_cost, self.problem.currency)}")
        return lever


    def _undetermined_lever(self, lever: Lever, relax: str, exc: OutOfTime) -> None:
        """A lever's solve stopped unproven: the interval it reached, or that nothing was determined."""
        if exc.low is not None and math.isfinite(exc.low):  # what the solve proved (not -inf: none)
            lever.low, lever.high = exc.low, exc.high
        if lever.high is not None:  # an interval: from what the solve proved to the plan it found
            base, cur = self.plan.total_cost, self.problem.currency
            self.notes.append(f"{relax}: saves or costs {exc.low - base:+,.0f} to {exc.high - base:+,.0f} {cur} "
                              + not_proven_text(self.clock.more_time))
        else:
            self.notes.append(f"{relax}: " + no_plan_text(str(exc)))


def _periods_fit(own: Problem, built: Problem) -> bool:
    """Are `own`'s periods the first periods of `built`'s, so that `built` with every job held
    to `own`'s deadlines is `own`? Equal horizons and period rules; or, on uniform periods of
    one length, `own`'s horizon shorter and a whole number of periods.

    Why the longer horizon is the same problem then: no job runs past `own`'s horizon (each is
    held to its deadline); a contract is paid for its whole term whatever the horizon
    (solver.milp.capacity), and every contract held after `own`'s horizon is held at the
    latest start among them too, so the stock and power rows there add nothing."""
    if own.periods != built.periods or own.effective_period_days != built.effective_period_days:
        return False
    if own.horizon_days == built.horizon_days:
        return True
    return (own.periods == "uniform" and own.horizon_days < built.horizon_days
            and own.horizon_days % own.effective_period_days == 0)


def _lever_words(lever: Lever, base: float, currency: str) -> str:
    """A lever's row as a progress line: its delta, its interval, or why there is none."""
    if lever.delta is not None:
        return f"{lever.delta:+,.0f} {currency}"
    if lever.high is not None and lever.low is not None:
        return f"{lever.low - base:+,.0f} to {lever.high - base:+,.0f} {currency} (not proven)"
    return "infeasible" if lever.determined else "not determined"


@dataclass
class _Elastic:
    """The elastic twin: a second model of the base's Instance (solver.probes.twin) with every
    family's slack added once and switched off; each infeasible forced runner-up is one probe
    of it (the job forced by bounds, every slack on, the objective their weighted sum), where
    an elastic model was built per runner-up before (issue 34).

    Why a second model and not the base: the stock slack raises every offer's node bounds and
    widens the volume discounts (solver.milp.families.stock.stock_slacks, ×STOCK_RAISE), which would
    loosen the base's LP (the runners-up's LP bounds) and move its path among equally cheap
    plans. The twin holds the problem as written while its slacks are off."""

    probes: Probes
    slacks: list[tuple]             # (family, target, slack variable, weight, written limit)
    on: list[float]                 # each slack variable's upper bound when on

    @classmethod
    def build(cls, base: Probes) -> _Elastic:
        probes = twin(base)
        probes.gap = None  # the elastic solve at the engine's default gap, as the per-runner-up build had it
        slacks, on = [], []
        for fam in FAMILIES:
            if isinstance(fam.slack, NotApplicable) or isinstance(fam.lost, NotApplicable):
                continue
            for target, (var, upper) in add_slacks(probes, fam.slack, factor=STOCK_RAISE).items():
                weight, limit = fam.lost.scale(probes.milp, target)
                slacks.append((fam, target, var, weight, limit))
                on.append(upper)
        return cls(probes, slacks, on)


@dataclass
class _LeverModel:
    """The model the stock and deadline levers are probes of: the problem built with every such
    lever applied at once (each binding offer's stock + its step, each binding job's deadline +
    its step, the horizon as the latest needs), each lever a probe with the others held back
    (solver.probes.Restock to the written stock; the deadline family's bound at the written day).

    Why a second model: the base was built with the written stock and deadlines, and a model has
    no variables past either (preprocessing's size tiers and the periods come from them); which
    limits bind is known only once the base is solved. One model for all of them, where each
    lever rebuilt the problem before.

    Exact where the held-back model is the lever's own edited problem: Restock on a model built
    with at least that stock (solver.probes.Restock); a deadline held back on uniform periods
    (solver.probes.bound_changes); the lever's periods the first periods of this model's
    (`_periods_fit`; a lever they do not fit is solved whole: `changes` says None)."""

    problem: Problem
    catalog: Catalog
    written: Problem
    written_catalog: Catalog
    edited: dict[tuple[str, str], tuple[Problem, Catalog]]   # (family, target) → the lever's own problem
    probes: Probes | None = None

    @classmethod
    def plan(cls, problem: Problem, catalog: Catalog, edited: dict) -> _LeverModel:
        """The model with every lever in `edited` applied: each lever's edits at once, the one
        needing the latest horizon last (so the horizon is the latest any needs). On event
        periods (cut at every deadline) a lever that edits the problem moves the others'
        periods: there such levers are left out (solved whole, `changes` None) and the model
        holds the levers that edit the catalog alone."""
        if problem.periods != "uniform":
            edited = {key: pc for key, pc in edited.items() if pc[0] == problem}
        if not edited:
            return cls(problem, catalog, problem, catalog, {})
        steps = sorted(edited, key=lambda key: edited[key][0].horizon_days)
        edits = [e for name, target in steps
                 for e in family(name).lever(problem, catalog, target).edits]
        both, cat, _ = apply_edits(problem, catalog, edits)
        return cls(both, cat, problem, catalog, edited)

    def engine(self, base: Probes) -> Probes:
        """The model, built at its first probe on the base's clock; none once that clock is spent
        (issue 47 item 12: a lever asked after the budget built a whole model only to say "not
        analysed")."""
        if self.probes is None:
            if base.clock is not None and base.clock.spent():
                raise OutOfTime("the run's time is spent")
            self.probes = Probes(self.problem, self.catalog, backend=base.backend, gap=base.gap, clock=base.clock)
        return self.probes

    def changes(self, kind: str, target: str) -> list | None:
        """The lever (kind, target) as changes of this model: every other lever held back to the
        written limit. None: not exact here (another horizon or period grid than the lever's own
        problem, or a deadline held back on event periods): the caller solves the lever whole."""
        if (kind, target) not in self.edited or not _periods_fit(self.edited[kind, target][0], self.problem):
            return None
        held: list = []
        for (f, t) in self.edited:
            if (f, t) == (kind, target):
                continue
            fam = family(f)  # held back by its own bound, at the written limit
            written = fam.relax.limit(self.written, self.written_catalog, t)
            held.append(Limit(f"{f} of {t} at {written:g} {fam.unit}", True, fam, t, written))
        return held


def _no_lead_time(catalog: Catalog, names: list[str]) -> Catalog:
    offers = dict(catalog.offers)
    for name in names:
        offers[name] = offers[name].model_copy(update={"lead_time_days": 0})
    return catalog.model_copy(update={"offers": offers})


def _excluded_by_config(reasons: list[Exclusion]) -> dict[str, Exclusion]:
    """Each configuration's first reason."""
    out: dict[str, Exclusion] = {}
    for reason in reasons:
        out.setdefault(reason.config, reason)
    return out


def _words(reason: Exclusion) -> str:
    """A reason as an alternative's text: the detail alone where the code says the rest."""
    return reason.detail if reason.code in _DETAIL_ONLY else reason.text


def _rank(alt: Alternative) -> tuple:
    """Runners-up by forced cost; those without one (infeasible, or undecided) by label."""
    if alt.cost is not None:
        return (0, alt.cost, alt.label)
    return (1, 0.0, alt.label)


def _dearer(delta: float, currency: str) -> str:
    """A forced plan against the plan. Below it only when the plan's solve was stopped before a
    proof (issue 47): then the plan is no optimum, and the text says so rather than "ties"."""
    if delta < -max(0.5, TOL):
        return f"cheaper than the plan by {-delta:,.0f} {currency} (the plan was not proven optimal)"
    if delta <= max(0.5, TOL):
        return f"ties with the plan (0 {currency} more); the plan was picked first"
    return f"dearer by {delta:,.0f} {currency}"


def _label(offer: Offer) -> str:
    return f"{offer.vendor}/{offer.gpu}/{offer.mode} @ {offer.datacenter}"


"""Why a problem is infeasible, in amounts: the smallest relaxation of each limit that alone
makes it feasible, and the cheapest combination of them (issue 3, item 6).

Why: "infeasible" alone sends a team guessing which promise to renegotiate. What they
can act on is "needs 9 more days on every deadline, or 160 kW more at Yizhuang, or
1,200,000 CNY more budget": one number per lever, each checked by solving the problem
again with that change.

Limits and how each smallest amount is found (all others stay as written):

- budget: the cheapest plan with no budget at all, solved to a zero gap; the amount is
  its cost minus the budget, rounded up to 1 (in the problem's currency). Exact: any budget below that cost
  admits no plan. When there is no plan even without a budget, budget cannot help.
- power (per datacenter with a power quota in the model): an elastic MILP, the built
  model with one slack variable s_d ≥ 0 subtracted in every `Power-<d>-<t>` row and
  the objective replaced by min s_d. The amount is read from the integer plan the
  solver returns (max over periods of the site's draw minus its quota, which is s_d at
  the optimum) and rounded up to 1 kW. One solve per site; each site that helps is an
  alternative. When no single site helps, all sites together are tried.
- availability (max_nodes of offers): the same elastic idea, but the stock also shapes
  the instance (layouts that fit, size tiers, capacity pruning), so the model is built
  from a catalog whose caps are raised (×2, then ×8, ×64 while that is not enough) and rows
  Σ_{options of o} n[o,t] − s_o ≤ max_nodes_o put the written caps back with integer
  slack. Minimise Σ_o s_o: the fewest extra nodes in total, possibly over several offers.
- deadline: the fewest days k added to every job's deadline (horizon_days extended when
  needed). Days change the jobs' windows, so they are not a slack variable: a doubling then
  bisection search over k. On daily uniform periods each probe is a cap of one model built
  with every deadline moved by the search's cap (the replicas after deadline + k fixed at 0,
  feasibility only; the last k's plan then priced and verified); otherwise a full solve. Feasibility
  is monotone in k in practice (a later deadline keeps every plan; only a binding budget
  with per-window storage charges can break that), and the search probes k−1 on its way,
  so "one day less is infeasible" holds by construction. Capped at max(horizon, 30) days.

Elastic solves are probes whose plans are not verified (they break the written limits on
purpose): the slack switched on, the objective the weighted slack. Every suggestion is then
VERIFIED by applying it in the edit language (solver.analysis.edits) and solving the edited
problem — as bound changes of a built model when its edits are bounds of one
(solver.probes.bound_changes), else through solve_problem — with the independent verifier
checking the plan against the edited problem; `verified` says whether that found a plan.

Builds (issue 34): the problem as written is preprocessed once (its Instance: the quick
words, the sites in play); one model built from a catalog with every stock ×2, with the
budget's, each site's power and each offer's stock slack added and switched off (its stock
rows put the written caps back, so it is the written problem until a probe lifts a slack):
every elastic solve, the budget dropped and the suggestions' checks are probes of it, a
model with ×8 or ×64 only while more stock is asked and ×2 is not enough; and one model with
every deadline moved by the search's cap, for the day searches. The printed words name every change those edits make,
in the same amounts (a later deadline past the horizon also says the horizon it needs:
`whatif` rejects a deadline past horizon_days), so a suggestion followed literally is the
one that was checked.

Pairs, when no single limit helps: a later deadline together with more budget (the 7-day
job on H100s whose lead time is 14 days, issue 36: neither the date alone, under the budget,
nor the budget alone, before the racks arrive, can do it). The fewest extra days k with no
budget at all (the same search as the deadline's), then the budget that day's cheapest plan
needs; the pair is verified like every suggestion. A limit the problem does not touch (a site
where no usable offer draws power) gets no line.

Cheapest combination: one elastic MILP with slack on the budget, every site's power and
every offer's stock at once, minimising the relative relaxation Σ slack/limit (10 % more
budget weighs like 10 % more kW at one site or 10 % more nodes of one offer): the
smallest change in proportion to what was promised. Deadlines stay as written there:
days cannot be a linear slack, and a date is usually the hardest promise to move; when
nothing but a later deadline helps the combination is absent and the text says so.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field


from solver.analysis.edits import apply_edits
from solver.analysis.words import no_plan_text
from solver.api import DEFAULT_BACKEND, FAMILIES, Family, NotApplicable, build_instance, family
from solver.clock import OutOfTime, RunClock, ctrl_c_or
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.problem import Problem
from solver.probes import (Answer, Change, Limit, Objective, Probes, ReadAs, RowBounds, VarBounds, add_slacks,
                           bound_changes, exists, slack_on)
from solver.rows import ROWS

STRATEGIES = ("days", "without", "each", "together")
"""The order the lone relaxations are tried and listed in, by each family's Relax.how."""
PHRASES = {
    "days": ("noun", "target", "smallest", "alone", "later", "smallest_later", "held"),
    "without": ("noun", "target", "smallest", "alone", "none", "any", "more", "within"),
    "each": ("noun", "target", "all", "smallest", "smallest_all", "alone", "where", "each_or_all"),
    "together": ("noun", "target", "smallest", "alone"),
}
"""The sentences (Relax.says) each strategy words a family's relaxation with."""
PARTS = {"days": (), "without": ("lift",), "each": ("where", "over"), "together": ("raised", "over")}
"""The Relax parts each strategy asks of a family besides its limit, edits and words."""
RAISE_FACTORS = (2, 8, 64)
"""Caps are raised this much for the stock slack, the next only when the last is not enough:
the smaller the raise, the tighter the model (the bundled example's combination: 5.3 s from ×4, 0.5 s from ×2)."""
TOL = 1e-6


@dataclass
class Part:
    """One limit's change inside a relaxation: +amount unit on target."""

    kind: str       # deadline | power | budget | availability
    target: str     # "every job", a datacenter, "budget", an offer
    amount: float
    unit: str
    relative: float | None = None   # amount ÷ the written limit (None when the limit is 0)
    horizon_days: int | None = None  # deadline: the horizon the later deadlines need (None: the written one holds)

    def words(self, *, percent: bool = False) -> str:
        """Every change the part's edits make, in the amounts they make it (nothing left implicit)."""
        text = family(self.kind).relax.words(self.amount, self.target, self.horizon_days, self.unit)
        if percent and self.relative is not None:
            text += f" (+{self.relative:.1%})"
        return text

    def edits(self) -> list[str]:
        return family(self.kind).relax.edits(self.amount, self.target, self.horizon_days)


@dataclass
class Relaxation:
    """A change that makes the problem feasible (or, with amount None, a limit that cannot).

    `edits` are in the what-if edit language; `verified` is True when re-solving the
    edited problem through solve_problem found a verified plan, whose cost is `cost`.
    """

    kind: str                       # deadline | power | budget | availability | combination
    target: str
    amount: float | None            # total of the parts (None when it cannot help, or mixed units)
    unit: str                       # of amount; "mixed" for a combination of several kinds
    parts: list[Part] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    verified: bool = False
    cost: float | None = None
    text: str = ""
    determined: bool = True         # False: a solve ran out of time before this was settled
    refuted: bool = False           # the re-solve proved the edited problem still infeasible

    @property
    def helps(self) -> bool:
        return bool(self.parts)

    @property
    def relative(self) -> float | None:
        """Σ amount ÷ limit over the parts: what the combination minimises."""
        shares = [p.relative for p in self.parts]
        return None if not shares or None in shares else sum(shares)

    def to_dict(self) -> dict:
        return {**asdict(self), "relative": self.relative}


@dataclass
class Explanation:
    """Every limit's smallest lone relaxation (`alone`) and the cheapest combination."""

    alone: list[Relaxation]
    combination: Relaxation | None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pairs: list[Relaxation] | None = None   # searched only when no single limit helps

    def text_lines(self) -> list[str]:
        helping = [r for r in self.alone if r.helps]
        lines = []
        if helping:
            lines.append("needs " + ", or ".join(_flag(r) for r in helping))
        elif all(r.determined for r in self.alone):
            lines.append("no single limit relaxed alone makes it feasible")
        lines += [_flag(r, prefix="needs both: ") if r.helps else r.text for r in self.pairs or []]
        lines += [r.text for r in self.alone if not r.helps]
        if self.combination is not None:
            lines.append(_flag(self.combination, prefix="cheapest combination (smallest change relative to "
                                                        "each limit): "))
        lines += self.notes
        return lines

    def to_dict(self) -> dict:
        out = {"alone": [r.to_dict() for r in self.alone],
               "combination": self.combination.to_dict() if self.combination else None,
               "notes": list(self.notes), "lines": self.text_lines(), "seconds": round(self.seconds, 3)}
        if self.pairs is not None:
            out["pairs"] = [r.to_dict() for r in self.pairs]
        return out


def explain_infeasible(problem: Problem, catalog: Catalog, *, backend: str = DEFAULT_BACKEND,
                       time_limit: float | None = 60.0, max_seconds: float | None = 600.0,
                       max_extra_days: int | None = None) -> Explanation:
    """Smallest relaxation of each limit alone, and the cheapest combination, each verified.

    `time_limit` bounds every single solve (probe, elastic model, verification) and
    `max_seconds` the whole explanation: a solve that stops unproven, or one there is no
    time left for, leaves its limit undetermined, said in `notes`.
    """
    start = time.perf_counter()
    ctx = _Context(problem, catalog, backend, time_limit,
                   None if max_seconds is None else start + max_seconds)
    strategies = {"days": lambda fam: [ctx.deadline(fam, max_extra_days)], "without": ctx.without,
                  "each": ctx.each, "together": ctx.together}
    ROWS.expect(None)
    alone = [_announced(rel) for how in STRATEGIES for fam in FAMILIES
             if not isinstance(fam.relax, NotApplicable) and fam.relax.how == how for rel in strategies[how](fam)]
    pairs = None
    if not any(r.helps for r in alone) and all(r.determined for r in alone):
        pairs = ctx.pairs(max_extra_days)
    combination = ctx.combination()
    return Explanation(alone, combination, ctx.notes, time.perf_counter() - start, pairs)


def _announced(rel: Relaxation) -> Relaxation:
    """Tell the command line one relaxation is determined (solver.rows), in its own words."""
    ROWS.announce(rel.text if getattr(rel, "text", "") else f"{rel.kind} {rel.target}")
    return rel


class _Context:
    """The explanation's models and what it has learnt (module docstring, "Builds")."""

    def __init__(self, problem: Problem, catalog: Catalog, backend: str, time_limit: float | None,
                 stop_at: float | None) -> None:
        self.problem, self.catalog = problem, catalog
        self.backend, self.clock = backend, RunClock(time_limit, stop_at)
        self.notes: list[str] = []
        self.resolved: dict[tuple[str, ...], float | None] = {}
        self.inst = build_instance(problem, catalog)  # as written: its sites and stranded jobs (no model)
        self.stranded = any(not any(o.job == j.name for o in self.inst.options) for j in problem.jobs)
        self.sites = {fam.name: fam.relax.where(self.inst) for fam in self._relaxed("each")}
        self.raised: dict[int, _Raised | None] = {}  # stock factor → the model built with caps raised that much
        self.days: _Days | None = None               # the model built for the latest deadline searched

    @property
    def time_limit(self) -> float | None:
        """The next solve's limit (solver.clock); OutOfTime when none is left."""
        return self.clock.next_limit()

    @staticmethod
    def _relaxed(how: str) -> list[Family]:
        """The families whose limit the strategy `how` relaxes, in FAMILIES order."""
        return [f for f in FAMILIES if not isinstance(f.relax, NotApplicable) and f.relax.how == how]

    def _written(self, fam: Family, problem: Problem | None = None, catalog: Catalog | None = None) -> float | None:
        """The family's written limit over all its targets (Relax.says' "target") in `problem`."""
        return fam.relax.limit(problem or self.problem, catalog or self.catalog, fam.relax.says["target"])

    def _lifted(self, probes: Probes, problem: Problem) -> list[Change]:
        """Each dropped limit ("without": a limit on the cost) as `problem` holds it, as its
        family's bound on the built model: dropped, set, raised or lowered; [] where it is as built."""
        out: list[Change] = []
        for fam in self._relaxed("without"):
            value, was = self._written(fam, problem), self._written(fam, probes.problem)
            if value == was:
                continue
            noun = fam.relax.says["noun"]
            words = f"no {noun}" if value is None else f"{noun} {value:,.0f} {fam.unit_in(problem)}"
            out.append(Limit(words, value is not None and (was is None or value <= was), fam,
                             fam.relax.says["target"], value))
        return out

    # --- the built models -------------------------------------------------------------------

    def _raised_model(self, factor: int) -> _Raised | None:
        """The problem built from a catalog with every stock × factor, with each relaxable
        family's slack added and switched off (its stock rows put the written caps back): the
        problem as written until a probe switches a slack on. None when even then a job has
        no offer (preprocessing strands it)."""
        if factor not in self.raised:
            if self.clock.spent():  # no model built only to say "no time left" (issue 47 item 12)
                raise OutOfTime("no time left for the explanation")
            catalog, caps = self.catalog, {}
            for fam in self._relaxed("together"):
                catalog, caps[fam.name] = fam.relax.raised(catalog, factor)
            try:
                probes = Probes(self.problem, catalog, backend=self.backend, clock=self.clock)
            except Infeasible:
                self.raised[factor] = None
                return None
            slacks = {}
            for fam in FAMILIES:
                if isinstance(fam.relax, NotApplicable) or isinstance(fam.slack, NotApplicable):
                    continue
                if fam.relax.how == "together":
                    slacks[fam.name] = add_slacks(probes, fam.slack, caps=caps[fam.name], factor=factor)
                elif fam.relax.how in ("without", "each"):
                    slacks[fam.name] = add_slacks(probes, fam.slack)
            self.raised[factor] = _Raised(probes, slacks, caps, self.problem)
        return self.raised[factor]

    def _days_model(self, fam: Family, cap: int) -> _Days | None:
        """The problem built with every deadline `cap` days later (the horizon as it needs), for
        the deadline searches: k days are its replicas after each deadline + k fixed at 0.
        Exact on daily uniform periods only (both problems' own): there the later problem's
        periods up to each capped deadline are the k-problem's. None otherwise (re-solves)."""
        if self.days is None or self.days.cap != cap:
            later, cat, _ = apply_edits(self.problem, self.catalog, self._deadline_part(fam, cap).edits())
            daily = all(p.periods == "uniform" and p.effective_period_days == 1 for p in (self.problem, later))
            if not daily:
                return None
            if self.clock.spent():  # no model built only to say "no time left" (issue 47 item 12)
                raise OutOfTime("no time left for the explanation")
            try:
                self.days = _Days(Probes(later, cat, backend=self.backend, clock=self.clock), cap)
            except Infeasible:  # a job no offer carries even then: none with fewer days either
                self.days = _Days(None, cap)
        return self.days

    def _probe(self, probes: Probes, *changes: Change, gap: float | None = None, elastic: bool = False,
               **kw) -> Answer:
        """One probe at `gap` (the elastic and budget-free ones ask 0, as their re-solves did);
        OutOfTime when no time was left to start it. An elastic probe starts from no plan
        in hand and keeps none: its objective is the slack, while a solve compares plans by
        their cost (solver.engine.run prices every plan), so a cheap plan in hand that meets the
        elastic model would stand in for the least-slack one."""
        saved, probes.gap = probes.gap, gap
        kept = probes.known
        if elastic:
            probes.known = []
        try:
            return probes.probe(*changes, **kw)
        finally:
            probes.gap = saved
            probes.known = kept

    # --- verification of a suggestion: a verified plan of the edited problem --------------------

    def _resolve(self, edits: list[str], *, lifted: Family | None = None, days: int | None = None) -> float | None:
        """Cost of the verified plan of the edited problem (without the `lifted` family's limit,
        Relax.lift); None when it is (proven) infeasible. A probe of a built model when the edits
        are bounds of one (`days`: the edits are k = days more on every deadline, plus perhaps
        a dropped limit's); else the edited problem solved as a problem."""
        key = (*sorted(edits), *(() if lifted is None else (f"no {lifted.relax.says['noun']}",)))
        if key not in self.resolved:
            base = self.problem if lifted is None else lifted.relax.lift(self.problem)
            prob, cat, _ = apply_edits(base, self.catalog, edits)
            answer = self._verified_probe(prob, cat, days)
            if answer is None:
                self.resolved[key] = self._solved(prob, cat)
            elif answer.plan is not None:
                self.resolved[key] = answer.plan.total_cost
            elif answer.status == "infeasible":
                self.resolved[key] = None
            else:
                raise OutOfTime(f"no plan found for {'; '.join(edits)} in the time given", started=True)
        return self.resolved[key]

    def _verified_probe(self, prob: Problem, cat: Catalog, days: int | None) -> Answer | None:
        """The edited problem as a probe (its plan verified against it), or None when its edits
        are not bounds of a built model."""
        if days is not None:
            model = self.days
            if model is None or model.probes is None:
                return None
            changes = [*model.caps(self.problem, days), *self._lifted(model.probes, prob)]
            return self._probe(model.probes, *changes, ReadAs("edited", problem=prob, catalog=cat),
                               problem=prob, catalog=cat)
        self._raised_model(RAISE_FACTORS[0])
        for factor in sorted(f for f, model in self.raised.items() if model is not None):
            model = self.raised[factor]
            changes = bound_changes(model.probes, prob, cat)  # None: a stock past this raise, or not a bound
            if changes is not None:
                return self._probe(model.probes, *changes, *model.stock(cat),
                                   ReadAs("edited", problem=prob, catalog=cat), problem=prob, catalog=cat)
        return None

    def _solved(self, prob: Problem, cat: Catalog) -> float | None:
        from solver.api import solve_problem
        try:
            return solve_problem(prob, cat, backend=self.backend, time_limit=self.time_limit).total_cost
        except Infeasible as exc:
            if not exc.proven:
                raise OutOfTime(str(exc), started=True) from None
            return None

    def _finish(self, kind: str, target: str, parts: list[Part], days: int | None = None) -> Relaxation:
        """Turn parts into edits, verify them by a verified plan of the edited problem, and word the result."""
        for p in parts:
            p.relative = self._relative(p)
        edits = [e for p in parts for e in p.edits()]
        refuted = False
        try:
            cost = self._resolve(edits, days=days)
            refuted = cost is None
        except OutOfTime:
            cost = None
            self.notes.append(f"could not verify {'; '.join(edits)} "
                              + ctrl_c_or("within the time limit", "before Ctrl-C stopped the run"))
        unit = parts[0].unit if len({p.unit for p in parts}) == 1 else "mixed"
        amount = sum(p.amount for p in parts) if unit != "mixed" else None
        rel = Relaxation(kind, target, amount, unit, parts, edits, cost is not None, cost, refuted=refuted)
        rel.text = " and ".join(p.words(percent=target == "limits") for p in parts)
        if target != "limits" and len(parts) > 1 and cost is not None:
            rel.text += f" (a plan then costs {cost:,.0f} {self.problem.currency})"
        return rel

    def _relative(self, part: Part) -> float | None:
        limit = family(part.kind).relax.limit(self.problem, self.catalog, part.target)
        return part.amount / limit if limit else None

    def _cannot(self, kind: str, target: str, text: str) -> Relaxation:
        return Relaxation(kind, target, None, family(kind).unit_in(self.problem), text=text)

    def _undetermined(self, kind: str, target: str, what: str) -> Relaxation:
        rel = self._cannot(kind, target, f"{what}: " + no_plan_text(f"raise {self.clock.more_time}"))
        rel.determined = False
        return rel

    # --- "days" (deadline): a search over whole days -----------------------------------------

    def _deadline_part(self, fam: Family, k: int) -> Part:
        """k more days on the family's every target, with the horizon extended when the latest passes it."""
        latest = self._written(fam) + k
        return Part(fam.name, fam.relax.says["target"], k, fam.unit_in(self.problem),
                    horizon_days=latest if latest > self.problem.horizon_days else None)

    def _cap(self, fam: Family, max_extra_days: int | None) -> int:
        cap = max_extra_days if max_extra_days is not None else max(self.problem.horizon_days, 30)
        return min(cap, 3650 - self._written(fam))  # the horizon's validation cap

    def _fewest_days(self, fam: Family, cap: int, *, lifted: Family | None = None) -> int | None:
        """The fewest extra days on every deadline with a plan (with or without the budget); None
        when even `cap` days have none. OutOfTime when a solve ran out of time. Each k is a
        probe of the model built for `cap` days (`_days_model`), priced and verified (the last
        one is the suggestion's check). More days only lift caps there, so when one day is not
        enough the cap is asked next, whether any plan exists, and when none does no smaller
        number is asked (one probe instead of the doubling)."""
        model = self._days_model(fam, cap)
        if model is not None and model.probes is None:
            return None

        def feasible(k: int) -> bool:  # priced and verified: the answer's own check when k is the last
            edits = self._deadline_part(fam, k).edits()
            return self._resolve(edits, lifted=lifted, days=None if model is None else k) is not None

        def some_plan(k: int) -> bool:
            assert model is not None and model.probes is not None
            free = [] if lifted is None else self._lifted(model.probes, lifted.relax.lift(self.problem))
            verdict = exists(model.probes, *model.caps(self.problem, k), *free)
            if verdict is None:
                raise OutOfTime(f"no plan or proof for {k} more days in the time given", started=True)
            return verdict

        lo, hi, k = 0, None, 1
        while k <= cap:
            if k == 2 and model is not None and not some_plan(cap):
                return None  # caps of one model: feasibility is monotone in k, so none below the cap either
            if feasible(k):
                hi = k
                break
            lo, k = k, (cap if k < cap < 2 * k else 2 * k)
        if hi is None:
            return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
        return hi

    def deadline(self, fam: Family, max_extra_days: int | None) -> Relaxation:
        cap, says = self._cap(fam, max_extra_days), fam.relax.says
        try:
            hi = self._fewest_days(fam, cap)
        except OutOfTime:
            return self._undetermined(fam.name, says["target"], says["smallest"])
        if hi is None:
            return self._cannot(fam.name, says["target"], says["alone"].format(cap=cap, within=self._within()))
        return self._finish(fam.name, says["target"], [self._deadline_part(fam, hi)], days=hi)

    def _within(self) -> str:
        """The limits that stop more days, in numbers (Relax.says' "within"), where the problem has them."""
        out = ""
        for fam in self._relaxed("without"):
            limit = self._written(fam)
            if limit is not None:
                out += fam.relax.says["within"].format(limit=limit, unit=fam.unit_in(self.problem))
        return out

    # --- pairs: a later deadline and more budget ----------------------------------------------

    def pairs(self, max_extra_days: int | None) -> list[Relaxation]:
        """When no single limit helps: the fewest extra days with no budget, then the budget that
        day's cheapest plan needs; both verified together. [] when the problem has no budget or
        no deadline family."""

        days = next(iter(self._relaxed("days")), None)
        money = next(iter(self._relaxed("without")), None)
        if days is None or money is None or self._written(money) is None:
            return []
        cap, when, what = self._cap(days, max_extra_days), days.relax.says, money.relax.says
        target = f"{when['noun']} and {what['noun']}"
        try:
            k = self._fewest_days(days, cap, lifted=money)
            if k is None:
                return [self._cannot("combination", target,
                                     f"{when['later'].format(cap=cap)} with {what['any']} does not make it feasible")]
            part = self._deadline_part(days, k)
            cost = self._cheapest_later(part, k, money)
        except (OutOfTime, Infeasible):
            return [self._undetermined("combination", target, f"{when['smallest_later']} with {what['more']}")]
        need = max(1, math.ceil(cost - self._written(money) - TOL))
        return [self._finish("combination", target,
                             [part, Part(money.name, what["target"], need, money.unit_in(self.problem))], days=k)]

    def _cheapest_later(self, part: Part, k: int, money: Family) -> float:
        """The cheapest plan's cost with k more days and the `money` limit dropped (a zero gap);
        Infeasible when none."""
        prob, cat, _ = apply_edits(money.relax.lift(self.problem), self.catalog, part.edits())
        model = self.days
        if model is None or model.probes is None:
            from solver.api import solve_problem
            return solve_problem(prob, cat, backend=self.backend, time_limit=self.time_limit, gap=0.0).total_cost
        answer = self._probe(model.probes, *model.caps(self.problem, k), *self._lifted(model.probes, prob),
                             ReadAs("edited", problem=prob, catalog=cat), gap=0.0, problem=prob, catalog=cat)
        if answer.plan is None:
            raise Infeasible("no plan with the later deadline", proven=answer.status == "infeasible")
        return answer.plan.total_cost

    # --- "without" (budget): the cheapest plan without one ------------------------------------

    def without(self, fam: Family) -> list[Relaxation]:
        """The cheapest plan with the limit dropped (its row's bound), at a zero gap: a limit on
        the plan's cost, so what the plan then costs past the limit is what it needs."""
        says, written = fam.relax.says, self._written(fam)
        if written is None:
            return []
        if self.stranded:
            jobs = [j.name for j in self.problem.jobs if not any(o.job == j.name for o in self.inst.options)]
            return [self._cannot(fam.name, says["target"], says["alone"].format(
                why=f"no offer can carry {', '.join(jobs)} as written, at any price"))]
        unbounded = fam.relax.lift(self.problem)
        try:
            model = self._raised_model(2)
            if model is None:  # not stranded as written: cannot happen
                raise OutOfTime("the problem could not be built", started=True)
            answer = self._probe(model.probes, *self._lifted(model.probes, unbounded),
                                 ReadAs(f"no {says['noun']}", problem=unbounded, catalog=self.catalog),
                                 gap=0.0, problem=unbounded, catalog=self.catalog)
        except OutOfTime:
            return [self._undetermined(fam.name, says["target"], says["smallest"])]
        if answer.plan is None:
            if answer.status != "infeasible":
                return [self._undetermined(fam.name, says["target"], says["smallest"])]
            return [self._cannot(fam.name, says["target"], says["alone"].format(why=says["none"]))]
        need = max(1, math.ceil(answer.plan.total_cost - written - TOL))
        return [self._finish(fam.name, says["target"],
                             [Part(fam.name, says["target"], need, fam.unit_in(self.problem))])]

    # --- "each": an elastic model per target (Relax.where) ----------------------------------------

    def each(self, fam: Family) -> list[Relaxation]:
        sites, says = self.sites[fam.name], fam.relax.says
        if not sites:
            return []
        used = [t for t, in_model in sites.items() if in_model]
        out, undetermined = [], False
        for target in used:
            try:
                needs = self._elastic({fam.name: {target: 1.0}})
            except OutOfTime:
                undetermined = True
                continue
            if needs is not None:
                out.append(self._finish(fam.name, target, needs))
        if out:
            return out
        if undetermined:
            return [self._undetermined(fam.name, says["target"], says["smallest"])]
        if len(used) > 1:
            try:
                needs = self._elastic({fam.name: {target: 1.0 for target in used}})
            except OutOfTime:
                return [self._undetermined(fam.name, says["all"], says["smallest_all"])]
            if needs is not None:
                return [self._finish(fam.name, says["all"], needs)]
        if not used:  # no usable offer meets the limit anywhere: it is not in play, no line about it
            return []
        where = says["where"].format(targets=", ".join(used)) + (says["each_or_all"] if len(used) > 1 else "")
        return [self._cannot(fam.name, says["target"], says["alone"].format(where=where))]

    # --- "together": raised caps, slack on the written ones -------------------------------------

    def together(self, fam: Family) -> list[Relaxation]:
        says = fam.relax.says
        try:
            needs = self._elastic({fam.name: None})
        except OutOfTime:
            return [self._undetermined(fam.name, says["target"], says["smallest"])]
        if needs is None:
            return [self._cannot(fam.name, says["target"], says["alone"])]
        target = ", ".join(p.target for p in needs)
        return [self._finish(fam.name, target, needs)]

    # --- the cheapest combination -------------------------------------------------------------

    def combination(self) -> Relaxation | None:
        stretch: dict[str, dict[str, float] | None] = {}
        for fam in FAMILIES:
            how = None if isinstance(fam.relax, NotApplicable) else fam.relax.how
            if how == "without" and self._written(fam) is not None:
                target = fam.relax.says["target"]
                stretch[fam.name] = {target: self._weight(fam, target)}
            elif how == "each" and any(self.sites[fam.name].values()):  # a target no usable offer meets: not in play
                stretch[fam.name] = {t: self._weight(fam, t) for t, used in self.sites[fam.name].items() if used}
            elif how == "together":
                stretch[fam.name] = None
        try:
            needs = self._elastic(stretch, weighted=True)
        except OutOfTime:
            self.notes.append("the cheapest combination: " + no_plan_text())
            return None
        if needs is None:
            limits = [family(name).relax.says["noun"] for name in stretch]
            words = ", ".join(limits[:-1]) + (f" and {limits[-1]}" if len(limits) > 1 else limits[0] if limits else "")
            held = " and ".join(f.relax.says["held"] for f in self._relaxed("days"))
            self.notes.append(f"no combination of more {words} helps" + (f" while {held}" if held else ""))
            return None
        return self._finish("combination", "limits", needs)

    def _weight(self, fam: Family, target: str) -> float:
        """1 ÷ the written limit: 10 % more of any limit weighs the same (a limit under 1 as 1)."""
        return 1 / max(fam.relax.limit(self.problem, self.catalog, target), 1.0)

    # --- the elastic MILP ----------------------------------------------------------------------

    def _elastic(self, stretch: dict[str, dict[str, float] | None], *,
                 weighted: bool = False) -> list[Part] | None:
        """Smallest weighted slack on the chosen limits; the parts it needs, or None if none helps.

        stretch: family name → {target: weight of its slack}, or None for every target of a
        "together" family (each offer's stock: weight 1 per node, 1/max_nodes when weighted).
        One probe of the model built with raised caps (`_raised_model`: ×2, then ×8, ×64 while
        a stock slack is asked and that is not enough): the chosen slacks switched on, the
        objective their weighted sum, at a zero gap.
        """
        chosen = [fam for fam in FAMILIES if fam.name in stretch]
        raise_caps = any(fam.relax.how == "together" for fam in chosen)
        for factor in RAISE_FACTORS if raise_caps else RAISE_FACTORS[:1]:
            model = self._raised_model(factor)
            if model is None:
                continue
            terms, on, slacked = [], [], {}
            for fam in chosen:
                slacks, weights = model.slacks.get(fam.name, {}), stretch[fam.name]
                if weights is None:
                    weights = {t: (1 / model.caps[fam.name][t] if weighted else 1.0) for t in slacks}
                picked = {t: slacks[t] for t in weights if t in slacks}
                terms += [(var, weights[t]) for t, (var, _) in picked.items()]
                on += list(picked.values())
                if picked:
                    slacked[fam.name] = list(weights) if stretch[fam.name] is not None else None
            answer = self._probe(model.probes, *slack_on("elastic", on), Objective("least slack", terms=terms),
                                 gap=0.0, elastic=True, verify=False)
            if answer.status == "infeasible":
                continue
            if answer.solution is None:
                raise OutOfTime("no elastic plan in the time given", started=True)
            needs = [Part(fam.name, target, amount, fam.unit_in(self.problem)) for fam in chosen if fam.name in slacked
                     for target, amount in fam.relax.over(answer.solution, self.catalog, slacked[fam.name])]
            return needs or None  # nothing over any limit: only numerical noise made it infeasible
        return None


@dataclass
class _Raised:
    """The problem built with raised caps ("together" families: Relax.raised), each relaxable
    family's slack in it (off)."""

    probes: Probes
    slacks: dict[str, dict[str, tuple]]   # family → target → (slack variable, its bound when on)
    caps: dict[str, dict[str, int]]       # "together" family → target → its written limit
    problem: Problem

    def stock(self, catalog: Catalog) -> list[Change]:
        """The rows that put each written cap back (slack off: the rows of part "stock") at
        `catalog`'s caps instead."""
        out: list[Change] = []
        for name, caps in self.caps.items():
            fam = family(name)
            for target, cap in caps.items():
                rows = [row for key, row in self.probes.milp.family_rows(name, target).items() if key.part == "stock"]
                most = fam.relax.limit(self.problem, catalog, target)
                if rows and most != cap:
                    out.append(RowBounds(f"{target} at most {most:g} {fam.unit}", most < cap, rows, upper=most))
        return out


@dataclass
class _Days:
    """The problem built with every deadline `cap` days later (probes None: preprocessing left
    a job no offer, so no number of days up to `cap` gives a plan)."""

    probes: Probes | None
    cap: int

    def caps(self, problem: Problem, k: int) -> list[Change]:
        """k more days on every written deadline: each job's replicas in periods ending after it at 0."""
        assert self.probes is not None
        inst, milp = self.probes.inst, self.probes.milp
        deadline = {j.name: j.deadline_days + k for j in problem.jobs}
        late = [var for (i, t), var in milp.replicas.items()
                if inst.timeline.end(t) > deadline[inst.options[i].job]]
        return [VarBounds(f"{k} more days on every deadline", True, late, upper=0.0)]


def _flag(rel: Relaxation, prefix: str = "") -> str:
    if rel.verified:
        return prefix + rel.text
    return prefix + rel.text + (" (re-solved: still infeasible)" if rel.refuted else " (not verified: out of time)")


def _int(x: float) -> int:
    return int(round(x))

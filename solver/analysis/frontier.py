"""Frontiers: what each extra day, yuan, spot share or vendor buys — ε-constraint solves.

One objective is minimised while the other is capped (the ε), the cap swept from loose to
tight over N values; only non-dominated points are kept (no other point is as good in
both and better in one). Every point is a verified plan of the problem as written.

Axes (x = the capped measure of the plan, y = the minimised one; both are minimised):
    deadline    cost vs finishing day (default). ε: every job done by day D, for N days
                between the earliest feasible finish and the cheapest plan's finish.
                x = the day the last job finishes, y = cost.
    budget      finishing day vs budget. ε: cost ≤ B, for N budgets between the cheapest
                plan's cost and the cost of the earliest plan. Each point is the earliest
                finish within B, the cheapest such plan (solver.analysis.min_time).
                x = cost, y = finishing day.
    spot_share  cost vs how much of the work runs on spot nodes. ε: work on spot nodes ≤
                s × the work the jobs need (EFLOP, redundancy included), for N shares from
                the cheapest plan's (at most 1: no cap) down to 0. Work, not GPU-hours, and
                the need, not the work done, because that denominator is fixed: a share of
                rented GPU-hours or of work done could be lowered by renting idle non-spot
                nodes or placing surplus replicas on them. x = the plan's spot share, of
                the work it does (≤ ε, since it does at least the need; at most 100%).
                y = cost.
    vendors     cost vs the number of vendors rented from. ε: a 0/1 flag per vendor that
                every node and contract there needs, Σ flags ≤ k, for k from the cheapest
                plan's count down to 1. x = vendors, y = cost.

Why one model: the points differ only in bounds (a cap is upper bounds of zero on late
replicas, the others are one row's right-hand side), so the model is built once and the
Session (solver.session) re-bounds it; swept from loose to tight, a plan that
still meets the tighter cap is still optimal and the next solve is skipped.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

from solver.api import DEFAULT_BACKEND
from solver.choices import AXES
from solver.clock import OutOfTime, ctrl_c_or, fix_for_time
from solver.errors import Infeasible, ProblemError
from solver.limits import finish_day, plan_vendors
from solver.rows import ROWS
from solver.session import Session
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem

LABELS = {  # axis → (x label, y label, ε label); {currency}: the problem's
    "deadline": ("finishing day", "cost ({currency})", "finish by day"),
    "budget": ("cost ({currency})", "finishing day", "budget ({currency})"),
    "spot_share": ("share of work on spot nodes", "cost ({currency})", "spot share ≤"),
    "vendors": ("vendors rented from", "cost ({currency})", "vendors ≤"),
}
MONEY = ("cost", "budget")
"""Labels whose axis is money (the tables and charts write those as amounts, not day counts)."""


def is_money(label: str) -> bool:
    """Whether an axis label (LABELS, formatted) is an amount of money: 'cost (USD)', 'budget (CNY)'."""
    return label.split(" (")[0] in MONEY


@dataclass
class Point:
    """One non-dominated plan and the ε it was found under (the tightest, when several gave it)."""

    eps: float
    plan: Plan
    cost: float
    finish_day: int
    spot_share: float
    vendors: int
    mix: str
    x: float
    y: float
    knee: bool = False

    @property
    def proven(self) -> bool:
        """The cost is proven least under its ε (else the time stopped the solve: see `low`)."""
        return self.plan.status == "optimal"

    @property
    def low(self) -> float:
        """The least the cost under this ε can be (the solve's proven bound): the cost when proven."""
        return self.cost if self.proven else min(self.cost, self.plan.lower_bound)

    def to_dict(self) -> dict:
        return {"eps": self.eps, "x": self.x, "y": self.y, "cost": self.cost, "finish_day": self.finish_day,
                "spot_share": round(self.spot_share, 6), "vendors": self.vendors, "mix": self.mix,
                "knee": self.knee, "status": self.plan.status, "gap": self.plan.gap,
                "cost_low": self.low, "proven": self.proven}


@dataclass
class Frontier:
    problem: str
    axis: str
    currency: str                             # the problem's: every cost and budget ε is in it
    points: list[Point]                       # non-dominated, x ascending
    tried: list[tuple]                        # (ε, "ok" | "same plan" | "dominated" | "infeasible" | "not settled", cost)
    requested: int
    milp_solves: int = 0
    lp_solves: int = 0
    probes: int = 0
    reused: int = 0
    answered_without_solve: int = 0           # probes the engine answered from a plan in hand
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def knee(self) -> Point | None:
        return next((p for p in self.points if p.knee), None)

    @property
    def labels(self) -> tuple[str, str, str]:
        x, y, eps = LABELS[self.axis]
        return x.format(currency=self.currency), y.format(currency=self.currency), eps.format(currency=self.currency)

    def to_dict(self) -> dict:
        x_label, y_label, eps_label = self.labels
        knee = self.knee
        return {"problem": self.problem, "axis": self.axis, "currency": self.currency, "x": x_label, "y": y_label, "eps": eps_label,
                "requested_points": self.requested, "points": [p.to_dict() for p in self.points],
                "knee": self.points.index(knee) if knee else None,
                "tried": [{"eps": e, "outcome": o, "cost": c} for e, o, c in self.tried],
                "milp_solves": self.milp_solves, "lp_solves": self.lp_solves, "feasibility_probes": self.probes, "reused_plans": self.reused,
                "answered_without_solve": self.answered_without_solve,
                "seconds": round(self.seconds, 3), "notes": self.notes}


def frontier(problem: Problem, catalog: Catalog, axis: str = "deadline", points: int = 10, *,
             backend: str = DEFAULT_BACKEND, time_limit: float | None = None, gap: float | None = None,
             lp_bounds: bool = True, max_seconds: float | None = None) -> Frontier:
    """The non-dominated plans along `axis` from `points` ε values (see the module doc).

    `lp_bounds=False` bounds each fabric choice by its LP once instead of under every ε
    (for the benchmark's comparison). `max_seconds` bounds the whole run: each solve gets
    at most what is left, and when it is spent the points found so far are the frontier,
    with a note (Infeasible, not proven, when there are none).

    Raises Infeasible when the problem itself has no plan; ProblemError for a bad axis or count.
    """
    if axis not in AXES:
        raise ProblemError(f"unknown frontier axis {axis!r}", key="--x", fix=f"use one of {', '.join(AXES)}")
    if points < 1:
        raise ProblemError("the number of points must be at least 1", key="--points", fix="e.g. --points 10")
    start = time.perf_counter()
    session = Session(problem, catalog, backend=backend, time_limit=time_limit, gap=gap,
                      spot=axis == "spot_share", vendors=axis == "vendors", lp_bounds=lp_bounds,
                      stop_at=None if max_seconds is None else start + max_seconds)
    sweep = {"deadline": _deadline, "budget": _budget, "spot_share": _spot, "vendors": _vendors}[axis]
    out = Frontier(problem.name, axis, problem.currency, [], [], points)
    ROWS.expect(None)  # known once the sweep has its ε values
    try:
        found = sweep(session, points, out)
    except OutOfTime:
        found = [p for _, outcome, p in out.tried if outcome == "ok"]
        seen = [p.plan.schedule for p in found]
        unchecked = []
        for plan in session.plans:  # solved before it was recorded (e.g. the cheapest, then out of time)
            if plan.schedule not in seen:
                seen.append(plan.schedule)
                point = _point(out, session, 0.0, plan)
                point.eps = point.x  # the ε it meets exactly: its finishing day, cost, share or vendors
                found.append(point)
                unchecked.append(finish_day(plan))
        if unchecked and axis in ("deadline", "budget"):  # their points are (cost, earliest day)
            out.notes.append(ctrl_c_or("solved before the run's time ran out", "solved before Ctrl-C stopped the run")
                             + " and not checked for an equally cheap plan "
                             f"that finishes earlier: the plan(s) finishing on day {', '.join(map(str, sorted(unchecked)))}")
        if not found:
            raise Infeasible(ctrl_c_or("no frontier point within the run's time (--max-seconds)",
                                       "no frontier point before Ctrl-C stopped the run"),
                             reasons=fix_for_time("raise --max-seconds, or lower --points"), proven=False) from None
        out.notes.append(ctrl_c_or("stopped by the run's time (--max-seconds)", "stopped by Ctrl-C")
                         + ": the ε values after the last one "
                         f"tried ({len(out.tried)} of up to {points}) were not tried")
    if problem.preferences:  # said, not dropped in silence (solver.milp.prefer weighs them per solve)
        n = len(problem.preferences)
        out.notes.append(f"{n} preference{'s' if n > 1 else ''} (prefer) not weighed: frontier points ignore "
                         "them; gpuplan solve weighs them")
    out.points = non_dominated(found)
    kept = {id(p) for p in out.points}
    out.tried = [(e, "dominated" if o == "ok" and id(p) not in kept else o, p.cost if p else None)
                 for e, o, p in out.tried]
    mark_knee(out.points)
    out.milp_solves, out.lp_solves = session.milp_solves, session.lp_solves
    out.probes, out.reused = session.probes, session.reused
    out.answered_without_solve = session.answered_without_solve
    out.seconds = time.perf_counter() - start
    return out


# ----- the four sweeps: each returns candidate points and fills out.tried with (ε, outcome, point) ----------
def _deadline(s: Session, n: int, out: Frontier) -> list[Point]:
    cheapest = s.solve()
    cheapest = s.earlier_at_same_cost() or cheapest  # the cheapest cost, finishing as early as it can
    last = finish_day(cheapest)
    earliest = s.earliest_cap(hi=last)
    days = spread([d for d in sorted(set(s.ends)) if earliest <= d <= last], n, descending=True)
    ROWS.expect(len(days))
    found: list[Point] = []
    for i, day in enumerate(days):
        if found and found[-1].finish_day <= day:  # the last point meets this cap: still optimal
            _add(found, out, s, day, found[-1].plan)
            continue
        if day == last:
            plan = cheapest
        else:
            s.set_cap(day)
            plan = s.solve()
            # as cheap and earlier, on a day the grid skips: else this point could be dominated
            # by a plan never found (the days the grid tries are compared by non_dominated)
            plan = s.earlier_at_same_cost(after=days[i + 1] if i + 1 < len(days) else day) or plan
        _add(found, out, s, day, plan)
    if last < s.latest:
        out.notes.append(f"the cheapest plans finish on day {last} at the earliest, before the latest deadline "
                         f"{s.latest}: later caps give the same cost")
    out.notes.append(f"no plan finishes before day {earliest}")
    if s.unsettled:
        out.notes.append("not settled by the check for an equally cheap plan that finishes earlier (each check "
                         "may take a few times its own solve's time): whether one finishes earlier than day "
                         f"{', '.join(map(str, sorted(set(s.unsettled))))}")
    return found


def _budget(s: Session, n: int, out: Frontier) -> list[Point]:
    cheapest = s.solve()
    last = finish_day(cheapest)
    earliest = s.earliest_cap(hi=last)
    s.set_cap(earliest)
    fastest = s.solve()
    s.set_cap(None)
    low, high = cheapest.total_cost, fastest.total_cost
    budgets = [low] if high <= low or n == 1 else [low + (high - low) * i / (n - 1) for i in range(n)]
    ROWS.expect(len(budgets))
    found: list[Point] = []
    by_day: dict[int, Plan] = {last: cheapest, earliest: fastest}
    hi = last
    for budget in budgets:  # ascending: the earliest day can only move earlier
        s.set_budget(budget * (1 + 1e-9))
        day = s.earliest_cap(hi=hi)
        hi = day
        plan = by_day.get(day)
        if plan is None or plan.total_cost > budget * (1 + 1e-9) + 0.01:
            s.set_cap(day)
            plan = s.solve()
            s.set_cap(None)
            by_day[day] = plan
        _add(found, out, s, budget, plan)
    s.set_budget(None)
    out.notes.append(f"cheapest plan {low:,.0f} finishes on day {last}; the earliest finish, day {earliest}, "
                     f"costs {high:,.0f}")
    return found


def _spot(s: Session, n: int, out: Frontier) -> list[Point]:
    cheapest = s.solve()
    top = min(1.0, s.plan_spot_work(cheapest) / s.required) if s.required > 0 else 0.0  # 1: no cap at all
    ROWS.expect(1 if top <= 1e-9 else n)
    found: list[Point] = []
    _add(found, out, s, round(top, 6), cheapest)
    if top <= 1e-9:
        out.notes.append("the cheapest plan runs nothing on spot nodes (are any jobs interruptible?)")
        return found
    shares = [top * (1 - i / (n - 1)) for i in range(1, n)] if n > 1 else []
    for share in shares:  # descending: tighter each time
        s.set_spot(share * s.required)
        try:
            plan = s.solve()
        except Infeasible as exc:
            _tried(out, round(share, 6), "infeasible" if exc.proven else "not settled", None)
            out.notes.append(f"no plan with at most {share:.1%} of the work on spot nodes" if exc.proven else
                             f"at most {share:.1%} on spot: no plan found within the time limit, none ruled out")
            break
        _add(found, out, s, round(share, 6), plan)
    s.set_spot(None)
    return found


def _vendors(s: Session, n: int, out: Frontier) -> list[Point]:
    cheapest = s.solve()
    top = len(plan_vendors(cheapest))
    ks = spread(list(range(1, top)), n - 1, descending=True) if n > 1 else []
    ROWS.expect(1 + len(ks))
    found: list[Point] = []
    _add(found, out, s, top, cheapest)
    if top <= 1:
        out.notes.append("the cheapest plan already rents from one vendor")
    for k in ks:
        s.set_vendors(k)
        try:
            plan = s.solve()
        except Infeasible as exc:
            _tried(out, k, "infeasible" if exc.proven else "not settled", None)
            out.notes.append(f"no plan with at most {k} vendor{'s' if k > 1 else ''}" if exc.proven else
                             f"at most {k} vendor{'s' if k > 1 else ''}: no plan found within the time limit, "
                             "none ruled out")
            break
        _add(found, out, s, k, plan)
    s.set_vendors(None)
    return found


def _add(found: list[Point], out: Frontier, s: Session, eps: float, plan: Plan) -> None:
    """Record the plan found under ε; the same plan as the previous point only tightens its ε."""
    if found and found[-1].plan.schedule == plan.schedule:
        same = eps
        if out.axis != "budget":  # budgets rise, the other ε fall: the row shows the tightest
            same, found[-1].eps = found[-1].eps, eps
            out.tried = [(eps if p is found[-1] and o == "ok" else e, o, p) for e, o, p in out.tried]
        out.tried.append((same, "same plan", found[-1]))
        ROWS.announce(_row_words(out, eps, "same plan", found[-1]))  # the ε just tried, as it came
        return
    point = _point(out, s, eps, plan)
    found.append(point)
    _tried(out, eps, "ok", point)


def _tried(out: Frontier, eps: float, outcome: str, point: Point | None) -> None:
    """Record what ε gave, and announce it (solver.rows): a row appears as it is determined."""
    out.tried.append((eps, outcome, point))
    ROWS.announce(_row_words(out, eps, outcome, point))


def _row_words(out: Frontier, eps: float, outcome: str, point: Point | None) -> str:
    """One ε's row as a user reads it on stderr: 'finish by day 24: 412,300 CNY, finishes day 22'."""
    eps_label = out.labels[2]
    shown = f"{eps:,.0f}" if out.axis == "budget" else f"{eps:.1%}" if out.axis == "spot_share" else f"{eps:g}"
    if point is None:
        return f"{eps_label} {shown}: " + ("no plan" if outcome == "infeasible" else
                                          "no plan found within the time limit (none ruled out)")
    same = " (the same plan as before)" if outcome == "same plan" else ""
    return f"{eps_label} {shown}: {cost_words(point, out.currency)}, finishes day {point.finish_day}{same}"


def cost_words(point: Point, currency: str) -> str:
    """The point's cost, or the interval from its proven bound to its cost when the time did not
    settle it: '+23,954 to 25,100 CNY' (issue 34: each figure proven or an interval)."""
    if point.proven:
        return f"{point.cost:,.0f} {currency}"
    return f"{point.low:,.0f} to {point.cost:,.0f} {currency} (not proven)"


def _point(out: Frontier, s: Session, eps: float, plan: Plan) -> Point:
    cost, finish = plan.total_cost, finish_day(plan)
    share, vendors = s.plan_spot_share(plan), len(plan_vendors(plan))
    x, y = {"deadline": (finish, cost), "budget": (cost, finish), "spot_share": (share, cost),
            "vendors": (vendors, cost)}[out.axis]
    return Point(eps, plan, cost, finish, share, vendors, mix_label(plan), x, y)



# ----- pure helpers -----------------------------------------------------------------------------------------
def spread(values: list, n: int, *, descending: bool = False) -> list:
    """At most n of the sorted values, evenly spaced by position, both ends included."""
    values = sorted(set(values))
    if n <= 0 or not values:
        return []
    if len(values) > n:
        values = [values[-1]] if n == 1 else sorted({values[round(i * (len(values) - 1) / (n - 1))] for i in range(n)})
    return values[::-1] if descending else values


def non_dominated(points: list[Point], rel: float = 1e-9) -> list[Point]:
    """Points no other point matches in both x and y and beats in one (both minimised), x ascending.

    Values within `rel` (relative) count as equal, so a plan found twice is one point.
    """
    def le(a: float, b: float) -> bool:
        return a <= b + rel * max(1.0, abs(b))

    out = []
    for p in points:
        dominated = any(le(q.x, p.x) and le(q.y, p.y) and (not le(p.x, q.x) or not le(p.y, q.y)) for q in points)
        duplicate = any(le(q.x, p.x) and le(p.x, q.x) and le(q.y, p.y) and le(p.y, q.y) for q in out)
        if not dominated and not duplicate:
            out.append(p)
    return sorted(out, key=lambda p: (p.x, p.y))


def mark_knee(points: list[Point]) -> Point | None:
    """The knee: the point farthest from the straight line between the two end points, both
    axes scaled to [0, 1] (needs three points and a bend; None otherwise)."""
    for p in points:
        p.knee = False
    if len(points) < 3:
        return None
    xs, ys = [p.x for p in points], [p.y for p in points]
    dx, dy = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    norm = [((x - min(xs)) / dx, (y - min(ys)) / dy) for x, y in zip(xs, ys)]
    (x0, y0), (x1, y1) = norm[0], norm[-1]
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    dist = [abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / length for x, y in norm]
    best = max(range(1, len(points) - 1), key=lambda i: dist[i])
    if dist[best] <= 1e-9:
        return None
    points[best].knee = True
    return points[best]


def mix_label(plan: Plan, most: int | None = None) -> str:
    """'5×8 A100-80G monthly ib_hdr @Shunyi + …': peak nodes held at once per (GPU, mode, fabric,
    site, node size), largest first; `most` keeps only that many terms. The fabric is named
    because two points can differ in it alone (seed 000: IB and RoCE, 497,280 and 473,280 CNY)."""
    spans: dict[tuple, list] = defaultdict(list)
    for a in plan.allocations:
        spans[a.gpu, a.mode, a.interconnect, a.datacenter, a.gpus // max(a.nodes, 1)].append(a)
    terms = []
    for (gpu, mode, fabric, site, per_node), rows in spans.items():
        days = sorted({d for a in rows for d in (a.start_day, a.end_day)})
        peak = max(sum(a.nodes for a in rows if a.start_day <= d < a.end_day) for d in days[:-1] or days)
        terms.append((peak * per_node, f"{peak}×{per_node} {gpu} {mode} {fabric} @{site}"))
    terms.sort(key=lambda t: (-t[0], t[1]))
    labels = [t for _, t in terms]
    if most is not None and len(labels) > most:
        labels = labels[:most] + [f"+{len(labels) - most} more"]
    return " + ".join(labels) if labels else "nothing rented"

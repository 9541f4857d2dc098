"""Job schedules as columns (Dantzig–Wolfe on the jobs): a lower bound, and plans from the columns.

Why (issue 43, item 2, second design): the LP relaxation of the built model is ~14 % below
the optimum at the median of the realistic suite (22.8 % on issue 33's storage problem).
What it relaxes sits mostly inside one job: its whole replicas, its fabric choice, its
storage from its first GPU day, its running flags. Here each job's rows are kept whole and
convexified instead: a column is one integer schedule of one job (everything its own rows
say, solved as a MILP), and the master LP picks a convex combination of columns per job.

The decomposition is the Lagrangian one of solver.engine.experimental.lagrange, read as a
Dantzig–Wolfe master (`split`: every row over more than one owner goes to the master, the
rest falls into blocks). The master couples the blocks through those rows: the `Use` rows
(a job's replicas on a configuration's rented nodes), stock per offer and period when
the offer's configurations have different owners, power per site and period, the budget,
symmetry and covering cuts that mix owners. A block's pricing problem is its own rows
solved as a MILP by HiGHS (through MathOpt) with the master's duals as costs on the master's
rows; the master LP is solved by Glop (its duals; HiGHS through the model builder returns
row activities in their place, OR-Tools 9.15), its first duals are the LP relaxation's.

Who owns the rentals, and why the bound stays valid when jobs share them. A configuration
that only one job can use (the Instance gives that job alone options on it) has its nodes,
contracts and volume discounts in that job's block: its column pays whole nodes, whole
contract terms and the discount exactly ("private"). A configuration two or more jobs can
use keeps its rentals in a block of their own, the rental block, whose columns are integer
rentals (whole nodes, whole terms, discounts, stock and power as the model says) priced by
the `Use` rows' duals; the jobs' columns reach it only through the master. So a contract
two jobs hold one after the other, a node two small jobs share, a discount their nodes earn
together: each is one rental column, paid once. Every plan of the model is the sum of one
column per block (each block's part of the plan meets that block's rows) meeting the
master's rows, so the master's optimum over all columns, and its LP, are at most the
model's optimum: the bound is valid for every problem, shared contracts included.
`ownership="pooled"` puts every configuration's rentals in the rental block (the Lagrangian
split exactly); it is weaker, never stronger, and kept to measure what private rentals give.

What it does not capture, by construction: a configuration several jobs may use is priced
by convex combinations, so one job's whole contract term or whole node on it can be
averaged over its possible start days (a 10-day job on a 30-day term pays as little as a
third of it, as in the LP), unless the job's integer replicas force the capacity.

The bound at any iteration is the Lagrangian one, L(π) = offset + Σ_blocks min_b(c + Gᵀπ)x
− πᵀh with each block's minimum replaced by its MILP's proven bound (weak duality: valid
for every π ≥ 0, whether or not the generation converged); at convergence it equals the
master LP's value (the Dantzig–Wolfe bound). The model it bounds is the built one, whose
optimum is at most the problem's (packing rows are added lazily, solver.milp.packing).

Price-and-branch (`price_and_branch`): the restricted master with 0/1 choices over the
columns generated, solved by HiGHS; its pick is a plan of the model (every row met), read
and checked by the independent verifier.

Measured (tests/bench/HISTORY.md, "2026-12-08: issue 43, column bound prototype"): on issue
33's storage problem (optimum 406,000, LP 359,020) the restricted master went down from the
optimal plan to 367,600 = 406,000 − 38,400, the volume discount the LP takes at a fractional
flag (3 nodes of a 4-node threshold, on an offer both jobs may use, so in the rental block):
the Dantzig–Wolfe bound is at most that, a gap of at least 9.5 % against the LP's 11.6 %. It
did not converge: pricing cut at 2-15 s per block found no better column, while an exact
pricing at the master's last duals found one of reduced cost −362,867 (53 s); the proven
L(π) stayed at or below the LP's value. Not wired into the engine: a valid bound of this kind
closes the per-job part of the gap (storage, fabric choice, whole replicas, private terms),
not the shared rentals, and needs minutes of exact pricing where HiGHS proves the whole model.

Off the default path (solver.engine.experimental): nothing imports this module but its
tests and tests/bench/bench_columns.py.
"""

from __future__ import annotations

import datetime as dt
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ortools.linear_solver.python import model_builder as mb

from solver.engine.experimental import lagrange
from solver.engine.export import to_mathopt
from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF
from solver.milp.core import Milp

PRIVATE, POOLED = "private", "pooled"
"""Ownership of rentals: a configuration only one job can use in that job's block (PRIVATE),
or every configuration's in the rental block (POOLED)."""
TOLERANCE = 1e-6
"""Relative reduced cost (of the master's value) below which a column is not added, and
relative distance between master and bound at which the generation stops."""
BLOCK_GAP = 1e-4
"""Relative gap each pricing MILP is solved to; its proven bound is what enters the bound."""
ABSOLUTE_GAP = 1e-5
"""Each pricing MILP stops within this share of the first bound (over the blocks) of its optimum."""
SMOOTHING = 0.5
"""Wentges' smoothing: duals priced at SMOOTHING·(best bound's duals) + (1 − SMOOTHING)·(master's)."""
MASTER_OPTIONS = f"presolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}\noutput_flag=false"


def column_owners(milp: Milp, ownership: str = PRIVATE) -> np.ndarray:
    """Each variable's owner (lagrange.owners' labels), the rentals of a configuration only one
    job has options on given to that job when `ownership` is PRIVATE."""
    label = lagrange.owners(milp)
    if ownership == POOLED:
        return label
    if ownership != PRIVATE:
        raise ValueError(f"ownership {ownership!r}: {PRIVATE} or {POOLED}")
    job_no = {job.name: k + 1 for k, job in enumerate(milp.inst.problem.jobs)}
    users: dict[str, set[str]] = {}
    for option in milp.inst.options:
        users.setdefault(option.config, set()).add(option.job)
    for table in (milp.nodes, milp.contracts, milp.full_price, milp.discount_flag):
        for key, var in table.items():
            who = users.get(key[0], set())
            if len(who) == 1:
                label[var.index] = job_no[next(iter(who))]
    return label


@dataclass
class Column:
    """One block's integer solution: its values (the block's variables, in order), its cost and
    what it puts on each master row (G x over the block's columns)."""

    block: int
    values: np.ndarray
    cost: float
    use: np.ndarray


@dataclass
class Bound:
    """What the generation gave: `bound` a valid lower bound on the model's optimum (the best
    Lagrangian value), `master` the restricted master LP's last value (with the objective's
    offset; ≥ the Dantzig–Wolfe bound, NaN before the columns met every master row), and how it went."""

    bound: float
    master: float
    iterations: int
    columns: int
    seconds: float
    converged: bool
    history: list[tuple[float, float, float]] = field(default_factory=list)  # (seconds, bound, master)


class Generation:
    """The decomposed model, its columns and master; `run` generates, `price_and_branch` picks."""

    def __init__(self, milp: Milp, ownership: str = PRIVATE, block_seconds: float = math.inf) -> None:
        self.milp = milp
        self.block_seconds = block_seconds
        """Most seconds one pricing MILP may take; stopped early, its proven bound enters L(π)."""
        self.proto = milp.model.export_to_proto()
        self.parts = lagrange.split(self.proto, column_owners(milp, ownership))
        n = len(self.parts.cost)
        block_of = np.empty(n, dtype=np.int64)
        for b, cols in enumerate(self.parts.blocks):
            block_of[cols] = b
        self._entry_block = block_of[self.parts.g_col]
        self.columns: list[Column] = []
        self.sides = _master_sides(self.proto, column_owners(milp, ownership))
        """Each master row's (model row, +1 for its upper side or −1 for its lower), as split made them."""
        self.pricers = [_Pricer(model) for model in self.parts.models]
        self.absolute_gap = 0.0
        """Absolute gap each pricing MILP stops at (its proven bound still enters L(π)): a reduced
        cost near 0 makes a relative gap unreachable; `run` sets it from the first bound."""
        self.timing = np.zeros(len(self.parts.blocks))
        """Seconds each block's pricing took, summed."""

    @property
    def rows(self) -> int:
        return len(self.parts.h)

    def _use(self, block: int, values: np.ndarray) -> np.ndarray:
        """G x of one block's solution, per master row."""
        x = np.zeros(len(self.parts.cost))
        x[self.parts.blocks[block]] = values
        mask = self._entry_block == block
        return np.bincount(self.parts.g_row[mask], weights=self.parts.g_val[mask] * x[self.parts.g_col[mask]],
                           minlength=self.rows)

    def price(self, pi: np.ndarray, deadline: float,
              phase1: bool = False) -> list[tuple[float, float, Column | None]] | None:
        """Each block's (proven bound, objective, solution) under the costs c + Gᵀπ (Gᵀπ alone in
        phase 1); None when a block has no answer by the deadline."""
        cost = self.parts.lagrangian_cost(pi) - (self.parts.cost if phase1 else 0.0)
        out = []
        for b, (cols, model) in enumerate(zip(self.parts.blocks, self.parts.models)):
            began = time.perf_counter()
            limit = self.block_seconds
            answer = self.pricers[b].solve(cost[cols], min(deadline - began, limit), self.absolute_gap)
            while answer is None and time.perf_counter() < deadline and math.isfinite(limit):
                limit *= 2  # not even a bound in that time: try longer
                answer = self.pricers[b].solve(cost[cols], min(deadline - time.perf_counter(), limit),
                                               self.absolute_gap)
            self.timing[b] += time.perf_counter() - began
            if answer is None:
                return None
            bound, values = answer
            if values is None:  # a bound and no solution: nothing to add from this block
                out.append((bound, math.inf, None))
                continue
            column = Column(b, values, float(self.parts.cost[cols] @ values), self._use(b, values))
            out.append((bound, float(cost[cols] @ values), column))
        return out

    def lp_duals(self, seconds: float) -> tuple[float, np.ndarray] | None:
        """The LP relaxation of the whole model (HiGHS through MathOpt) and its duals on the master
        rows, as π ≥ 0: L at these duals is at least the LP's value (each block's integer minimum
        is at least its LP's), so the generation starts at or above the plain LP bound. None if
        HiGHS has no optimum in `seconds`."""
        from ortools.math_opt.python import mathopt

        model = to_mathopt(_model_of(_relaxed(self.proto)))
        params = mathopt.SolveParameters(time_limit=dt.timedelta(seconds=max(seconds, 1.0)), enable_output=False)
        result = mathopt.solve(model, mathopt.SolverType.HIGHS, params=params)
        if result.termination.reason != mathopt.TerminationReason.OPTIMAL:
            return None
        duals = result.dual_values(list(model.linear_constraints()))  # row k has id k (to_mathopt)
        pi = np.array([max(0.0, -sign * duals[row]) for row, sign in self.sides])  # ≤ rows: duals ≤ 0
        return result.objective_value(), pi

    def lagrangian(self, pi: np.ndarray, priced: list[tuple[float, float, Column]]) -> float:
        """L(π) from the blocks' proven bounds: valid for every π ≥ 0."""
        return self.parts.offset + sum(bound for bound, _, _ in priced) - float(pi @ self.parts.h)

    def _master(self, integral: bool, phase1: bool = False):
        """The restricted master: λ per column, one convexity row per block and the master rows.
        `phase1`: each master row gets a slack and the objective is their sum (the columns' costs
        left out), until the columns can meet every row."""
        model = mb.Model()
        lam = [model.new_var(0.0, 1.0, integral, f"l{k}") for k in range(len(self.columns))]
        by_block: list[list[int]] = [[] for _ in self.parts.blocks]
        for k, col in enumerate(self.columns):
            by_block[col.block].append(k)
        convex = [model.add(mb.LinearExpr.sum([lam[k] for k in ks]) == 1.0) for ks in by_block]
        uses = np.array([col.use for col in self.columns]).T if self.columns else np.zeros((self.rows, 0))
        coupled, slack = [], []
        for r in range(self.rows):
            nz = np.flatnonzero(np.abs(uses[r]) > 1e-12)
            if not len(nz) and self.parts.h[r] >= 0:
                coupled.append(None)  # met by every column: its dual is 0
                continue
            terms = mb.LinearExpr.weighted_sum([lam[k] for k in nz], uses[r, nz].tolist())
            if phase1:
                s = model.new_num_var(0.0, math.inf, f"s{r}")
                slack.append(s)
                terms = terms - s
            coupled.append(model.add(terms <= float(self.parts.h[r])))
        if phase1:
            model.minimize(mb.LinearExpr.sum(slack))
        else:
            model.minimize(mb.LinearExpr.weighted_sum(lam, [col.cost for col in self.columns]))
        return model, lam, convex, coupled, slack

    def master_lp(self, phase1: bool = False) -> tuple[float, np.ndarray, np.ndarray]:
        """The restricted master LP: (value without the offset, α per block, π per master row ≥ 0);
        in phase 1 the value is the slack the columns still need."""
        model, _lam, convex, coupled, _slack = self._master(False, phase1)
        solver = mb.Solver("glop")  # HiGHS through the model builder returns row activities as duals (OR-Tools 9.15)
        status = solver.solve(model)
        if status != mb.SolveStatus.OPTIMAL:
            raise RuntimeError(f"restricted master LP: {status.name}")
        alpha = np.array([solver.dual_value(ct) for ct in convex])
        pi = np.zeros(self.rows)
        for r, ct in enumerate(coupled):
            if ct is not None:
                pi[r] = max(0.0, -solver.dual_value(ct))  # a ≤ row of a minimisation has a dual ≤ 0
        return solver.objective_value, alpha, pi

    def run(self, seconds: float, *, iterations: int | None = None, start: np.ndarray | None = None,
            smoothing: float = SMOOTHING, pi_start: np.ndarray | None = None) -> Bound:
        """Column generation until no column prices out (the master LP is then the Dantzig–Wolfe
        bound), `iterations` master solves, or `seconds`. `start`: a plan's values (all variables),
        split into one first column per block. `pi_start`: the first duals priced (default:
        lagrange's start prices; `lp_duals` gives better ones). The bound reported is the best
        L(π) seen.

        Phase 1 (only while the columns cannot meet every master row together): the master
        minimises the rows' slack and the blocks are priced by its duals alone. Phase 2: the
        master's own costs, the blocks priced at duals smoothed towards the best bound's
        (Wentges), and at the master's own when the smoothed ones find no column."""
        began = time.perf_counter()
        deadline = began + seconds
        if start is not None:
            for b, cols in enumerate(self.parts.blocks):
                values = np.asarray(start, dtype=float)[cols]
                self.columns.append(Column(b, values, float(self.parts.cost[cols] @ values), self._use(b, values)))
        best_pi = pi_start if pi_start is not None else lagrange.row_prices(
            self.parts, self.proto, lagrange.start_prices(self.milp))
        priced = self.price(best_pi, deadline)
        if priced is None:
            return Bound(-math.inf, math.nan, 0, len(self.columns), time.perf_counter() - began, False)
        best = self.lagrangian(best_pi, priced)
        if not self.absolute_gap and math.isfinite(best):
            self.absolute_gap = ABSOLUTE_GAP * abs(best) / max(1, len(self.parts.blocks))
        self.columns += [col for _, _, col in priced if col is not None]
        history = [(time.perf_counter() - began, best, math.nan)]
        done, converged, master, phase1 = 0, False, math.nan, True
        while time.perf_counter() < deadline and (iterations is None or done < iterations):
            value, alpha, pi = self.master_lp(phase1)
            done += 1
            if phase1 and value <= 1e-7 * max(1.0, float(np.abs(self.parts.h).max(initial=0.0))):
                try:
                    value, alpha, pi = self.master_lp()
                    phase1 = False
                except RuntimeError:  # slack within tolerance, yet the master without it is infeasible
                    pass
            if not phase1:
                master = value + self.parts.offset
                if master - best <= TOLERANCE * max(1.0, abs(master)):
                    converged = True
                    break
            added, priced = self._add_columns(pi, alpha, best_pi, 0.0 if phase1 else smoothing, deadline, phase1)
            if priced is None:
                break
            if not phase1 and priced[0] > best:
                best, best_pi = priced
            history.append((time.perf_counter() - began, best, master))
            if not added:  # no column prices out; with every block proven, L at the master's duals is the master
                if phase1:
                    raise RuntimeError("the columns cannot meet the master's rows: the model has no plan")
                converged = master - best <= TOLERANCE * max(1.0, abs(master))
                if converged or not math.isfinite(self.block_seconds):
                    break
                self.block_seconds *= 2  # a pricing stopped by its limit left the gap: give it longer
        return Bound(best, master, done, len(self.columns), time.perf_counter() - began, converged, history)

    def _add_columns(self, pi: np.ndarray, alpha: np.ndarray, center: np.ndarray, weight: float,
                     deadline: float, phase1: bool) -> tuple[int, tuple[float, np.ndarray] | None]:
        """Price the blocks (at the smoothed duals first, then the master's if that found none),
        add each column of negative reduced cost at the master's duals: (columns added, (L at
        the duals priced, those duals) or None when out of time; L is −inf in phase 1)."""
        added, bound = 0, None
        for trial in ((weight, 0.0) if weight > 0 else (0.0,)):
            at = trial * center + (1 - trial) * pi
            priced = self.price(at, deadline, phase1)
            if priced is None:
                return added, None
            value = -math.inf if phase1 else self.lagrangian(at, priced)
            if bound is None or value > bound[0]:
                bound = (value, at)
            for b, (_low, _obj, col) in enumerate(priced):
                if col is None:
                    continue
                base = 0.0 if phase1 else col.cost
                if base + float(pi @ col.use) - alpha[b] < -TOLERANCE * max(1.0, abs(alpha[b])):
                    self.columns.append(col)
                    added += 1
            if added:
                break
        return added, bound

    def price_and_branch(self, seconds: float) -> tuple[float, np.ndarray] | None:
        """The restricted master with one whole column per block, each master row met: its cost
        (with the offset) and the model's variables at that pick; None without one in `seconds`."""
        model, lam, *_ = self._master(integral=True)
        solver = mb.Solver("highs")
        solver.set_time_limit_in_seconds(max(seconds, 0.1))
        solver.set_solver_specific_parameters(MASTER_OPTIONS)
        status = solver.solve(model)
        if status not in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
            return None
        x = np.zeros(len(self.parts.cost))
        for k, col in enumerate(self.columns):
            if solver.value(lam[k]) > 0.5:
                x[self.parts.blocks[col.block]] = col.values
        return float(self.parts.cost @ x) + self.parts.offset, x


class _Pricer:
    """One block's pricing MILP in MathOpt (HiGHS), built once, its objective set per pricing.

    Why MathOpt, not the model builder the blocks come as: through the model builder, HiGHS
    stopped by its time limit gives neither its incumbent nor its bound (status UNKNOWN, issue 33's
    storage problem: both job blocks at 15 s), and its objective setter skips zero costs."""

    def __init__(self, model: mb.Model) -> None:
        self.model = to_mathopt(model)
        self.vars = list(self.model.variables())  # id k is the block's variable k (to_mathopt)
        self.integral = np.array([v.integer for v in self.vars], dtype=bool)

    def solve(self, cost: np.ndarray, seconds: float, absolute_gap: float = 0.0):
        """(proven lower bound under `cost`, best solution with integers rounded, or None when
        HiGHS stopped with a bound and no solution); None without a bound."""
        from ortools.math_opt.python import mathopt

        if seconds <= 0:
            return None
        self.model.objective.clear()
        self.model.objective.is_maximize = False
        for var, c in zip(self.vars, cost.tolist()):
            if c:
                self.model.objective.set_linear_coefficient(var, c)
        params = mathopt.SolveParameters(time_limit=dt.timedelta(seconds=max(seconds, 0.1)), enable_output=False,
                                         relative_gap_tolerance=BLOCK_GAP, absolute_gap_tolerance=absolute_gap)
        result = mathopt.solve(self.model, mathopt.SolverType.HIGHS, params=params)
        bound = result.termination.objective_bounds.dual_bound
        if result.termination.reason == mathopt.TerminationReason.OPTIMAL and result.has_primal_feasible_solution():
            bound = min(bound, result.objective_value()) if math.isfinite(bound) else result.objective_value()
        if not math.isfinite(bound):
            return None
        bound -= 1e-9 * abs(bound)
        if not result.has_primal_feasible_solution():
            return bound, None
        values = np.array(result.variable_values(self.vars), dtype=float)
        values[self.integral] = np.round(values[self.integral])
        return bound, values


def _solve_block(model: mb.Model, cost: np.ndarray, seconds: float):
    """One pricing of a model builder block (a _Pricer built for it)."""
    return _Pricer(model).solve(cost, seconds)


def _master_sides(proto, owner: np.ndarray) -> list[tuple[int, int]]:
    """lagrange.split's master rows in order: (model row, +1 upper side | −1 lower side)."""
    out = []
    for r, row in enumerate(proto.constraint):
        labels = {int(o) for o in owner[np.asarray(row.var_index, dtype=np.int64)] if o >= 0}
        if len(labels) > 1:
            out += [(r, sign) for sign, side in ((1, row.upper_bound), (-1, row.lower_bound)) if math.isfinite(side)]
    return out


def _relaxed(proto):
    """A copy of the model with every integrality dropped."""
    copy = type(proto)()
    copy.CopyFrom(proto)
    for var in copy.variable:
        var.is_integer = False
    return copy


def _model_of(proto) -> mb.Model:
    """A model builder model of `proto` (it loads protos from files only)."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-columns-") as folder:
        path = Path(folder) / "model.pb"
        path.write_bytes(proto.SerializeToString())
        model = mb.Model()
        model.import_from_proto_file(str(path))
    return model


def column_bound(milp: Milp, seconds: float, *, ownership: str = PRIVATE, iterations: int | None = None,
                 start: np.ndarray | None = None, from_lp: bool = True,
                 block_seconds: float = math.inf) -> tuple[Bound, Generation]:
    """The Dantzig–Wolfe bound of a built model (and the generation, for price-and-branch);
    `from_lp`: the first duals are the LP relaxation's (`Generation.lp_duals`)."""
    began = time.perf_counter()
    gen = Generation(milp, ownership, block_seconds)
    lp = gen.lp_duals(seconds) if from_lp else None
    if lp is not None:
        gen.absolute_gap = ABSOLUTE_GAP * abs(lp[0]) / max(1, len(gen.parts.blocks))
    bound = gen.run(seconds - (time.perf_counter() - began), iterations=iterations, start=start,
                    pi_start=None if lp is None else lp[1])
    bound.seconds = time.perf_counter() - began
    return bound, gen

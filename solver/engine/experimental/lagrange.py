"""A lower bound without the full LP: Lagrangian relaxation of the rows that tie jobs to rented nodes.

Why: on the target synthetic instance (300 configurations × 60 daily periods × 20 jobs,
199k variables) the LP relaxation alone takes 74-87 s, so a 60-s solve ended with no bound
at all (solver.engine.relaxation). With the rows that link one job to the rented nodes or
to another job moved into the objective (each times a multiplier λ ≥ 0), the model falls
apart into one block per job (its replicas, fabric choice, data) and one block of
everything else (nodes, contracts, discounts, stock, power): each small enough to solve
to optimality in about a second.

The bound (weak duality). Write the model as min cᵀx over x ∈ X with the dualized rows
Gx ≤ h (each finite side of a ranged row is one row, an equality two). For any λ ≥ 0 and
every plan x (x ∈ X, Gx ≤ h): cᵀx ≥ cᵀx + λᵀ(Gx − h) ≥ min_{y∈X} (c + Gᵀλ)ᵀy − λᵀh.
X is what is left once those rows are gone: a product of the blocks' own sets, so the
minimum is the sum of each block's minimum. A block solved short of its optimum gives
its own proven bound instead, which is below its minimum: the sum stays a lower bound on
every plan, so on the optimum. Which rows are dualized: every row whose variables belong
to more than one owner (a job, or the rentals; `owners`): the `Use` rows, and whatever an
analysis added across jobs (a budget row, packing slots). Variables no owner claims join
the block of the rows they share.

The multipliers start at each configuration's price per GPU (`start_prices`: the node's
cost, discount included, over its GPUs; a contract's over the GPU-periods it covers):
there renting costs what it earns, so the rental block costs nothing and each job pays its
GPUs at list price. They move by projected subgradient with Polyak's step, towards a plan's
cost when one is known (`UPPER_FILE`, written by the caller), else LIFT above the bound.

The blocks' solutions say where each job's work goes, as the LP relaxation's do
(solver.engine.warmstart.lp_shortlist reads either): solver.engine.big builds its guided plan
from them. With GPUPLAN_EXPERIMENTAL=lagrange (off by default: measured, solver.engine.switches)
a big model gets this child instead of the LP's (solver.engine.big.run_big):
`BackgroundLagrangian` runs `python -m solver.engine.experimental.lagrange`. The bench's
pseudo-backend `highs-lagrange` switches it on.
"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ortools.linear_solver import linear_solver_pb2
from ortools.linear_solver.python import model_builder as mb

from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF
from solver.engine.relaxation import BOUND_SLACK, BackgroundRelaxation, Relaxation
from solver.milp.core import Milp

RENTAL = 0
"""Owner label of the rental variables (nodes, contracts, discounts); jobs are 1, 2, …; −1 is no owner."""
BLOCK_GAP = 1e-4
"""Relative gap each block is solved to; its proven bound is what counts, not its plan."""
LIFT = 0.02
"""With no plan's cost known, Polyak's step aims this share above the best bound."""
STEP_SCALE = 1.0
"""Polyak's step factor at the start; halved after STALL steps that did not raise the bound."""
STALL = 2
UPPER_FILE = "upper.txt"
"""The best plan's cost, written by the caller beside the model once it has one (a Polyak target)."""
OWNERS_FILE = "owners.npy"
PRICES_FILE = "prices.npy"
HIGHS_OPTIONS = f"presolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}\noutput_flag=false\nmip_rel_gap={BLOCK_GAP}"


def owners(milp: Milp) -> np.ndarray:
    """Each variable's owner by index: its job (1, 2, … in problem order) for replicas, fabric
    choices, data sites, storage and running flags; RENTAL for nodes, contracts and discounts; −1 else."""
    label = np.full(milp.model.num_variables, -1, dtype=np.int64)
    job_no = {job.name: k + 1 for k, job in enumerate(milp.inst.problem.jobs)}
    for (i, _t), var in milp.replicas.items():
        label[var.index] = job_no[milp.inst.options[i].job]
    for table in (milp.sites, milp.data_sites, milp.running, milp.stored, milp.started):
        for key, var in table.items():
            label[var.index] = job_no[key[0]]
    for (job, _t), (var, _terms) in milp.tails.items():
        label[var.index] = job_no[job]
    for table in (milp.nodes, milp.contracts, milp.full_price, milp.discount_flag):
        for var in table.values():
            label[var.index] = RENTAL
    return label


def start_prices(milp: Milp) -> np.ndarray:
    """Each variable's price per unit of capacity it supplies, the multipliers' start:
    a node n[o,t] its own cost over its GPUs; a contract's nodes, the cheapest contract covering t,
    its cost over the GPUs × periods it covers (a term past the horizon is paid whole, used in
    part). Indexed by variable; 0 where nothing is priced."""
    proto_cost = np.zeros(milp.model.num_variables)
    for part in milp.cost.values():
        for var, coef in part:
            proto_cost[var.index] += coef
    inst, price = milp.inst, np.zeros(milp.model.num_variables)
    per_period: dict[tuple[str, int], float] = {}
    for (key, s), var in milp.contracts.items():
        cfg = inst.configs[key]
        covered = inst.covered(cfg, s)
        each = proto_cost[var.index] / (cfg.offer.gpus_per_node * max(1, len(covered)))
        for t in covered:
            per_period[key, t] = min(each, per_period.get((key, t), each))
    for (key, t), var in milp.nodes.items():
        gpn = inst.configs[key].offer.gpus_per_node
        price[var.index] = per_period.get((key, t), proto_cost[var.index] / gpn)
    return np.maximum(price, 0.0)


@dataclass
class Split:
    """The model in blocks: dualized rows G x ≤ h (COO), each block's columns and its own model."""

    cost: np.ndarray
    offset: float
    g_row: np.ndarray
    g_col: np.ndarray
    g_val: np.ndarray
    h: np.ndarray
    blocks: list[np.ndarray]
    models: list[mb.Model]

    def lagrangian_cost(self, lam: np.ndarray) -> np.ndarray:
        """c + Gᵀλ, the objective every block is solved with."""
        return self.cost + np.bincount(self.g_col, weights=self.g_val * lam[self.g_row], minlength=len(self.cost))

    def violation(self, x: np.ndarray) -> np.ndarray:
        """G x − h: the subgradient of the dual function at the λ x was solved for."""
        return np.bincount(self.g_row, weights=self.g_val * x[self.g_col], minlength=len(self.h)) - self.h


def split(proto: linear_solver_pb2.MPModelProto, owner: np.ndarray) -> Split:
    """Dualize every row over more than one owner; the rest fall into connected blocks, one per
    job (a job's rows, and the unowned variables they reach) and one of everything else."""
    n = len(proto.variable)
    parent = np.arange(n + int(owner.max(initial=0)) + 2)  # variables, then one node per owner label

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for k in np.flatnonzero(owner >= 0):
        parent[find(int(k))] = find(n + 1 + int(owner[k]))
    g_row, g_col, g_val, h, kept = [], [], [], [], []
    for r, row in enumerate(proto.constraint):
        cols = np.asarray(row.var_index, dtype=np.int64)
        labels = {int(o) for o in owner[cols] if o >= 0}
        if len(labels) > 1:
            vals = np.asarray(row.coefficient)
            for sign, side in ((1.0, row.upper_bound), (-1.0, row.lower_bound)):
                if math.isfinite(side):
                    g_row.append(np.full(len(cols), len(h)))
                    g_col.append(cols)
                    g_val.append(sign * vals)
                    h.append(sign * side)
            continue
        kept.append(r)
        if len(cols):
            root = find(int(cols[0]))
            for k in cols[1:]:
                other = find(int(k))
                if other != root:
                    parent[other] = root
    roots = np.array([find(k) for k in range(n)])
    rental_root = find(n + 1 + RENTAL)
    job_roots = {find(n + 1 + j) for j in range(1, int(owner.max(initial=0)) + 1)} - {rental_root}
    block_of_root = {root: b for b, root in enumerate(sorted(job_roots))}
    rest = len(block_of_root)
    block = np.array([block_of_root.get(int(root), rest) for root in roots], dtype=np.int64)
    blocks = [np.flatnonzero(block == b) for b in range(rest + 1)]
    blocks = [b for b in blocks if len(b)]
    models = _block_models(proto, blocks, kept)
    cost = np.array([v.objective_coefficient for v in proto.variable])
    cat = (lambda parts, kind: np.concatenate(parts) if parts else np.zeros(0, dtype=kind))
    return Split(cost, proto.objective_offset, cat(g_row, np.int64), cat(g_col, np.int64), cat(g_val, float),
                 np.array(h, dtype=float), blocks, models)


def _block_models(proto, blocks: list[np.ndarray], kept: list[int]) -> list[mb.Model]:
    """One model per block: its variables (bounds, integrality) and the kept rows on them."""
    local = np.empty(len(proto.variable), dtype=np.int64)
    which = np.empty(len(proto.variable), dtype=np.int64)
    subs = []
    for b, cols in enumerate(blocks):
        local[cols] = np.arange(len(cols))
        which[cols] = b
        sub = linear_solver_pb2.MPModelProto()
        for k in cols:
            src = proto.variable[int(k)]
            sub.variable.add(lower_bound=src.lower_bound, upper_bound=src.upper_bound, is_integer=src.is_integer)
        subs.append(sub)
    for r in kept:
        row = proto.constraint[r]
        if not len(row.var_index):
            continue
        sub = subs[which[row.var_index[0]]]
        sub.constraint.add(lower_bound=row.lower_bound, upper_bound=row.upper_bound,
                           var_index=local[list(row.var_index)].tolist(), coefficient=row.coefficient)
    models = []
    with tempfile.TemporaryDirectory(prefix="gpuplan-blocks-") as folder:
        for b, sub in enumerate(subs):
            path = Path(folder) / f"{b}.pb"
            path.write_bytes(sub.SerializeToString())
            model = mb.Model()
            model.import_from_proto_file(str(path))  # the Python model builder loads protos from files only
            models.append(model)
    return models


def solve_block(model: mb.Model, cost: np.ndarray, seconds: float) -> tuple[float, np.ndarray] | None:
    """The block's proven lower bound under `cost` and its best solution; None if it has none
    (infeasible, or out of time)."""
    model.helper.clear_objective()  # set_objective_coefficients skips zeros: a cost gone to 0 kept its old value
    model.helper.set_objective_coefficients(list(range(len(cost))), cost.tolist())
    solver = mb.Solver("highs")
    solver.set_time_limit_in_seconds(max(seconds, 0.1))
    solver.set_solver_specific_parameters(HIGHS_OPTIONS)
    status = solver.solve(model)
    if status not in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
        return None
    bound = solver.best_objective_bound if status == mb.SolveStatus.FEASIBLE else min(
        solver.objective_value, solver.best_objective_bound)
    if not math.isfinite(bound):
        return None
    return bound, solver.values(model.get_variables()).to_numpy()


@dataclass
class Dual:
    """The best bound found, the multipliers and block solutions that gave it."""

    bound: float
    lam: np.ndarray
    values: np.ndarray
    steps: int


def evaluate(parts: Split, lam: np.ndarray, deadline: float) -> tuple[float, np.ndarray] | None:
    """L(λ) = Σ_blocks min (c + Gᵀλ)ᵀx − λᵀh + offset, each block to optimality or its own bound;
    None when a block has no answer by the deadline (no bound at these λ)."""
    cost = parts.lagrangian_cost(lam)
    x = np.zeros(len(cost))
    total = parts.offset - float(lam @ parts.h)
    for cols, model in zip(parts.blocks, parts.models):
        answer = solve_block(model, cost[cols], deadline - time.perf_counter())
        if answer is None:
            return None
        total += answer[0]
        x[cols] = answer[1]
    return total - BOUND_SLACK * abs(total), x


def ascend(parts: Split, lam: np.ndarray, deadline: float, upper=lambda: None, steps: int | None = None,
           report=lambda dual: None) -> Dual | None:
    """Projected subgradient ascent on L(λ) from `lam` until `deadline` (or `steps` evaluations);
    `upper()` is the best plan's cost if known (Polyak's target); `report(dual)` hears every
    better bound. The best bound found, or None if not one evaluation finished."""
    best, scale, stalled, done = None, STEP_SCALE, 0, 0
    while time.perf_counter() < deadline and (steps is None or done < steps):
        answer = evaluate(parts, lam, deadline)
        if answer is None:
            break
        done += 1
        value, x = answer
        if best is None or value > best.bound:
            best, stalled = Dual(value, lam.copy(), x, done), 0
            report(best)
        else:
            stalled += 1
            if stalled >= STALL:
                scale, stalled = scale / 2, 0
        grad = parts.violation(x)
        norm = float(grad @ grad)
        if norm <= 1e-12:
            break  # the blocks' solutions satisfy every dualized row: L(λ) is the optimum
        target = upper()
        if target is None or target <= best.bound:
            target = best.bound + LIFT * abs(best.bound)
        lam = np.maximum(0.0, lam + scale * (target - value) / norm * grad)
    return best


def row_prices(parts: Split, proto, prices: np.ndarray) -> np.ndarray:
    """Start multipliers: a dualized row's price is the `prices` of the rental variable it has
    with a negative coefficient (the nodes a `Use` row puts capacity on), 0 for other rows."""
    lam = np.zeros(len(parts.h))
    supply = (parts.g_val < 0) & (prices[parts.g_col] > 0)
    np.maximum.at(lam, parts.g_row[supply], prices[parts.g_col[supply]])
    return lam


def lagrangian_bound(milp: Milp, seconds: float, steps: int | None = None) -> Dual | None:
    """The Lagrangian bound of a built model in this process (the tests' entry; big models run
    `BackgroundLagrangian`)."""
    deadline = time.perf_counter() + seconds
    proto = milp.model.export_to_proto()
    parts = split(proto, owners(milp))
    return ascend(parts, row_prices(parts, proto, start_prices(milp)), deadline, steps=steps)


class BackgroundLagrangian(BackgroundRelaxation):
    """The Lagrangian bound in a child process, in place of the LP relaxation: the same answer
    (`Relaxation`: its bound as value, the blocks' solutions as values), the same handling."""

    MODULE = "solver.engine.experimental.lagrange"

    def __init__(self, milp: Milp, seconds: float, *, log: bool = False) -> None:
        self._milp = milp
        super().__init__(milp.model, seconds, log=log)

    def _files(self, folder: Path) -> None:
        np.save(folder / OWNERS_FILE, owners(self._milp))
        np.save(folder / PRICES_FILE, start_prices(self._milp))

    def wait(self, seconds: float) -> Relaxation | None:
        """The best bound so far once the child ends or `seconds` pass (the child saves each
        better one: unlike the LP's, a bound cut short by time is still a bound)."""
        try:
            self._proc.wait(timeout=max(seconds, 0.0))
        except subprocess.TimeoutExpired:
            pass
        if self._out.exists():
            with np.load(self._out) as data:
                self._result = Relaxation(float(data["value"]), data["values"])
        return self._result

    def tell_upper(self, cost: float) -> None:
        """The best plan's cost so far, the child's Polyak target."""
        path = Path(self._dir.name) / UPPER_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(repr(float(cost)))
        tmp.replace(path)


def _read_upper(folder: Path) -> float | None:
    try:
        return float((folder / UPPER_FILE).read_text())
    except (OSError, ValueError):
        return None


def run_child(model_path: str, out_path: str, seconds: float) -> int:
    """The child's work: split the model, ascend until the time is up, save the best bound and
    its blocks' solutions after each better one. Exit 0 with a bound, 1 without one."""
    deadline = time.perf_counter() + seconds
    folder = Path(model_path).parent
    proto = linear_solver_pb2.MPModelProto()
    proto.ParseFromString(Path(model_path).read_bytes())
    if proto.maximize:
        return 1
    parts = split(proto, np.load(folder / OWNERS_FILE))
    lam = row_prices(parts, proto, np.load(folder / PRICES_FILE))

    def save(dual: Dual) -> None:
        tmp = Path(out_path).with_suffix(".tmp.npz")
        with open(tmp, "wb") as out:
            np.savez(out, value=dual.bound, values=dual.values)
        tmp.replace(out_path)

    best = ascend(parts, lam, deadline, upper=lambda: _read_upper(folder), report=save)
    return 0 if best is not None else 1


if __name__ == "__main__":
    sys.exit(run_child(sys.argv[1], sys.argv[2], float(sys.argv[3])))

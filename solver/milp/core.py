"""The built model and its handles: what every constraint family adds rows to.

Why a module of its own: each family (solver/milp/<family>.py) imports `Milp` to add its
rows, and build.py imports every family to assemble them; with `Milp` here, below both,
the families and the assembly import in one direction only. Every constraint row carries
a systematic name `<Family>-<what>-<index>` so that a binding or violated row can be
named to the user. The rows of a limit a user can relax (budget, power, stock, a job's
work, a vendor count, the spot work: solver.milp.families) are also kept under a
`RowKey`, so an analysis finds them by (family, target, period) instead of reading names
back.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ortools.linear_solver.python import model_builder as mb

from solver.milp.instance import Instance

COST_PARTS = ("gpu_rent", "interconnect", "platform_fee", "storage", "egress", "volume_discount")
BIG_MODEL_VARIABLES = 20_000
"""A model of at least this many variables is big: the solve engine plans it in steps
(solver.engine.warmstart.WARM_START_VARIABLES, whose measurements are there) and the
formulation leaves out the rows that only pay off in a solve to a proof (solver.milp.cover).
Here, below both, so the formulation reads it without importing the engine."""


@dataclass(frozen=True)
class RowKey:
    """Where a limit's row sits: its family (solver.milp.registry), what it limits (a site,
    an offer, a job, a vendor; "" for the one budget row), its period (None when it has
    none) and, where one family writes several rows there, which (`part`)."""

    family: str
    target: str = ""
    period: int | None = None
    part: str = ""


@dataclass
class Milp:
    """The built model with handles to its variables, keyed like the Instance."""

    inst: Instance
    model: mb.Model = field(default_factory=mb.Model)
    nodes: dict[tuple[str, int], mb.Variable] = field(default_factory=dict)            # (config, t)
    contracts: dict[tuple[str, int], mb.Variable] = field(default_factory=dict)        # (config, start)
    replicas: dict[tuple[int, int], mb.Variable] = field(default_factory=dict)         # (option, t)
    full_price: dict[tuple[str, int], mb.Variable] = field(default_factory=dict)       # (config, t|start): v
    discount_flag: dict[tuple[str, int], mb.Variable] = field(default_factory=dict)
    sites: dict[tuple[str, str], mb.Variable] = field(default_factory=dict)            # (job, choice name)
    choices: dict[str, list] = field(default_factory=dict)                             # job → [site.Choice]
    work_coef: dict[tuple[int, int], float] = field(default_factory=dict)              # (option, t) → EFLOP
    least_work: dict[str, float] = field(default_factory=dict)                         # job → least work_coef
    data_sites: dict[tuple[str, str, str], mb.Variable] = field(default_factory=dict)  # (job, vendor, dc)
    data_members: dict[tuple[str, str, str], list[mb.Variable]] = field(default_factory=dict)
    running: dict[tuple[str, int], mb.Variable] = field(default_factory=dict)                  # (job, t)
    stored: dict[tuple[str, str, str, int], mb.Variable] = field(default_factory=dict)         # (job, vendor, dc, t)
    started: dict[tuple[str, str, str, int], mb.Variable] = field(default_factory=dict)        # (job, vendor, dc, t)
    tails: dict[tuple[str, int], tuple[mb.Variable, list[tuple[mb.Variable, int]]]] = field(default_factory=dict)
    # (job, t) → W[j,t], the job's work units from t on, and period t's (replica, units) terms
    cover: dict[str, list[str]] = field(default_factory=dict)                                   # job → its Cover rows
    cost: dict[str, list[tuple[mb.Variable, float]]] = field(default_factory=lambda: defaultdict(list))
    rows: dict[str, mb.LinearConstraint] = field(default_factory=dict)
    keyed: dict[RowKey, mb.LinearConstraint] = field(default_factory=dict)
    relaxed: bool = False       # the LP relaxation (build_milp(relax=True)): rows added later take continuous flags
    built_replica_ub: dict[tuple[int, int], float] = field(default_factory=dict)
    # (option, t) → the replica variable's upper bound as built, kept by the first deadline bound set
    # (solver.milp.work.set_deadline_bound) so that lifting the bound puts it back

    def add_row(self, name: str, constraint, key: RowKey | None = None) -> None:
        """Add a named constraint and keep its handle (names must be unique); a limit's row
        also under its key."""
        row = self.rows[name] = self.model.add(constraint, name=name)
        if key is not None:
            assert key not in self.keyed, f"two rows under {key}"
            self.keyed[key] = row

    def family_rows(self, family: str, target: str | None = None) -> dict[RowKey, mb.LinearConstraint]:
        """The rows of one family (of one target), in the order they were added."""
        return {k: row for k, row in self.keyed.items()
                if k.family == family and (target is None or k.target == target)}

    def targets(self, family: str) -> list[str]:
        """What the family's rows limit in this model (sites, offers, jobs), sorted."""
        return sorted({k.target for k in self.keyed if k.family == family})

    def total_cost(self) -> mb.LinearExpr:
        terms = [t for part in self.cost.values() for t in part]
        return mb.LinearExpr.weighted_sum([v for v, _ in terms], [c for _, c in terms])

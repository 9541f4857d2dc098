"""Jobs on capacity: whole model-parallel groups, in size tiers, within rented nodes."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def add_assignment(milp: Milp) -> None:
    """Replicas m[j,o,t,τ] of job j's group (k_jo GPUs) on configuration o in period t, tier τ.

    Use:   Σ_{j,τ} k_jo·m[j,o,t,τ] ≤ gpus_per_node_o·n[o,t]        row `Use-<o>-<t>`
    Tiers: z[j,o,τ] ∈ {0,1}, Σ_τ z ≤ 1, m[j,o,t,τ] ≤ R_τ·z[j,o,τ]  rows `Tier-<j>-<o>-*`
    A job keeps one size tier per configuration; efficiency falls with tier size, so a
    smaller allocation never benefits from being counted in a larger tier. m exists only
    inside the job's window and after the configuration's lead time.
    """
    inst, model = milp.inst, milp.model
    use: dict[tuple[str, int], list[tuple[mb.Variable, int]]] = defaultdict(list)
    for i, opt in enumerate(inst.options):
        flags = _tier_flags(milp, i)
        for t in opt.periods:
            for k, tier in enumerate(opt.tiers):
                var = model.new_int_var(0, tier.max_replicas, f"m[{opt.job},{opt.config},{t},{k}]")
                milp.replicas[i, t, k] = var
                use[opt.config, t].append((var, opt.group_gpus))
                if flags:
                    milp.add_row(f"Tier-{opt.job}-{opt.config}-{t}-{k}", var <= tier.max_replicas * flags[k])
    for (key, t), terms in use.items():
        gpn = inst.configs[key].offer.gpus_per_node
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [g for _, g in terms])
        milp.add_row(f"Use-{key}-{t}", lhs <= gpn * milp.nodes[key, t])


def _tier_flags(milp: Milp, i: int) -> list[mb.Variable]:
    opt = milp.inst.options[i]
    if len(opt.tiers) < 2:
        return []
    flags = [milp.model.new_bool_var(f"z[{opt.job},{opt.config},{k}]") for k in range(len(opt.tiers))]
    milp.add_row(f"Tier-{opt.job}-{opt.config}-one", mb.LinearExpr.sum(flags) <= 1)
    return flags

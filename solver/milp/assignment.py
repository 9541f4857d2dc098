"""Jobs on capacity: whole model-parallel groups, in size tiers, within rented nodes."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp


def add_assignment(milp: Milp) -> None:
    """Replicas m[j,o,t] of job j's group (k_jo GPUs) on configuration o in period t.

    Use:   Σ_j e_jo·m[j,o,t] ≤ gpus_per_node_o·n[o,t]        row `Use-<o>-<t>`
    e_jo = node_share(k_jo, gpus_per_node_o): a group inside one node may not straddle two,
    so a node holds ⌊gpn/k⌋ of them and each takes gpn/⌊gpn/k⌋ GPUs of it (k = 4 on
    6-GPU nodes: one group a node, not three groups on two nodes).
    m exists only inside the job's window and after the configuration's lead time; its
    bound is the most replicas any of the option's size tiers allows.
    """
    inst, model = milp.inst, milp.model
    use: dict[tuple[str, int], list[tuple[mb.Variable, int]]] = defaultdict(list)
    for i, opt in enumerate(inst.options):
        most = max(tier.max_replicas for tier in opt.tiers)
        for t in opt.periods:
            var = model.new_int_var(0, most, f"m[{opt.job},{opt.config},{t}]")
            milp.replicas[i, t] = var
            use[opt.config, t].append((var, node_share(opt.group_gpus, inst.configs[opt.config].offer.gpus_per_node)))
    for (key, t), terms in use.items():
        gpn = inst.configs[key].offer.gpus_per_node
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [g for _, g in terms])
        milp.add_row(f"Use-{key}-{t}", lhs <= gpn * milp.nodes[key, t])


def node_share(group_gpus: int, gpus_per_node: int) -> float:
    """GPUs of rented nodes one model-parallel group takes up: its own GPUs if it fills or
    spans nodes (k ≥ gpn), else gpn ÷ the number of such groups one node holds."""
    if group_gpus >= gpus_per_node:
        return float(group_gpus)
    return gpus_per_node / (gpus_per_node // group_gpus)

"""One fabric for synchronous jobs: all their replicas at one vendor within one link group."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def add_single_site(milp: Milp) -> None:
    """s[j,g] ∈ {0,1}, Σ_g s[j,g] ≤ 1;  Σ_{o∈g,τ} m[j,o,t,τ] ≤ M_jg·s[j,g] for every t.

    g is a fabric domain: one vendor's GPUs of one type on one kind of interconnect within
    one link group (a synchronous step waits for the slowest GPU, so types do not mix). A link group is a
    set of datacenters joined by a dedicated line (seed 000: sites 1–2 ms apart are fine
    only with one; seed 003 scenario C: splitting without it is slower than one machine);
    two vendors' nodes, or IB and RoCE nodes, do not share one fabric even in one building. Rows
    `Site-<j>-one` and `Site-<j>-<g>-<t>`. M_jg is the most replicas g's configurations
    could hold, so it is tight.
    """
    inst, model = milp.inst, milp.model
    single = {j.name for j in inst.problem.jobs if j.single_site}
    groups: dict[str, dict[tuple[str, int], list[mb.Variable]]] = defaultdict(lambda: defaultdict(list))
    bound: dict[tuple[str, str], int] = defaultdict(int)
    for (i, t, k), var in milp.replicas.items():
        opt = inst.options[i]
        if opt.job in single:
            groups[opt.job][fabric_domain(inst.configs[opt.config]), t].append(var)
    for i, opt in enumerate(inst.options):
        if opt.job in single:
            cfg = inst.configs[opt.config]
            bound[opt.job, fabric_domain(cfg)] += cfg.offer.gpus_per_node * cfg.offer.max_nodes // opt.group_gpus
    for job, by_group in groups.items():
        names = sorted({g for g, _ in by_group})
        if len(names) < 2:
            continue
        flags = {g: model.new_bool_var(f"s[{job},{g}]") for g in names}
        milp.sites.update({(job, g): v for g, v in flags.items()})
        milp.add_row(f"Site-{job}-one", mb.LinearExpr.sum(list(flags.values())) <= 1)
        for (g, t), variables in by_group.items():
            milp.add_row(f"Site-{job}-{g}-{t}", mb.LinearExpr.sum(variables) <= bound[job, g] * flags[g])


def fabric_domain(cfg) -> str:
    """The nodes one synchronous job may span: one vendor's GPUs of one type on one fabric in a link group."""
    return f"{cfg.offer.vendor}@{cfg.link_group}/{cfg.interconnect}/{cfg.offer.gpu}"

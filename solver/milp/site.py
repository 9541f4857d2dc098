"""One fabric for each synchronous job, and the size tier it runs at there.

A synchronous job runs in one fabric domain: one vendor's GPUs of one type on one kind
of interconnect within one link group. A link group is a set of datacenters joined by
a dedicated line (seed 000: sites 1–2 ms apart are fine only with one; seed 003
scenario C: splitting without it is slower than one machine); two vendors' nodes, IB
and RoCE nodes, or two GPU types (a synchronous step waits for the slowest) do not
form one cluster. Inside the domain the job's efficiency depends on its size (seed
000: speed-up falls past ~512 cards), so choosing the domain and choosing the tier are
one choice, made once for the whole plan.
"""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def fabric_domain(cfg) -> str:
    """The nodes one synchronous job may span: one vendor's GPUs of one type on one fabric in a link group."""
    return f"{cfg.offer.vendor}@{cfg.link_group}/{cfg.interconnect}/{cfg.offer.gpu}"


def add_single_site(milp: Milp) -> None:
    """Each synchronous job picks one (domain, tier); its replicas live only there.

    Node tier of option o (factor 1, one configuration, one node):
        m[j,o,t,node] ≤ R_o·x[j,o]                               rows `Site-<j>-<o>-node-<t>`
    Domain tier τ of domain d:
        Σ_{o∈d} k_jo·m[j,o,t,τ] ≤ min(G_τ, cap_d)·z[j,d,τ]       rows `Site-<j>-<d>-<G_τ>-<t>`
    One choice:  Σ x + Σ z ≤ 1                                    row `Site-<j>-one`
    With a single possible choice no flag is needed: only the tier's size bound remains.
    Counting a smaller allocation in a larger (slower) tier only understates its work.
    """
    inst = milp.inst
    by_job: dict[str, list[int]] = defaultdict(list)
    for i, opt in enumerate(inst.options):
        if opt.domain is not None:
            by_job[opt.job].append(i)
    for job, members in by_job.items():
        choices = _choices(milp, members)
        flags = [milp.model.new_bool_var(f"z[{job},{name}]") for name in choices] if len(choices) > 1 else None
        for k, (name, terms, bound) in enumerate(choices.values()):
            flag = flags[k] if flags else None
            if flag is None and _most_gpus(terms) <= bound:
                continue  # the variables' own bounds already keep the job inside the tier
            for t, pairs in terms.items():
                lhs = mb.LinearExpr.weighted_sum([v for v, _ in pairs], [g for _, g in pairs])
                milp.add_row(f"Site-{job}-{name}-{t}", lhs <= (bound * flag if flag is not None else bound))
        if flags:
            milp.sites.update({(job, name): f for name, f in zip(choices, flags)})
            milp.add_row(f"Site-{job}-one", mb.LinearExpr.sum(flags) <= 1)


def _choices(milp: Milp, members: list[int]) -> dict[str, tuple[str, dict, int]]:
    """name → (name, {t: [(m, gpus per replica)]}, GPU bound) for every node and domain tier."""
    inst = milp.inst
    out: dict[str, tuple[str, dict, int]] = {}
    for i in members:
        opt = inst.options[i]
        for k, tier in enumerate(opt.tiers):
            if tier.domain_gpus is None:
                name, bound = f"{opt.config}-node", inst.configs[opt.config].offer.gpus_per_node
            else:
                name, bound = f"{opt.domain}-{tier.domain_gpus}", tier.domain_gpus
            entry = out.setdefault(name, (name, defaultdict(list), bound))
            for t in opt.periods:
                entry[1][t].append((milp.replicas[i, t, k], opt.group_gpus))
    return out


def _most_gpus(terms: dict) -> float:
    """The most GPUs the variables' own bounds allow in any one period."""
    return max((sum(var.upper_bound * g for var, g in pairs) for pairs in terms.values()), default=0)

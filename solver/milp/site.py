"""One fabric for each synchronous job, and the size tier it runs at there.

A synchronous job runs in one fabric domain: one vendor's GPUs of one type on one kind
of interconnect within one link group. A link group is a set of datacenters joined by
a dedicated line (seed 000: sites 1–2 ms apart are fine only with one; seed 003
scenario C: splitting without it is slower than one machine); two vendors' nodes, IB
and RoCE nodes, or two GPU types (a synchronous step waits for the slowest) do not
form one cluster. Inside the domain the job's efficiency depends on its size (seed
000: speed-up falls past ~512 cards), so choosing the domain and choosing the tier are
one choice, made once for the whole plan.

Why the tier lives only in the choice flags, not in the replica variables: one set of
replicas per (job, configuration, period) with the tier's factor moved to the work
requirement (a slower tier needs more raw work) gives the same optimum with about half
the variables and one row per domain and period instead of one per tier — what made
the large instances' LP relaxations slow.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp
from solver.milp.work import asked_work, replica_work, surplus


@dataclass(frozen=True)
class Choice:
    """One (domain, size tier) a synchronous job may run in for the whole plan.

    `node_config` set: the single-node tier — that configuration only, within one node,
    at factor 1 (nothing crosses the fabric). Otherwise a domain tier: any of the
    domain's configurations, at most `bound_gpus` GPUs at once, at `factor`.
    """

    name: str
    domain: str
    factor: float
    bound_gpus: int
    node_config: str | None = None


def fabric_domain(cfg) -> str:
    """The nodes one synchronous job may span: one vendor's GPUs of one type on one fabric in a
    link group, and either all spot or none. Why the last: a reclaimed spot node stalls every
    GPU of a synchronous job, so spot's loss cannot be charged to the spot GPUs alone."""
    spot = "/spot" if cfg.offer.preemptible else ""
    return f"{cfg.offer.vendor}@{cfg.link_group}/{cfg.interconnect}/{cfg.offer.gpu}{spot}"


def job_choices(milp: Milp) -> dict[str, list[Choice]]:
    """Every synchronous job's possible (domain, tier) choices, read off its options' tiers."""
    inst = milp.inst
    out: dict[str, dict[str, Choice]] = defaultdict(dict)
    for opt in inst.options:
        if opt.domain is None:
            continue
        for tier in opt.tiers:
            if tier.domain_gpus is None:
                gpn = inst.configs[opt.config].offer.gpus_per_node
                choice = Choice(f"{opt.config}-node", opt.domain, tier.factor, gpn, opt.config)
            else:
                choice = Choice(f"{opt.domain}-{tier.domain_gpus}", opt.domain, tier.factor, tier.domain_gpus)
            out[opt.job].setdefault(choice.name, choice)
    return {job: list(choices.values()) for job, choices in out.items()}


def add_single_site(milp: Milp) -> None:
    """Each synchronous job picks exactly one choice c (flag z[j,c]); its replicas live only there.

    One choice:   Σ_c z[j,c] = 1                                           row `Site-<j>-one`
    Domain size:  Σ_{o∈d} k_jo·m[j,o,t] ≤ Σ_{c in d} G_c·z[j,c]            rows `Site-<j>-<d>-<t>`
                  (only where the replicas' own bounds could pass the domain's smallest
                  tier bound: elsewhere the work row below already empties an unchosen
                  domain, and these rows were most of the large models' rows — large
                  synthetic: 18,520 → 7,782 Site rows, LP 76 → 29 s, same LP value)
    Domain work:  Σ_{o∈d,t} w_jot·m[j,o,t] ≤ Σ_{c in d} (R_j/f_c + s_j)·z[j,c] rows `Site-<j>-<d>-work`
                  (w: raw work of a replica-period, R_j/f_c + s_j: the most raw work some
                  optimal plan does under c, see solver.milp.work.surplus; implied by the
                  rows above for integer flags, it makes the LP pick domains by work share)
    Domain need:  Σ_{o∈d,t} w_jot·m[j,o,t] ≥ Σ_{c in d} (R_j/f_c)·z[j,c]       rows `Site-<j>-<d>-need`
                  (the work row split by domain: implied for integer flags, but the LP
                  can no longer do a domain's share of the work elsewhere, and the
                  solver's cuts get one integer covering row per domain; measured:
                  seed-13b-100b 2.2 → 1.2 s, debug-then-train ≈ 9 → 6.4 s)
    Node tier:    Σ_t m[j,o,t] ≤ U_jo·Σ_{c holding o} z[j,c]               rows `Site-<j>-<o>-only`
                  (only in a domain with a node tier: choosing one node of o excludes
                  the domain's other configurations)
    The tier's speed enters the work row (solver.milp.work). With a single possible
    choice no flag is needed: only its size bound remains, and only where the
    variables' own bounds do not already imply it.
    """
    milp.choices.update(job_choices(milp))
    extra = surplus(milp) if milp.choices else {}
    for job, choices in milp.choices.items():
        flags = {c.name: milp.model.new_bool_var(f"z[{job},{c.name}]") for c in choices} if len(choices) > 1 else {}
        milp.sites.update({(job, name): f for name, f in flags.items()})
        if flags:
            milp.add_row(f"Site-{job}-one", mb.LinearExpr.sum(list(flags.values())) == 1)
        _domain_rows(milp, job, choices, flags, extra.get(job, 0.0))


def _domain_rows(milp: Milp, job: str, choices: list[Choice], flags: dict, extra: float) -> None:
    inst = milp.inst
    members: dict[str, list[int]] = defaultdict(list)
    for i, opt in enumerate(inst.options):
        if opt.job == job:
            members[opt.domain].append(i)
    for domain, options in members.items():
        mine = [c for c in choices if c.domain == domain]
        by_t: dict[int, list[tuple[mb.Variable, int]]] = defaultdict(list)
        for i in options:
            for t in inst.options[i].periods:
                by_t[t].append((milp.replicas[i, t], inst.options[i].group_gpus))
        if flags:
            bound = mb.LinearExpr.weighted_sum([flags[c.name] for c in mine], [c.bound_gpus for c in mine])
        else:
            bound = mine[0].bound_gpus
        if _most_gpus(by_t) > min(c.bound_gpus for c in mine):
            for t, pairs in sorted(by_t.items()):
                lhs = mb.LinearExpr.weighted_sum([v for v, _ in pairs], [g for _, g in pairs])
                milp.add_row(f"Site-{job}-{domain}-{t}", lhs <= bound)
        if flags:
            _domain_work(milp, job, options, mine, flags, extra)
        if flags and any(c.node_config for c in mine):
            _node_exclusion(milp, job, options, mine, flags)


def _domain_work(milp: Milp, job: str, options: list[int], mine: list[Choice], flags: dict, extra: float) -> None:
    required = asked_work(milp, job)
    terms = [(milp.replicas[i, t], replica_work(milp, i, t)) for i in options for t in milp.inst.options[i].periods]
    lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [w for _, w in terms])
    rhs = mb.LinearExpr.weighted_sum([flags[c.name] for c in mine], [required / c.factor + extra for c in mine])
    milp.add_row(f"Site-{job}-{mine[0].domain}-work", lhs <= rhs)
    need = mb.LinearExpr.weighted_sum([flags[c.name] for c in mine], [required / c.factor for c in mine])
    milp.add_row(need_row(job, mine[0].domain), lhs >= need)


def need_row(job: str, domain: str) -> str:
    """Name of the row asking a synchronous job's work of one fabric domain when it is chosen."""
    return f"Site-{job}-{domain}-need"


def _node_exclusion(milp: Milp, job: str, options: list[int], mine: list[Choice], flags: dict) -> None:
    """A configuration is usable only under a choice that holds it (its own node tier or a domain tier)."""
    inst = milp.inst
    for i in options:
        opt = inst.options[i]
        holding = [c for c in mine if c.node_config in (None, opt.config)]
        variables = [milp.replicas[i, t] for t in opt.periods]
        most = sum(v.upper_bound for v in variables)
        rhs = mb.LinearExpr.sum([flags[c.name] for c in holding])
        milp.add_row(f"Site-{job}-{opt.config}-only", mb.LinearExpr.sum(variables) <= most * rhs)


def _most_gpus(by_t: dict) -> float:
    """The most GPUs the variables' own bounds allow in any one period."""
    return max((sum(var.upper_bound * g for var, g in pairs) for pairs in by_t.values()), default=0)


def chosen(milp: Milp, job: str, value) -> Choice | None:
    """The choice a solved plan made for a synchronous job (value: variable → number)."""
    choices = milp.choices.get(job)
    if not choices:
        return None
    if len(choices) == 1:
        return choices[0]
    return max(choices, key=lambda c: value(milp.sites[job, c.name]))

"""Synchronous jobs at single-node speed that share a configuration: placed on nodes, not counted.

Why: the Use row (solver.milp.assignment) counts a period's GPUs against its rented
nodes, which is exact for groups of sizes that divide a node (1, 2, 4, 8 on 8-GPU
nodes pack by count). A job that runs at single-node speed is not a set of loose
groups but one bundle that must sit inside one node. Several such bundles can fit by
count and still not fit: jobs of 4, 6 and 6 GPUs on two 8-GPU nodes (16 GPUs) leave
the 4 split over the two leftovers of 2. One such job is enough where node shares do
not divide one another or a group spans nodes. So where jobs may choose the single-node
tier of one configuration in one period, that period's nodes can be modelled as slots,
one per such job (at most as many as the configuration's nodes):

  bundle in one slot:   Σ_s a[j,s] ≤ z[j]                 (z[j]: j chose this node tier)
  bundle size:          Σ_s u[j,s] = e_j·m[j,o,t] when z[j] = 1, else 0
  slot capacity:        Σ_j u[j,s] + Σ_c c·q[c,s] ≤ gpn·open[s],   u[j,s] ≤ gpn·a[j,s]
  other groups:         q[c,s] groups of node share c (< gpn) go into a slot's leftover,
                        and any GPUs of groups spanning nodes; the rest are counted on
                        the nodes no slot uses:
                        Σ e·m − Σ u − Σ c·q ≤ gpn·(n[o,t] − Σ_s open[s])
  slots are nodes:      Σ_s open[s] ≤ n[o,t]

Within one node any groups fit when their GPUs do, so a slot's row is exact; on the
free nodes counting stays what it is everywhere else. Symmetry: the slots are
interchangeable, so job number i (in a fixed order) only goes into slots 0..i and
open slots come first — every packing can be relabelled that way.
Rows `Pack-<o>-<t>-…`.

The rows are added lazily (solver.engine.solve re-solves then): they cost a lot (large
synthetic instance: 61k variables instead of 45k, and a 60-s solve ended at a 24% gap
instead of 1.6%), and a plan rarely needs them. A cell is checked by placing the
bundles first-fit decreasing and the other groups into their leftovers, largest first:
when that fits, the plan fits. When some cell does not, it gets its rows, and so does
every cell where two or more such jobs may run, so that one more solve is usually the
last (each round without them found the next cell: 40 single-node jobs over 10 days
took four solves and 491 s; with them, two solves).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.milp.assignment import node_share
from solver.milp.core import Milp

@dataclass(frozen=True)
class Bundle:
    """A job that may run inside one node of the configuration: its replicas there and its choice flag."""

    job: str
    replicas: mb.Variable
    share: float               # node share of one group (GPUs of the node it takes)
    flag: mb.Variable | None   # None: the node tier is the job's only choice


def add_node_packing(milp: Milp, cells: Iterable[tuple[str, int]] | None = None) -> None:
    """Slot rows for these (configuration, period) cells, or for every cell where two or more
    single-node jobs may run."""
    bundles = _bundles(milp)
    if cells is None:
        cells = [cell for cell, found in bundles.items() if len(found) >= 2]
    for key, t in cells:
        if bundles.get((key, t)) and f"Pack-{key}-{t}-slots" not in milp.rows:
            _pack(milp, key, t, bundles[key, t])


def occupied(milp: Milp, value: Callable[[mb.Variable], float]) -> list[tuple[str, int]]:
    """Cells where the plan runs some single-node job inside one node."""
    return [cell for cell, bundles in _bundles(milp).items() if _chosen(bundles, value)]


def _chosen(bundles: list[Bundle], value: Callable[[mb.Variable], float]) -> list[Bundle]:
    return [b for b in bundles if (b.flag is None or value(b.flag) > 0.5) and round(value(b.replicas)) > 0]


def unpacked(milp: Milp, value: Callable[[mb.Variable], float]) -> list[tuple[str, int]]:
    """Cells without slot rows where the plan's single-node jobs may not fit the rented nodes.

    Cells with one such job are checked too: counting is exact beside it only when node
    shares divide one another and no group spans nodes (a 4-GPU job beside an 8-GPU group
    on 6-GPU nodes fits by count, not on the nodes)."""
    out = []
    for (key, t), bundles in _bundles(milp).items():
        if f"Pack-{key}-{t}-slots" in milp.rows:
            continue
        chosen = _chosen(bundles, value)
        if not chosen:
            continue
        gpn = milp.inst.configs[key].offer.gpus_per_node
        groups = {c: sum(round(value(v)) for v in vs) for c, vs in _groups(milp, key, t).items()}
        for b in chosen:
            groups[b.share] -= round(value(b.replicas))
        sizes = [b.share * round(value(b.replicas)) for b in chosen]
        if not _first_fit(round(value(milp.nodes[key, t])), gpn, sizes, groups):
            out.append((key, t))
    return out


def _first_fit(nodes: int, gpn: int, bundles: list[float], groups: dict[float, int]) -> bool:
    """Bundles first-fit decreasing, then other groups into the leftovers largest first, the
    rest counted on the nodes no bundle uses; groups bigger than a node take any GPUs left:
    a placement when it returns True."""
    lefts: list[float] = []
    for size in sorted(bundles, reverse=True):
        k = next((k for k, left in enumerate(lefts) if size <= left + 1e-9), None)
        if k is None:
            lefts.append(gpn - size)
        else:
            lefts[k] -= size
    if len(lefts) > nodes:
        return False
    rest = 0.0
    for share in sorted((c for c in groups if c <= gpn), reverse=True):  # a whole-node group fits no leftover
        n = groups[share]
        for k in sorted(range(len(lefts)), key=lambda k: lefts[k]):
            fit = min(n, int((lefts[k] + 1e-9) // share))
            lefts[k] -= fit * share
            n -= fit
        rest += n * share
    free = gpn * (nodes - len(lefts))
    spanning = sum(c * n for c, n in groups.items() if c > gpn)
    return rest <= free + 1e-9 and rest + spanning <= free + sum(lefts) + 1e-9


def _bundles(milp: Milp) -> dict[tuple[str, int], list[Bundle]]:
    inst = milp.inst
    option_of = {(opt.job, opt.config): i for i, opt in enumerate(inst.options)}
    out: dict[tuple[str, int], list[Bundle]] = defaultdict(list)
    for job, choices in sorted(milp.choices.items()):
        for choice in choices:
            if choice.node_config is None:
                continue
            i = option_of[job, choice.node_config]
            opt, gpn = inst.options[i], inst.configs[choice.node_config].offer.gpus_per_node
            for t in opt.periods:
                out[choice.node_config, t].append(Bundle(job, milp.replicas[i, t], node_share(opt.group_gpus, gpn),
                                                         milp.sites.get((job, choice.name))))
    return out


def _pack(milp: Milp, key: str, t: int, bundles: list[Bundle]) -> None:
    model = milp.model
    gpn = milp.inst.configs[key].offer.gpus_per_node
    name = f"Pack-{key}-{t}"
    slots = range(min(len(bundles), round(milp.nodes[key, t].upper_bound)))
    opened = [model.new_bool_var(f"open[{key},{t},{s}]") for s in slots]
    inside: dict[int, list[mb.Variable]] = defaultdict(list)     # slot → bundle GPUs in it
    bundled: dict[float, list[mb.Variable]] = defaultdict(list)  # node share → bundle GPUs of that share
    for j, bundle in enumerate(bundles):
        sizes = _place(milp, name, key, t, bundle, slots[: j + 1])  # job number j: slots 0..j
        for s, u in enumerate(sizes):
            inside[s].append(u)
        bundled[bundle.share].extend(sizes)
    groups = _groups(milp, key, t)
    fillers: dict[float, list[mb.Variable]] = defaultdict(list)  # node share → groups put in slots
    for s in slots:
        q = {c: model.new_int_var(0, int(gpn // c), f"q[{key},{t},{c:g},{s}]") for c in groups if c < gpn}
        if any(c > gpn for c in groups):  # a group spanning nodes may take any GPUs left
            q[gpn] = model.new_num_var(0, gpn, f"q[{key},{t},span,{s}]")
        for c, var in q.items():
            fillers[c].append(var)
        lhs = mb.LinearExpr.sum(inside[s]) + mb.LinearExpr.weighted_sum(list(q.values()), [c if c < gpn else 1 for c in q])
        milp.add_row(f"{name}-slot-{s}", lhs <= gpn * opened[s])
        if s:
            milp.add_row(f"{name}-order-{s}", opened[s] <= opened[s - 1])
    for c, qs in fillers.items():  # groups in slots come from outside the bundles
        if c < gpn:
            milp.add_row(f"{name}-share-{c:g}", c * mb.LinearExpr.sum(qs) + mb.LinearExpr.sum(bundled[c])
                         <= c * mb.LinearExpr.sum(groups[c]))
        else:
            spanning = [(v, share) for share, vs in groups.items() if share > gpn for v in vs]
            milp.add_row(f"{name}-span", mb.LinearExpr.sum(qs) <= mb.LinearExpr.weighted_sum(
                [v for v, _ in spanning], [share for _, share in spanning]))
    nodes = milp.nodes[key, t]
    milp.add_row(f"{name}-slots", mb.LinearExpr.sum(opened) <= nodes)
    everything = mb.LinearExpr.weighted_sum([v for c, vs in groups.items() for v in vs],
                                            [c for c, vs in groups.items() for _ in vs])
    placed = mb.LinearExpr.sum([u for us in inside.values() for u in us]) + mb.LinearExpr.weighted_sum(
        [q for qs in fillers.values() for q in qs], [c if c < gpn else 1 for c, qs in fillers.items() for _ in qs])
    milp.add_row(f"{name}-free", everything - placed <= gpn * (nodes - mb.LinearExpr.sum(opened)))


def _place(milp: Milp, name: str, key: str, t: int, bundle: Bundle, slots: range) -> list[mb.Variable]:
    """One bundle's GPUs per slot it may use: all in one slot when its job chose the node tier, else none."""
    model = milp.model
    gpn = milp.inst.configs[key].offer.gpus_per_node
    chosen, sizes = [], []
    for s in slots:
        a = model.new_bool_var(f"a[{key},{t},{bundle.job},{s}]")
        u = model.new_num_var(0, gpn, f"u[{key},{t},{bundle.job},{s}]")
        milp.add_row(f"{name}-{bundle.job}-{s}", u <= gpn * a)
        chosen.append(a)
        sizes.append(u)
    milp.add_row(f"{name}-{bundle.job}-one", mb.LinearExpr.sum(chosen) <= (1 if bundle.flag is None else bundle.flag))
    gpus = bundle.share * bundle.replicas
    off = 0 if bundle.flag is None else bundle.share * bundle.replicas.upper_bound * (1 - bundle.flag)
    milp.add_row(f"{name}-{bundle.job}-in", mb.LinearExpr.sum(sizes) >= gpus - off)
    milp.add_row(f"{name}-{bundle.job}-le", mb.LinearExpr.sum(sizes) <= gpus)
    return sizes


def _groups(milp: Milp, key: str, t: int) -> dict[float, list[mb.Variable]]:
    """Every job's replicas on (key, t), by the node share of their group."""
    inst = milp.inst
    gpn = inst.configs[key].offer.gpus_per_node
    out: dict[float, list[mb.Variable]] = defaultdict(list)
    for i, opt in enumerate(inst.options):
        if opt.config == key and (i, t) in milp.replicas:
            out[node_share(opt.group_gpus, gpn)].append(milp.replicas[i, t])
    return out

"""Exact pruning: drop configurations that another option of the same offer dominates.

A configuration B (an offer with one interconnect option) is dropped, for every job, when
another configuration A of the *same offer* is at least as good for every job that may
use B:

- A costs no more per node: node_cost_hour and node_cost_term (rent + interconnect +
  platform fee) are ≤ B's;
- every job with an option on B has one on A, and both run independent replicas
  (JobOption.domain None: no fabric domain, no single-site row), with the same group size,
  A's periods ⊇ B's, A's rate × tier factor ≥ B's and no fewer replicas in the tier.

Why nothing cheaper is lost. Take any plan that rents B; rent each of B's nodes on A
instead (the same periods, the same contract starts) and run every replica of B there.
Every row B entered is then no tighter:
- stock: the offer's interconnect options share one `Availability` row (max_nodes), and
  contracts keep their starts and terms (the offer's), so the sum is unchanged;
- power: one offer, one node_kw, one site: unchanged;
- lead time, term, storage and egress (per vendor and site), vendor counts, software
  stacks and preferences (which match site, vendor, mode and GPU, never the interconnect):
  the same offer, so unchanged;
- volume discount: counted per configuration and period (or contract start) on the rent,
  which is the offer's and equal on A and B; A's count becomes the sum of both, so every
  node discounted before still is;
- work: each replica does at least as much on A (same group, rate × factor no lower), in
  periods A also has, within A's replica bound;
- packing: A's nodes are the union of both sets of nodes, so the union of the placements
  fits.
The cost is no higher, so an optimum without B exists. Jobs with a fabric domain block the
rule: B's interconnect is part of the domain, so moving a synchronous job's replicas to A
would leave its domain (and its size tiers differ with the fabric).

Why not across offers (another vendor's cheaper twin, a cheaper monthly row of the same
card): each offer has its own stock. A plan may need the dearer offer's nodes because the
cheaper one is full, so dropping it can lose the optimum; no rule here bounds that.

Dropped configurations are recorded as exclusions with code "dominated", naming the
configuration that replaces them, so `why` can still say why a fabric was never used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from solver.milp.exclusion import Exclusion


class Config(Protocol):
    """What this module reads of solver.milp.instance.Config (a Protocol: instance.py calls
    this module, so importing it back would make a cycle)."""

    key: str
    offer: Any
    node_cost_hour: float
    node_cost_term: float


class JobOption(Protocol):
    """What this module reads of solver.milp.instance.JobOption."""

    job: str
    config: str
    group_gpus: int
    rate_flops: float
    tiers: Sequence[Any]
    periods: tuple[int, ...]
    domain: str | None


Option = TypeVar("Option", bound=JobOption)

TOLERANCE = 1e-12
"""Relative slack on cost and speed comparisons (floating point only, never a real difference)."""


def prune_dominated(options: list[Option], configs: dict[str, Config],
                    excluded: dict[str, list[Exclusion]]) -> list[Option]:
    """The options left once dominated configurations are dropped; adds their exclusions."""
    by_config: dict[str, dict[str, JobOption]] = defaultdict(dict)
    for opt in options:
        by_config[opt.config][opt.job] = opt
    siblings: dict[str, list[str]] = defaultdict(list)
    for key in by_config:
        siblings[configs[key].offer.offer].append(key)
    dropped: dict[str, str] = {}
    for keys in siblings.values():
        for b in sorted(keys):
            winner = next((a for a in sorted(keys) if a != b and a not in dropped
                           and _dominates(configs[a], configs[b], by_config[a], by_config[b])), None)
            if winner is not None:
                dropped[b] = winner
    for b, a in dropped.items():
        for job in by_config[b]:
            excluded[job].append(Exclusion("dominated", b, f"{a} costs no more and does at least as much"))
    return [o for o in options if o.config not in dropped]


def _dominates(a: Config, b: Config, on_a: dict[str, JobOption], on_b: dict[str, JobOption]) -> bool:
    """A can take every node and replica of B at no higher cost (the module docstring's rule)."""
    if not (_no_more(a.node_cost_hour, b.node_cost_hour) and _no_more(a.node_cost_term, b.node_cost_term)):
        return False
    if (a.node_cost_hour, a.node_cost_term) == (b.node_cost_hour, b.node_cost_term) and a.key > b.key:
        return False  # equal twins: keep the first by key, so exactly one of them stays
    return all(job in on_a and _option_dominates(on_a[job], opt) for job, opt in on_b.items())


def _option_dominates(a: JobOption, b: JobOption) -> bool:
    if a.domain is not None or b.domain is not None or a.group_gpus != b.group_gpus:
        return False
    if not set(b.periods) <= set(a.periods) or len(a.tiers) != 1 or len(b.tiers) != 1:
        return False
    ta, tb = a.tiers[0], b.tiers[0]
    return ta.max_replicas >= tb.max_replicas and \
        a.rate_flops * ta.factor >= b.rate_flops * tb.factor * (1 - TOLERANCE)


def _no_more(a: float, b: float) -> bool:
    return a <= b * (1 + TOLERANCE) + TOLERANCE

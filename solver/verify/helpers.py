"""The verifier's own readings of money, terms and work: one copy each, shared by its rules
(solver.verify.rules) and its check of the shown fields (solver.verify.shown).

Why its own and not the MILP's (solver.model.catalog's costs, solver.milp.instance.job_flops):
the verifier re-derives every rule in code of its own, so a wrong coefficient in the model is
caught where two readings disagree. What a price unit *means* (a month is 30 days) is not a
reading but a definition: that stays in solver.model.modes.UNIT_DAYS, for both.
"""

from __future__ import annotations

from solver.estimate.flops import training_flops
from solver.model.catalog import Offer
from solver.model.modes import UNIT_DAYS
from solver.model.problem import Job

TOL_MONEY = 1.0
TOL_REL = 1e-6


def unit_days(offer: Offer) -> float:
    """Days in one unit of the offer's price (its price_unit's last word: hour, month, year)."""
    return UNIT_DAYS[offer.price_unit.rsplit("_", 1)[1]]


def term_days(offer: Offer) -> float:
    """Days a contract on the offer lasts (and is paid for): its minimum term, at least one price unit."""
    return max(offer.min_term_days, unit_days(offer))


def node_parts(offer: Offer, ic: str, days: float, nodes: int) -> dict[str, float]:
    """Money in the offer's currency for `nodes` nodes over `days`, split as the breakdown is:
    GPU rent and interconnect at list price, the platform fee on both, and the volume discount
    (negative) on the rent and its fee. An offer without interconnect prices pays none."""
    units = days / unit_days(offer)
    rent = offer.price * (offer.gpus_per_node if "_gpu_" in offer.price_unit else 1) * units * nodes
    link = offer.interconnect_price[offer.interconnect.index(ic)] * units * nodes if offer.interconnect_price else 0.0
    fee = offer.platform_fee_pct / 100
    discounted = offer.discount_from_gpus is not None and nodes * offer.gpus_per_node >= offer.discount_from_gpus
    discount = -rent * (offer.discount_pct or 0) / 100 * (1 + fee) if discounted else 0.0
    return {"gpu_rent": rent, "interconnect": link, "platform_fee": (rent + link) * fee, "volume_discount": discount}


def node_cost(offer: Offer, ic: str, days: float, nodes: int) -> float:
    """Money in the offer's currency for `nodes` nodes over `days`: rent + interconnect, volume
    discount on rent, then the fee (the parts of node_parts added up)."""
    return sum(node_parts(offer, ic, days, nodes).values())


def job_flops(job: Job) -> float:
    """FLOPs the job needs once (its `flops`, else 6·N·D or its kind's rule), redundancy not included."""
    if job.flops is not None:
        return job.flops
    assert job.model is not None and job.tokens is not None
    return training_flops(job.model.params, job.tokens, job.kind, active_params=job.model.active_params,
                          trials=job.trials)


def node_share(group: int, gpn: int) -> float:
    """GPUs of nodes a group takes: a group inside one node may not straddle two."""
    return float(group) if group >= gpn else gpn / (gpn // group)


def restrict_ok(restrict, offer: Offer, ic: str) -> bool:
    """Whether a problem's or a job's restrict list allows the offer with that interconnect."""
    if restrict is None:
        return True
    checks = ((restrict.gpus, offer.gpu), (restrict.modes, offer.mode), (restrict.vendors, offer.vendor),
              (restrict.datacenters, offer.datacenter), (restrict.interconnects, ic),
              (restrict.offers, offer.offer))
    return all(not allow or value in allow for allow, value in checks)

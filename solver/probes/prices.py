"""negotiate's and the baselines' changes: an offer's price on the built model (`Reprice`), the
budget dropped, an offer's first periods (lead-time levers) and its stock (`Restock`)."""

from __future__ import annotations

from dataclasses import dataclass

from solver import api
from solver.probes.changes import Change, Limit, Undo
from solver.probes.engine import Probes



@dataclass(eq=False)
class Reprice(Change):
    """One offer's price column at `price` (in the offer's own currency): its rent, platform fee
    and volume discount coefficients, the budget row's, and the Instance its plans are read from,
    as a model built at that price would have them (solver.milp.reprice). Not tightening: every
    plan stays a plan, at another cost."""

    offer: str = ""
    price: float = 0.0
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        return api.reprice(milp, self.offer, self.price)


def reprice(offer: str, price: float) -> Reprice:
    return Reprice(f"offer {offer} at price {price:,.6g}", False, offer, price)


def no_budget(probes: Probes) -> Change:
    """The problem's budget dropped (the budget family's bound lifted): a relaxation, not tightening."""
    return Limit("budget dropped", False, api.BUDGET, "", None)


def early_nodes(probes: Probes, offer: str, stop: int, start: int = 0) -> list[api.Variable]:
    """The offer's node and contract variables of periods start ≤ t < stop (what a lead time
    ending in period `stop` rules out and one ending in `start` allows)."""
    configs = {key for key, cfg in probes.inst.configs.items() if cfg.offer.offer == offer}
    return ([v for (key, t), v in probes.milp.nodes.items() if key in configs and start <= t < stop]
            + [v for (key, s), v in probes.milp.contracts.items() if key in configs and start <= s < stop])


@dataclass(eq=False)
class Restock(Change):
    """One offer's stock at `most` nodes, by the stock family's hold (Deal.hold,
    solver.milp.families.stock.hold_stock: node and contract bounds not shut at 0, its
    `Availability` rows, the volume discounts widened where needed). Not its set_bound: that
    one sets every node variable of the offer, and would open the periods negotiate keeps shut
    before an offer's written lead time."""

    offer: str = ""
    most: int = 0
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        return api.AVAILABILITY.deal.hold(milp, self.offer, self.most)  # the stock family's own hold

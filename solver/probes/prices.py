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
    """One offer's stock at `most` nodes: its node and contract variables' bounds (those not
    shut at 0) and its `Availability` rows; its volume discounts' X̄ widened where the build's
    is smaller (solver.milp.capacity.widen_discount). Exact when the model was built with at
    least `most` nodes of stock (size tiers and cuts are preprocessing's, from the built stock).
    Not the availability family's set_bound: that one sets every node variable of the offer, and
    would open the periods negotiate keeps shut before an offer's written lead time."""

    offer: str = ""
    most: int = 0
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        configs = {key for key, cfg in milp.inst.configs.items() if cfg.offer.offer == self.offer}
        held = [v for (key, _), v in [*milp.nodes.items(), *milp.contracts.items()]
                if key in configs and v.upper_bound > 0]
        rows = [row for key, row in milp.family_rows("availability", self.offer).items() if not key.part]
        narrow = [(kt, v.upper_bound) for kt, v in milp.full_price.items() if kt[0] in configs and v.upper_bound < self.most]
        saved = [(v, v.upper_bound) for v in held], [(r, r.upper_bound) for r in rows]
        for v in held:
            v.upper_bound = self.most
        for r in rows:
            r.upper_bound = self.most
        for (key, t), _ in narrow:
            api.widen_discount(milp, key, t, self.most)

        def undo() -> None:
            for v, hi in saved[0]:
                v.upper_bound = hi
            for r, hi in saved[1]:
                r.upper_bound = hi
            for (key, t), built in narrow:
                api.widen_discount(milp, key, t, int(built))
        return undo

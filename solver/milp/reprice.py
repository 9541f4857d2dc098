"""One offer's price changed on a built model: its cost coefficients, the budget row's, and the
Instance its plans are read from.

Why here, on the formulation side: negotiate asks "the best plan at price p" many times. Asked
as a new problem, each answer cost an Instance, a model and a cold solve; here the built model
is changed where the price enters it and changed back. Where it enters (solver.milp.capacity,
solver.milp.instance.expand_offer):
- GPU rent: price × units per node-period or per term (scales with the price);
- interconnect: the option's surcharge (does not change);
- platform fee: a share of rent + interconnect (changes with the rent, not in proportion);
- volume discount: a share of rent and the fee on it (scales with the rent);
- the budget row `total cost ≤ budget` holds each variable's whole cost (its coefficients too).
The configurations are re-expanded from the re-priced offer with the build's own arithmetic
(`expand_offer`, `charge_parts`, `discount_unit`), so a probe at price p has exactly the
coefficients a model built from the catalog at price p would have.

The plan is read (solver.milp.extract: allocation costs, cash flow) from the Instance the
model stands for, so while the price holds, `milp.inst` is a view of the Instance with this
offer's configurations and catalog rows re-priced; the undo puts the built one back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ortools.linear_solver.python import model_builder as mb

from solver.milp.capacity import charge_parts, discount_unit
from solver.milp.core import Milp
from solver.milp.instance import Config, Instance, expand_offer
from solver.model.catalog import Catalog

Undo = Callable[[], None]


def with_offer_price(catalog: Catalog, offer: str, price: float) -> Catalog:
    """The catalog with one offer's price column replaced (in that catalog's money for it)."""
    offers = dict(catalog.offers)
    offers[offer] = offers[offer].model_copy(update={"price": price})
    return catalog.model_copy(update={"offers": offers})


def repriced_instance(inst: Instance, offer: str, price: float) -> Instance:
    """The Instance as built from the catalog with `offer` at `price` (in the offer's own
    currency, as the catalog gives it): its catalog rows and configurations re-priced, all else
    the same objects (the timeline, the job options, the exclusions)."""
    given = inst.as_given or inst.catalog
    rate = inst.problem.rates()[given.offers[offer].currency]
    catalog = with_offer_price(inst.catalog, offer, price * rate)
    configs = dict(inst.configs)
    for cfg in expand_offer(catalog.offers[offer], catalog, inst.timeline):
        if cfg.key in configs:  # a configuration the build left out stays out
            configs[cfg.key] = cfg
    return dataclasses.replace(inst, catalog=catalog, configs=configs,
                               as_given=with_offer_price(given, offer, price))


def repriced_coefficients(milp: Milp, view: Instance, offer: str) -> dict[tuple[str, int], float]:
    """(cost part, position in milp.cost[part]) → the coefficient under `view`'s prices, for
    every cost term of the offer's variables: rent, interconnect and fee of each node-period
    (hourly) or contract (committed), and each volume discount's pair."""
    where = {(part, var.index): k for part, terms in milp.cost.items() for k, (var, _) in enumerate(terms)}
    out: dict[tuple[str, int], float] = {}

    def put(part: str, var: mb.Variable, coef: float) -> None:
        k = where.get((part, var.index))
        if k is not None:
            out[part, k] = coef
        elif abs(coef) > 1e-9:
            raise ValueError(f"re-pricing {offer}: {var.name} has no {part} term to change")

    for (key, t), var in _charged(milp, view, offer):
        cfg: Config = view.configs[key]
        amount = cfg.node_cost_term if cfg.committed else cfg.node_cost_hour * view.hours[t]
        for part, coef in charge_parts(cfg, amount).items():
            put(part, var, coef)
    for (key, t), full in milp.full_price.items():
        cfg = view.configs[key]
        if cfg.offer.offer != offer:
            continue
        x = (milp.contracts if cfg.committed else milp.nodes)[key, t]
        share = cfg.offer.discount_pct / 100 * discount_unit(view, cfg, t)
        put("volume_discount", x, -share)
        put("volume_discount", full, share)
    return out


def _charged(milp: Milp, view: Instance, offer: str) -> list[tuple[tuple[str, int], mb.Variable]]:
    """The variables the offer's node costs are charged on: contract starts (committed), nodes
    held per period (hourly, spot)."""
    out = []
    for key, cfg in view.configs.items():
        if cfg.offer.offer != offer:
            continue
        held = milp.contracts if cfg.committed else milp.nodes
        out += [((k, t), var) for (k, t), var in held.items() if k == key]
    return out


def reprice(milp: Milp, offer: str, price: float) -> Undo:
    """Set `offer`'s price to `price` (its own currency) on the built model: objective, budget
    row and `milp.inst` as a model built at that price would have them. Returns the undo."""
    built = milp.inst
    view = repriced_instance(built, offer, price)
    coefs = repriced_coefficients(milp, view, offer)
    saved = {pk: milp.cost[pk[0]][pk[1]] for pk in coefs}
    for (part, k), coef in coefs.items():
        milp.cost[part][k] = (milp.cost[part][k][0], coef)
    budget_undo = _rebudget(milp, {milp.cost[part][k][0] for part, k in coefs})
    milp.inst = view
    milp.model.minimize(milp.total_cost())

    def undo() -> None:
        for (part, k), term in saved.items():
            milp.cost[part][k] = term
        budget_undo()
        milp.inst = built
        milp.model.minimize(milp.total_cost())
    return undo


def _rebudget(milp: Milp, variables: set[mb.Variable]) -> Undo:
    """The budget row's coefficients of `variables` set to their whole cost now (a variable's
    cost is the sum of its terms over every cost part); nothing when there is no budget row."""
    row = milp.rows.get("Budget")
    if row is None:
        return lambda: None
    total: dict[int, float] = {}
    for terms in milp.cost.values():
        for var, coef in terms:
            total[var.index] = total.get(var.index, 0.0) + coef
    changed = sorted(variables, key=lambda v: v.index)
    helper = milp.model.helper
    stored = dict(zip(helper.constraint_var_indices(row.index), helper.constraint_coefficients(row.index)))
    before = [(var, stored.get(var.index, 0.0)) for var in changed]
    for var in changed:
        row.set_coefficient(var, total.get(var.index, 0.0))

    def undo() -> None:
        for var, coef in before:
            row.set_coefficient(var, coef)
    return undo


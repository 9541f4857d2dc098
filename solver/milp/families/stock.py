"""The stock family (`availability`): an offer's interconnect options share its `max_nodes`
(rows `Availability-<offer>-<t>`; elastic `Stock-<offer>-<t>` rows put it back with a slack),
its bound on a built model, and its every part (solver.milp.family)."""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.i18n import N_, ngettext
from solver.milp import binding, elastic
from solver.milp.capacity import held_nodes
from solver.milp.core import Milp, RowKey
from solver.milp.family import NotApplicable, NODES, Bound, Family, Labels, Lost, Relax, Rows, Step, plural, whole
from solver.model.catalog import Catalog
from solver.model.paths import row_path
from solver.model.problem import Problem
from solver.verify import _Verifier

TOL = 1e-6


def add_availability(milp: Milp) -> None:
    """Σ_{o of offer} held[o,t] ≤ max_nodes: interconnect options of one offer share its stock,
    and a contract holds it to its last day (held_nodes).

    Row `Availability-<offer>-<t>`.
    """
    by_offer: dict[tuple[str, int], list[mb.Variable]] = defaultdict(list)
    for (key, t), variables in held_nodes(milp).items():
        by_offer[milp.inst.configs[key].offer.offer, t].extend(variables)
    for (offer, t), variables in by_offer.items():
        if len(variables) > 1:
            cap = milp.inst.catalog.offers[offer].max_nodes
            milp.add_row(f"Availability-{offer}-{t}", mb.LinearExpr.sum(variables) <= cap,
                         RowKey("availability", offer, t))


def offer_variables(milp: Milp, offer: str) -> list[mb.Variable]:
    """The node and contract variables of every interconnect option of `offer`."""
    configs = milp.inst.configs
    held = [*milp.nodes.items(), *milp.contracts.items()]
    return [var for (key, _), var in held if configs[key].offer.offer == offer]


def stock_bound(milp: Milp, offer: str) -> float | None:
    """The nodes of `offer` the built model lets a plan hold at once (its variables' bounds and
    its stock rows, elastic `Stock` rows included); None: the offer has no capacity in the model."""
    variables = offer_variables(milp, offer)
    if not variables:
        return None
    rows = [row.upper_bound for row in milp.family_rows("availability", offer).values()]
    return min([max(var.upper_bound for var in variables), *rows])


def set_stock_bound(milp: Milp, offer: str, nodes: float | None) -> None:
    """At most `nodes` of `offer` held at once on the built model (None: the catalog's
    `max_nodes` again); at most the catalog's stock.

    Why not above it: preprocessing (size tiers, a domain too small for a job), the volume
    discount's rows and the site rows' big-Ms were built from the written stock, so a model
    with more would not be the model of a catalog with more. Lowering it is exact (those
    bounds stay valid, only looser). For more stock solve an elastic model
    (solver.milp.elastic.stock_slacks) or rebuild from the edited catalog."""
    written = milp.inst.catalog.offers[offer].max_nodes
    cap = written if nodes is None else nodes
    if cap > written:
        raise ValueError(f"stock of {offer}: {cap:g} nodes is above the catalog's {written}; "
                         "rebuild from the edited catalog, or use the elastic stock slack")
    for var in offer_variables(milp, offer):
        var.upper_bound = cap
    for key, row in milp.family_rows("availability", offer).items():
        if not key.part:
            row.upper_bound = cap


def _availability_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    n = 1 if amount is None else amount
    return Step([f"{row_path('offers', 'offer', target)}.max_nodes+={n}"], f"+{n} {plural(n, 'node')} of {target}"
                if amount is not None else f"+1 node of {target}", n)


def _stock_scale(milp: Milp, offer: str) -> tuple[float, float]:
    cap = milp.inst.catalog.offers[offer].max_nodes
    return 1 / cap, cap



def more_nodes(amount: float, offer: str, unit: str) -> str:
    return ngettext("{amount} more node of {offer}", "{amount} more nodes of {offer}", whole(amount)).format(
        amount=f"{whole(amount):,}", offer=offer)


FAMILY = Family(
    name="availability", order=30, unit="nodes", targets="offer",
    rows=Rows(add_availability, ("Availability", "Stock"), NODES),
    bounds=Bound(stock_bound, set_stock_bound,
                 NotApplicable("only lowered on a built model: a plan then meets the written stock")),
    labels=Labels(N_("availability"), N_("availability of {name}, days {span}: all {limit} nodes"), more_nodes),
    slack=elastic.stock_slacks,
    binding=binding.availability_binding,
    relax=Relax("together", limit=lambda problem, catalog, offer: catalog.offers[offer].max_nodes,
                edits=lambda a, offer, horizon: [f"{row_path('offers', 'offer', offer)}.max_nodes+={whole(a)}"],
                words=lambda a, offer, horizon, unit: f"{whole(a)} more {plural(a, 'node')} of {offer}",
                over=elastic.stock_over),
    lever=_availability_lever,
    lost=Lost("availability", scale=_stock_scale,
              words=lambda milp, offer, amount, limit: (f"{offer} has {limit:,.0f} nodes; the plan forced onto it "
                                                        f"needs {limit + _ceil(amount):,.0f} at once")),
    verify=_Verifier._availability,
)


def _ceil(x: float) -> int:
    return math.ceil(x - TOL)

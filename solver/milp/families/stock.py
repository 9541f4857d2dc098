"""The stock family (`availability`): an offer's interconnect options share its `max_nodes`
(rows `Availability-<offer>-<t>`; elastic `Stock-<offer>-<t>` rows put it back with a slack),
its bound on a built model, and its every part (solver.milp.family)."""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.i18n import N_, _, ngettext
from solver.milp.binding import days_of, runs
from solver.milp.capacity import held_nodes, widen_discount
from solver.milp.core import Milp, RowKey
from solver.milp.family import NotApplicable, NODES, Bound, Deal, Family, Labels, Lost, Relax, Rows, Step, plural, whole
from solver.milp.solution import Solution
from solver.model.catalog import Catalog
from solver.model.paths import row_path
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem

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
    (stock_slacks) or rebuild from the edited catalog."""
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


# --- slack, binding, check: the parts an analysis and the verifier ask -------------------------

def stock_slack(milp: Milp, caps: dict[str, int], factor: int) -> dict[str, mb.Variable]:
    """Rows Σ_{options of o} held[o,t] − s_o ≤ cap_o (`Stock-<o>-<t>`), integer s_o ≤ (factor − 1)·cap_o.

    The caller has already raised the variables' own bounds (or built the model from a
    catalog with raised caps), so these rows alone put the written stock back.
    held: capacity.held_nodes, the nodes a contract holds to its term's last day.
    """
    by_offer: dict[str, dict[int, list]] = {}
    for (key, t), variables in held_nodes(milp).items():
        by_offer.setdefault(milp.inst.configs[key].offer.offer, {}).setdefault(t, []).extend(variables)
    out = {}
    for offer, periods in sorted(by_offer.items()):
        cap = caps[offer]
        s = milp.model.new_int_var(0, cap * (factor - 1), f"slack[stock,{offer}]")
        for t, variables in sorted(periods.items()):
            milp.add_row(f"Stock-{offer}-{t}", mb.LinearExpr.sum(variables) - s <= cap,
                         RowKey("availability", offer, t, part="stock"))
        out[offer] = s
    return out


def stock_slacks(milp: Milp, targets=None, caps: dict[str, int] | None = None,
                 factor: int = 1) -> dict[str, mb.Variable]:
    """Slack on every offer's stock. `caps` given: the model was built from a catalog whose
    caps are `caps` × factor (solver.analysis.explain). `caps` None: the model was built at
    its written caps, which are raised ×factor here first (node and contract bounds, the
    volume discount's rows, the `Availability` rows lifted), then put back by the stock rows."""
    if caps is None:
        caps = _raise_stock(milp, factor)
    return stock_slack(milp, caps, factor)


def _raise_stock(milp: Milp, factor: int) -> dict[str, int]:
    inst = milp.inst
    caps = {o: inst.catalog.offers[o].max_nodes for o in {inst.configs[key].offer.offer for key, _ in milp.nodes}}
    raised = {o: cap * factor for o, cap in caps.items()}
    for (key, _), var in [*milp.nodes.items(), *milp.contracts.items()]:
        var.upper_bound = raised[inst.configs[key].offer.offer]
    for key, t in milp.full_price:
        widen_discount(milp, key, t, raised[inst.configs[key].offer.offer])
    for key, row in milp.family_rows("availability").items():
        if not key.part:
            row.upper_bound = math.inf
    return caps


def stock_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    """Nodes over each offer's written max_nodes at the plan's peak."""
    milp = sol.milp
    held: dict[tuple[str, int], int] = {}
    for (key, t), variables in held_nodes(milp).items():
        offer = milp.inst.configs[key].offer.offer
        held[offer, t] = held.get((offer, t), 0) + sum(sol.count(var) for var in variables)
    out = []
    for offer in sorted({o for o, _ in held}):
        if targets is None or offer in targets:
            over = max(n for (o, _), n in held.items() if o == offer) - written.offers[offer].max_nodes
            if over > 0:
                out.append((offer, over))
    return out


def availability_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    inst = sol.milp.inst
    held: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for (key, t), variables in held_nodes(sol.milp).items():
        held[inst.configs[key].offer.offer][t] += sum(sol.count(var) for var in variables)
    out = []
    for offer, by_t in held.items():
        cap = inst.catalog.offers[offer].max_nodes
        for first, last in runs([t for t, n in by_t.items() if n >= cap]):
            start, end = days_of(sol, first, last)
            out.append(Binding(kind="availability", name=offer, start_day=start, end_day=end, used=cap, limit=cap,
                               unit="nodes", text=f"availability of {offer}, days {start}–{end}: all {cap} nodes"))
    return out


def check_stock(v) -> None:
    """The verifier's rule, day by day over each contract's whole term (not only the periods it
    may be used in): a vendor's nodes stay rented to its last day (v: solver.verify.rules.Verifier)."""
    per_offer: dict[tuple[str, int], int] = defaultdict(int)
    for name, day, nodes in v.held_days():
        per_offer[name, day] += nodes
    for (name, day), nodes in sorted(per_offer.items()):
        if nodes > v.cat.offers[name].max_nodes:
            v.fail(f"availability: {nodes} nodes of {name} on day {day}, "
                   f"max_nodes is {v.cat.offers[name].max_nodes}")


def stock_held_in_full(plan, milp: Milp, values: dict[int, float], catalog: Catalog) -> list[str]:
    """negotiate's targets: offers whose written stock the plan holds in full in some period,
    read from the model's values (its own rows may hold a raised stock: negotiate's model)."""
    held: dict[str, int] = {}
    for (key, t), variables in held_nodes(milp).items():
        offer = milp.inst.configs[key].offer.offer
        n = sum(round(values.get(v.index, 0.0)) for v in variables)
        held[offer] = max(held.get(offer, 0), n)
    return [offer for offer, peak in held.items() if peak >= catalog.offers[offer].max_nodes]


def hold_stock(milp: Milp, offer: str, most: float):
    """One offer's stock at `most` nodes: its node and contract variables' bounds (those not shut
    at 0: negotiate shuts the periods before a written lead time) and its `Availability` rows;
    its volume discounts' X̄ widened where the build's is smaller (widen_discount); → undo.
    Exact when the model was built with at least `most` nodes of stock (size tiers and cuts are
    preprocessing's, from the built stock): ValueError where it was not."""
    built = milp.inst.catalog.offers[offer].max_nodes
    if most > built:
        raise ValueError(f"stock of {offer}: {most:g} nodes, the model was built with {built}")
    most = int(most)
    configs = {key for key, cfg in milp.inst.configs.items() if cfg.offer.offer == offer}
    held = [v for (key, _), v in [*milp.nodes.items(), *milp.contracts.items()] if key in configs and v.upper_bound > 0]
    rows = [row for key, row in milp.family_rows("availability", offer).items() if not key.part]
    narrow = [(kt, v.upper_bound) for kt, v in milp.full_price.items() if kt[0] in configs and v.upper_bound < most]
    saved = [(v, v.upper_bound) for v in held], [(r, r.upper_bound) for r in rows]
    for v in held:
        v.upper_bound = most
    for r in rows:
        r.upper_bound = most
    for (key, t), _ in narrow:
        widen_discount(milp, key, t, most)

    def undo() -> None:
        for v, hi in saved[0]:
            v.upper_bound = hi
        for r, hi in saved[1]:
            r.upper_bound = hi
        for (key, t), was in narrow:
            widen_discount(milp, key, t, int(was))
    return undo


def raised_stock(catalog: Catalog, factor: int) -> tuple[Catalog, dict[str, int]]:
    """The catalog with every offer's stock × factor, and each offer's written max_nodes."""
    offers = {k: o.model_copy(update={"max_nodes": o.max_nodes * factor}) for k, o in catalog.offers.items()}
    return catalog.model_copy(update={"offers": offers}), {o.offer: o.max_nodes for o in catalog.offers.values()}


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
    labels=Labels(N_("availability"), N_("availability of {name}, days {span}: all {limit} nodes"), more_nodes,
                  lambda amount: _("+{n} nodes").format(n=f"{amount:g}")),
    slack=stock_slacks,
    binding=availability_binding,
    relax=Relax("together", limit=lambda problem, catalog, offer: catalog.offers[offer].max_nodes,
                edits=lambda a, offer, horizon: [f"{row_path('offers', 'offer', offer)}.max_nodes+={whole(a)}"],
                words=lambda a, offer, horizon, unit: f"{whole(a)} more {plural(a, 'node')} of {offer}",
                over=stock_over,
                says={"noun": "stock", "target": "offers", "smallest": "the fewest extra nodes",
                      "alone": "more stock (max_nodes) of the offers alone does not make it feasible"},
                where=NotApplicable("every offer at once, in one elastic solve"),
                lift=NotApplicable("a model has no variables past the stock: raised, never dropped"),
                raised=raised_stock),
    lever=_availability_lever,
    lost=Lost("availability", scale=_stock_scale,
              words=lambda milp, offer, amount, limit: (f"{offer} has {limit:,.0f} nodes; the plan forced onto it "
                                                        f"needs {limit + _ceil(amount):,.0f} at once"),
              without=NotApplicable("the nodes past the stock say what the forced plan needs"), window=False),
    deal=Deal("nodes", targets=stock_held_in_full, hold=hold_stock,
              no_room="more nodes not valued for {targets}: with them a job would take another layout there, "
                      "which this run's one model does not hold (whatif 'offers.NAME.max_nodes+={amount:g}' prices it)"),
    verify=check_stock,
)


def _ceil(x: float) -> int:
    return math.ceil(x - TOL)

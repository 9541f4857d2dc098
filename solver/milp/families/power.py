"""The power family: a quota per site and period for capacity whose draw counts against it
(hosted racks; rows `Power-<d>-<t>`), its bound on a built model, and its every part
(solver.milp.family)."""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.i18n import N_, _
from solver.milp.binding import days_of, runs
from solver.milp.capacity import held_nodes
from solver.milp.core import Milp, RowKey
from solver.milp.elastic import over_amount, stretch
from solver.milp.family import COSTS, Bound, Deal, Family, Labels, Lost, NotApplicable, Relax, Rows, Step, whole
from solver.milp.instance import Instance
from solver.milp.solution import Solution
from solver.model.catalog import Catalog
from solver.model.paths import row_path
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem


def add_power(milp: Milp) -> None:
    """Σ_{o at d, counts_power} node_kw_o·held[o,t] ≤ power_quota_kw_d   row `Power-<d>-<t>`.

    Seed 000: Beijing sites have limited power quota; hundreds of cards need it confirmed
    weeks ahead. Cloud instances (counts_power false) are the vendor's quota, not ours.
    A rack draws power to its contract's last day (capacity.held_nodes).
    """
    inst = milp.inst
    draw: dict[tuple[str, int], list[tuple[mb.Variable, float]]] = defaultdict(list)
    for (key, t), variables in held_nodes(milp).items():
        offer = inst.configs[key].offer
        if offer.counts_power:
            draw[offer.datacenter, t].extend((var, offer.node_kw) for var in variables)
    for (dc, t), terms in draw.items():
        quota = inst.catalog.datacenters[dc].power_quota_kw
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [kw for _, kw in terms])
        milp.add_row(f"Power-{dc}-{t}", lhs <= quota, RowKey("power", dc, t))


def power_bound(milp: Milp, dc: str) -> float | None:
    """The kW the built model allows at site `dc` in each period; None: no quota (or no
    capacity there counts power, so the model has no row for it)."""
    rows = milp.family_rows("power", dc)
    ups = {row.upper_bound for row in rows.values()}
    if not ups or all(math.isinf(u) for u in ups):
        return None
    return min(ups)


def written_power(milp: Milp, problem: Problem, catalog: Catalog) -> tuple[Problem, Catalog]:
    """The catalog with each site's quota as the model holds it (None: no quota, infinite kW).
    One pass over the keyed rows: this runs for every verified plan."""
    held: dict[str, float] = {}
    for key, row in milp.keyed.items():
        if key.family == "power":
            held[key.target] = min(held.get(key.target, math.inf), row.upper_bound)
    moved = {dc: kw for dc, kw in held.items() if kw != catalog.datacenters[dc].power_quota_kw}
    if not moved:
        return problem, catalog
    sites = {**catalog.datacenters, **{dc: catalog.datacenters[dc].model_copy(update={"power_quota_kw": kw})
                                       for dc, kw in moved.items()}}
    return problem, catalog.model_copy(update={"datacenters": sites})


def set_power_bound(milp: Milp, dc: str, kw: float | None) -> None:
    """Site `dc`'s quota in every period of the built model (None: no quota). The rows exist
    where the site's capacity counts power whatever the quota, so any value reads as a rebuild
    with that `power_quota_kw` would; a site without such capacity has no row and nothing to set.
    Elastic slack on the rows (power_slack) stays on top of the new quota."""
    for row in milp.family_rows("power", dc).values():
        row.upper_bound = math.inf if kw is None else kw


# --- slack, binding, check: the parts an analysis and the verifier ask -------------------------

def power_sites(milp: Milp) -> list[str]:
    """Datacenters with a power row in the model (capacity there counts against the quota)."""
    return milp.targets("power")


def power_sites_of(inst: Instance) -> dict[str, bool]:
    """Datacenters where an allowed offer draws against the quota → whether the model has any
    variable there (the explanation's targets, read from the Instance: no model needed)."""
    sites: dict[str, bool] = {}
    for cfg in inst.configs.values():
        if cfg.offer.counts_power:
            used = any(o.config == cfg.key for o in inst.options)
            sites[cfg.offer.datacenter] = sites.get(cfg.offer.datacenter, False) or used
    return dict(sorted(sites.items()))


def power_slack(milp: Milp, dc: str) -> mb.Variable:
    """s ≥ 0 in kW added to the site's quota in every period (its rows `Power-<dc>-<t>`)."""
    return stretch(milp, milp.family_rows("power", dc).values(), f"power,{dc}")


def power_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    return {dc: power_slack(milp, dc) for dc in (power_sites(milp) if targets is None else targets)}


def power_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    """kW over each site's quota in the plan's busiest period."""
    milp = sol.milp
    sites = set(power_sites(milp) if targets is None else targets)
    draw: dict[tuple[str, int], float] = {}
    for (key, t), variables in held_nodes(milp).items():
        offer = milp.inst.configs[key].offer
        if offer.counts_power and offer.datacenter in sites:
            n = sum(sol.count(var) for var in variables)
            draw[offer.datacenter, t] = draw.get((offer.datacenter, t), 0.0) + n * offer.node_kw
    out = []
    for dc in sorted(sites):
        peak = max((kw for (d, _), kw in draw.items() if d == dc), default=0.0)
        over = over_amount(peak, written.datacenters[dc].power_quota_kw)
        if over is not None:
            out.append((dc, over))
    return out


def power_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    inst = sol.milp.inst
    used: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    smallest: dict[str, float] = {}
    for (key, t), variables in held_nodes(sol.milp).items():
        offer = inst.configs[key].offer
        if offer.counts_power:
            used[offer.datacenter][t] += offer.node_kw * sum(sol.count(var) for var in variables)
            smallest[offer.datacenter] = min(smallest.get(offer.datacenter, offer.node_kw), offer.node_kw)
    out = []
    for dc, by_t in used.items():
        quota = inst.catalog.datacenters[dc].power_quota_kw
        tight = [t for t, kw in by_t.items() if kw > quota - smallest[dc] + 1e-9]
        for first, last in runs(tight):
            peak = max(by_t[t] for t in range(first, last + 1))
            start, end = days_of(sol, first, last)
            out.append(Binding(kind="power", name=dc, start_day=start, end_day=end, used=round(peak, 3), limit=quota,
                               unit="kW", text=f"power at {dc}, days {start}–{end}: {peak:,.1f} of {quota:,.1f} kW"))
    return out


def check_power(v) -> None:
    """The verifier's rule, day by day: a rack draws to its contract's last day
    (v: solver.verify.rules.Verifier; its held_days, not the model's)."""
    draw: dict[tuple[str, int], float] = defaultdict(float)
    for name, day, nodes in v.held_days():
        offer = v.cat.offers[name]
        if offer.counts_power:
            draw[offer.datacenter, day] += nodes * (offer.node_kw or 0.0)
    for (dc, day), kw in sorted(draw.items()):
        quota = v.cat.datacenters[dc].power_quota_kw
        if kw > quota + 1e-6:
            v.fail(f"power: {kw:.1f} kW at {dc} on day {day} exceeds the quota of {quota:.1f} kW")


def binding_sites(plan, milp: Milp, values: dict[int, float], catalog: Catalog) -> list[str]:
    """negotiate's targets: the sites whose quota the plan runs into (its binding power limits:
    the model's power rows are the written quotas), once each, in the plan's order."""
    return list(dict.fromkeys(b.name for b in plan.binding if b.kind == "power"))


def hold_power(milp: Milp, dc: str, kw: float):
    """Site `dc`'s quota at `kw` on the built model (any value: the rows exist whatever the quota); → undo."""
    before = power_bound(milp, dc)
    set_power_bound(milp, dc, kw)
    return lambda: set_power_bound(milp, dc, before)


def smallest_rack_kw(catalog: Catalog, dc: str) -> float:
    """The least kW one node draws against the site's quota (1 when none does): one meaningful unit."""
    kws = [o.node_kw for o in catalog.offers.values() if o.datacenter == dc and o.counts_power and o.node_kw]
    return min(kws) if kws else 1.0


def _power_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    kw = smallest_rack_kw(catalog, target) if amount is None else amount
    words = f"+{kw:g} kW at {target}" + (" (one rack)" if amount is None else "")
    return Step([f"{row_path('datacenters', 'datacenter', target)}.power_quota_kw+={kw:g}"], words, kw)


def _power_scale(milp: Milp, dc: str) -> tuple[float, float]:
    quota = milp.inst.catalog.datacenters[dc].power_quota_kw
    return 1 / max(quota, smallest_rack_kw(milp.inst.catalog, dc)), quota



def more_power(amount: float, dc: str, unit: str) -> str:
    return _("{amount} kW more at {site}").format(amount=f"{whole(amount):,}", site=dc)


FAMILY = Family(
    name="power", order=20, unit="kW", targets="datacenter",
    rows=Rows(add_power, ("Power",), COSTS),
    bounds=Bound(power_bound, set_power_bound, written_power),
    labels=Labels(N_("power"), N_("power at {name}, days {span}: {used} of {limit} kW"), more_power,
                  lambda amount: f"+{amount:g} kW"),
    slack=power_slacks,
    binding=power_binding,
    relax=Relax("each", limit=lambda problem, catalog, dc: catalog.datacenters[dc].power_quota_kw,
                edits=lambda a, dc, horizon: [f"{row_path('datacenters', 'datacenter', dc)}.power_quota_kw+={whole(a)}"],
                words=lambda a, dc, horizon, unit: f"{whole(a):,} kW more at {dc}",
                over=power_over,
                says={"noun": "power", "target": "any site", "all": "all sites",
                      "smallest": "the smallest power increase",
                      "smallest_all": "the smallest power increase at all sites",
                      "alone": "more power alone {where} does not make it feasible",
                      "where": "at {targets}", "each_or_all": " (one at a time or together)"},
                where=power_sites_of,
                lift=NotApplicable("relaxed site by site, never dropped"),
                raised=NotApplicable("a slack per site on the model as built")),
    lever=_power_lever,
    lost=Lost("power", scale=_power_scale,
              words=lambda milp, dc, amount, limit: (f"site quota at {dc}: needs {limit + amount:,.0f} kW, "
                                                     f"{limit:,.0f} kW available"),
              without=NotApplicable("the kW past the quota say what the forced plan needs"), window=False),
    deal=Deal("kw", targets=binding_sites, hold=hold_power,
              no_room="more power not valued at {targets}: the model has no room for {amount:g} kW more"),
    verify=check_power,
)

"""How far each offer's price would have to fall to enter the plan, estimated from one LP.

Why: negotiate prices every offer, and a run with a budget should spend it on the rows a
negotiator reads: the offers closest to entering. One LP relaxation of the built model gives
every variable's reduced cost d_v = c_v − Aᵀy (HiGHS' own, by dual simplex): what one more unit
of v would add to the LP's optimum. An offer's node variable v is charged its rent, which moves
with the price p at slope s_v = (GPU rent coefficient of v) × (1 + platform fee) / p per unit
of price, so the LP says the offer starts to pay once its price has fallen by d_v / s_v.
The least such fall over the offer's variables is its estimate.

An estimate only: it orders the work and chooses which question to ask first (solver.analysis
.negotiate), never a figure shown; the MILP's probes decide every number.
"""

from __future__ import annotations

import math

from datetime import timedelta

from solver.engine.export import to_mathopt
from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF
from solver.engine.progress import PROGRESS
from solver.milp.core import Milp


def reduced_costs(milp: Milp, time_limit: float | None = None) -> dict[int, float] | None:
    """Each variable's reduced cost in the LP relaxation of the model as it stands, by index
    (integrality dropped on a copy); None when the LP ends without dual values (out of time,
    infeasible, stopped). The command's stop interrupts it (PROGRESS.interrupter)."""
    from ortools.math_opt.python import mathopt

    lp = to_mathopt(milp.model)
    for var in lp.variables():
        var.integer = False
    params = mathopt.SolveParameters(time_limit=timedelta(seconds=max(time_limit, 0.1)) if time_limit else None,
                                     lp_algorithm=mathopt.LPAlgorithm.DUAL_SIMPLEX)
    params.highs.int_options["presolve_rule_off"] = HIGHS_PRESOLVE_RULES_OFF
    result = mathopt.solve(lp, mathopt.SolverType.HIGHS, params=params, interrupter=PROGRESS.interrupter)
    if result.termination.reason != mathopt.TerminationReason.OPTIMAL or not result.has_dual_feasible_solution():
        return None
    return {var.id: value for var, value in result.reduced_costs().items()}


def price_drops(milp: Milp, offers: list[str], reduced: dict[int, float]) -> dict[str, float]:
    """offer → the estimated fall of its price (in its own currency) before it pays to rent
    one more node of it; 0 when the LP already rents it at no extra cost, inf when no variable
    of it is charged rent (nothing the price could change)."""
    rent = {var.index: coef for var, coef in milp.cost["gpu_rent"]}
    given = milp.inst.as_given or milp.inst.catalog
    wanted = set(offers)
    best = {offer: math.inf for offer in offers}
    for (key, _), var in [*milp.nodes.items(), *milp.contracts.items()]:
        cfg = milp.inst.configs[key]
        offer, coef = cfg.offer.offer, rent.get(var.index, 0.0)
        price = given.offers[offer].price if offer in wanted else 0.0
        if coef <= 0 or price <= 0:  # a committed offer's node variables carry no rent: its contracts do
            continue
        slope = coef * (1 + cfg.offer.platform_fee_pct / 100) / price
        best[offer] = min(best[offer], max(0.0, reduced.get(var.index, 0.0)) / slope)
    return best

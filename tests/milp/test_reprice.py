"""solver.milp.reprice: one offer re-priced on a built model is the model built at that price.

Compared coefficient by coefficient (objective terms by cost part, the budget row) and the
Instance the plan is read from, on bundled problems: one with a budget (startup-launch-60d)
and one with offers in other currencies (global-burst)."""

from __future__ import annotations

import pytest

from solver import api
from solver.load import load_problem
from tests.builders import ROOT

PROBLEMS = ["problems/bench/startup-launch-60d.yaml", "problems/global-burst.yaml"]


def _terms(milp) -> dict[str, list[tuple[int, float]]]:
    return {part: [(var.index, coef) for var, coef in terms] for part, terms in milp.cost.items()}


def _budget_row(milp) -> dict[int, float]:
    row = milp.rows.get("Budget")
    if row is None:
        return {}
    helper = milp.model.helper
    return dict(zip(helper.constraint_var_indices(row.index), helper.constraint_coefficients(row.index)))


def _close(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(b[k])) for k in a)


@pytest.mark.parametrize("path", PROBLEMS)
def test_repriced_model_is_the_model_built_at_that_price(path):
    problem, catalog = load_problem(ROOT / path)
    inst, milp = api.build(problem, catalog)
    before_terms, before_budget = _terms(milp), _budget_row(milp)
    offers = sorted({cfg.offer.offer for cfg in inst.configs.values()})
    discounted = [o for o in offers if catalog.offers[o].discount_pct]
    for offer in [*offers[:4], *discounted[:2]]:
        price = catalog.offers[offer].price * 0.73
        undo = api.reprice(milp, offer, price)
        built_inst, built = api.build(problem, api.with_offer_price(catalog, offer, price))
        got, want = _terms(milp), _terms(built)
        assert got.keys() == want.keys()
        for part in want:
            assert [i for i, _ in got[part]] == [i for i, _ in want[part]]
            assert _close(dict(got[part]), dict(want[part])), (offer, part)
        assert _close(_budget_row(milp), _budget_row(built))
        assert milp.inst.configs == built_inst.configs
        assert milp.inst.catalog == built_inst.catalog and milp.inst.as_given == built_inst.as_given
        undo()
        assert milp.inst is inst
        assert _terms(milp) == before_terms and _budget_row(milp) == before_budget

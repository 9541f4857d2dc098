"""Budget: total cost ≤ budget (row `Budget`); below the optimum there is no plan.

Base case: 40 GPU-days on 6 CNY/GPU-h nodes = 5 node-days × 1 152 = 5 760 CNY.
"""

import pytest
import yaml
from typer.testing import CliRunner

from tests.builders import catalog, hourly, job, problem, solve, write_catalog
from solver.api import build, solve_problem
from solver.cli import app
from solver.errors import Infeasible

OPTIMUM = 5_760


def case(budget):
    return problem(job(days=40, deadline_days=10), horizon_days=10, budget=budget), catalog(hourly("H", 6))


def test_a_budget_below_the_optimum_is_infeasible():
    prob, cat = case(OPTIMUM - 1)
    with pytest.raises(Infeasible) as err:
        solve_problem(prob, cat)
    assert err.value.reasons  # says what to relax


@pytest.mark.parametrize("budget", [OPTIMUM, OPTIMUM + 1, 10 * OPTIMUM])
def test_a_budget_at_or_above_the_optimum_gives_the_same_plan(budget):
    free = solve(*case(None))
    capped = solve(*case(budget))
    assert free.total_cost == capped.total_cost == pytest.approx(OPTIMUM)
    assert sum(r.nodes for r in capped.schedule.rentals) == sum(r.nodes for r in free.schedule.rentals) == 5


def test_budget_row_exists_only_with_a_budget():
    assert "Budget" in build(*case(OPTIMUM))[1].rows
    assert "Budget" not in build(*case(None))[1].rows


def test_cli_exits_1_when_the_budget_is_too_small(tmp_path):
    prob, cat = case(OPTIMUM - 1)
    write_catalog(cat, tmp_path / "cat")
    data = prob.model_dump(mode="json", exclude_defaults=True)
    data["catalog"] = "cat"
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(app, ["solve", str(tmp_path / "p.yaml"), "--json"])
    assert result.exit_code == 1, result.output
    data["budget"] = OPTIMUM
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(app, ["solve", str(tmp_path / "p.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    assert '"total_cost": 5760.0' in result.output

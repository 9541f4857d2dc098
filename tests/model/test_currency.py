"""Currencies: offers carry theirs, a problem states its own and the rates, every cost is
converted once (solver.model.catalog.priced_in) and the verifier converts on its own."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.api import solve_problem
from solver.errors import PlanRejected, ProblemError
from solver.load import load_catalog, load_problem
from solver.model.catalog import Offer, priced_in
from solver.model.problem import ExchangeRates
from solver.verify import check_plan, verify_plan
from tests.builders import ROOT, catalog, gpu_day_flops, job, offer, problem



def in_currency(o: Offer, currency: str, k: float = 1.0) -> Offer:
    """The same offer priced in `currency`, every amount × k (computed as priced_in does)."""
    return Offer.model_validate({**o.model_dump(), "currency": currency, "price_unit": o.price_unit.removeprefix("cny_"),
                                 "price": o.price * k, "interconnect_price": [p * k for p in o.interconnect_price],
                                 "storage_per_tb_month": o.storage_per_tb_month * k,
                                 "egress_per_tb": o.egress_per_tb * k})


offers_strategy = st.fixed_dictionaries({
    "hourly": st.floats(2, 30), "monthly": st.floats(600, 12_000), "ic": st.floats(0, 5),
    "fee": st.sampled_from([0, 5]), "storage": st.floats(0, 2_000), "egress": st.floats(0, 900),
    "work_days": st.floats(1, 12), "budget": st.booleans()})


def _tiny(d: dict):
    offers = [offer("h", mode="hourly", price=d["hourly"], gpus_per_node=2, max_nodes=2, interconnect_price=d["ic"],
                    platform_fee_pct=d["fee"], storage=d["storage"], egress=d["egress"]),
              offer("m", mode="monthly", price=d["monthly"], per="node", gpus_per_node=2, max_nodes=1,
                    datacenter="dc1", storage=d["storage"] / 2, egress=d["egress"] / 3)]
    jobs = [job("j", flops=d["work_days"] * gpu_day_flops(), deadline_days=6, storage_tb=2, egress_tb=1)]  # noqa: E501
    return offers, jobs


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d=offers_strategy, r=st.floats(0.05, 20))
def test_usd_at_rate_r_is_cny_times_r(d, r):
    """Offers in USD planned in CNY at rate r give the plan and cost of the same offers in CNY
    with every amount × r, and r × the cost of planning them in USD."""
    offers, jobs = _tiny(d)
    usd = catalog(*[in_currency(o, "USD") for o in offers])
    cny_r = catalog(*[in_currency(o, "CNY", r) for o in offers])
    budget_usd = 1e6
    rates = ExchangeRates(as_of=date(2026, 12, 4), rates={"USD": r})
    in_usd = problem(*jobs, horizon_days=6, currency="USD", budget=budget_usd if d["budget"] else None)
    converted = problem(*jobs, horizon_days=6, currency="CNY", exchange_rates=rates,
                        budget=budget_usd * r if d["budget"] else None)
    plain = problem(*jobs, horizon_days=6, currency="CNY", budget=budget_usd * r if d["budget"] else None)
    a = solve_problem(converted, usd)          # verified inside, by the verifier's own conversion
    b = solve_problem(plain, cny_r)
    c = solve_problem(in_usd, usd)
    assert a.schedule == b.schedule
    assert a.total_cost == pytest.approx(b.total_cost, rel=1e-9, abs=0.01)
    assert a.cost_breakdown == pytest.approx(b.cost_breakdown, rel=1e-9, abs=0.01)
    assert a.total_cost == pytest.approx(r * c.total_cost, rel=1e-6, abs=0.006 * (r + 1))  # both to the cent
    assert a.currency == "CNY" and a.exchange_rates is not None and a.exchange_rates.rates == {"USD": r}
    assert b.exchange_rates is None and c.exchange_rates is None and c.currency == "USD"
    check_plan(converted, usd, a)


def test_verifier_prices_with_the_problems_rate():
    """A plan priced at one rate fails verification against another rate: the verifier reads
    the rate from the problem, not from the plan or the MILP."""
    offers, jobs = _tiny({"hourly": 10, "monthly": 5000, "ic": 1, "fee": 5, "storage": 100, "egress": 50,
                          "work_days": 4})
    usd = catalog(*[in_currency(o, "USD") for o in offers])
    at = lambda r: problem(*jobs, horizon_days=6, exchange_rates=ExchangeRates(as_of=date(2026, 12, 4),  # noqa: E731
                                                                               rates={"USD": r}))
    plan = solve_problem(at(7.1), usd)
    assert verify_plan(at(7.1), usd, plan) == []
    wrong = verify_plan(at(7.2), usd, plan)
    assert wrong and "cost" in wrong[0]
    with pytest.raises(PlanRejected, match="no rate"):
        check_plan(problem(*jobs, horizon_days=6), usd, plan)


def test_priced_in_names_the_missing_rate():
    usd = catalog(in_currency(offer("a"), "USD"))
    with pytest.raises(ProblemError) as exc:
        priced_in(usd, "CNY", {"EUR": 7.9}, file="p.yaml")
    assert exc.value.key == "exchange_rates.rates.USD" and "no exchange rate for USD" in str(exc.value)
    assert priced_in(usd, "USD", {}) is usd


def test_cny_price_unit_needs_cny():
    with pytest.raises(ValueError, match="says CNY but currency is USD"):
        Offer.model_validate({**offer("a").model_dump(), "currency": "USD"})


def test_old_column_names_are_still_read(tmp_path):
    """storage_cny_per_tb_month / egress_cny_per_tb: the same columns as storage_per_tb_month /
    egress_per_tb; no currency column means CNY. Both names at once is an error naming them."""
    src = load_catalog(ROOT / "catalogs/beijing-sample")
    for name in ("gpus.csv", "datacenters.csv"):
        (tmp_path / name).write_text(open(ROOT / "catalogs/beijing-sample" / name, encoding="utf-8").read(),
                                     encoding="utf-8")
    text = open(ROOT / "catalogs/beijing-sample/offers.csv", encoding="utf-8").read()
    lines = text.splitlines()
    header = lines[0].split(",")
    at = header.index("currency")
    old = [",".join(c for k, c in enumerate(line.split(",")) if k != at) for line in lines]  # no commas in ids/units
    old[0] = old[0].replace("storage_per_tb_month", "storage_cny_per_tb_month").replace("egress_per_tb",
                                                                                        "egress_cny_per_tb")
    (tmp_path / "offers.csv").write_text("\n".join(old) + "\n", encoding="utf-8")
    legacy = load_catalog(tmp_path)
    first = next(iter(src.offers))
    assert legacy.offers[first].storage_per_tb_month == src.offers[first].storage_per_tb_month
    assert {o.currency for o in legacy.offers.values()} == {"CNY"}
    both = old[0] + ",storage_per_tb_month"
    (tmp_path / "offers.csv").write_text("\n".join([both] + [line + ",1" for line in old[1:]]) + "\n",
                                         encoding="utf-8")
    with pytest.raises(ProblemError, match="same column"):
        load_catalog(tmp_path)


def test_missing_rate_exits_2_naming_it(tmp_path):
    """A problem over a catalog with USD offers and no USD rate: exit 2, the key named, no traceback."""
    (tmp_path / "cat").mkdir()
    for name in ("gpus.csv", "datacenters.csv", "offers.csv"):
        text = open(ROOT / "catalogs/beijing-sample" / name, encoding="utf-8").read()
        if name == "offers.csv":  # every offer in USD, at the same numbers
            text = re.sub(r",cny_(per_\w+),CNY,", r",\1,USD,", text)
            assert ",CNY," not in text
        (tmp_path / "cat" / name).write_text(text, encoding="utf-8")
    yaml = open(ROOT / "problems/seed-7b-200b-30d.yaml", encoding="utf-8").read()
    yaml = "\n".join(line for line in yaml.splitlines() if not line.startswith("catalog:"))
    (tmp_path / "p.yaml").write_text("catalog: cat\n" + yaml, encoding="utf-8")
    with pytest.raises(ProblemError, match="exchange_rates.rates.USD"):
        load_problem(tmp_path / "p.yaml")
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(tmp_path / "p.yaml"), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    assert "exchange_rates.rates.USD" in run.stderr + run.stdout and "Traceback" not in run.stderr
    (tmp_path / "p.yaml").write_text("catalog: cat\nexchange_rates: {as_of: 2026-12-04, source: test, "
                                     "rates: {USD: 7.1}}\n" + yaml, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(tmp_path / "p.yaml"), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)
    assert plan["currency"] == "CNY" and plan["exchange_rates"] == {"as_of": "2026-12-04", "source": "test",
                                                                    "rates": {"USD": 7.1}}


def test_problem_rates_are_checked():
    with pytest.raises(ValueError, match="own currency is worth 1"):
        problem(job(flops=1e18, deadline_days=1), horizon_days=1,
                exchange_rates=ExchangeRates(as_of=date(2026, 1, 1), rates={"CNY": 2.0}))
    with pytest.raises(ValueError, match="not a currency code"):
        ExchangeRates(as_of=date(2026, 1, 1), rates={"usd": 7.0})
    with pytest.raises(ValueError):
        ExchangeRates(as_of=date(2026, 1, 1), rates={"USD": 0})

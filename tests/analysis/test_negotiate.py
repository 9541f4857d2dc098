"""Negotiation: walk-away and break-even prices hold when the plan is re-solved just below and
just above them; a vendor's sheet carries no other vendor's name, offer or price.

Tiny catalogs (families.py; 8-GPU hourly node = 192 × price per node-day):
- CHOICE: a job of 100 GPU-days (13 node-days) in 10 days, independent replicas. Optimum 8,304 =
  offer m (one monthly node, 6,000, 80 GPU-days) + 3 node-days of a at 4 CNY/GPU-h (2,304).
  By hand: without a, s (5 CNY/GPU-h) takes its 3 node-days → a's walk-away is 5; without m,
  10 node-days of a + 3 of s = 10,560 → m's walk-away is 10,560 − 2,304 = 8,256; b and s enter
  below a's 4 CNY/GPU-h; `late` arrives after the deadline and cannot enter.
- PIECES: the same job on a (2 nodes, 4 CNY/GPU-h, optimum 13 node-days = 9,984) and m, 1-GPU
  monthly nodes at 2,000. Renting k m-nodes leaves 100 − 10k GPU-days to a, so the best plan
  with m costs min_k k·P + ⌈(100 − 10k)/8⌉·768, and the break-even is 1,152 (k = 2): the Newton
  steps cross three linear pieces (2,000 → 768 → 998.4 → 1,152).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import HANG_SECONDS, ROOT, catalog, hourly, job, monthly, problem

from solver.analysis.negotiate import negotiate, offers_used, with_price
from solver.report.vendor_sheet import vendor_rows
from solver.api import solve_problem
from solver.errors import Infeasible
from solver.load import load_problem
from solver.model.problem import ExchangeRates

EPS = 1e-3
HYBRID = ROOT / "problems" / "hybrid-burst.yaml"


def choice():
    cat = catalog(hourly("a", 4.0, max_nodes=1), hourly("b", 6.0, vendor="v2", max_nodes=1),
                  monthly("m", 6000.0, vendor="v3", max_nodes=1),
                  hourly("s", 5.0, vendor="v4", max_nodes=1, lead_time_days=2),
                  hourly("late", 1.0, vendor="v2", lead_time_days=20))
    return problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10), cat


def pieces():
    cat = catalog(hourly("a", 4.0, max_nodes=2), monthly("m", 2000.0, vendor="v2", gpus_per_node=1, max_nodes=10))
    return problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10), cat


def resolve(prob, cat, offer: str, price: float):
    return solve_problem(prob, with_price(cat, offer, price), gap=1e-9)


def check_limit(prob, cat, terms, base_cost: float) -> None:
    """Just below p* the optimum rents the offer, just above it does not."""
    p = terms.limit_price
    below, above = resolve(prob, cat, terms.offer, p * (1 - EPS)), resolve(prob, cat, terms.offer, p * (1 + EPS))
    assert terms.offer in offers_used(below), f"{terms.offer} unused at {p * (1 - EPS)}"
    assert terms.offer not in offers_used(above), f"{terms.offer} still used at {p * (1 + EPS)}"
    assert above.total_cost == pytest.approx(terms.cost_without, rel=1e-9)
    if terms.limit_kind == "walk_away":
        assert set(terms.replaced_by) <= offers_used(above) and terms.replaced_by
    else:
        assert below.total_cost < terms.cost_without
    # the target price: the volume and the saving reported are what a re-solve gives
    at = resolve(prob, cat, terms.offer, terms.target_price)
    assert at.total_cost == pytest.approx(terms.target_cost, rel=1e-9)
    assert terms.saving_at_target == pytest.approx(base_cost - at.total_cost, rel=1e-9)
    assert terms.saving_at_target > 0
    assert terms.offer in offers_used(at) and terms.target_node_days > 0


def test_walk_away_and_break_even_prices_hold_when_re_solved_just_below_and_above():
    prob, cat = choice()
    result = negotiate(prob, cat)
    assert result.base_cost == pytest.approx(8304)
    by = {t.offer: t for t in result.offers}
    assert {o: by[o].status for o in by} == {"a": "in_plan", "m": "in_plan", "b": "not_in_plan",
                                             "s": "not_in_plan", "late": "unusable"}
    assert by["a"].limit_price == pytest.approx(5.0) and by["a"].replaced_by == ["s"]
    assert by["m"].limit_price == pytest.approx(8256.0) and set(by["m"].replaced_by) == {"a", "s"}
    assert by["b"].limit_price == pytest.approx(4.0) and by["s"].limit_price == pytest.approx(4.0)
    # the saving at the break-even's target price (5 % below): 3 node-days × 192 × (4 − 3.8)
    assert by["b"].target_price == pytest.approx(3.8) and by["b"].saving_at_target == pytest.approx(115.2)
    assert "lead_time" in by["late"].reason and by["late"].limit_price is None
    for terms in result.offers:
        if terms.limit_price is not None:
            assert terms.converged and terms.solves <= 8
            check_limit(prob, cat, terms, result.base_cost)


def test_break_even_found_across_several_linear_pieces():
    prob, cat = pieces()
    result = negotiate(prob, cat, vendors=["v2"])
    (m,) = result.offers
    assert (m.status, m.limit_kind, m.converged) == ("not_in_plan", "break_even", True)
    assert m.limit_price == pytest.approx(1152.0)
    assert m.solves <= 8
    check_limit(prob, cat, m, result.base_cost)
    # at the target (1,094.4) two m-nodes replace 3 node-days of a: 9,984 − (2 × 1,094.4 + 7,680)
    assert m.saving_at_target == pytest.approx(9984 - (2 * 1094.4 + 7680))
    assert m.target_nodes == 2 and m.displaces == ["a"]


def in_usd(offer, rate: float):
    """The same offer quoted in USD at `rate` CNY per USD (so it costs exactly as much in CNY)."""
    return offer.model_copy(update={"price": offer.price / rate, "currency": "USD",
                                    "price_unit": offer.price_unit.removeprefix("cny_")})


@pytest.mark.parametrize("priced_in", ["offers_usd", "problem_usd"])
def test_break_even_prices_are_in_the_offers_currency_and_correspond_across_currencies(priced_in):
    """PIECES again (break-even 1,152 CNY, three linear pieces crossed), once with every offer
    quoted in USD in a CNY problem, once with a USD problem over the CNY catalog. Each Newton
    step divides a cost difference (problem currency) by the price volume, which must carry the
    rate (d cost / d price in the offer's currency): without it the steps overshoot and the
    search ends unconverged."""
    prob, cat = pieces()
    rate = 8.0   # CNY per USD; exact in binary, so prices correspond to the last digit
    if priced_in == "offers_usd":
        cat = cat.model_copy(update={"offers": {k: in_usd(o, rate) for k, o in cat.offers.items()}})
        prob = prob.model_copy(update={"exchange_rates": ExchangeRates(as_of="2026-12-04", rates={"USD": rate})})
        price, cost = 1152.0 / rate, 9984.0             # the price in USD, the cost in CNY
    else:
        prob = prob.model_copy(update={"currency": "USD",
                                       "exchange_rates": ExchangeRates(as_of="2026-12-04", rates={"CNY": 1 / rate})})
        price, cost = 1152.0, 9984.0 / rate              # the price in CNY, the cost in USD
    result = negotiate(prob, cat, vendors=["v2"], levers=False)
    (m,) = result.offers
    assert result.currency == prob.currency and result.base_cost == pytest.approx(cost)
    assert m.currency == cat.offers["m"].currency and m.converged and m.solves <= 8
    assert m.limit_price == pytest.approx(price)
    assert m.target_price == pytest.approx(price * 0.95)
    assert m.saving_at_target == pytest.approx((9984 - (2 * 1094.4 + 7680)) * cost / 9984)
    check_limit(prob, cat, m, result.base_cost)
    assert {r["currency"] for r in vendor_rows(result, "v2")} == {m.currency}


def test_an_offer_the_optimum_cannot_do_without_has_no_walk_away_price():
    prob = problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10)
    cat = catalog(hourly("a", 4.0, max_nodes=2), hourly("b", 6.0, vendor="v2", max_nodes=1))
    by = {t.offer: t for t in negotiate(prob, cat, levers=False).offers}
    assert by["a"].status == "in_plan" and by["a"].limit_price is None and by["a"].cost_without is None
    assert "infeasible without" in by["a"].reason


def test_under_a_budget_the_walk_away_price_is_where_nothing_fits_any_more():
    prob, cat = choice()
    prob = prob.model_copy(update={"budget": 9000.0})
    # without m the best plan costs 10,560 > 9,000: m stays until m + 3 node-days of a = 9,000
    m = next(t for t in negotiate(prob, cat, vendors=["v3"], levers=False).offers)
    assert m.limit_price == pytest.approx(9000 - 2304) and m.converged
    assert m.cost_without == pytest.approx(10560) and m.replaced_by == [] and "budget" in m.reason
    assert "m" in offers_used(solve_problem(prob, with_price(cat, "m", m.limit_price * (1 - EPS)), gap=1e-9))
    with pytest.raises(Infeasible):
        solve_problem(prob, with_price(cat, "m", m.limit_price * (1 + EPS)), gap=1e-9)


def test_a_spent_time_budget_leaves_offers_unanalysed_and_says_so():
    prob, cat = choice()
    result = negotiate(prob, cat, max_seconds=0)
    assert result.solves == 1 and result.levers == []
    assert "--max-seconds" in result.levers_note  # not an empty table that reads "nothing else is worth asking"
    assert "--max-seconds" in result.to_dict()["levers_note"]
    assert "--max-seconds" not in negotiate(prob, cat).levers_note
    for t in result.offers:
        assert t.analysed == (t.status == "unusable")
        assert t.limit_price is None
    assert {r["note"] for r in vendor_rows(result, "v3")} == {"not analysed"}


def test_levers_are_re_solve_deltas():
    prob = problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10)
    cat = catalog(hourly("a", 4.0, max_nodes=1), hourly("b", 6.0, vendor="v2", max_nodes=1, lead_time_days=3))
    result = negotiate(prob, cat, lead_days=2, nodes=1)
    levers = {(lv.kind, lv.name): lv for lv in result.levers}
    # a's one node binds: a second one replaces b's 3 node-days at 6 by a's at 4 = 3 × 192 × 2
    assert levers["availability", "a"].saving == pytest.approx(1152)
    assert levers["availability", "a"].edit == "offers.a.max_nodes+=1"
    # b arrives on day 3 either way it is needed only for 3 of the 7 days left: no saving
    assert levers["lead_time", "b"].saving == pytest.approx(0)


# ------------------------------------------------------------------ the bundled hybrid problem and the CLI

def gpuplan(*args, timeout: float = HANG_SECONDS) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def hybrid_run(tmp_path_factory):
    """One 21vianet run with its sheet, one sinnet run as tables; started together."""
    tmp = tmp_path_factory.mktemp("negotiate")
    sheet = tmp / "21vianet.csv"
    jobs = [subprocess.Popen([sys.executable, "-m", "solver.cli", "negotiate", str(HYBRID), *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             env={**os.environ, "COLUMNS": "250"})
            for args in (["--vendor", "21vianet", "--json", "--export-vendor", "21vianet", str(sheet)],
                         ["--vendor", "sinnet"])]
    outs = [(p.wait(timeout=HANG_SECONDS), *p.communicate()) for p in jobs]
    return {"json": outs[0], "table": outs[1], "sheet": sheet}


def test_cli_json_is_valid_and_its_prices_hold(hybrid_run):
    code, out, err = hybrid_run["json"]
    assert code == 0, err
    data = json.loads(out)
    assert data["export"]["vendor"] == "21vianet" and data["export"]["rows"] == 9
    assert data["solves"] <= 1 + 8 * 9 + len(data["levers"])   # the work is bounded in solves, not seconds
    by = {t["offer"]: t for t in data["offers"]}
    assert {t["vendor"] for t in data["offers"]} == {"21vianet"}
    hosted, h800 = by["vnet-sy-a100-80-8x-hosted"], by["vnet-sy-h800-80-8x-hosted"]
    assert hosted["limit_kind"] == "walk_away" and hosted["limit_price"] > hosted["price"]
    assert h800["limit_kind"] == "break_even" and h800["limit_price"] < h800["price"]
    prob, cat = load_problem(HYBRID)
    for t in (hosted, h800):
        below = solve_problem(prob, with_price(cat, t["offer"], t["limit_price"] * (1 - EPS)), gap=1e-7)
        above = solve_problem(prob, with_price(cat, t["offer"], t["limit_price"] * (1 + EPS)), gap=1e-7)
        assert t["offer"] in offers_used(below) and t["offer"] not in offers_used(above)
        assert set(t["replaced_by"]) <= offers_used(above)
    kinds = {lv["kind"] for lv in data["levers"]}
    assert {"power", "lead_time", "availability"} <= kinds
    power = next(lv for lv in data["levers"] if lv["kind"] == "power")
    assert power["name"] == "Shunyi" and power["saving"] > 0


def test_vendor_sheet_has_no_other_vendors_data(hybrid_run):
    sheet = hybrid_run["sheet"]
    text = sheet.read_text(encoding="utf-8")
    _, cat = load_problem(HYBRID)
    mine = {o.offer for o in cat.offers.values() if o.vendor == "21vianet"}
    others = [o for o in cat.offers.values() if o.vendor != "21vianet"]
    lowered = text.lower()
    for vendor in {o.vendor for o in others}:
        assert vendor.lower() not in lowered, vendor
    for o in others:
        assert o.offer.lower() not in lowered, o.offer
    cells = [cell for row in csv.reader(text.splitlines()) for cell in row]
    numbers = {float(c) for c in cells if _is_number(c)}
    for o in others:
        assert o.price not in numbers, f"{o.offer}'s price {o.price} in the sheet"
        raw = f"{o.price:g}"
        if len(raw) >= 5:                  # long enough not to be a piece of an unrelated number
            assert raw not in text, f"{o.offer}'s price {raw} in the sheet"
    rows = list(csv.DictReader(text.splitlines()))
    assert {r["offer"] for r in rows} == mine
    targets = {r["offer"]: r for r in rows}
    assert float(targets["vnet-sy-h800-80-8x-hosted"]["target_price"]) < 108000
    assert float(targets["vnet-sy-a100-80-8x-hosted"]["node_days_at_target"]) > 0


def test_vendor_rows_leave_out_replacements_and_reasons():
    prob, cat = choice()
    rows = vendor_rows(negotiate(prob, cat, levers=False), "v3")
    assert [r["offer"] for r in rows] == ["m"]
    assert "s" not in rows[0].values() and "a" not in rows[0].values()
    assert set(rows[0]) >= {"current_price", "target_price", "node_days_at_target", "price_unit"}


def test_cli_tables_for_a_vendor_no_job_can_use(hybrid_run):
    code, out, err = hybrid_run["table"]
    assert code == 0, err
    assert "Offers no job can use" in out and "sinnet-sy-a800-80-8x-hosted" in out
    assert "+50 kW" in out


def test_cli_refuses_to_overwrite_and_names_unknown_vendors(tmp_path):
    existing = tmp_path / "sheet.csv"
    existing.write_text("keep me\n")
    run = gpuplan("negotiate", HYBRID, "--export-vendor", "21vianet", existing)
    assert run.returncode == 2 and "--force" in run.stderr
    assert existing.read_text() == "keep me\n"
    run = gpuplan("negotiate", HYBRID, "--vendor", "nobody")
    assert run.returncode == 2 and "21vianet" in run.stderr


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_cli_says_the_levers_were_not_analysed_when_time_ran_out():
    """The run stopped right after the base solve (an injected stop, solver.clock: the same on any
    machine): the table says the levers were not analysed, and why, rather than printing an empty table."""
    from solver.clock import INTERRUPT_AFTER

    run = subprocess.run([sys.executable, "-m", "solver.cli", "negotiate", str(ROOT / "problems" / "seed-7b-200b-30d.yaml")],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200", INTERRUPT_AFTER: "1"})
    assert run.returncode == 130, run.stderr
    assert "What other concessions are worth: not analysed" in run.stdout
    assert "the run was stopped (Ctrl-C)" in run.stdout and "--max-seconds" not in run.stdout  # it was no budget


def test_a_break_even_below_the_search_floor_is_not_called_never():
    """An offer whose interconnect alone costs more than the whole plan does not enter at any
    price the search tries; the answer is "below the floor", which a lower price could still
    cross, not "never" (a user's check found one entering at 0.005% of its quoted price)."""
    from solver.analysis.negotiate import PRICE_FLOOR

    prob = problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10)
    cat = catalog(hourly("a", 4.0, max_nodes=2), hourly("x", 4.0, vendor="v2", max_nodes=2,
                                                         interconnect_price=(100_000,)))
    (x,) = negotiate(prob, cat, vendors=["v2"], levers=False).offers
    assert x.status == "not_in_plan" and x.limit_price is None
    assert x.searched_down_to == pytest.approx(4.0 * PRICE_FLOOR)
    assert "down to" in x.reason and "where the search stops" in x.reason


def test_a_lead_time_that_cannot_change_any_plan_is_not_valued_and_said_once():
    """Relevance first (issue 34): `late` arrives on day 20 for a job due on day 10; 7 days shorter
    it still arrives after the deadline, so no plan changes: no lever row, one note, no solve."""
    from solver.analysis.negotiate import lead_time_matters

    prob, cat = choice()
    result = negotiate(prob, cat, lead_days=7)
    assert ("lead_time", "late") not in {(lv.kind, lv.name) for lv in result.levers}
    assert "late" in result.levers_note and result.levers_note.count("shorter lead times") == 1
    assert not lead_time_matters(prob, 20, 10) and lead_time_matters(prob, 20, 11)   # due by day 10: day 9 opens
    late_job = prob.model_copy(update={"jobs": [prob.jobs[0].model_copy(update={"start_day": 5})]})
    assert not lead_time_matters(late_job, 3, 2)   # ends before the job starts either way
    assert lead_time_matters(late_job, 6, 2)       # day 5 opens


class _Dies:
    """A task argument whose unpickling ends the worker process that receives it (os._exit), as the
    system's memory killer would: the command's process never sees it die but by a broken pool."""

    def __reduce__(self):
        import os
        return os._exit, (3,)


def test_an_offer_whose_worker_died_is_said_not_analysed_not_a_traceback(monkeypatch):
    """Issue 44: negotiate and sweep each had their own policy for a worker that ended without an answer
    (negotiate raised a task's error, worded a dead process its own way and fed a dead Ray actor more
    offers); both now take solver.analysis.executor's: the offer says its worker failed, the run goes on."""
    import solver.analysis.negotiate as module

    real = module._in_order_of_promise

    def one_dies(asker, terms):
        work = real(asker, terms)
        return [(t, _Dies() if i == 0 else drop) for i, (t, drop) in enumerate(work)]
    monkeypatch.setattr(module, "_in_order_of_promise", one_dies)
    prob, cat = choice()
    result = negotiate(prob, cat, jobs=2, levers=False)
    outside = [t for t in result.offers if t.status == "not_in_plan" and not t.skipped]
    assert outside and any(not t.analysed for t in outside)
    for t in outside:
        assert t.analysed or t.reason.startswith("not analysed: worker failed: BrokenProcessPool"), t.reason
    assert all(t.analysed for t in result.offers if t.status == "in_plan")   # priced before the worker died

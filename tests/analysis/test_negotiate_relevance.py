"""negotiate's relevance rules, intervals and process pool (issue 34, items 3 and 4).

- probes that cannot matter are not run, and the reason is said once: a contract far longer than
  the days any job runs; a break-even that would have to be ≤ 0;
- a row whose solves stopped before their proof shows the interval they prove, and that interval
  always holds the exact p* (checked against the exact crossing of random concave functions);
- --jobs 1 and --jobs 2 print the same answer."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest
from rich.console import Console

from solver.analysis import negotiate_probes
from solver.analysis.negotiate import SKIPS, negotiate
from solver.analysis.negotiate_probes import Point, limit_interval
from solver.load import load_problem
from solver.model.plan import Plan
from solver.report.negotiate import render_negotiation
from solver.probes import Probes
from solver.rows import ROWS
from tests.builders import HANG_SECONDS, ROOT, catalog, hourly, job, monthly, problem


def _asked(monkeypatch) -> list[str]:
    """The offers every probe of Asker.at asked about, in order."""
    asked: list[str] = []
    real = negotiate_probes.Asker.at

    def at(self, offer, price, how="free"):
        asked.append(offer)
        return real(self, offer, price, how)
    monkeypatch.setattr(negotiate_probes.Asker, "at", at)
    return asked


def test_a_week_long_job_never_prices_a_month_long_contract_and_says_why_once(monkeypatch):
    """A 7-day job: a 30-day contract is paid three quarters idle. m1 is not priced (named once);
    m2 is what replaces the plan's offer above its walk-away price, so it is priced all the same."""
    asked = _asked(monkeypatch)
    prob = problem(job("j", days=20, deadline_days=7, single_site=False), horizon_days=7)
    cat = catalog(hourly("a", 4.0, max_nodes=4), monthly("m1", 3000.0, vendor="v2", max_nodes=4),
                  monthly("m2", 2500.0, vendor="v3", max_nodes=4), monthly("m3", 2600.0, vendor="v4", max_nodes=4))
    result = negotiate(prob, cat, levers=False)
    by = {t.offer: t for t in result.offers}
    assert by["a"].status == "in_plan" and by["a"].replaced_by == ["m2"]
    assert by["m2"].limit_kind == "break_even" and by["m2"].limit_price is not None
    for m in ("m1", "m3"):
        assert by[m].status == "not_in_plan" and by[m].skipped == "term"
        assert by[m].limit_price is None and by[m].solves == 0
        assert "30-day term" in by[m].reason
        assert m not in asked
    assert result.skipped == {"term": SKIPS["term"]}
    console = Console(record=True, width=400, soft_wrap=True)
    render_negotiation(result, console)
    text = console.export_text()
    assert text.count(SKIPS["term"]) == 1 and "m1, m3" in text


def test_rows_that_need_no_probe_are_announced_when_decided(monkeypatch):
    """An offer no job can use is a row as soon as the model is built, before the base solve; a
    contract too long for the jobs, when the plan's offers are priced (it could have replaced one);
    each is announced once (solver.rows), in the order the command prints them on stderr."""
    events: list[str] = []
    real = negotiate_probes.Asker.at
    monkeypatch.setattr(negotiate_probes.Asker, "at", lambda self, *a, **k: events.append("probe") or real(self, *a, **k))
    base = Probes.solve_base
    monkeypatch.setattr(Probes, "solve_base", lambda self: events.append("base solve") or base(self))
    ROWS.listener = lambda words, done, expected: events.append(words)
    try:
        prob = problem(job("j", days=20, deadline_days=7, single_site=False), horizon_days=7)
        cat = catalog(hourly("a", 4.0, max_nodes=4), monthly("m1", 3000.0, vendor="v2", max_nodes=4),
                      monthly("m2", 2500.0, vendor="v3", max_nodes=4),
                      hourly("late", 1.0, vendor="v5", max_nodes=4, lead_time_days=10))
        result = negotiate(prob, cat, levers=False)
    finally:
        ROWS.listener = None
    by = {t.offer: t for t in result.offers}
    assert by["late"].status == "unusable" and by["m1"].skipped == "term"
    rows = [e for e in events if e not in ("probe", "base solve")]
    assert len(rows) == len(result.offers) == len(set(rows))       # every offer once
    assert events[0].startswith("late: ") and events[1] == "base solve"  # known before anything is solved
    assert events.index("m1: " + by["m1"].reason) < len(events) - 1 - events[::-1].index("probe")  # not held to the end


def test_a_break_even_that_would_have_to_be_at_most_zero_is_no_row_and_costs_one_probe():
    """x's interconnect alone costs more than the whole plan: the LP says so, the floor price is
    asked first (one probe), and x is named once among the offers not priced, never as a row."""
    prob = problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10)
    cat = catalog(hourly("a", 4.0, max_nodes=2), hourly("x", 4.0, vendor="v2", max_nodes=2,
                                                         interconnect_price=(100_000,)),
                  hourly("y", 4.0, vendor="v3", max_nodes=2, interconnect_price=(200_000,)))
    result = negotiate(prob, cat, levers=False)
    by = {t.offer: t for t in result.offers}
    for o in ("x", "y"):
        assert by[o].skipped == "free_only" and by[o].limit_price is None and by[o].solves == 1
    assert result.skipped == {"free_only": SKIPS["free_only"]}
    console = Console(record=True, width=400, soft_wrap=True)
    render_negotiation(result, console)
    text = console.export_text()
    assert text.count(SKIPS["free_only"]) == 1 and "Break-even prices" not in text
    assert all(t.limit_price is None or t.limit_price > 0 for t in result.offers)


def _plan(cost: float) -> Plan:
    return Plan.model_construct(total_cost=cost)


@pytest.mark.parametrize("seed", range(40))
def test_an_interval_from_unproven_probes_holds_the_exact_crossing(seed):
    """C_forced(p) = min over plans (a_i + q_i·p), concave and increasing; p* = max{p : C ≤ goal},
    goal (the cost without the offer) known only in [goal_low, goal_high]. Probes that stopped
    early give some plan (its own line, above the optimum) and a bound below the optimum; the
    interval limit_interval reads from them must hold p*."""
    rng = random.Random(seed)
    lines = [(rng.uniform(0, 100), rng.uniform(0.5, 5)) for _ in range(rng.randint(1, 6))]

    def exact(p: float) -> float:
        return min(a + q * p for a, q in lines)

    goal_low = rng.uniform(exact(0.5), exact(60))
    goal_high = goal_low + rng.uniform(0, 10)
    goal = rng.uniform(goal_low, goal_high)
    p_star = max((goal - a) / q for a, q in lines)   # the largest of each line's own crossing
    points = []
    for _ in range(rng.randint(1, 4)):
        p = rng.uniform(0.01, 80)
        a, q = rng.choice(lines)
        points.append(Point(p, Plan.model_construct(total_cost=a + q * p), q, exact(p) - rng.uniform(0, 5)))
    low, high = limit_interval(points, goal_low, goal_high, min(q for _, q in lines), floor=0.0)
    assert low is None or low <= p_star + 1e-9
    assert high is None or high >= p_star - 1e-9
    assert high is not None   # every probe bounds p* from above


_CLOCK = re.compile(r"\d+(\.\d+)? s\b")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", "negotiate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=HANG_SECONDS, env={**os.environ, "COLUMNS": "200"})


def test_a_pool_and_this_process_give_the_same_answer():
    path = str(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    serial, pool = _run(path, "--json", "--jobs", "1"), _run(path, "--json", "--jobs", "2")
    assert serial.returncode == 0 and pool.returncode == 0, serial.stderr + pool.stderr
    one, two = json.loads(serial.stdout), json.loads(pool.stdout)
    one.pop("seconds"), two.pop("seconds")
    assert one == two and one["solves"] > 3
    tables = [_CLOCK.sub("<t> s", _run(path, "--jobs", n).stdout) for n in ("1", "2")]
    assert tables[0] == tables[1]


def test_no_pool_is_started_when_the_time_is_already_spent(monkeypatch):
    """The base solve took the whole budget (a user-like problem: 30 s of 30): starting --jobs' pool
    would build the model once per worker only to say "not analysed" (3–5 s past the budget)."""
    from solver.analysis import executor

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started with no time left")
    monkeypatch.setattr(executor, "Pool", no_pool)  # solver.analysis.workers' Ctrl-C-deaf pool, as the executor starts it
    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    result = negotiate(prob, cat, jobs=2, max_seconds=1e-9, levers=False)
    assert result.base_status == "optimal"
    priced = [t for t in result.offers if t.status in ("in_plan", "not_in_plan") and not t.skipped]
    assert priced and all(not t.analysed for t in priced)
    from solver.analysis.words import NOT_ANALYSED, not_analysed_text   # issue 44: the words why's rows use too
    assert {t.reason for t in priced} == {f"{NOT_ANALYSED}: {not_analysed_text()}"} \
        == {"not analysed: the run's time budget ran out (raise --max-seconds)"}


def test_a_concession_is_worded_by_its_family_and_a_new_kind_does_not_break_the_table():
    """report/negotiate kept a kind → words dict that raised KeyError on a kind it did not list."""
    from solver.i18n import language
    from solver.report.negotiate import lever_words

    assert lever_words("power", 50, "kW") == "+50 kW"
    assert lever_words("availability", 2, "nodes") == "+2 nodes"
    assert lever_words("lead_time", 7, "days") == "lead time −7 d"
    assert lever_words("vendors_per_job", 1, "vendors") == "+1 vendors"
    with language("zh-CN"):
        assert lever_words("availability", 2, "nodes") not in ("+2 nodes", "")

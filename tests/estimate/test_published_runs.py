"""The published runs the estimator is scored on (catalogs/reference/published_runs.csv; issue 48)
and the spread solver.estimate.spread ships from them."""

from __future__ import annotations

import csv
import importlib.util
import math
import re
from pathlib import Path

import pytest

from solver.estimate.published import REPORTED, compare, reported_tflops, run_from_row, split_by_source
from solver.estimate.spread import MU, RUNS, SIGMA, fit
from solver.load import load_catalog

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "catalogs" / "reference" / "published_runs.csv"


def rows() -> list[dict]:
    with open(CSV, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def bench():
    spec = importlib.util.spec_from_file_location("bench_estimate", ROOT / "tests" / "bench" / "bench_estimate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_least_forty_runs_every_one_with_a_source():
    table = rows()
    assert len(table) >= 40
    for row in table:
        run = run_from_row(row)
        assert run.source_id and len(run.source) > 20, run.run     # a paper, card or page, not a stub
        assert re.search(r"\b(19|20)\d\d\b", run.source), f"{run.run}: its source names no year"
        assert row["measured"] in ("measured", "derived"), run.run
        assert run.reported in REPORTED


def test_run_names_are_unique():
    names = [r["run"] for r in rows()]
    assert len(names) == len(set(names))


def test_gpu_hours_days_and_gpus_agree_where_all_three_are_given():
    checked = 0
    for row in rows():
        run = run_from_row(row)
        if run.reported == "gpu_hours" and run.days and run.gpus:
            assert run.value == pytest.approx(run.gpus * run.days * 24, rel=0.05), run.run   # rounded days
            checked += 1
        if run.reported == "days":
            assert run.days == run.value, run.run
    assert checked >= 1   # LLaMA 65B: 2048 GPUs, 21 days, 1,022,362 GPU-hours


def test_two_figures_of_one_run_agree():
    # LLaMA 65B: the paper's GPU-hours and its 380 tokens/s per GPU give the same throughput
    by_name = {r["run"]: run_from_row(r) for r in rows()}
    assert reported_tflops(by_name["llama1-65b"], 312) == pytest.approx(
        reported_tflops(by_name["llama1-65b-rate"], 312), rel=0.02)


def test_a_row_without_a_source_is_refused():
    row = dict(rows()[0], source="", source_id="")
    with pytest.raises(ValueError, match="no source"):
        run_from_row(row)


def test_the_held_out_split_is_by_source_fixed_and_a_third():
    table = [run_from_row(r) for r in rows()]
    fit_ids, held_ids = split_by_source(r.source_id for r in table)
    assert not set(fit_ids) & set(held_ids)
    assert set(fit_ids) | set(held_ids) == {r.source_id for r in table}
    assert len(held_ids) == math.ceil(len(set(fit_ids) | set(held_ids)) / 3)
    assert (fit_ids, held_ids) == split_by_source(reversed([r.source_id for r in table]))  # order-free, seeded
    for run in table:   # every run of a source on its source's side
        assert (run.source_id in held_ids) != (run.source_id in fit_ids)


def test_the_shipped_spread_is_the_one_the_runs_give():
    b = bench()
    comparisons, skipped = b.comparisons(b.load_runs(), load_catalog(ROOT / "catalogs" / "beijing-sample").gpus)
    mu, sigma = fit([math.log(c.ratio) for c in comparisons])
    assert (len(comparisons), round(mu, 4), round(sigma, 4)) == (RUNS, MU, SIGMA)
    assert len(skipped) <= 2


def test_the_estimate_of_a_run_is_the_estimator_s():
    # Llama 2 7B on A100-80G at the default 40 %: TP2 inside a node, no pipeline, no size tier
    # (count not stated): 312 × 0.40 = 124.8 TFLOP/s; reported 6 × 7e9 × 2e12 ÷ (184,320 h × 3600 s).
    gpus = load_catalog(ROOT / "catalogs" / "beijing-sample").gpus
    run = run_from_row(next(r for r in rows() if r["run"] == "llama2-7b"))
    c = compare(run, gpus["A100-80G"])
    assert c.estimated.tflops == pytest.approx(124.8)
    assert c.reported == pytest.approx(6 * 7e9 * 2e12 / (184320 * 3600) / 1e12)
    assert c.error == pytest.approx(c.reported / 124.8 - 1)


def test_the_benchmark_run_behind_the_spread_is_recorded():
    # the spread (and so the defaults it was measured at) changes only with a re-run in HISTORY.md
    history = (ROOT / "tests" / "bench" / "HISTORY.md").read_text(encoding="utf-8")
    assert f"over all {RUNS} runs at the defaults: mean {MU:+.4f}, sd {SIGMA:.4f}" in history

"""The throughput estimate against published training runs (issue 48): per run, estimated and
reported, the error; median |error| and P90 on a held-out third of the sources.

    python tests/bench/bench_estimate.py [--all] [--catalog catalogs/beijing-sample]

The runs are `catalogs/reference/published_runs.csv`; the GPUs' figures and `default_mfu` come
from the catalog's gpus.csv (a run on a GPU the catalog lacks is listed and skipped). The
sources are split once, seeded (solver.estimate.published.split_by_source): two thirds to fit,
one third held out, every run of a source on the same side. Two estimators are scored on the
held-out third:

- `defaults`: gpus.csv's default_mfu as shipped (nothing here was tuned on these runs);
- `fitted`: each GPU's MFU moved to the median of what its fit-side runs imply (default × the
  median ratio reported ÷ estimated of that GPU's runs), which by construction lies between the
  lowest and highest figure those runs support; a GPU with no fit-side run keeps its default.

For each, the P10–P90 interval from the fit side's residuals (solver.estimate.spread's normal fit
of ln(reported ÷ estimated)) and the share of held-out runs it covers. Last, the residuals of
every run at the defaults: the μ and σ solver.estimate.spread ships (tests/estimate/
test_published_runs.py checks they agree with this file). Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from solver.estimate.published import Comparison, compare, run_from_row, split_by_source  # noqa: E402
from solver.estimate.spread import MU, SIGMA, Z90, fit  # noqa: E402
from solver.estimate.spread import RUNS as SPREAD_RUNS  # noqa: E402

RUNS = ROOT / "catalogs" / "reference" / "published_runs.csv"
CATALOG = ROOT / "catalogs" / "beijing-sample"


def load_runs(path: Path = RUNS):
    with open(path, newline="", encoding="utf-8") as f:
        return [run_from_row(row) for row in csv.DictReader(f)]


def load_gpus(catalog: Path = CATALOG):
    from solver.load import load_catalog

    return load_catalog(catalog).gpus


def comparisons(runs, gpus, mfu: dict[str, float] | None = None) -> tuple[list[Comparison], list[str]]:
    """Every run the catalog has a GPU for, compared at the default MFU (or `mfu[gpu]`); the runs skipped."""
    done, skipped = [], []
    for run in runs:
        if run.gpu not in gpus:
            skipped.append(f"{run.run}: {run.gpu} not in the catalog")
            continue
        try:
            done.append(compare(run, gpus[run.gpu], None if mfu is None else mfu.get(run.gpu)))
        except ValueError as exc:  # no layout of the estimator holds it (context parallelism is not modelled)
            skipped.append(str(exc).removeprefix("published run "))
    return done, skipped


def fitted_mfu(fit_side: list[Comparison], gpus) -> dict[str, float]:
    """Each GPU's MFU at the median its fit-side runs imply (module doc)."""
    out = {}
    for gpu in sorted({c.run.gpu for c in fit_side}):
        implied = [gpus[gpu].default_mfu * c.ratio for c in fit_side if c.run.gpu == gpu]
        out[gpu] = min(max(statistics.median(implied), min(implied)), max(implied), 1.0)
    return out


def quantile(values: list[float], q: float) -> float:
    """The q-quantile, linear between order statistics (numpy's default)."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def score(name: str, fit_side: list[Comparison], held: list[Comparison], show: bool) -> dict:
    """The held-out table and its summary for one estimator."""
    mu, sigma = fit([math.log(c.ratio) for c in fit_side])
    low, high = math.exp(mu - Z90 * sigma), math.exp(mu + Z90 * sigma)
    errors = [abs(c.error) for c in held]
    covered = sum(low <= c.ratio <= high for c in held)
    if show:
        print(f"\n{name}: held-out runs (estimated ÷ reported GPU-hours − 1; interval from the fit side)")
        print(f"{'run':22} {'source':16} {'gpu':16} {'layout':26} {'est TF':>7} {'rep TF':>7} {'error':>7}")
        for c in held:
            print(f"{c.run.run:22} {c.run.source_id:16} {c.run.gpu:16} {c.estimated.layout[:26]:26} "
                  f"{c.estimated.tflops:7.1f} {c.reported:7.1f} {c.error:+7.1%}")
    return {"estimator": name, "median_abs": statistics.median(errors), "p90_abs": quantile(errors, 0.9),
            "coverage": covered / len(held), "runs": len(held), "mu": mu, "sigma": sigma}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also print every run at the defaults")
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    args = parser.parse_args()
    runs, gpus = load_runs(), load_gpus(args.catalog)
    fit_ids, held_ids = split_by_source(r.source_id for r in runs)
    print(f"{len(runs)} runs from {len(set(fit_ids) | set(held_ids))} sources; "
          f"fit on {', '.join(fit_ids)}; held out {', '.join(held_ids)}")
    base, skipped = comparisons(runs, gpus)
    for line in skipped:
        print(f"skipped {line}")
    fit_side = [c for c in base if c.run.source_id in fit_ids]
    tuned = fitted_mfu(fit_side, gpus)
    print("fitted MFU: " + ", ".join(f"{g} {gpus[g].default_mfu:.2f} → {m:.3f}" for g, m in tuned.items()))
    refit, _ = comparisons(runs, gpus, tuned)
    rows = [score("defaults", fit_side, [c for c in base if c.run.source_id in held_ids], True),
            score("fitted", [c for c in refit if c.run.source_id in fit_ids],
                  [c for c in refit if c.run.source_id in held_ids], True)]
    print(f"\n{'estimator':10} {'runs':>5} {'median |err|':>13} {'P90 |err|':>10} {'P10–P90 covers':>15}")
    for r in rows:
        print(f"{r['estimator']:10} {r['runs']:5d} {r['median_abs']:13.1%} {r['p90_abs']:10.1%} {r['coverage']:15.0%}")
    if args.all:
        print(f"\nevery run at the defaults")
        for c in base:
            note = "; ".join(c.estimated.assumptions)
            print(f"{c.run.run:22} {c.run.gpu:16} {c.estimated.tflops:7.1f} {c.reported:7.1f} {c.error:+7.1%}  {note}")
    print()
    for what, pick in (("step throughput (a benchmark's or a run's rate)", lambda c: c.run.gpu_hours is None),
                       ("whole runs (GPU-hours or days: restarts and failures included)",
                        lambda c: c.run.gpu_hours is not None)):
        part = [c for c in base if pick(c)]
        m, s = fit([math.log(c.ratio) for c in part])
        print(f"{what}: {len(part)} runs, ln(reported ÷ estimated) mean {m:+.3f}, sd {s:.3f}")
    mu, sigma = fit([math.log(c.ratio) for c in base])
    print(f"all {len(base)} runs at the defaults: ln(reported ÷ estimated) mean {mu:+.4f}, sd {sigma:.4f}; "
          f"median |error| {statistics.median(abs(c.error) for c in base):.1%} "
          f"(solver.estimate.spread: MU {MU:+.4f}, SIGMA {SIGMA:.4f}, RUNS {SPREAD_RUNS})")


if __name__ == "__main__":
    main()

"""World-catalog benchmark: every real SkyPilot row of catalogs/public-clouds-sample imported
(lambda, nebius, aws: all regions, 370+ GPU offers) beside Beijing's 51 offers, and the
global-burst problem solved on it.

Not part of `python -m pytest` (pytest ignores tests/bench); it never asserts on time. It prints
the catalog's size, the model's size (configurations, job options, variables, constraints) and
the build and solve times; `--out FILE` appends the row to a CSV.

    python tests/bench/bench_world.py                      # all GPUs, HiGHS, 300 s limit
    python tests/bench/bench_world.py --restrict           # global-burst's own GPU allow-list
    python tests/bench/bench_world.py --backend scip --time-limit 600
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from solver.api import BACKENDS, build, solve_built  # noqa: E402
from solver.load import load_problem  # noqa: E402
from solver.ingest.skypilot import import_skypilot  # noqa: E402

SAMPLE = ROOT / "catalogs" / "public-clouds-sample"
BEIJING = ROOT / "catalogs" / "beijing-sample"


def world_catalog(folder: Path) -> dict[str, int]:
    """Beijing's tables plus every SkyPilot row of the sample (no region filter), in `folder`."""
    shutil.copy(SAMPLE / "gpus.csv", folder)
    shutil.copy(BEIJING / "datacenters.csv", folder)
    shutil.copy(BEIJING / "offers.csv", folder)
    result = import_skypilot(SAMPLE / "skypilot-v7", folder, overlay=SAMPLE / "skypilot-overlay.yaml")
    rows = sum(c.rows - c.cpu_rows for c in result.clouds)
    return {"gpu_rows": rows, "imported_offers": sum(len(c.offers) for c in result.clouds),
            "regions": sum(len(c.datacenters) for c in result.clouds)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="highs", choices=sorted(BACKENDS))
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--restrict", action="store_true", help="keep global-burst's GPU allow-list")
    ap.add_argument("--out", type=Path, help="append the result row to this CSV")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "world"
        folder.mkdir()
        t0 = time.perf_counter()
        sizes = world_catalog(folder)
        import_s = time.perf_counter() - t0
        spec = yaml.safe_load((ROOT / "problems" / "global-burst.yaml").read_text(encoding="utf-8"))
        spec["catalog"] = str(folder)
        spec["name"] = "global-burst-world" + ("-restricted" if args.restrict else "")
        if not args.restrict:
            spec.pop("restrict", None)
        path = Path(tmp) / "problem.yaml"
        path.write_text(yaml.safe_dump(spec), encoding="utf-8")
        problem, catalog = load_problem(path)
        t0 = time.perf_counter()
        inst, milp = build(problem, catalog)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        plan = solve_built(inst, milp, backend=args.backend, time_limit=args.time_limit)
        solve_s = time.perf_counter() - t0
    row = {"problem": spec["name"], "backend": args.backend, "offers": len(catalog.offers), **sizes,
           "configs": len(inst.configs), "job_options": len(inst.options), "periods": len(inst.hours),
           "vars": milp.model.num_variables, "cons": milp.model.num_constraints,
           "import_s": round(import_s, 2), "build_s": round(build_s, 2), "solve_s": round(solve_s, 2),
           "status": plan.status, "gap": plan.gap, "cost_cny": plan.total_cost,
           "public_cloud_offers_used": len({a.offer for a in plan.allocations
                                            if catalog.offers[a.offer].currency != "CNY"})}
    width = max(map(len, row))
    for key, value in row.items():
        print(f"{key:<{width}}  {value}")
    if args.out:
        new = not args.out.exists()
        with open(args.out, "a", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Issue 34's targets, measured as a user meets them: every analysis command with default settings.

For each problem (problems/bench/ and seeds of the realistic suite, tests/bench/user_like.py) it
runs `why`, `frontier --points 10`, `negotiate`, `whatif --set budget=…` (90 % of the optimum)
and `solve --baselines` as the CLI, with `--json`, and reads:
- seconds: the whole command (wall), against its default budget (60 s, GPUPLAN_MAX_SECONDS);
- determined: the share of the table's rows whose figure is proven or settled (each command's
  own JSON says which: why's `determined`, frontier's points, negotiate's `analysed`, …);
- first row: seconds from the start to the first row announced on stderr (solver.rows), and the
  base solve's seconds (`solve --json`'s solve_seconds) it should come within 2 s of;
- and, for problems/infeasible/, the seconds until the verdict's first line on stderr.

    python tests/bench/bench_probes.py                       # problems/bench/ and seeds 2,12,22
    python tests/bench/bench_probes.py --seeds 1,5 --commands why,negotiate --problems none
    python tests/bench/bench_probes.py --jobs-sweep          # negotiate with --jobs 1, 2, all cores

Seconds on a shared machine vary with its load (printed): compare rows within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench import user_like  # noqa: E402

COMMANDS = ("why", "frontier", "negotiate", "whatif", "baselines")


def run_cli(args: list[str], env_extra: dict | None = None, timeout: float = 900) -> dict:
    """The command's wall seconds, exit code, JSON (or None) and the times its stderr lines came."""
    env = {**os.environ, "GPUPLAN_HEARTBEAT_SECONDS": "10000", "COLUMNS": "100", **(env_extra or {})}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "solver.cli", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[tuple[float, str]] = []

    def read_err() -> None:
        for line in proc.stderr:
            lines.append((time.perf_counter() - start, line.rstrip("\n")))
    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    reader.join(5)
    seconds = time.perf_counter() - start
    try:
        data = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        data = None
    return {"seconds": seconds, "code": proc.returncode, "json": data, "stderr": lines}


def determined(command: str, data: dict | None) -> tuple[int, int]:
    """(rows settled, rows in the table) from a command's JSON."""
    if not data:
        return 0, 1
    if command == "why":
        alts = [a for j in data.get("jobs", []) for a in j.get("alternatives", []) + j.get("infeasible", [])]
        levers = data.get("binding", [])
        rows = alts + levers
        return sum(1 for r in rows if r.get("determined", True)), max(len(rows), 1)
    if command == "frontier":  # ε values tried and settled; when the time stopped it, the untried ones count too
        tried = data.get("tried", [])
        settled = sum(1 for t in tried if t.get("outcome") in ("ok", "infeasible", "same plan"))
        stopped = any("were not tried" in n for n in data.get("notes", []))
        want = data.get("requested_points", len(tried)) if stopped else len(tried)
        return settled, max(want, len(tried), 1)
    if command == "negotiate":  # every offer is a row: priced (proven), said why not priced, or undetermined
        offers = data.get("offers", [])
        settled = sum(1 for o in offers if o.get("analysed") and o.get("limit_low") == o.get("limit_high"))
        return settled, max(len(offers), 1)
    if command == "whatif":
        sc = data.get("scenario", {})
        ok = sc.get("status") == "optimal" or (sc.get("status") == "infeasible" and sc.get("proven", True))
        return int(ok) + int(data.get("baseline", {}).get("status") == "optimal"), 2
    if command == "baselines":
        rows = data.get("baselines") or []
        return sum(1 for r in rows if r.get("status") in ("optimal", "infeasible")), max(len(rows), 1)
    raise ValueError(command)


def first_row(lines: list[tuple[float, str]]) -> float | None:
    return next((t for t, line in lines if ", row 1" in line), None)


def args_for(command: str, path: Path, cost: float | None) -> list[str]:
    p = str(path)
    return {"why": ["why", p, "--json"],
            "frontier": ["frontier", p, "--points", "10", "--json"],
            "negotiate": ["negotiate", p, "--json"],
            "whatif": ["whatif", p, "--set", f"budget={round((cost or 0) * 0.9)}", "--json"],
            "baselines": ["solve", p, "--baselines", "--json"]}[command]


def bench_problem(name: str, path: Path, commands: list[str]) -> list[dict]:
    base = run_cli(["solve", str(path), "--json"])
    cost = base["json"].get("total_cost") if base["json"] else None
    solve_s = base["json"].get("solve_seconds") if base["json"] else None
    rows = []
    for command in commands:
        r = run_cli(args_for(command, path, cost))
        done, total = determined(command, r["json"])
        rows.append({"problem": name, "command": command, "seconds": r["seconds"], "code": r["code"],
                     "determined": done, "rows": total, "first_row": first_row(r["stderr"]),
                     "base_solve": solve_s, "base_total": base["seconds"]})
        print_row(rows[-1])
    return rows


def print_row(r: dict) -> None:
    first = "—" if r["first_row"] is None else f"{r['first_row']:.1f}"
    print(f"{r['problem']:<28} {r['command']:<10} {r['seconds']:7.1f} s  exit {r['code']}  "
          f"{r['determined']:>3}/{r['rows']:<3} ({r['determined'] / r['rows']:.0%})  first row {first:>6} s  "
          f"(solve alone {r['base_total']:.1f} s)", flush=True)


def verdicts() -> list[tuple[str, float | None, float]]:
    out = []
    for path in sorted((ROOT / "problems" / "infeasible").glob("*.yaml")):
        r = run_cli(["solve", str(path)])
        first = r["stderr"][0][0] if r["stderr"] else None
        out.append((path.name, first, r["seconds"]))
        print(f"infeasible {path.name:<30} verdict after {first if first is None else round(first, 2)} s, "
              f"command {r['seconds']:.1f} s, exit {r['code']}", flush=True)
    return out


def jobs_sweep(path: Path) -> None:
    for jobs in ("1", "2", str(os.cpu_count() or 1)):
        r = run_cli(["negotiate", str(path), "--json", "--jobs", jobs])
        done, total = determined("negotiate", r["json"])
        print(f"negotiate --jobs {jobs:<3} {path.name:<28} {r['seconds']:7.1f} s  {done}/{total}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default="all", help="names in problems/bench (comma list), 'all' or 'none'")
    ap.add_argument("--seeds", default="2,12,22", help="realistic-suite seeds (comma list, '' for none)")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--no-infeasible", action="store_true")
    ap.add_argument("--jobs-sweep", action="store_true", help="only negotiate with --jobs 1, 2 and all cores")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores", flush=True)
    bench = sorted((ROOT / "problems" / "bench").glob("*.yaml"))
    if a.problems == "none":
        bench = []
    elif a.problems != "all":
        bench = [p for p in bench if p.stem in a.problems.split(",")]
    if a.jobs_sweep:
        for path in bench or [ROOT / "problems" / "seed-13b-100b.yaml"]:
            jobs_sweep(path)
        return
    commands = [c for c in a.commands.split(",") if c]
    rows = []
    for path in bench:
        rows += bench_problem(path.stem, path, commands)
    for seed in [int(s) for s in a.seeds.split(",") if s]:
        # where the generated file's relative catalog path resolves (three folders below the root)
        path = ROOT / "tests" / "bench" / "problems" / f"user-like-{seed:02d}.yaml"
        existed = path.exists()
        try:
            rows += bench_problem(f"realistic-{seed}", user_like.write(seed, path.parent), commands)
        finally:
            if not existed:
                path.unlink(missing_ok=True)
    if not a.no_infeasible:
        verdicts()
    within = sum(1 for r in rows if r["seconds"] <= 60 + 5)
    ninety = sum(1 for r in rows if r["determined"] / r["rows"] >= 0.9)
    print(f"\n{len(rows)} runs: {within} within the 60-s budget (+5 s), {ninety} with ≥ 90 % of rows determined; "
          f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

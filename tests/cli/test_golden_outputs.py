"""The bundled problems' JSON answers are the recorded ones: a refactor changes no plan.

Why: restructuring the MILP, the analyses or the CLI must leave every plan, explanation
and negotiation as it was. Each case runs the real CLI (`python -m solver.cli ... --json`)
and compares the object with `tests/data/golden/<case>.json`, less what depends on the
clock (keys ending in `seconds`, "ran 0.1 s" in messages).

A change that is meant to change answers (a new tie-break, a new cost term) regenerates
the files on purpose, and the diff of `tests/data/golden/` shows what changed:
`GPUPLAN_REGENERATE_GOLDEN=1 python -m pytest tests/cli/test_golden_outputs.py`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import DATA, ROOT

GOLDEN = DATA / "golden"
REGENERATE = os.environ.get("GPUPLAN_REGENERATE_GOLDEN") == "1"

CASES = {
    "solve-seed-7b-200b-30d": ["solve", "problems/seed-7b-200b-30d.yaml"],
    "solve-seed-13b-100b": ["solve", "problems/seed-13b-100b.yaml"],
    "solve-debug-then-train": ["solve", "problems/debug-then-train.yaml"],
    "solve-hybrid-burst": ["solve", "problems/hybrid-burst.yaml"],
    "solve-data-locality": ["solve", "problems/data-locality.yaml"],
    "solve-infeasible-shunyi-racks-short": ["solve", "problems/infeasible/shunyi-racks-short.yaml"],
    "why-seed-7b-200b-30d": ["why", "problems/seed-7b-200b-30d.yaml"],
    "negotiate-seed-7b-200b-30d": ["negotiate", "problems/seed-7b-200b-30d.yaml"],
    "frontier-seed-7b-200b-30d": ["frontier", "problems/seed-7b-200b-30d.yaml", "--points", "4"],
    "whatif-debug-then-train": ["whatif", "problems/debug-then-train.yaml", "--set", "offers[vendor=21vianet].price*=1.2"],
}

_CLOCK = re.compile(r"\d+(\.\d+)? s\b")


def _normalised(value):
    """The answer without what the clock decides."""
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items() if not k.endswith("seconds")}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if isinstance(value, str):
        return _CLOCK.sub("<t> s", value)
    return value


def _run(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "solver.cli", *args, "--json"], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode in (0, 1), done.stderr
    return {"exit_code": done.returncode, "output": _normalised(json.loads(done.stdout))}


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_answer_is_the_recorded_one(case: str):
    got = _run(CASES[case])
    path = GOLDEN / f"{case}.json"
    if REGENERATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(path.read_text(encoding="utf-8"))
    assert got == want, f"{case}: the answer changed; if on purpose, regenerate (see this module's docstring)"


def test_normalising_drops_only_the_clock():
    raw = {"solve_seconds": 1.2, "message": "proven infeasible; highs ran 0.1 s", "cost": 5, "x": [{"seconds": 2}]}
    assert _normalised(raw) == {"message": "proven infeasible; highs ran <t> s", "cost": 5, "x": [{}]}

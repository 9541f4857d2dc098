"""A job's layout label counts the copies of its model-parallel group that run at once
(issue 24, item 8): a 40-GPU job of TP2×PP1 groups reads "20 replicas of TP2×PP1 (DP20)", not
"TP2×PP1×DP1" (which reads as one copy). Checked on every bundled problem's recorded plan
(tests/cli/test_golden_outputs.py keeps those equal to what the CLI prints) and on a tiny one
whose job runs on two offers at once."""

from __future__ import annotations

import json

import pytest
from tests.builders import DATA, MID, catalog, hourly, job, problem, solve

SOLVED = sorted(p for p in (DATA / "golden").glob("solve-*.json") if "infeasible" not in p.stem)


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.stem)
def test_peak_gpus_are_the_replicas_of_the_group(path):
    for j in json.loads(path.read_text(encoding="utf-8"))["output"]["jobs"]:
        lay = j["layout"]
        assert j["gpus"] == lay["gpus"] * lay["replicas"], j["name"]   # one group size in these plans
        n = lay["replicas"]
        assert j["layout_text"].startswith(f"{n} replica{'s' if n != 1 else ''} of TP{lay['tp']}×PP{lay['pp']}")
        assert f"(DP{lay['dp']})" in j["layout_text"] and "×DP" not in j["layout_text"]
        assert lay["dp"] == n * lay["zero_shards"] and lay["gpus"] == lay["tp"] * lay["pp"] * lay["zero_shards"]


def test_replicas_on_two_offers_are_counted_together():
    # MID needs a 2-GPU group; 3 nodes of A (its whole stock) and some of A2 at once: every
    # replica is counted, not only the main offer's.
    cat = catalog(hourly("A", 4, max_nodes=3), hourly("A2", 5))   # one vendor and site: one fabric
    plan = solve(problem(job(days=400, deadline_days=10, model=MID), horizon_days=10), cat)
    (j,) = plan.jobs
    assert len({a.offer for a in plan.schedule.assignments}) == 2
    assert j.layout["replicas"] * j.layout["gpus"] == j.gpus
    assert j.layout_text.startswith(f"{j.layout['replicas']} replicas of TP")

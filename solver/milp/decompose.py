"""A synchronous job's fabric choice, as flags to fix and free: the handle of searches over choices.

Why a module of its own: solver.analysis.min_time searches the one choosing job's
(domain, tier) choices, each bounded by an LP and solved as a MILP with the choice
fixed, and keeps what it learnt while its limits tighten. Plain solves no longer do
that search: since the per-domain need rows (solver.milp.site) the full MILP proves the
bundled problems faster than the search did (seed-13b-100b 1.0 s against 2.6 s,
seed-7b-200b-30d 0.18 s against 0.44 s; tests/bench/bench_milp.py, tests/bench/HISTORY.md).
"""

from __future__ import annotations

from collections import defaultdict

from solver.milp.core import Milp


def choices_by_job(milp: Milp) -> dict[str, list]:
    """The flag variables of each synchronous job with more than one possible (domain, tier)."""
    out: dict[str, list] = defaultdict(list)
    for (job, _name), flag in milp.sites.items():
        out[job].append(flag)
    return dict(out)


def fix_choice(flags: list, k: int | None) -> None:
    """Flag k to 1 and the others to 0; None frees them all again."""
    for i, flag in enumerate(flags):
        if k is None:
            flag.lower_bound, flag.upper_bound = 0.0, 1.0
        else:
            flag.lower_bound = flag.upper_bound = 1.0 if i == k else 0.0

"""The realistic suite's generator (tests/bench/user_like.py): the same problem for a seed every
time, and every one of the 30 seeds a problem `gpuplan` loads and validates, shaped as issue 33
asks (1-6 jobs, no `restrict`, windows of at most 180 days, both bundled catalogs). No solving:
the suite is measured by `python tests/bench/bench_milp.py --realistic`, not here."""

from __future__ import annotations

import pytest

from solver.load import load_problem
from solver.milp.instance import build_instance
from tests.bench import user_like


@pytest.fixture(scope="module")
def suite():
    return {seed: user_like.generate(seed) for seed in user_like.SEEDS}


def test_the_suite_is_thirty_fixed_seeds():
    assert user_like.SEEDS == tuple(range(1, 31))


@pytest.mark.parametrize("seed", [1, 7, 16, 30])
def test_a_seed_gives_the_same_problem_every_time(seed):
    """Also in another interpreter with another hash seed: set order or hashing cannot leak in."""
    import os
    import subprocess
    import sys

    from tests.builders import ROOT

    assert user_like.generate(seed)[0] == user_like.generate(seed)[0]
    code = f"from tests.bench import user_like; print(user_like.problem_yaml({seed}), end='')"
    other = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed + 1000)})
    assert other.stdout == user_like.problem_yaml(seed)


def test_seeds_give_different_problems(suite):
    assert len({problem.model_dump_json() for problem, _ in suite.values()}) == len(suite)


def test_every_problem_is_shaped_as_users_write_them(suite):
    catalogs = set()
    for seed, (problem, catalog) in suite.items():
        assert 1 <= len(problem.jobs) <= 6, seed
        assert problem.restrict is None and all(j.restrict is None for j in problem.jobs), seed
        assert all(j.deadline_days - j.start_day >= 7 for j in problem.jobs), seed
        assert problem.horizon_days <= 180 and problem.period_days is None and problem.periods == "uniform", seed
        catalogs.add(catalog.path)
    assert len(catalogs) == 2  # both bundled catalogs
    assert any(p.budget for p, _ in suite.values()) and any(j.residency for p, _ in suite.values() for j in p.jobs)


def test_every_job_has_somewhere_to_run(suite):
    for seed, (problem, catalog) in suite.items():
        inst = build_instance(problem, catalog)
        assert {opt.job for opt in inst.options} == {j.name for j in problem.jobs}, seed


def test_a_written_problem_loads_like_a_user_file(tmp_path):
    folder = tmp_path / "tests" / "bench" / "problems"
    path = user_like.write(3, folder)
    # the catalog path is relative to tests/bench/problems/: link the catalogs beside it
    (tmp_path / "catalogs").symlink_to(user_like.ROOT / "catalogs")
    problem, _ = load_problem(path)
    assert problem == user_like.generate(3)[0]


def test_issue_33s_problem_file_loads():
    problem, catalog = load_problem(user_like.ROOT / "tests" / "bench" / "problems" / "issue33-2job-45d.yaml")
    assert [j.name for j in problem.jobs] == ["finetune-13b", "pretrain-7b"] and problem.restrict is None


def test_suite_two_stores_data_for_most_jobs_of_every_kind(suite):
    """Issue 43: users give every job its dataset and checkpoints; suite 1 stored only for half of
    the pre-trains, so its median hid the storage rows' cost."""
    kinds: dict[str, list[bool]] = {}
    for problem, _ in suite.values():
        for job in problem.jobs:
            kinds.setdefault(job.kind, []).append(job.storage_tb > 0)
    assert {"pretrain", "full_finetune", "lora", "sweep"} <= set(kinds)
    for kind, stores in kinds.items():
        assert sum(stores) / len(stores) >= 0.6, kind
    assert any(job.egress_tb > 0 for problem, _ in suite.values() for job in problem.jobs)


def test_suite_two_keeps_suite_one_jobs_apart_from_their_data():
    """The data is drawn apart: a seed's jobs, windows and tokens are suite 1's, so the two suites
    compare the storage rows alone."""
    for seed in (3, 11, 24):
        old, new = user_like.generate(seed, suite=1)[0], user_like.generate(seed)[0]
        strip = {"storage_tb", "egress_tb"}
        assert [j.model_dump(exclude=strip) for j in old.jobs] == [j.model_dump(exclude=strip) for j in new.jobs]
        assert all(j.storage_tb == 0 for j in old.jobs if j.kind != "pretrain")

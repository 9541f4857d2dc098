"""One executor for sweep and negotiate (solver.analysis.executor): results in the work's order
whatever ran them, each worker's state built once, and one policy when a worker dies: the task's
row says so (sweep: an error row; negotiate: the offer not analysed, "worker failed: …"), never a
traceback, and the other tasks still answer.

Why (issue 44): sweep wrote a failed row for a dead worker while negotiate raised the task's error;
on Ray, negotiate kept feeding a dead actor.
"""

from __future__ import annotations

import os

import pytest

from solver.analysis.executor import NO_WORKER_LEFT, Executor, Lost

DIE = "die"


def _state(tag: str, deadline: float | None) -> dict:
    return {"tag": tag, "pid": os.getpid(), "built": 1}


def _task(state: dict, value) -> tuple:
    if value == DIE:
        os._exit(3)   # the worker process dies, as under the system's memory killer
    if value == "raise":
        raise ValueError("a bug in the task")
    return state["tag"], state["pid"], value * 2


def _executor(jobs: int, **kw) -> Executor:
    return Executor(_state, ("w",), _task, local=lambda: _state("here", None), jobs=jobs, **kw)


def test_here_runs_in_this_process_in_order_and_hears_each_result():
    heard = []
    with _executor(1) as ex:
        out = ex.run([(1,), (2,), (3,)], lambda i, r: heard.append(i), here=True)
    assert out == [("here", os.getpid(), 2), ("here", os.getpid(), 4), ("here", os.getpid(), 6)]
    assert heard == [0, 1, 2]


def test_a_pool_keeps_the_work_s_order_and_its_workers_across_runs():
    with _executor(2) as ex:
        first = ex.run([(i,) for i in range(6)])
        second = ex.run([(10,)])
    assert [r[2] for r in first] == [0, 2, 4, 6, 8, 10] and second[0][2] == 20
    pids = {r[1] for r in first + second}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2 and all(r[0] == "w" for r in first)


def test_a_task_that_raises_in_a_worker_is_a_lost_row_not_a_traceback():
    with _executor(2) as ex:
        out = ex.run([(1,), ("raise",), (3,)])
    assert out[0][2] == 2 and out[2][2] == 6
    assert out[1] == Lost(True, "ValueError: a bug in the task")
    assert out[1].words() == "worker failed: ValueError: a bug in the task"


def test_a_worker_that_dies_is_a_lost_row_that_says_so():
    with _executor(2) as ex:
        out = ex.run([(1,), (DIE,), (3,)])
    lost = [r for r in out if isinstance(r, Lost)]
    assert lost and all(r.died and r.words().startswith("worker failed: BrokenProcessPool") for r in lost)
    assert isinstance(out[1], Lost)   # the task whose worker died; a pool that broke loses the others too


def test_sweep_and_negotiate_word_a_dead_worker_the_same_way():
    from solver.analysis.negotiate_offers import OfferTerms
    from solver.analysis.negotiate_pool import _unfinished
    from solver.analysis.sweep import _row

    dead = Lost(True, "BrokenProcessPool: a process ended abruptly")
    row = _row(dead)
    assert row["status"] == "error" and row["error"] == "worker failed: BrokenProcessPool: a process ended abruptly"
    terms = OfferTerms(offer="o", vendor="v", datacenter="d", gpu="g", mode="hourly", price=1.0,
                       price_unit="per_gpu_hour", currency="CNY", status="not_in_plan")
    done = _unfinished(terms, dead)
    assert not done.terms.analysed
    assert done.terms.reason == "not analysed: worker failed: BrokenProcessPool: a process ended abruptly"
    stopped = _unfinished(terms, Lost(False))
    assert "worker" not in stopped.terms.reason and not stopped.terms.analysed
    assert _row(Lost(False))["status"] == "stopped"


def test_a_dead_ray_actor_gets_no_more_work_and_its_task_says_so():
    pytest.importorskip("ray")
    with _executor(2, ray="local", most=2) as ex:
        out = ex.run([(1,), (DIE,), (3,), (4,), (5,)])
        assert len(ex.actors) == 1 and ex.workers() == 2   # the dead one is fed no more
        later = ex.run([(6,), (DIE,), (7,)])                  # the last actor dies: the rest has no worker
    assert isinstance(out[1], Lost) and out[1].died and out[1].words().startswith("worker failed: ")
    assert [r[2] for i, r in enumerate(out) if i != 1] == [2, 6, 8, 10]
    assert later[0][2] == 12 and later[1].died and later[2] == NO_WORKER_LEFT
